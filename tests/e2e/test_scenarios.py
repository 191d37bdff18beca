"""Real audits of small local sites, one discovery path or policy each."""

from __future__ import annotations

import gzip
import itertools
import logging
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from sitemapaudit import settings as project_module
from sitemapaudit.spiders.audit import AuditSpider
from tests.support.crawl import by_record, project_settings, run_audit
from tests.support.golden_site import XML, html, index, page, slow_pages, url, urlset
from tests.support.server import Page, TestSite


async def audit(site: TestSite, tmp_path: Path, **kwargs: Any) -> list[dict[str, Any]]:
    records, _ = await run_audit(site.base, tmp_path / "report.jsonl", **kwargs)
    return records


def issues_by_url(records: list[dict[str, Any]], kind: str = "url") -> dict[str, list[str]]:
    return {r["url"]: r["issues"] for r in by_record(records, kind)}


@deferred_f_from_coro_f
async def test_common_paths_are_tried_only_when_nothing_names_a_sitemap(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/": page(),
            "/sitemap_index.xml": Page(body=index("{base}/list.txt"), content_type=XML),
            "/list.txt": Page(body="{base}/a\n", content_type="text/plain"),
            "/sitemap.xml": page(),  # a soft 404: an HTML page, not a sitemap
            "/sitemap.xml.gz": Page(status=501),  # a generator that fails (not retried)
            "/a": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert records[-1]["notes"] == [
        f"{site.base}/sitemap.xml.gz, a common sitemap path, answered with status 501: if a "
        "sitemap is generated there, its generator fails"
    ]
    sitemaps = {r["url"]: r for r in by_record(records, "sitemap")}
    assert set(sitemaps) == {f"{site.base}/sitemap_index.xml", f"{site.base}/list.txt"}
    assert sitemaps[f"{site.base}/sitemap_index.xml"]["found_via"] == "common-path"
    assert sitemaps[f"{site.base}/list.txt"]["found_via"] == "index"
    assert sitemaps[f"{site.base}/list.txt"]["issues"] == []
    assert issues_by_url(records) == {f"{site.base}/a": []}
    assert site.hits["/sitemap.xml.gz"] == 1
    assert site.hits["/robots.txt"] == 1


@deferred_f_from_coro_f
async def test_common_paths_that_hold_no_sitemap_give_their_place_under_the_cap_back(
    tmp_path: Path,
) -> None:
    # Four guesses miss (404, an HTML page, a server error), the fifth holds the sitemap: with
    # room for two sitemaps, every guess is tried and the index still gets its one child.
    site = TestSite(
        {
            "/": page(),
            "/sitemap.xml": page(),
            "/sitemap-index.xml": Page(status=501),
            "/sitemap.txt": Page(
                body=index("{base}/child.xml", "{base}/other.xml"), content_type=XML
            ),
            "/child.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
            "/other.xml": Page(body=urlset(url("{base}/b")), content_type=XML),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"SITEMAPAUDIT_MAX_SITEMAPS": 2})
    sitemaps = issues_by_url(records, "sitemap")
    assert sitemaps == {
        f"{site.base}/sitemap.txt": ["sitemap_limit"],
        f"{site.base}/child.xml": [],
    }
    assert set(issues_by_url(records)) == {f"{site.base}/a"}
    for path in ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml", "/sitemap.xml.gz"):
        assert site.hits[path] == 1, path
    assert site.hits["/other.xml"] == 0
    assert records[-1]["sitemaps_found"] == 2


@deferred_f_from_coro_f
async def test_a_sitemap_that_answers_a_3xx_that_redirects_nowhere_is_an_http_error(
    tmp_path: Path,
) -> None:
    # A 304 to a request that was not conditional (a misconfigured cache), or a 300: nothing
    # to read, as unreadable as a 404, and not a redirect the audit could follow.
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/root.xml\n", content_type="text/plain"),
            "/root.xml": Page(
                body=index("{base}/cached.xml", "{base}/choices.xml"), content_type=XML
            ),
            "/cached.xml": Page(status=304, headers=[("ETag", '"x"')]),
            "/choices.xml": Page(status=300),
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"SITEMAPAUDIT_HISTORY_PATH": ""})
    sitemaps = {r["url"]: r for r in by_record(records, "sitemap")}
    assert sitemaps[f"{site.base}/cached.xml"]["errors"] == [
        "http_error: HTTP status 304 (Not Modified) to a request that was not conditional"
    ]
    assert sitemaps[f"{site.base}/choices.xml"]["errors"] == [
        "http_error: HTTP status 300, which redirects nowhere"
    ]
    assert records[-1]["severities"]["error"] == 2


@deferred_f_from_coro_f
async def test_a_common_path_with_corrupt_gzip_data_is_reported(tmp_path: Path) -> None:
    # Nothing decoded from corrupt gzip data is read, so its kind cannot be told; unlike a page
    # that is not a sitemap, it is reported (a sitemap generator may write broken files).
    packed = bytearray(gzip.compress(urlset(*(url(f"/p{i}") for i in range(200))).encode()))
    packed[len(packed) // 2] ^= 0xFF
    site = TestSite({"/": page(), "/sitemap.xml.gz": Page(body=bytes(packed))})
    with site:
        records = await audit(site, tmp_path)
    sitemaps = {r["url"]: r for r in by_record(records, "sitemap")}
    assert list(sitemaps) == [f"{site.base}/sitemap.xml.gz"]
    record = sitemaps[f"{site.base}/sitemap.xml.gz"]
    assert record["found_via"] == "common-path"
    assert sorted(record["issues"]) == ["gzip_invalid", "not_a_sitemap"]
    assert by_record(records, "url") == []


@deferred_f_from_coro_f
async def test_no_common_paths_when_robots_names_a_sitemap(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
            "/a": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert site.hits["/sitemap.xml"] == 0
    assert issues_by_url(records) == {f"{site.base}/a": []}


@deferred_f_from_coro_f
async def test_nothing_found_is_said_in_the_summary(tmp_path: Path) -> None:
    with TestSite({"/": page()}) as site:
        records = await audit(site, tmp_path)
    assert [r["record"] for r in records] == ["summary"]
    assert any("no sitemap was found" in note for note in records[0]["notes"])


@deferred_f_from_coro_f
async def test_robots_5xx_means_disallow_all_and_the_summary_says_so(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(status=503, body="down"),
            "/": page('<link rel="sitemap" href="/s.xml">'),
            "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"RETRY_TIMES": 0})
    assert issues_by_url(records) == {
        f"{site.base}/a": ["robots_blocked"],
        f"{site.base}/b": ["robots_blocked"],
    }
    assert site.hits["/a"] == site.hits["/b"] == 0
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "disallow_all"
    assert any("disallowed" in note for note in summary["notes"])


@deferred_f_from_coro_f
async def test_fetch_blocked_setting_requests_blocked_urls_anyway(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: Googlebot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n"
                "Sitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
            "/a": Page(status=404),
            "/b": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"SITEMAPAUDIT_FETCH_BLOCKED": True})
    # Googlebot's own group applies, not the '*' group.
    assert issues_by_url(records) == {
        f"{site.base}/a": ["robots_blocked", "http_error"],
        f"{site.base}/b": [],
    }
    assert site.hits["/a"] == 1


@deferred_f_from_coro_f
async def test_sitemap_argument_replaces_discovery(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/ignored.xml\n", content_type="text/plain"),
            "/one.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
            "/two.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        records = (
            await run_audit(
                site.base,
                tmp_path / "r.jsonl",
                sitemap=f"{site.base}/one.xml, {site.base}/two.xml",
            )
        )[0]
    sitemaps = {r["url"]: r["found_via"] for r in by_record(records, "sitemap")}
    assert sitemaps == {f"{site.base}/one.xml": "argument", f"{site.base}/two.xml": "argument"}
    assert site.hits["/ignored.xml"] == 0
    assert site.hits["/"] == 0
    assert issues_by_url(records) == {f"{site.base}/a": ["duplicate"], f"{site.base}/b": []}


@deferred_f_from_coro_f
async def test_inventory_only_requests_no_page(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(url("{base}/a", "2024-01-01"), url("{base}/b", "2099-01-01")),
                content_type=XML,
            ),
        }
    )
    with site:
        records = (await run_audit(site.base, tmp_path / "r.jsonl", fetch_urls="no"))[0]
    assert site.hits["/a"] == site.hits["/b"] == 0
    urls = {r["url"]: r for r in by_record(records, "url")}
    assert urls[f"{site.base}/a"]["fetched"] is False
    assert urls[f"{site.base}/a"]["issues"] == []
    assert urls[f"{site.base}/b"]["issues"] == ["lastmod_future"]


