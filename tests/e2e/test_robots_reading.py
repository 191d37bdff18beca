"""robots.txt as the crawl reads it: a huge file is read for its first rules only, and a
redirect chain is given up after five hops, as Google gives it up."""

from __future__ import annotations

from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, index, url, urlset
from tests.support.server import Page, TestSite

PAGES = {
    "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
    "/a": Page(body="<html><head></head><body>a</body></html>"),
    "/b": Page(body="<html><head></head><body>b</body></html>"),
}


def _blocked(records: list[dict[str, object]]) -> dict[str, object]:
    return {str(r["url"]).rsplit("/", 1)[1]: r["robots_blocked"] for r in by_record(records, "url")}


@deferred_f_from_coro_f
async def test_a_robots_txt_larger_than_the_download_limit_is_read_for_its_first_rules(
    tmp_path: Path,
) -> None:
    robots = "User-agent: *\nDisallow: /a\n" + "# filler line of a huge robots.txt\n" * 100_000
    routes = {"/robots.txt": Page(body=robots, content_type="text/plain"), **PAGES}
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, crawler = await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            settings={"DOWNLOAD_MAXSIZE": 1_000_000, "SITEMAPAUDIT_HISTORY_PATH": ""},
            sitemap=f"{site.base}/s.xml",
        )
    assert len(robots) > 3_000_000
    assert records[-1]["robots_txt"]["outcome"] == "rules"
    assert _blocked(records) == {"a": True, "b": False}
    stats = crawler.stats.get_stats()
    assert stats["sitemapaudit/robots/stopped_at_read_limit"] == 1
    assert stats["downloader/response_bytes"] < 1_000_000  # the robots.txt was not read whole


@deferred_f_from_coro_f
async def test_a_robots_txt_that_redirects_six_times_counts_as_not_found(tmp_path: Path) -> None:
    hops = {f"/r{i}": Page(status=301, headers=[("Location", f"/r{i + 1}")]) for i in range(6)}
    routes = {
        "/robots.txt": Page(status=301, headers=[("Location", "/r0")]),
        **hops,
        "/r6": Page(body="User-agent: *\nDisallow: /\n", content_type="text/plain"),
        **PAGES,
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, _ = await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            settings={"SITEMAPAUDIT_HISTORY_PATH": ""},
            sitemap=f"{site.base}/s.xml",
        )
        hits = dict(site.hits)
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "allow_all"
    assert _blocked(records) == {"a": False, "b": False}
    assert "redirects in a loop or more than 5 times" in " ".join(summary["notes"])
    assert "/r5" not in hits  # five redirects followed (robots.txt, /r0 ... /r4), not a sixth


def _sitemap_issues(records: list[dict[str, object]]) -> dict[str, object]:
    return {str(r["url"]).rsplit("/", 1)[1]: r["issues"] for r in by_record(records, "sitemap")}


