"""URL records settled without a request travel through the pipelines in batches: every feed
format still gets one entry per record, the stats count records, the history keeps them all."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scrapy.core.engine import ExecutionEngine
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from sitemapaudit.history.store import HistoryStore
from sitemapaudit.report.records import UrlRecordBatch
from sitemapaudit.spiders.audit import AuditSpider
from tests.support.crawl import project_settings
from tests.support.golden_site import XML, page, url, urlset
from tests.support.server import Page, TestSite

URLS = 1234  # more than two batches of the run (500 each)


@deferred_f_from_coro_f
async def test_every_feed_gets_every_record_of_an_inventory(tmp_path: Path) -> None:
    locs = [f"{{base}}/p/{i:05d}" for i in range(URLS)]
    entries = [
        url(loc, "2099-01-01" if i % 100 == 0 else "2024-01-01") for i, loc in enumerate(locs)
    ]
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(*entries), content_type=XML),
        }
    )
    feeds = {
        str(tmp_path / "r.jsonl"): {"format": "jsonlines"},
        str(tmp_path / "r.json"): {"format": "json"},  # Scrapy's own exporters
        str(tmp_path / "r.csv"): {"format": "csv", "fields": ["record", "url", "issues"]},
        str(tmp_path / "urls.csv"): {"format": "urls_csv"},
    }
    history = tmp_path / "history.sqlite3"
    settings = project_settings(FEEDS=feeds, SITEMAPAUDIT_HISTORY_PATH=str(history))
    crawler = get_crawler(AuditSpider, settings)
    with site:
        await crawler.crawl_async(domain=site.base, fetch_urls="no")
        expected = {loc.format(base=site.base) for loc in locs}

    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["record"] for r in lines].count("url") == URLS
    assert {r["url"] for r in lines if r["record"] == "url"} == expected
    future = {r["url"] for r in lines if r["record"] == "url" and r["issues"] == ["lastmod_future"]}
    assert len(future) == URLS // 100 + 1

    items = json.loads((tmp_path / "r.json").read_text())
    assert items == lines  # the same records, one JSON object each

    with (tmp_path / "r.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(lines)
    assert {r["url"] for r in rows if r["record"] == "url"} == expected

    with (tmp_path / "urls.csv").open(newline="", encoding="utf-8-sig") as fh:
        assert {r["url"] for r in csv.DictReader(fh)} == expected

    assert crawler.stats is not None
    assert crawler.stats.get_value("item_scraped_count") == len(lines)
    assert crawler.stats.get_value("sitemapaudit/records/url") == URLS
    assert crawler.stats.get_value("sitemapaudit/findings/url/lastmod_future") == len(future)

    with HistoryStore(history) as store:
        (run,) = store.runs()
        records = [r for r in store.records(run.id) if r["record"] == "url"]
    assert {r["url"] for r in records} == expected


class _CountingPipeline:
    """Counts what reaches the end of the item pipelines."""

    items: ClassVar[list[int]] = []

    def process_item(self, item: Any) -> Any:
        self.items.append(len(item.records) if isinstance(item, UrlRecordBatch) else 1)
        return item


@deferred_f_from_coro_f
async def test_fetched_pages_records_go_out_in_batches_and_none_is_lost(
    tmp_path: Path,
) -> None:
    pages = 300
    noindex = '<meta name="robots" content="noindex">'
    routes = {f"/p/{i}": page(noindex if i % 7 == 0 else "") for i in range(pages)}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(*(url(f"{{base}}{p}") for p in routes)), content_type=XML),
            **routes,
        }
    )
    _CountingPipeline.items = []
    pipelines = dict(project_settings()["ITEM_PIPELINES"])
    pipelines[f"{__name__}._CountingPipeline"] = 990
    settings = project_settings(
        FEEDS={str(tmp_path / "r.jsonl"): {"format": "jsonlines"}},
        ITEM_PIPELINES=pipelines,
        CONCURRENT_REQUESTS_PER_DOMAIN=32,
    )
    crawler = get_crawler(AuditSpider, settings)
    with site:
        await crawler.crawl_async(domain=site.base)
        expected = {f"{site.base}{p}": ["noindex"] if int(p[3:]) % 7 == 0 else [] for p in routes}

    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    urls = [r for r in lines if r["record"] == "url"]
    assert len(urls) == pages
    assert {r["url"]: r["issues"] for r in urls} == expected
    assert all(r["fetched"] and r["status"] == 200 for r in urls)
    assert crawler.stats is not None
    assert crawler.stats.get_value("item_scraped_count") == len(lines)
    # Every record went through the pipelines, in fewer items than records.
    assert sum(_CountingPipeline.items) == len(lines)
    assert len(_CountingPipeline.items) < len(lines)


@deferred_f_from_coro_f
async def test_the_crawl_ends_with_its_last_page_not_at_the_engines_next_heartbeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine looks for the end of a crawl after a response is through, and otherwise only
    # at its heartbeat. The last pages' records must be through with their responses, or the
    # crawl waits for that heartbeat: set to a minute here, so that waiting for it fails.
    monkeypatch.setattr(ExecutionEngine, "_SLOT_HEARTBEAT_INTERVAL", 60.0)
    # Large pages (read up to the end of their head), answered after the same pause: the
    # last responses arrive together.
    body = "<p>" + "x" * 200_000 + "</p>"
    routes = {f"/p/{i}": page("", body, delay=0.2) for i in range(40)}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(*(url(f"{{base}}{p}") for p in routes)), content_type=XML),
            **routes,
        }
    )
    with site:
        for run in range(6):
            report = tmp_path / f"r{run}.jsonl"
            settings = project_settings(
                FEEDS={str(report): {"format": "jsonlines"}}, CONCURRENT_REQUESTS_PER_DOMAIN=64
            )
            crawler = get_crawler(AuditSpider, settings)
            await crawler.crawl_async(domain=site.base)
            assert crawler.stats is not None
            assert crawler.stats.get_value("elapsed_time_seconds") < 30, f"run {run}"
            lines = [json.loads(x) for x in report.read_text().splitlines()]
            assert sum(r["record"] == "url" for r in lines) == len(routes)