@deferred_f_from_coro_f
async def test_a_lastmod_dated_when_its_sitemap_is_served_is_not_in_the_future(
    tmp_path: Path,
) -> None:
    """Generators that date entries with the moment they serve the sitemap (after the audit
    started) write no future lastmod: a lastmod is in the future past the moment the audit
    read the index (an index's lastmod of a sitemap) or every sitemap (a URL's)."""

    def now() -> str:
        return datetime.now(UTC).isoformat(timespec="microseconds")

    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
            "/index.xml": lambda _site, _path: Page(
                body=index("{base}/s.xml").replace("</loc>", f"</loc><lastmod>{now()}</lastmod>"),
                content_type=XML,
            ),
            "/s.xml": lambda _site, _path: Page(
                body=urlset(url("{base}/a", now()), url("{base}/b", "2099-01-01")),
                content_type=XML,
            ),
        }
    )
    with site:
        records = (await run_audit(site.base, tmp_path / "r.jsonl", fetch_urls="no"))[0]
    assert issues_by_url(records, "sitemap")[f"{site.base}/s.xml"] == []
    urls = {r["url"]: r for r in by_record(records, "url")}
    assert urls[f"{site.base}/a"]["issues"] == []
    assert urls[f"{site.base}/b"]["issues"] == ["lastmod_future"]
    assert urls[f"{site.base}/b"]["errors"][0].endswith(", when the audit had read every sitemap")


def busy_once() -> Callable[[TestSite, str], Page]:
    """A page that answers 503 with Retry-After: 1 the first time it is asked for."""
    calls: list[int] = []

    def answer(site: TestSite, path: str) -> Page:
        calls.append(1)
        if len(calls) == 1:
            return Page(status=503, headers=[("Retry-After", "1")])
        return page()

    return answer


@deferred_f_from_coro_f
async def test_retry_after_is_honoured(tmp_path: Path) -> None:
    flaky = busy_once()
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/flaky")), content_type=XML),
            "/flaky": flaky,
        }
    )
    with site:
        records = await audit(site, tmp_path)
    times = [t for t, path in site.log if path == "/flaky"]
    assert len(times) == 2
    assert times[1] - times[0] >= 0.95
    assert issues_by_url(records) == {f"{site.base}/flaky": []}


@deferred_f_from_coro_f
async def test_retry_after_holds_back_the_host_s_other_requests_too(tmp_path: Path) -> None:
    """A server that asks for a wait means the site, not only the URL that got the answer:
    under a delay, no request to the host goes out until the wait is over."""
    busy = busy_once()
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(url("{base}/busy"), *(url(f"{{base}}/p{i}") for i in range(6))),
                content_type=XML,
            ),
            "/busy": busy,
            **{f"/p{i}": page() for i in range(6)},
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"DOWNLOAD_DELAY": 0.1})
    answered = next(t for t, path in site.log if path == "/busy")
    after = [t - answered for t, path in site.log if t > answered]
    assert len(after) == 7  # the retry and the six pages
    assert min(after) >= 0.95
    assert issues_by_url(records)[f"{site.base}/busy"] == []


@deferred_f_from_coro_f
async def test_a_retry_after_beyond_the_cap_says_why_it_was_not_retried(tmp_path: Path) -> None:
    """A server asking for a longer wait than SITEMAPAUDIT_RETRY_AFTER_MAX is not retried: the
    finding says so, with the wait asked for (seconds or an HTTP date) and the cap."""
    later = "Wed, 21 Oct 2099 07:28:00 GMT"
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/s.xml\nSitemap: {base}/busy.xml\n", content_type="text/plain"
            ),
            "/s.xml": Page(
                body=urlset(url("{base}/busy"), url("{base}/closed"), url("{base}/moved")),
                content_type=XML,
            ),
            "/busy.xml": Page(status=503, headers=[("Retry-After", "3600")]),
            "/busy": Page(status=429, headers=[("Retry-After", "120")]),
            "/closed": Page(status=503, headers=[("Retry-After", later)]),
            "/moved": Page(status=301, headers=[("Location", "/busy")]),
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"SITEMAPAUDIT_RETRY_AFTER_MAX": 60})
    assert site.hits["/busy.xml"] == 1
    assert site.hits["/closed"] == 1
    assert site.hits["/busy"] == 2  # once listed, once as the redirect's target
    urls = {r["url"]: r for r in by_record(records, "url")}
    cap = "more than SITEMAPAUDIT_RETRY_AFTER_MAX (60 s)"
    assert urls[f"{site.base}/busy"]["errors"] == [
        f"http_error: HTTP status 429, not retried: its Retry-After asks to wait 120 s, {cap}"
    ]
    assert (
        f"http_error: HTTP status 429, not retried: its Retry-After asks to wait 120 s, {cap}"
    ) in urls[f"{site.base}/moved"]["errors"]
    (closed,) = urls[f"{site.base}/closed"]["errors"]
    assert closed.startswith("http_error: HTTP status 503, not retried: its Retry-After asks to ")
    assert closed.endswith(f" s (until {later}), {cap}")
    (sitemap,) = [r for r in by_record(records, "sitemap") if r["url"].endswith("/busy.xml")]
    assert sitemap["errors"] == [
        f"http_error: HTTP status 503, not retried: its Retry-After asks to wait 3,600 s, {cap}"
    ]


@deferred_f_from_coro_f
async def test_a_sitemap_in_several_codings_with_gzip_among_them_was_gzip(tmp_path: Path) -> None:
    """The record's gzip says whether the body was gzip data, whatever the codings listed
    with it: one gzip inside another, or gzip data of deflate data."""
    body = urlset(url("{base}/a")).encode()
    twice = gzip.compress(gzip.compress(body))
    deflate_then_gzip = gzip.compress(zlib.compress(body))
    site = TestSite(
        {
            "/robots.txt": Page(
                body="".join(
                    f"Sitemap: {{base}}/{name}.xml\n" for name in ("twice", "mixed", "plain")
                ),
                content_type="text/plain",
            ),
            "/twice.xml": Page(
                body=twice, content_type=XML, headers=[("Content-Encoding", "gzip, gzip")]
            ),
            "/mixed.xml": Page(
                body=deflate_then_gzip,
                content_type=XML,
                headers=[("Content-Encoding", "deflate, gzip")],
            ),
            "/plain.xml": Page(body=body, content_type=XML),
            "/a": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    got = {
        r["url"].rsplit("/", 1)[-1]: (r["gzip"], r["url_count"])
        for r in by_record(records, "sitemap")
    }
    assert got == {"twice.xml": (True, 1), "mixed.xml": (True, 1), "plain.xml": (False, 1)}


def _raw_utf8(text: str) -> str:
    """A header value whose bytes on the wire are ``text`` in UTF-8 (the test server sends
    header values as Latin-1)."""
    return text.encode("utf-8").decode("latin-1")


@deferred_f_from_coro_f
async def test_a_link_header_in_utf8_is_read_as_utf8(tmp_path: Path) -> None:
    """A sitemap and a canonical named by Link headers with raw UTF-8 (as a Location is read):
    /sitemaps/café.xml is /sitemaps/caf%C3%A9.xml, and a page's canonical to itself is no
    canonical_mismatch."""
    site = TestSite(
        {
            "/": page(headers=[("Link", _raw_utf8('</sitemaps/café.xml>; rel="sitemap"'))]),
            "/sitemaps/caf%C3%A9.xml": Page(
                body=urlset(url("{base}/sitemaps/caf%C3%A9")), content_type=XML
            ),
            "/sitemaps/caf%C3%A9": page(
                headers=[("Link", _raw_utf8('<{base}/sitemaps/café>; rel="canonical"'))]
            ),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    # (The sitemap's record names it as written.)
    assert [(r["url"], r["status"], r["url_count"]) for r in by_record(records, "sitemap")] == [
        (f"{site.base}/sitemaps/café.xml", 200, 1)
    ]
    (page_record,) = by_record(records, "url")
    assert page_record["canonical"] == f"{site.base}/sitemaps/caf%C3%A9"
    assert page_record["issues"] == []


@deferred_f_from_coro_f
async def test_crawl_delay_spaces_requests(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nCrawl-delay: 0.4\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(4))), content_type=XML
            ),
            **{f"/p{i}": page() for i in range(4)},
        }
    )
    with site:
        await audit(site, tmp_path)
        capped = await audit(site, tmp_path, settings={"SITEMAPAUDIT_MAX_CRAWL_DELAY": 0.1})
    times = sorted(t for t, path in site.log if path.startswith("/p"))[:4]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 4
    assert min(gaps) >= 0.35
    assert capped[-1]["notes"] == [
        "robots.txt asks for a Crawl-delay of 0.4 s; requests were spaced by "
        "SITEMAPAUDIT_MAX_CRAWL_DELAY, 0.1 s"
    ]


