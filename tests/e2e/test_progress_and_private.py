"""The periodic progress line; private and link-local targets are never requested."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from sitemapaudit.progress import ProgressLog
from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, index, page, url, urlset
from tests.support.server import Page, TestSite


def slow(site: TestSite, path: str) -> Page:
    time.sleep(0.3)
    return Page(body="<html><head></head></html>")


@deferred_f_from_coro_f
async def test_a_progress_line_says_how_far_the_audit_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(12))), content_type=XML
            ),
            **{f"/p{i}": slow for i in range(12)},
        }
    )
    caplog.set_level(logging.INFO, logger="sitemapaudit.progress")
    with site:
        await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            # (Without a delay, CONCURRENT_REQUESTS_PER_DOMAIN alone does not hold: see README.)
            settings={
                "SITEMAPAUDIT_PROGRESS_INTERVAL": 1,  # (the least: the pages take 1.8 s)
                "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
                "CONCURRENT_REQUESTS": 2,
            },
        )
    lines = [r.getMessage() for r in caplog.records if r.name == "sitemapaudit.progress"]
    assert lines, "no progress line"
    assert any(" of 12 URLs done" in line and "URL/s, ETA" in line for line in lines), lines


@deferred_f_from_coro_f
async def test_private_and_link_local_targets_are_reported_not_requested(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
            "/index.xml": Page(
                body=index("{base}/s.xml", "http://169.254.169.254/latest/meta-data/"),
                content_type=XML,
            ),
            "/s.xml": Page(
                body=urlset(url("{base}/hop"), url("http://10.0.0.1/admin"), url("http://[::1]/x")),
                content_type=XML,
            ),
            "/hop": Page(status=302, headers=[("Location", "http://192.168.1.1/router")]),
            "/ok": page(),
        }
    )
    with site:
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl")
    sitemaps = {r["url"]: r["issues"] for r in by_record(records, "sitemap")}
    assert sitemaps["http://169.254.169.254/latest/meta-data/"] == ["off_host"]
    urls = {r["url"]: r for r in by_record(records, "url")}
    assert urls["http://10.0.0.1/admin"]["issues"] == ["off_host"]
    assert urls["http://[::1]/x"]["issues"] == ["off_host"]
    hop = urls[f"{site.base}/hop"]
    assert hop["issues"] == ["redirect"]
    assert hop["status"] == 302
    assert any("another host" in e for e in hop["errors"])
    # Every request went to the test site: the only host the downloader ever saw.
    assert crawler.stats.get_value("downloader/request_count") == sum(site.hits.values()) + 1


def test_the_first_progress_line_has_a_rate(caplog: pytest.LogCaptureFixture) -> None:
    counts = {"urls_known": 100, "urls_done": 5, "urls_queued": 0}
    counts.update(sitemaps_read=1, sitemaps_pending=0)
    run = SimpleNamespace(progress=lambda: dict(counts))
    progress = ProgressLog(get_crawler(), interval=60)
    progress.crawler.spider = SimpleNamespace(run=run)  # type: ignore[assignment]
    progress.start_counting()
    counts["urls_done"] = 45
    time.sleep(0.05)
    caplog.set_level(logging.INFO, logger="sitemapaudit.progress")
    progress.log()
    (line,) = [r.getMessage() for r in caplog.records if r.name == "sitemapaudit.progress"]
    assert line.startswith("progress: 45 of 100 URLs done, 0 queued, 1 sitemap read (0 pending), ")
    assert " 0.0 URL/s" not in line
    assert "ETA unknown" not in line
