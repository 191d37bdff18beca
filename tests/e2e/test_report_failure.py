"""A report that cannot be written while the audit runs: the records lost are counted, the
failure is logged, and the command's exit status says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from sitemapaudit.commands.crawl import audit_failed
from sitemapaudit.spiders.audit import AuditSpider
from tests.support.crawl import project_settings
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite


@deferred_f_from_coro_f
async def test_records_that_cannot_be_written_fail_the_audit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
        "/a": Page(body="<html><head></head><body>a</body></html>"),
        "/b": Page(body="<html><head></head><body>b</body></html>"),
    }
    values = project_settings(
        FEEDS={str(tmp_path / "a-file" / "report.jsonl"): {"format": "jsonlines"}},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with TestSite(routes) as site, caplog.at_level(logging.ERROR):  # type: ignore[arg-type]
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    stats = crawler.stats.get_stats()
    assert stats["sitemapaudit/report/failed"] is True
    assert stats["sitemapaudit/report/records_lost"] == 4  # a sitemap, two URLs, the summary
    assert audit_failed(stats)
    failures = [r for r in caplog.records if "report could not be written" in r.getMessage()]
    assert len(failures) == 1