@deferred_f_from_coro_f
async def test_a_crawl_delay_for_every_other_robot_paces_the_audit(tmp_path: Path) -> None:
    """Rules for Googlebot (the robot whose view the audit takes), a Crawl-delay in the ``*``
    group: the audit's requests, which name sitemapaudit, fall under ``*``, so it holds."""
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: Googlebot\nDisallow: /nothing\n\n"
                "User-agent: *\nCrawl-delay: 0.4\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(4))), content_type=XML
            ),
            **{f"/p{i}": page() for i in range(4)},
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"DOWNLOAD_DELAY": 0})
    times = sorted(t for t, path in site.log if path.startswith("/p"))
    assert len(times) == 4
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.35
    assert records[-1]["robots_txt"]["crawl_delay"] == 0.4


@deferred_f_from_coro_f
async def test_crawl_delay_holds_when_slow_pages_hold_requests_back(tmp_path: Path) -> None:
    """With AutoThrottle on (the polite default), slow pages make requests wait in Scrapy's
    queue for the host; when the slow answers come, the waiting requests still go out a
    Crawl-delay apart, not at AutoThrottle's pace."""
    slow = slow_pages(2.0)
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nCrawl-delay: 0.8\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(10))), content_type=XML
            ),
            **{f"/p{i}": slow if i in (0, 1) else page() for i in range(10)},
        }
    )
    polite = {
        "DOWNLOAD_DELAY": 0.1,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": 0.1,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
    }
    with site:
        await audit(site, tmp_path, settings=polite)
    times = sorted(t for t, path in site.log if path.startswith("/p"))
    gaps = [round(b - a, 2) for a, b in itertools.pairwise(times)]
    assert len(times) == 10
    assert min(gaps) >= 0.75, gaps


@deferred_f_from_coro_f
async def test_autothrottle_still_slows_down_for_a_slow_host_with_a_crawl_delay(
    tmp_path: Path,
) -> None:
    """A Crawl-delay is a floor, not the pace: AutoThrottle still spaces requests to a slow
    host further apart (a site that asks for a delay gets no more load than one that does
    not)."""
    slow = slow_pages(0.8)
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nCrawl-delay: 0.1\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(12))), content_type=XML
            ),
            **{f"/p{i}": slow for i in range(12)},
        }
    )
    polite = {
        "DOWNLOAD_DELAY": 0.05,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": 0.05,
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    }
    with site:
        await audit(site, tmp_path, settings=polite)
    times = sorted(t for t, path in site.log if path.startswith("/p"))
    gaps = [round(b - a, 2) for a, b in itertools.pairwise(times)]
    assert len(times) == 12
    assert min(gaps) >= 0.08, gaps  # the Crawl-delay, before any answer came
    # Once 0.8 s answers came, AutoThrottle aims at one request in flight: far above 0.1 s.
    assert min(gaps[-3:]) >= 0.4, gaps


@deferred_f_from_coro_f
async def test_a_stop_under_a_crawl_delay_sends_few_more_requests(tmp_path: Path) -> None:
    """Requests wait in the host's slot one Crawl-delay apart: only a couple are kept there,
    so a stop (here CLOSESPIDER_TIMEOUT, as Ctrl-C) does not go on sending a queue of them."""
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nCrawl-delay: 0.5\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(40))), content_type=XML
            ),
            **{f"/p{i}": page() for i in range(40)},
        }
    )
    with site:
        await audit(site, tmp_path, settings={"CLOSESPIDER_TIMEOUT": 1.5})
    pages = sum(n for path, n in site.hits.items() if path.startswith("/p"))
    # About three pages in 1.5 s, then at most the two waiting in the slot (and one on its way
    # when the stop came); without the limit, the whole queue of 16 went out too.
    assert pages <= 9, pages


@pytest.mark.parametrize(
    "pacing",
    [
        pytest.param({}, id="default-politeness"),
        pytest.param({"AUTOTHROTTLE_ENABLED": False}, id="download-delay"),
        pytest.param({"DOWNLOAD_DELAY": 0}, id="autothrottle"),
    ],
)
@deferred_f_from_coro_f
async def test_a_stop_under_any_pacing_sends_few_more_requests(
    tmp_path: Path, pacing: dict[str, Any]
) -> None:
    """Without a Crawl-delay the host's slot paces requests too (the base delay, AutoThrottle):
    a stop (as Ctrl-C, once a few pages are in) must not go on sending a queue of them."""
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(40))), content_type=XML
            ),
            **{f"/p{i}": page() for i in range(40)},
        }
    )
    polite = {
        name: getattr(project_module, name)
        for name in (
            "DOWNLOAD_DELAY",
            "AUTOTHROTTLE_ENABLED",
            "CONCURRENT_REQUESTS_PER_DOMAIN",
            "CONCURRENT_REQUESTS",
        )
    }
    crawler = get_crawler(
        AuditSpider,
        {
            **project_settings(**{**polite, **pacing}),
            "FEEDS": {str(tmp_path / "r.jsonl"): {"format": "jsonlines"}},
            "CLOSESPIDER_TIMEOUT": 60,
        },
    )
    stopped_at: list[float] = []

    def received(response: Any, **kwargs: Any) -> None:
        pages = sum(n for path, n in site.hits.items() if path.startswith("/p"))
        if pages >= 3 and not stopped_at:
            stopped_at.append(time.monotonic())
            deferred_from_coro(crawler.stop_async())

    crawler.signals.connect(received, signal=signals.response_received)
    with site:
        await crawler.crawl_async(domain=site.base)
        after = [path for when, path in site.log if when > stopped_at[0]]
    assert crawler.stats.get_value("finish_reason") == "shutdown"
    # At most the two waiting in the slot (and one on its way when the stop came).
    assert len(after) <= 3, after


@deferred_f_from_coro_f
async def test_depth_and_count_caps_end_fan_out_with_findings(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/root.xml\n", content_type="text/plain"),
            "/root.xml": Page(body=index("{base}/level1.xml"), content_type=XML),
            "/level1.xml": Page(body=index("{base}/level2.xml"), content_type=XML),
            "/level2.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
        }
    )
    with site:
        records = await audit(site, tmp_path, settings={"SITEMAPAUDIT_MAX_INDEX_DEPTH": 1})
    sitemaps = issues_by_url(records, "sitemap")
    assert sitemaps == {
        f"{site.base}/root.xml": [],
        f"{site.base}/level1.xml": ["nested_index", "index_too_deep"],
    }
    assert site.hits["/level2.xml"] == 0

    wide = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/root.xml\n", content_type="text/plain"),
            "/root.xml": Page(
                body=index(*(f"{{base}}/s{i}.xml" for i in range(6))), content_type=XML
            ),
            **{
                f"/s{i}.xml": Page(body=urlset(url("{base}/a")), content_type=XML) for i in range(6)
            },
            "/a": page(),
        }
    )
    (tmp_path / "wide").mkdir()
    with wide:
        records = await audit(wide, tmp_path / "wide", settings={"SITEMAPAUDIT_MAX_SITEMAPS": 3})
    sitemaps = issues_by_url(records, "sitemap")
    assert sitemaps[f"{wide.base}/root.xml"] == ["sitemap_limit"]
    assert len(sitemaps) == 3
    assert sum(wide.hits[f"/s{i}.xml"] for i in range(6)) == 2