@deferred_f_from_coro_f
async def test_a_sitemap_that_robots_txt_disallows_is_read_and_reported(tmp_path: Path) -> None:
    routes = {
        "/robots.txt": Page(
            body="User-agent: *\nDisallow: /maps/\nSitemap: {base}/maps/s.xml\n",
            content_type="text/plain",
        ),
        "/maps/s.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
        "/a": PAGES["/a"],
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, _ = await run_audit(
            site.base, tmp_path / "r.jsonl", settings={"SITEMAPAUDIT_HISTORY_PATH": ""}
        )
    assert _sitemap_issues(records) == {"s.xml": ["robots_blocked"]}
    assert _blocked(records) == {"a": False}  # its entries are audited all the same


@deferred_f_from_coro_f
async def test_a_sitemap_argument_waits_for_robots_txt(tmp_path: Path) -> None:
    """robots.txt answers late: the sitemap given as an argument is requested after it, so
    that its record says, every time, that robots.txt disallows it."""
    routes = {
        "/robots.txt": Page(
            body="User-agent: *\nDisallow: /maps/\n", content_type="text/plain", delay=0.5
        ),
        "/maps/s.xml": Page(body=urlset(url("{base}/a")), content_type=XML),
        "/a": PAGES["/a"],
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, _ = await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            settings={"SITEMAPAUDIT_HISTORY_PATH": ""},
            sitemap=f"{site.base}/maps/s.xml",
        )
        asked = {path: when for when, path in reversed(site.log)}
    assert asked["/maps/s.xml"] - asked["/robots.txt"] >= 0.45  # after robots.txt's answer
    assert _sitemap_issues(records) == {"s.xml": ["robots_blocked"]}


def _errors(records: list[dict[str, object]]) -> dict[str, object]:
    return {str(r["url"]).rsplit("/", 1)[1]: r["errors"] for r in by_record(records, "sitemap")}


@deferred_f_from_coro_f
async def test_a_robots_txt_that_answers_5xx_disallows_the_sitemaps_too(tmp_path: Path) -> None:
    """Every URL is disallowed, sitemaps included, whichever way they were found: the
    homepage's link, and the index that lists the child."""
    routes = {
        "/robots.txt": Page(status=503, body="down"),
        "/": Page(body='<html><head><link rel="sitemap" href="/i.xml"></head></html>'),
        "/i.xml": Page(body=index("{base}/s.xml"), content_type=XML),
        **PAGES,
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings={"RETRY_TIMES": 0})
        hits = dict(site.hits)
    sitemaps = {
        str(r["url"]).rsplit("/", 1)[1]: r["found_via"] for r in by_record(records, "sitemap")
    }
    assert sitemaps == {"i.xml": "html-link", "s.xml": "index"}
    assert _sitemap_issues(records) == {"i.xml": ["robots_blocked"], "s.xml": ["robots_blocked"]}
    assert _errors(records)["s.xml"] == [
        "robots_blocked: robots.txt answered with status 503, so as RFC 9309 requires every URL "
        "is disallowed, this sitemap included: search engines that obey robots.txt do not "
        "fetch it"
    ]
    assert _blocked(records) == {"a": True, "b": True}
    # A URL's finding says why too: no rule disallows it.
    assert {tuple(r["errors"]) for r in by_record(records, "url")} == {
        (
            "robots_blocked: robots.txt answered with status 503, so as RFC 9309 requires "
            "every URL is disallowed: search engines that obey robots.txt do not fetch it",
        )
    }
    assert "/a" not in hits
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "disallow_all"
    assert summary["counts"]["robots_blocked"] == 4
    assert summary["notes"] == [
        "robots.txt could not be read (status 503); as RFC 9309 requires, every URL is "
        "treated as disallowed"
    ]


@deferred_f_from_coro_f
async def test_an_unreachable_robots_txt_disallows_a_sitemap_at_a_common_path(
    tmp_path: Path,
) -> None:
    routes = {
        "/robots.txt": Page(drop=True),
        "/": Page(body="<html><head></head><body>home</body></html>"),
        "/sitemap.xml": PAGES["/s.xml"],
        **PAGES,
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings={"RETRY_TIMES": 0})
    [sitemap] = by_record(records, "sitemap")
    assert sitemap["found_via"] == "common-path"
    assert sitemap["errors"] == [
        "robots_blocked: robots.txt could not be fetched, so as RFC 9309 requires every URL "
        "is disallowed, this sitemap included: search engines that obey robots.txt do not "
        "fetch it"
    ]
    assert _blocked(records) == {"a": True, "b": True}
    assert {tuple(r["errors"]) for r in by_record(records, "url")} == {
        (
            "robots_blocked: robots.txt could not be fetched, so as RFC 9309 requires every "
            "URL is disallowed: search engines that obey robots.txt do not fetch it",
        )
    }
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "disallow_all"
    [note] = summary["notes"]
    assert note.startswith("robots.txt could not be read (")


@deferred_f_from_coro_f
async def test_an_html_page_served_as_robots_txt_gets_a_note(tmp_path: Path) -> None:
    routes = {
        "/robots.txt": Page(body="<!DOCTYPE html><html><body>Not found</body></html>"),
        "/sitemap.xml": PAGES["/s.xml"],
        **PAGES,
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl")
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "rules"
    assert summary["notes"] == [
        f"robots.txt of {site.base} answered with an HTML page, not a robots.txt (a soft "
        "404?): search engines find no rules or Sitemap lines in it, so every URL is allowed"
    ]
    assert crawler.stats.get_value("sitemapaudit/discovery/robots_html") == 1
