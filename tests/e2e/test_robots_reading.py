"""robots.txt as the crawl reads it: a huge file is read for its first rules only, and a
redirect chain is given up after five hops, as Google gives it up."""

from __future__ import annotations

from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
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