@deferred_f_from_coro_f
async def test_homepage_redirect_is_followed_for_discovery(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/": Page(status=301, headers=[("Location", "/en/")]),
            "/en/": Page(body=html('<link rel="alternate sitemap" href="/en/sitemap.xml">')),
            "/en/sitemap.xml": Page(body=urlset(url("{base}/en/a")), content_type=XML),
            "/en/a": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    sitemaps = {r["url"]: r["found_via"] for r in by_record(records, "sitemap")}
    assert sitemaps == {f"{site.base}/en/sitemap.xml": "html-link"}
    assert site.hits["/sitemap.xml"] == 0


@deferred_f_from_coro_f
async def test_a_homepage_too_long_to_read_is_read_up_to_its_limit(tmp_path: Path) -> None:
    # 11 MiB of body after its head, sent as a page of unknown length: the audit reads the
    # first 10 MiB, finds the sitemap its head names, and does not wait for the rest.
    head = '<html><head><link rel="sitemap" href="/s.xml"></head><body>'
    site = TestSite(
        {
            "/": Page(body=head + "x" * (11 << 20), chunked=True, trickle=(1 << 18, 0.005)),
            "/s.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
            "/a": page(),
        }
    )
    with site:
        records, crawler = await run_audit(site.base, tmp_path / "report.jsonl")
    assert {r["url"]: r["found_via"] for r in by_record(records, "sitemap")} == {
        f"{site.base}/s.xml": "html-link"
    }
    assert crawler.stats.get_value("sitemapaudit/homepage/stopped_at_read_limit") == 1
    assert crawler.stats.get_value("downloader/exception_count") is None


HREFLANG_NS = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def alt_url(loc: str, *alternates: tuple[str, str]) -> str:
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>'
        for lang, href in alternates
    )
    return f"<url><loc>{loc}</loc>{links}</url>"


@deferred_f_from_coro_f
async def test_hreflang_reciprocity_is_checked_across_sitemaps(tmp_path: Path) -> None:
    en = alt_url("{base}/en", ("en", "{base}/en"), ("de", "{base}/de"), ("fr", "{base}/fr"))
    de = alt_url("{base}/de", ("de", "{base}/de"), ("en", "{base}/en"))
    fr = alt_url("{base}/fr", ("fr", "{base}/fr"))
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/a.xml\nSitemap: {base}/b.xml\n", content_type="text/plain"
            ),
            "/a.xml": Page(body=f"<urlset {HREFLANG_NS}>{en}</urlset>", content_type=XML),
            "/b.xml": Page(body=f"<urlset {HREFLANG_NS}>{de}{fr}</urlset>", content_type=XML),
            "/en": page(),
            "/de": page(),
            "/fr": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert issues_by_url(records) == {
        f"{site.base}/en": ["hreflang_not_reciprocal"],
        f"{site.base}/de": [],
        f"{site.base}/fr": [],
    }
    assert issues_by_url(records, "sitemap") == {f"{site.base}/a.xml": [], f"{site.base}/b.xml": []}


@deferred_f_from_coro_f
async def test_hreflang_findings_of_a_sitemap_are_in_its_record(tmp_path: Path) -> None:
    en = alt_url(
        "{base}/en",
        ("en", "{base}/en"),
        ("x-default", "{base}/en"),
        ("en-GB", "{base}/uk"),
        ("en-gb", "{base}/gb"),
    )
    uk = alt_url(
        "{base}/uk",
        ("en", "{base}/en"),
        ("x-default", "{base}/en"),
        ("en-GB", "{base}/uk"),
        ("und", "{base}/any"),
        ("fil", "{base}/ph"),
    )
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=f"<urlset {HREFLANG_NS}>\n{en}\n{uk}\n</urlset>", content_type=XML),
            "/en": page(),
            "/uk": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    (sitemap,) = by_record(records, "sitemap")
    assert sitemap["issues"] == ["hreflang_invalid", "hreflang_unsupported", "hreflang_conflict"]
    assert sitemap["errors"] == [
        "hreflang_invalid: line 3: hreflang 'und': language 'und' means \"undetermined\" and "
        "names no language (a page for any language is 'x-default'), so Google ignores this "
        "annotation",
        "hreflang_unsupported: line 3: hreflang 'fil': language 'fil' has three letters and no "
        "two-letter ISO 639-1 code; Google documents only ISO 639-1 languages for hreflang, so "
        "it may ignore this annotation",
        f"hreflang_conflict: line 2: <url> {site.base}/en lists several URLs for one hreflang "
        f"value: 'en-GB' ({site.base}/uk, {site.base}/gb as 'en-gb'); each value must name one "
        "URL, or search engines cannot tell which page is meant and may ignore the annotation",
    ]


@deferred_f_from_coro_f
async def test_an_alternate_href_that_is_no_absolute_url_is_reported_not_blamed(
    tmp_path: Path,
) -> None:
    en = alt_url("{base}/en", ("en", "{base}/en"), ("de", "/de"), ("fr", "ftp://127.0.0.1/fr"))
    de = alt_url("{base}/de", ("de", "{base}/de"), ("en", "{base}/en"))
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=f"<urlset {HREFLANG_NS}>\n{en}\n{de}\n</urlset>", content_type=XML),
        }
    )
    with site:
        records = await audit(site, tmp_path, fetch_urls="no")
    assert issues_by_url(records) == {f"{site.base}/en": [], f"{site.base}/de": []}
    (sitemap,) = by_record(records, "sitemap")
    assert sitemap["issues"] == ["invalid_url"]
    google = (
        "; Google requires hreflang alternate URLs to be fully qualified, with the http or "
        "https scheme, and ignores this annotation (the reciprocity check leaves it out)"
    )
    assert sitemap["errors"] == [
        "invalid_url: line 2: xhtml:link hreflang=\"de\" href '/de' is not a valid http(s) URL: "
        f"it is relative: it has no scheme (http:// or https://){google}",
        "invalid_url: line 2: xhtml:link hreflang=\"fr\" href 'ftp://127.0.0.1/fr' is not a "
        f"valid http(s) URL: its scheme 'ftp' is not http or https{google}",
    ]


@deferred_f_from_coro_f
async def test_redirect_to_a_very_long_url_keeps_its_record(tmp_path: Path) -> None:
    """Scrapy's UrlLengthMiddleware would drop the hop (over 2,083 characters) without a
    callback, and the listed URL would be missing from the report."""
    long = "/" + "y" * 2100
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/r")), content_type=XML),
            "/r": Page(status=301, headers=[("Location", "{base}" + long)]),
            long: page('<meta name="robots" content="noindex">'),
        }
    )
    with site:
        records = (await run_audit(site.base, tmp_path / "r.jsonl"))[0]
    (record,) = by_record(records, "url")
    assert record["url"] == f"{site.base}/r"
    assert record["final_url"] == site.base + long
    assert [hop["status"] for hop in record["redirect_chain"]] == [301]
    assert record["noindex"] == ["meta:robots"]
    assert site.hits[long] == 1


@deferred_f_from_coro_f
async def test_a_sitemap_named_by_robots_txt_and_the_homepage_is_found_via_robots_txt(
    tmp_path: Path,
) -> None:
    """Whichever answer comes first: here the homepage's, robots.txt being slow."""
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/both.xml\n", content_type="text/plain", delay=0.5
            ),
            "/": Page(
                body=html(
                    '<link rel="sitemap" href="/both.xml"><link rel="sitemap" href="/home.xml">'
                )
            ),
            "/both.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
            "/home.xml": Page(body=urlset(url("{base}/b")), content_type=XML),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path, fetch_urls="no")
        assert site.hits["/both.xml"] == 1
    sitemaps = {r["url"]: r["found_via"] for r in by_record(records, "sitemap")}
    assert sitemaps == {
        f"{site.base}/both.xml": "robots.txt",
        f"{site.base}/home.xml": "html-link",
    }
    assert len(by_record(records, "url")) == 2


@deferred_f_from_coro_f
async def test_a_site_that_redirects_to_another_host_says_so(tmp_path: Path) -> None:
    """Neither redirect is followed (nothing off the audited host is requested): robots.txt
    counts as not found, and the summary says where robots.txt and the homepage went."""
    other = TestSite({"/robots.txt": Page(body="User-agent: *\nDisallow: /\n")})
    site = TestSite(
        {
            "/robots.txt": lambda _site, _path: Page(
                status=301, headers=[("Location", f"{other.base}/robots.txt")]
            ),
            "/": lambda _site, _path: Page(status=308, headers=[("Location", f"{other.base}/")]),
            "/sitemap.xml": Page(
                body=urlset(url("{base}/ok"), url(f"{other.base}/x")), content_type=XML
            ),
            "/ok": page(),
        }
    )
    with site, other:
        records, crawler = await run_audit(site.base, tmp_path / "report.jsonl")
    assert issues_by_url(records, "sitemap") == {f"{site.base}/sitemap.xml": []}
    assert issues_by_url(records) == {f"{site.base}/ok": [], f"{other.base}/x": ["off_host"]}
    summary = by_record(records, "summary")[0]
    assert summary["robots_txt"] == {
        "outcome": "allow_all",
        "status": 301,
        "sitemaps": 0,
        "crawl_delay": None,
    }
    robots_note, homepage_note = summary["notes"]
    assert robots_note.startswith(
        f"robots.txt of {site.base} redirects to {other.base}/robots.txt, on another host"
    )
    assert "counts as not found" in robots_note
    assert homepage_note.startswith(f"the homepage of {site.base} redirects to {other.base}/")
    assert homepage_note.endswith(f"-a domain={other.base}")
    assert other.hits == {}
    stats = crawler.stats.get_stats()
    assert stats["sitemapaudit/discovery/robots_other_host"] == 1
    assert stats["sitemapaudit/discovery/homepage_other_host"] == 1


@deferred_f_from_coro_f
async def test_redirects_on_the_audited_host_need_no_note(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(status=301, headers=[("Location", "/robots-real.txt")]),
            "/robots-real.txt": Page(body="Sitemap: {base}/a.xml\n", content_type="text/plain"),
            "/": Page(status=301, headers=[("Location", "/home")]),
            "/home": page(),
            "/a.xml": Page(body=urlset(url("{base}/ok")), content_type=XML),
            "/ok": page(),
        }
    )
    with site:
        records, crawler = await run_audit(site.base, tmp_path / "report.jsonl")
    summary = by_record(records, "summary")[0]
    assert summary["notes"] == []
    assert summary["robots_txt"]["sitemaps"] == 1
    assert issues_by_url(records) == {f"{site.base}/ok": []}
    stats = crawler.stats.get_stats()
    assert "sitemapaudit/discovery/robots_other_host" not in stats
    assert "sitemapaudit/discovery/homepage_other_host" not in stats


def cdn_and_site() -> tuple[TestSite, TestSite]:
    """A site whose robots.txt names a sitemap on another host (a CDN, a cross-submit), and
    whose /sitemap.xml redirects there too; the CDN's sitemaps list the site's pages."""
    cdn = TestSite({})
    site = TestSite(
        {
            "/robots.txt": lambda _site, _path: Page(
                body=f"Sitemap: {cdn.base}/sitemaps/index.xml\n", content_type="text/plain"
            ),
            "/sitemap.xml": lambda _site, _path: Page(
                status=301, headers=[("Location", f"{cdn.base}/sitemaps/moved.xml")]
            ),
            "/a": page(),
            "/deep/b": page(),
        }
    )
    cdn.routes.update(
        {
            "/sitemaps/index.xml": lambda _site, _path: Page(
                body=index(f"{cdn.base}/sitemaps/pages.xml", f"{site.base}/sitemap.xml"),
                content_type=XML,
            ),
            "/sitemaps/pages.xml": lambda _site, _path: Page(
                body=urlset(url(f"{site.base}/a"), url(f"{cdn.base}/elsewhere")),
                content_type=XML,
            ),
            "/sitemaps/moved.xml": lambda _site, _path: Page(
                body=urlset(url(f"{site.base}/deep/b")), content_type=XML
            ),
        }
    )
    return site, cdn


@deferred_f_from_coro_f
async def test_sitemaps_on_a_sitemap_host_are_fetched_and_list_the_sites_urls(
    tmp_path: Path,
) -> None:
    site, cdn = cdn_and_site()
    with site, cdn:
        records, _ = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={"SITEMAPAUDIT_SITEMAP_HOSTS": cdn.base},
        )
    assert issues_by_url(records, "sitemap") == {
        f"{cdn.base}/sitemaps/index.xml": [],
        f"{cdn.base}/sitemaps/pages.xml": [],
        # Listed by the index, it redirects: the index should name the final location, read
        # under its own record.
        f"{site.base}/sitemap.xml": ["redirect"],
        f"{cdn.base}/sitemaps/moved.xml": [],
    }
    sitemaps = {r["url"]: r for r in by_record(records, "sitemap")}
    moved = sitemaps[f"{site.base}/sitemap.xml"]
    assert moved["errors"] == [
        f"redirect: redirects to {cdn.base}/sitemaps/moved.xml: {site.base}/sitemap.xml (301)"
        f" -> {cdn.base}/sitemaps/moved.xml, a sitemap this audit reads under its own name; "
        "robots.txt and indexes should name the final location"
    ]
    assert moved["url_count"] == 0
    target = sitemaps[f"{cdn.base}/sitemaps/moved.xml"]
    assert target["url_count"] == 1
    # In the place of the sitemap that redirects there.
    assert (target["found_via"], target["parent"]) == ("index", f"{cdn.base}/sitemaps/index.xml")
    # Listed by a sitemap on the sitemap host: no directory scope applies, but the URLs must
    # still be on the audited host.
    assert issues_by_url(records) == {
        f"{site.base}/a": [],
        f"{site.base}/deep/b": [],
        f"{cdn.base}/elsewhere": ["off_host"],
    }
    assert cdn.hits["/elsewhere"] == 0
    assert by_record(records, "summary")[0]["settings"]["sitemap_hosts"] == [cdn.base]


@deferred_f_from_coro_f
async def test_without_the_sitemap_host_its_sitemaps_are_off_host_with_a_hint(
    tmp_path: Path,
) -> None:
    site, cdn = cdn_and_site()
    with site, cdn:
        records, _ = await run_audit(site.base, tmp_path / "report.jsonl")
    sitemaps = {r["url"]: r for r in by_record(records, "sitemap")}
    index_record = sitemaps[f"{cdn.base}/sitemaps/index.xml"]
    assert index_record["issues"] == ["off_host"]
    # The hint names the value that works: the host alone stands for the default ports.
    hint = (
        f"(if the site keeps its sitemaps there, add 127.0.0.1:{cdn.port} to "
        "SITEMAPAUDIT_SITEMAP_HOSTS)"
    )
    assert index_record["errors"] == [f"off_host: on another host, not fetched {hint}"]
    assert cdn.hits == {}
    assert by_record(records, "url") == []


@deferred_f_from_coro_f
async def test_a_sitemap_given_as_an_argument_is_fetched_from_any_host(tmp_path: Path) -> None:
    site, cdn = cdn_and_site()
    with site, cdn:
        records, _ = await run_audit(
            site.base, tmp_path / "report.jsonl", sitemap=f"{cdn.base}/sitemaps/pages.xml"
        )
    assert issues_by_url(records, "sitemap") == {f"{cdn.base}/sitemaps/pages.xml": []}
    assert issues_by_url(records) == {f"{site.base}/a": [], f"{cdn.base}/elsewhere": ["off_host"]}
    # Its host joins SITEMAPAUDIT_SITEMAP_HOSTS, and the summary says so.
    assert records[-1]["settings"]["sitemap_hosts"] == [cdn.base]


@deferred_f_from_coro_f
async def test_a_site_refusing_the_crawler_is_explained_in_the_summary(tmp_path: Path) -> None:
    locs = [f"{{base}}/p{i}" for i in range(12)]
    routes: dict[str, Any] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(*map(url, locs)), content_type=XML),
    }
    routes.update({f"/p{i}": Page(status=403, body="Forbidden") for i in range(12)})
    site = TestSite(routes)
    with site:
        records = await audit(site, tmp_path)
    summary = by_record(records, "summary")[0]
    assert summary["counts"] == {"http_error": 12}
    assert summary["notes"] == [
        "12 of the 12 pages requested answered 403: the site may be refusing this crawler "
        "(its User-Agent, see USER_AGENT, or its IP address); their http_error findings say "
        "little about the pages"
    ]


@deferred_f_from_coro_f
async def test_relative_atom_links_are_resolved_against_where_the_feed_came_from(
    tmp_path: Path,
) -> None:
    """RFC 4287: a relative href is resolved against xml:base, else the document's URL (the
    one it was retrieved from, after redirects)."""
    feed = (
        '<feed xmlns="http://www.w3.org/2005/Atom">'
        '<entry><link rel="alternate" href="post-1"/></entry>'
        '<entry xml:base="/blog/2024/"><link href="post-2"/></entry>'
        "</feed>"
    )
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/feed\n", content_type="text/plain"),
            "/feed": Page(status=301, headers=[("Location", "/blog/feed.atom")]),
            "/blog/feed.atom": Page(body=feed, content_type="application/atom+xml"),
            "/blog/post-1": page(),
            "/blog/2024/post-2": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert issues_by_url(records) == {
        f"{site.base}/blog/post-1": [],
        f"{site.base}/blog/2024/post-2": [],
    }
    assert site.hits["/blog/post-1"] == 1


@deferred_f_from_coro_f
async def test_a_sitemap_that_redirects_scopes_its_urls_by_either_of_its_locations(
    tmp_path: Path,
) -> None:
    """sitemaps.org's location rule for a sitemap found at /r/ that lives at /feeds/: a URL in
    either directory is in scope, one in neither is not."""
    feed = (
        '<feed xmlns="http://www.w3.org/2005/Atom">'
        '<entry><link href="post-1"/></entry>'
        '<entry><link href="{base}/r/post-2"/></entry>'
        '<entry><link href="/elsewhere/post-3"/></entry>'
        "</feed>"
    )
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/r/atom.xml\n", content_type="text/plain"),
            "/r/atom.xml": Page(status=301, headers=[("Location", "/feeds/atom.xml")]),
            "/feeds/atom.xml": Page(body=feed, content_type="application/atom+xml"),
            "/feeds/post-1": page(),
            "/r/post-2": page(),
            "/elsewhere/post-3": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert issues_by_url(records) == {
        f"{site.base}/feeds/post-1": [],
        f"{site.base}/r/post-2": [],
        f"{site.base}/elsewhere/post-3": ["out_of_scope"],
    }


@deferred_f_from_coro_f
async def test_a_listed_url_that_loops_or_redirects_too_often_says_which(tmp_path: Path) -> None:
    chain = {
        f"/r/hop{n}": Page(status=301, headers=[("Location", f"/r/hop{n + 1}")]) for n in range(13)
    }
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(url("{base}/r/loop1"), url("{base}/r/self"), url("{base}/r/hop0")),
                content_type=XML,
            ),
            "/r/loop1": Page(status=301, headers=[("Location", "/r/loop2")]),
            "/r/loop2": Page(status=301, headers=[("Location", "/r/loop1")]),
            "/r/self": Page(status=302, headers=[("Location", "/r/self")]),
            **chain,
            "/r/hop13": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    errors = {r["url"]: r["errors"] for r in by_record(records, "url")}
    loop = f"a loop: {site.base}/r/loop1 redirects again after 2 hops"
    assert errors[f"{site.base}/r/loop1"] == [
        f"redirect: redirects 2 times without reaching a page ({loop})",
        f"redirect_loop: {loop}",
    ]
    loop = f"a loop: {site.base}/r/self redirects again after 1 hop"
    assert errors[f"{site.base}/r/self"] == [
        f"redirect: redirects 1 time without reaching a page ({loop})",
        f"redirect_loop: {loop}",
    ]
    past = f"more than 10 redirects: {site.base}/r/hop11 was not requested"
    assert errors[f"{site.base}/r/hop0"] == [
        f"redirect: redirects 11 times without reaching a page ({past})",
        f"redirect_loop: {past}",
    ]
    # The report's chain keeps its documented fields.
    record = next(r for r in by_record(records, "url") if r["url"] == f"{site.base}/r/loop1")
    assert record["redirect_chain"] == [
        {"url": f"{site.base}/r/loop1", "status": 301},
        {"url": f"{site.base}/r/loop2", "status": 301},
    ]


@deferred_f_from_coro_f
async def test_a_sitemap_that_redirects_in_a_loop_says_so_readably(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: /sl1.xml\n", content_type="text/plain"),
            "/sl1.xml": Page(status=301, headers=[("Location", "/sl2.xml")]),
            "/sl2.xml": Page(status=302, headers=[("Location", "/sl1.xml")]),
        }
    )
    with site, caplog.at_level(logging.WARNING):
        records = await audit(site, tmp_path)
    (record,) = by_record(records, "sitemap")
    sl1, sl2 = f"{site.base}/sl1.xml", f"{site.base}/sl2.xml"
    assert record["issues"] == ["redirect_loop"]
    assert record["errors"] == [
        f"redirect_loop: a loop: {sl1} redirects again after 2 hops: "
        f"{sl1} (301) -> {sl2} (302) -> {sl1}"
    ]
    assert site.hits["/sl1.xml"] == site.hits["/sl2.xml"] == 1
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("sitemap ")]
    assert line == f"sitemap {sl1} not read: {record['errors'][0]}"


@deferred_f_from_coro_f
async def test_every_page_received_before_a_stop_is_recorded_or_counted(tmp_path: Path) -> None:
    """A CLOSESPIDER limit stops the audit while a sitemap is still being fetched: the pages
    fetched meanwhile wait for it (their records name every sitemap listing them)."""
    locs = [url(f"{{base}}/p{i}") for i in range(56)]
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=index(*[f"{{base}}/s{k}.xml" for k in range(4)]), content_type=XML),
            **{
                f"/s{k}.xml": Page(
                    body=urlset(*locs[k * 14 : (k + 1) * 14]),
                    content_type=XML,
                    delay=2.0 if k == 3 else 0.0,
                )
                for k in range(4)
            },
            **{f"/p{i}": page() for i in range(56)},
        }
    )
    with site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            settings={"SITEMAPAUDIT_UNTHROTTLED": True, "CLOSESPIDER_PAGECOUNT": 40},
        )
    stats = crawler.stats.get_stats()
    fetched = sum(site.hits[f"/p{i}"] for i in range(56))
    unrecorded = stats.get("sitemapaudit/pages/unrecorded", 0)
    after_close = stats.get("sitemapaudit/pages/after_close", 0)
    assert fetched > 0
    assert len(by_record(records, "url")) + unrecorded + after_close == fetched
    if unrecorded:
        assert (
            f"({unrecorded} more {'was' if unrecorded == 1 else 'were'} requested, but the audit "
            "stopped" in (records[-1]["notes"][0])
        )


@deferred_f_from_coro_f
async def test_urls_settled_without_a_request_are_not_counted_as_unrecorded_pages(
    tmp_path: Path,
) -> None:
    """URLs that robots.txt blocks, or that are not to be fetched, are settled without a
    request while a sitemap is still read; a stop then leaves their records unwritten too, but
    they are no pages fetched."""
    locs = [url(f"{{base}}/p{i}") for i in range(42)]
    unrequested = [
        *(url(f"{{base}}/private/{i}") for i in range(5)),
        *(url(f"https://elsewhere.example/{i}") for i in range(3)),
    ]
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nDisallow: /private/\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/s.xml": Page(body=index(*[f"{{base}}/s{k}.xml" for k in range(4)]), content_type=XML),
            # First in, so the URLs not to request are handed out before the stop.
            "/s0.xml": Page(body=urlset(*unrequested, *locs[:14]), content_type=XML),
            **{
                f"/s{k}.xml": Page(
                    body=urlset(*locs[k * 14 : (k + 1) * 14]), content_type=XML, delay=0.3
                )
                for k in (1, 2)
            },
            "/s3.xml": Page(body=urlset(url("{base}/last")), content_type=XML, delay=3.0),
            **{f"/p{i}": page() for i in range(42)},
            **{f"/private/{i}": page() for i in range(5)},
        }
    )
    with site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            settings={"SITEMAPAUDIT_UNTHROTTLED": True, "CLOSESPIDER_PAGECOUNT": 30},
        )
    stats = crawler.stats.get_stats()
    assert stats["sitemapaudit/urls/robots_blocked"] == 5
    assert sum(site.hits[f"/private/{i}"] for i in range(5)) == 0
    fetched = sum(site.hits[f"/p{i}"] for i in range(42))
    unrecorded = stats.get("sitemapaudit/pages/unrecorded", 0)
    after_close = stats.get("sitemapaudit/pages/after_close", 0)
    assert by_record(records, "url") == []  # every record waited for /s3.xml
    assert 0 < unrecorded == fetched - after_close
    assert (
        f"({unrecorded} more were requested, but the audit stopped before their records were "
        "written: a URL's record waits until every sitemap is read)"
    ) in records[-1]["notes"][0]


@deferred_f_from_coro_f
async def test_an_ipv4_host_written_another_way_is_the_audited_host(tmp_path: Path) -> None:
    # 127.1, 0x7f000001, 0177.0.0.1, 2130706433 and 127.0.0.1. are all 127.0.0.1 as the URL
    # Standard (browsers, Google) reads them: on the audited host, in the sitemap's scope, the
    # same page for a canonical, requested as 127.0.0.1; the record keeps the URL as listed.
    site = TestSite({})
    port = site.port
    spellings = ["127.1", "0x7f000001", "0177.0.0.1", "2130706433", "127.0.0.1."]
    listed = [f"http://{host}:{port}/d/{i}" for i, host in enumerate(spellings)]
    site.routes.update(
        {
            "/robots.txt": Page(
                body=f"Sitemap: {{base}}/d/s.xml\nSitemap: http://127.1.:{port}/d/s.xml\n",
                content_type="text/plain",
            ),
            "/": page(),
            "/d/s.xml": Page(
                body=urlset(*(url(loc) for loc in listed), url("{base}/d/canonical")),
                content_type=XML,
            ),
            **{f"/d/{i}": page() for i in range(len(spellings))},
            "/d/canonical": page(
                f'<link rel="canonical" href="http://2130706433:{port}/d/canonical">'
            ),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert [r["url"] for r in by_record(records, "sitemap")] == [f"{site.base}/d/s.xml"]
    urls = {r["url"]: r for r in by_record(records, "url")}
    assert {loc: r["issues"] for loc, r in urls.items()} == {
        loc: [] for loc in [*listed, f"{site.base}/d/canonical"]
    }
    for i, loc in enumerate(listed):
        assert (urls[loc]["status"], urls[loc]["final_url"]) == (200, f"{site.base}/d/{i}")
        assert site.request_headers[f"/d/{i}"]["host"] == f"127.0.0.1:{port}"
    assert site.hits["/d/s.xml"] == 1


@deferred_f_from_coro_f
async def test_dot_segments_are_removed_before_the_request_and_robots_txt(
    tmp_path: Path,
) -> None:
    # Browsers and Googlebot remove "." and ".." segments (also escaped: %2e) from a URL's path
    # (WHATWG URL Standard): a strict server answers only the resolved path, and robots.txt
    # rules are matched against it. The record keeps the URL as listed; a URL listed both ways
    # has two records, neither a duplicate.
    listed = [
        "{base}/./dotpage",
        "{base}/a/../dotpage2",
        "{base}/ok/./",
        "{base}/blocked/../ok",
        "{base}/x/%2E%2e/dotpage3",
        "{base}/dotpage",
        "{base}/ok/../blocked/page",
    ]
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nDisallow: /blocked\nSitemap: {base}/s.xml\n",
                content_type="text/plain",
            ),
            "/": page(),
            "/s.xml": Page(body=urlset(*(url(loc) for loc in listed)), content_type=XML),
            "/dotpage": page(),
            "/dotpage2": page(),
            "/dotpage3": page(),
            "/ok/": page(),
            "/ok": page(),
            "/blocked/page": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    urls = {r["url"]: r for r in by_record(records, "url")}
    locs = [loc.replace("{base}", site.base) for loc in listed]
    assert {loc: urls[loc]["issues"] for loc in locs} == {
        **{loc: [] for loc in locs[:-1]},
        locs[-1]: ["robots_blocked"],
    }
    for loc, path in zip(
        locs[:-1], ["/dotpage", "/dotpage2", "/ok/", "/ok", "/dotpage3", "/dotpage"], strict=True
    ):
        assert (urls[loc]["status"], urls[loc]["final_url"]) == (200, site.base + path)
    assert not urls[locs[3]]["robots_blocked"]
    assert urls[locs[-1]]["robots_blocked"]
    hits = site.hits
    assert (hits["/dotpage"], hits["/dotpage2"], hits["/ok/"], hits["/ok"]) == (2, 1, 1, 1)
    assert hits["/blocked/page"] == 0
    assert not any("/." in path or "%2" in path.lower() for path in hits)


def _after(site: TestSite, path: str, page: Page) -> Any:
    """A route that answers ``page`` only once ``path`` was served and the audit had time to
    read it: which of two sitemaps the audit handles first, decided by the test."""

    def route(_: TestSite, __: str) -> Page:
        deadline = time.monotonic() + 10
        while not site.hits[path] and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        return page

    return route


async def _redirect_and_index_audit(tmp_path: Path, *, index_first: bool) -> dict[str, Any]:
    redirect = Page(status=301, headers=[("Location", "/s-a.xml")])
    listing = Page(body=index("{base}/s-a.xml"), content_type=XML)
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/redir-cross.xml\nSitemap: {base}/idx.xml\n",
                content_type="text/plain",
            ),
            "/s-a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML),
            "/p1": page(),
        }
    )
    if index_first:
        site.routes["/idx.xml"] = listing
        site.routes["/redir-cross.xml"] = _after(site, "/s-a.xml", redirect)
    else:
        site.routes["/redir-cross.xml"] = redirect
        site.routes["/idx.xml"] = _after(site, "/s-a.xml", listing)
    with site:
        records = await audit(site, tmp_path / ("index" if index_first else "redirect"))
    base = site.base
    return {
        "sitemaps": {
            r["url"].replace(base, ""): (r["issues"], r["url_count"], r["child_count"])
            for r in by_record(records, "sitemap")
        },
        "urls": {
            r["url"].replace(base, ""): [s.replace(base, "") for s in r["sitemaps"]]
            for r in by_record(records, "url")
        },
        "sitemaps_found": records[-1]["sitemaps_found"],
        "hits": site.hits["/s-a.xml"],
    }


@deferred_f_from_coro_f
async def test_a_redirect_target_an_index_lists_too_has_the_same_records_in_either_order(
    tmp_path: Path,
) -> None:
    """robots.txt names /redir-cross.xml, which redirects to /s-a.xml, and /idx.xml, which
    lists /s-a.xml: whether the redirect or the index is handled first, /s-a.xml has its own
    record with its URLs, and the sitemap that redirects lists nothing."""
    (tmp_path / "index").mkdir()
    (tmp_path / "redirect").mkdir()
    expected = {
        "sitemaps": {
            "/redir-cross.xml": (["redirect"], 0, 0),
            "/idx.xml": ([], 0, 1),
            "/s-a.xml": ([], 1, 0),
        },
        "urls": {"/p1": ["/s-a.xml"]},
        "sitemaps_found": 3,
        "hits": 1,
    }
    assert await _redirect_and_index_audit(tmp_path, index_first=True) == expected
    assert await _redirect_and_index_audit(tmp_path, index_first=False) == expected


@deferred_f_from_coro_f
async def test_an_index_listing_a_url_that_redirects_back_to_it_is_a_cycle(
    tmp_path: Path,
) -> None:
    """/idx.xml lists /toidx.xml, which redirects to /idx.xml: a loop, as if it listed
    itself; /toidx.xml has its redirect finding."""
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/idx.xml\n", content_type="text/plain"),
            "/idx.xml": Page(body=index("{base}/toidx.xml", "{base}/s.xml"), content_type=XML),
            "/toidx.xml": Page(status=301, headers=[("Location", "/idx.xml")]),
            "/s.xml": Page(body=urlset(url("{base}/p1")), content_type=XML),
            "/p1": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    sitemaps = {r["url"].replace(site.base, ""): r for r in by_record(records, "sitemap")}
    assert {path: r["issues"] for path, r in sitemaps.items()} == {
        "/idx.xml": ["index_cycle"],
        "/toidx.xml": ["redirect"],
        "/s.xml": [],
    }
    assert sitemaps["/idx.xml"]["errors"] == [
        "index_cycle: lists itself or an index above it (a loop), not read again: "
        f"{site.base}/toidx.xml"
    ]
    assert sitemaps["/idx.xml"]["child_count"] == 2
    assert site.hits["/idx.xml"] == 1
    assert records[-1]["sitemaps_found"] == 3


@deferred_f_from_coro_f
async def test_a_sitemap_redirecting_to_a_disallowed_location_is_robots_blocked(
    tmp_path: Path,
) -> None:
    """Search engines do not follow a redirect into a path robots.txt disallows: the sitemap
    that redirects there says so. The audit reads the target all the same."""
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nDisallow: /blocked\nSitemap: {base}/sm-to-blocked.xml\n",
                content_type="text/plain",
            ),
            "/sm-to-blocked.xml": Page(status=301, headers=[("Location", "/blocked/sm.xml")]),
            "/blocked/sm.xml": Page(body=urlset(url("{base}/p1")), content_type=XML),
            "/p1": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    sitemaps = {r["url"].replace(site.base, ""): r for r in by_record(records, "sitemap")}
    assert {path: r["issues"] for path, r in sitemaps.items()} == {
        "/sm-to-blocked.xml": ["redirect", "robots_blocked"],
        "/blocked/sm.xml": ["robots_blocked"],
    }
    assert sitemaps["/sm-to-blocked.xml"]["errors"][1] == (
        f"robots_blocked: redirects to {site.base}/blocked/sm.xml, which robots.txt disallows "
        "for Googlebot: search engines that obey robots.txt do not follow it"
    )
    assert sitemaps["/blocked/sm.xml"]["url_count"] == 1
    assert site.hits["/blocked/sm.xml"] == 1


@deferred_f_from_coro_f
async def test_a_page_with_two_different_locations_is_a_broken_redirect(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/two")), content_type=XML),
            "/two": Page(status=301, headers=[("Location", "/final"), ("Location", "/other")]),
            "/final": page(),
            "/other": page(),
        }
    )
    with site:
        records = await audit(site, tmp_path)
    assert issues_by_url(records) == {f"{site.base}/two": ["redirect", "redirect_broken"]}
    assert "/final" not in site.hits
    assert "/other" not in site.hits


@deferred_f_from_coro_f
async def test_a_sitemap_a_redirect_is_fetching_is_not_fetched_again_for_an_index(
    tmp_path: Path,
) -> None:
    """r.xml redirects to t.xml, which answers slowly; meanwhile m.xml lists t.xml: the
    redirect's answer is read for m.xml's listing, and t.xml is downloaded once."""
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/idx.xml\n", content_type="text/plain"),
            "/idx.xml": Page(body=index("{base}/r.xml", "{base}/m.xml"), content_type=XML),
            "/r.xml": Page(status=301, headers=[("Location", "/t.xml")]),
            "/m.xml": Page(body=index("{base}/t.xml"), content_type=XML),
            "/t.xml": Page(body=urlset(url("{base}/a")), content_type=XML, delay=1.0),
            "/a": page(),
        }
    )
    with site:
        records, crawler = await run_audit(site.base, tmp_path / "report.jsonl")
        hits = dict(site.hits)
    assert hits["/t.xml"] == 1
    sitemaps = {
        str(r["url"]).rsplit("/", 1)[1]: (
            r["found_via"],
            r["parent"] and str(r["parent"]).rsplit("/", 1)[1],
            r["issues"],
            r["url_count"],
        )
        for r in by_record(records, "sitemap")
    }
    assert sitemaps["t.xml"] == ("index", "m.xml", [], 1)
    assert sitemaps["r.xml"][2] == ["redirect"]
    assert crawler.stats.get_value("sitemapaudit/sitemaps/waited_for_redirect") == 1
    assert issues_by_url(records) == {f"{site.base}/a": []}


@deferred_f_from_coro_f
async def test_each_note_is_one_warning_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A note (robots.txt that answers 500) is logged as it happens at INFO and as a warning
    once, with the summary: the log's warning count is the count of what went wrong."""
    site = TestSite(
        {
            "/robots.txt": Page(status=500, body="down"),
            "/sitemap.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
            "/a": page(),
        }
    )
    with site, caplog.at_level(logging.INFO):
        records = await audit(site, tmp_path)
    (note,) = [n for n in records[-1]["notes"] if n.startswith("robots.txt")]
    logged = [(r.levelno, r.name) for r in caplog.records if r.getMessage() == note]
    assert logged == [
        (logging.INFO, "sitemapaudit.crawl.discovery"),
        (logging.WARNING, "sitemapaudit.pipelines"),
    ]


@deferred_f_from_coro_f
async def test_the_lines_logged_as_the_audit_closes_are_counted_in_the_stats(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The fail_on line, logged as the spider closes, counts in ``log_count/WARNING`` as
    every other warning does (an operator may alert on it)."""
    site = TestSite({"/": page()})
    with site, caplog.at_level(logging.WARNING):
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl", fail_on="error")
    assert records[-1]["fail_on"]["failed"] is True
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("fail_on=error matched (") for m in warnings), warnings
    assert crawler.stats.get_value("log_count/WARNING") == len(warnings)


@deferred_f_from_coro_f
async def test_pages_past_the_download_max_size_are_findings_not_log_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With head-only downloads off, Scrapy cancels a page larger than DOWNLOAD_MAXSIZE and
    logs a warning per page: the page's ``fetch_failed`` says it, the log has no line per URL."""
    pages = [f"/big{i}" for i in range(3)]
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(*(url("{base}" + p) for p in pages)), content_type=XML),
            **{p: Page(body="<html><head></head><body>" + "x" * 5000) for p in pages},
        }
    )
    with site, caplog.at_level(logging.INFO):
        records = await audit(
            site, tmp_path, settings={"SITEMAPAUDIT_HEAD_ONLY": False, "DOWNLOAD_MAXSIZE": 1000}
        )
    failed = [r for r in by_record(records, "url") if r["issues"] == ["fetch_failed"]]
    assert len(failed) == 3
    assert all("larger than download max size (1000)" in r["errors"][0] for r in failed)
    assert not [r for r in caplog.records if "download max size" in r.getMessage()]


@deferred_f_from_coro_f
async def test_header_lines_as_long_as_browsers_take_are_read(tmp_path: Path) -> None:
    """A 20 KB Content-Security-Policy line is read (Twisted alone stops at 16 KiB, and the
    page would be fetch_failed); one past 256 KiB still ends the download."""
    routes = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(url("{base}/long"), url("{base}/huge")), content_type=XML),
        "/long": Page(
            body=html("<meta name=robots content=noindex>"),
            headers=[("Content-Security-Policy", "default-src 'self' " + "a" * 20_000)],
        ),
        "/huge": Page(body=html(""), headers=[("Link", "<" + "b" * 300_000 + ">; rel=x")]),
    }
    with TestSite(routes) as site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl")
    got = {r["url"].removeprefix(site.base): r for r in by_record(records, "url")}
    assert (got["/long"]["status"], got["/long"]["issues"]) == (200, ["noindex"])
    assert got["/huge"]["issues"] == ["fetch_failed"]
