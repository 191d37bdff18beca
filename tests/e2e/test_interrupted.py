"""An audit that stops early (Ctrl-C, SIGTERM, a CLOSESPIDER limit) still ends its report with
a summary, marked incomplete, keeps its history run unfinished and exits 1."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from sitemapaudit.history import HistoryStore
from sitemapaudit.report.records import UrlRecordBatch
from sitemapaudit.spiders.audit import AuditSpider
from tests.support.crawl import by_record, project_settings, run_audit, start_audit_process
from tests.support.golden_site import XML, slow_pages, url, urlset
from tests.support.golden_site import index as sitemapindex
from tests.support.server import Page, TestSite

PAGES = 200


def site_of_slow_pages() -> TestSite:
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(
            body=urlset(*(url(f"{{base}}/p/{i}") for i in range(PAGES))), content_type=XML
        ),
    }
    routes.update(dict.fromkeys((f"/p/{i}" for i in range(PAGES)), slow_pages(0.02)))
    return TestSite(routes)  # type: ignore[arg-type]


@deferred_f_from_coro_f
async def test_a_closespider_limit_ends_the_report_with_an_incomplete_summary(
    tmp_path: Path,
) -> None:
    history = tmp_path / "history.sqlite3"
    with site_of_slow_pages() as site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={"CLOSESPIDER_PAGECOUNT": 20, "SITEMAPAUDIT_HISTORY_PATH": str(history)},
        )
    assert crawler.stats.get_value("finish_reason") == "closespider_pagecount"
    summary = records[-1]
    assert summary["record"] == "summary"
    assert summary["complete"] is False
    assert summary["urls_listed"] == len(by_record(records, "url")) < PAGES
    assert any(f"of the {PAGES} URLs found so far" in note for note in summary["notes"])
    assert by_record(records, "diff") == []
    with HistoryStore(history, read_only=True) as store:
        assert [run.finished_at for run in store.runs()] == [None]
    assert crawler.stats.get_value("sitemapaudit/summary/incomplete") is True


@deferred_f_from_coro_f
async def test_a_limit_met_while_a_sitemap_is_still_read_stops_cleanly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The pages of one sitemap are fetched while another is still on its way: their outcomes
    # wait in the inventory, which the stop closes; pages that still arrive are not read.
    site = site_of_slow_pages()
    site.routes.update({f"/p/{i}": Page(body="<html><head></head></html>") for i in range(PAGES)})
    children = [f"/s{i}.xml" for i in range(4)]
    site.routes["/robots.txt"] = Page(body="Sitemap: {base}/i.xml\n", content_type="text/plain")
    site.routes["/i.xml"] = Page(
        body=sitemapindex(*(f"{{base}}{child}" for child in children)), content_type=XML
    )
    for number, child in enumerate(children):
        listed = urlset(*(url(f"{{base}}/p/{i}") for i in range(number * 40, number * 40 + 40)))
        site.routes[child] = Page(body=listed, content_type=XML, delay=0.5 * number)
    with site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={
                "CLOSESPIDER_PAGECOUNT": 6,
                "CONCURRENT_REQUESTS": 1,
                "SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3"),
            },
        )
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "closespider_pagecount"
    assert records[-1]["complete"] is False
    assert "log_count/ERROR" not in stats
    assert not any(key.startswith("spider_exceptions") for key in stats)
    # (Errors of start() after the close come after the stats are final: read the log.)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@deferred_f_from_coro_f
async def test_a_finished_audit_is_complete(tmp_path: Path) -> None:
    with TestSite({"/": Page(body="<html></html>")}) as site:
        records, crawler = await run_audit(site.base, tmp_path / "report.jsonl")
    assert records[-1]["complete"] is True
    assert crawler.stats.get_value("sitemapaudit/summary/incomplete") is None


def test_ctrl_c_ends_the_report_with_a_summary_and_exits_1(tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"
    with site_of_slow_pages() as site:
        audit = start_audit_process(
            site.base,
            report,
            SITEMAPAUDIT_HISTORY_PATH=tmp_path / "history.sqlite3",
            CONCURRENT_REQUESTS_PER_DOMAIN=2,
        )
        # Half the pages requested: the audit has had responses to read and records to
        # write for a while, and the other half takes another second at least (20 ms a
        # page, two at a time).
        deadline = time.monotonic() + 60
        while sum(n for p, n in site.hits.items() if p.startswith("/p/")) < PAGES // 2:
            assert time.monotonic() < deadline, "the audit fetched no pages"
            time.sleep(0.05)
        os.kill(audit.pid, signal.SIGINT)
        _, stderr = audit.communicate(timeout=60)
    assert audit.returncode == 1, stderr.decode()[-2000:]
    records = [json.loads(line) for line in report.read_text().splitlines()]
    assert records[-1]["record"] == "summary"
    assert records[-1]["complete"] is False
    assert 0 < records[-1]["urls_listed"] == len(by_record(records, "url")) < PAGES
    assert "Traceback" not in stderr.decode()


def test_a_second_ctrl_c_stops_at_once_and_still_exits_1(tmp_path: Path) -> None:
    """The second Ctrl-C (Scrapy's forced shutdown) closes nothing: no summary, and no
    finish_reason either; the command must not report success."""
    slow = slow_pages(5.0)
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(*(url(f"{{base}}/p/{i}") for i in range(8))), content_type=XML),
        **dict.fromkeys((f"/p/{i}" for i in range(8)), slow),
    }
    with TestSite(routes) as site:  # type: ignore[arg-type]
        audit = start_audit_process(
            site.base, tmp_path / "report.jsonl", SITEMAPAUDIT_HISTORY_PATH=""
        )
        deadline = time.monotonic() + 60
        while not any(p.startswith("/p/") for p in site.hits):
            assert time.monotonic() < deadline, "the audit fetched no pages"
            time.sleep(0.05)
        os.kill(audit.pid, signal.SIGINT)
        time.sleep(0.5)
        os.kill(audit.pid, signal.SIGINT)
        _, stderr = audit.communicate(timeout=60)
    assert audit.returncode == 1, stderr.decode()[-2000:]


@deferred_f_from_coro_f
async def test_a_stop_while_an_inventory_sends_its_records_ends_the_crawl(
    tmp_path: Path,
) -> None:
    """Ctrl-C (a stop of the crawler) while start() sends records straight to the pipelines:
    the crawl closes instead of waiting for ever for its scraper."""
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(
            body=urlset(*(url(f"{{base}}/p/{i}") for i in range(3000))), content_type=XML
        ),
    }
    values = project_settings(
        FEEDS={str(tmp_path / "report.jsonl"): {"format": "jsonlines"}},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    crawler = get_crawler(AuditSpider, values)
    seen = 0

    def scraped(item: object, **kwargs: object) -> None:
        nonlocal seen
        seen += 1
        if seen == 3:  # as a signal handler does, from outside the item's processing
            asyncio.get_running_loop().call_soon(deferred_from_coro, crawler.stop_async())

    crawler.signals.connect(scraped, signal=signals.item_scraped)
    with TestSite(routes) as site:  # type: ignore[arg-type]
        await asyncio.wait_for(crawler.crawl_async(domain=site.base, fetch_urls="no"), 60)
    assert crawler.stats.get_value("finish_reason") == "shutdown"
    assert crawler.stats.get_value("sitemapaudit/summary/incomplete") is True


class StopWhileRecordsAreOnTheirWay:
    """A pipeline after the audit's own: on the first batch of URL records, asks for a stop as
    Ctrl-C does, from outside start() (the engine then cancels start() while the batch is on
    its way from the pipelines to the feeds)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.stopped = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> StopWhileRecordsAreOnTheirWay:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, UrlRecordBatch) and not self.stopped:
            self.stopped = True
            # (A task: its first step runs after this item's own step, from outside start().)
            deferred_from_coro(self.crawler.stop_async())
        return item


@deferred_f_from_coro_f
async def test_records_through_the_pipelines_when_a_stop_comes_reach_the_report(
    tmp_path: Path,
) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p/{i}") for i in range(40))), content_type=XML
            ),
        }
    )
    pipelines = {
        **project_settings()["ITEM_PIPELINES"],
        f"{__name__}.StopWhileRecordsAreOnTheirWay": 990,
    }
    history = tmp_path / "history.sqlite3"
    with site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={"ITEM_PIPELINES": pipelines, "SITEMAPAUDIT_HISTORY_PATH": str(history)},
            fetch_urls="no",
        )
    assert crawler.stats.get_value("finish_reason") == "shutdown"
    summary = records[-1]
    assert summary["complete"] is False
    # The batch the stop met was counted and kept in the history: it is in the report too.
    assert summary["urls_listed"] == len(by_record(records, "url")) == 40
    assert crawler.stats.get_value("item_scraped_count") == len(records)


def test_ctrl_c_during_a_retry_after_wait_stops_without_waiting_it_out(tmp_path: Path) -> None:
    """A host that answers 429 with ``Retry-After: 120`` is held for two minutes: a Ctrl-C
    meanwhile ends the audit at once (the retry is not sent), with its summary."""
    report = tmp_path / "report.jsonl"
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(
            body=urlset(url("{base}/busy"), *(url(f"{{base}}/p/{i}") for i in range(10))),
            content_type=XML,
        ),
        "/busy": Page(status=429, headers=[("Retry-After", "120")]),
    }
    routes.update(dict.fromkeys((f"/p/{i}" for i in range(10)), Page(body="<html></html>")))
    with TestSite(routes) as site:  # type: ignore[arg-type]
        audit = start_audit_process(
            site.base,
            report,
            DOWNLOAD_DELAY=0.05,  # (a host is held through its pace: with a delay)
            CONCURRENT_REQUESTS_PER_DOMAIN=1,
            SITEMAPAUDIT_HISTORY_PATH="",
        )
        deadline = time.monotonic() + 60
        while not site.hits.get("/busy"):
            assert time.monotonic() < deadline, "the audit never requested /busy"
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(audit.pid, signal.SIGINT)
        stopped = time.monotonic()
        _, stderr = audit.communicate(timeout=150)
        waited = time.monotonic() - stopped
    assert waited < 60, f"the stop waited {waited:.0f} s for the Retry-After hold"
    assert audit.returncode == 1, stderr.decode()[-2000:]
    records = [json.loads(line) for line in report.read_text().splitlines()]
    assert records[-1]["record"] == "summary"
    assert records[-1]["complete"] is False
    assert site.hits["/busy"] == 1
    assert (
        "1 more URL answered 429 or 503 and waited for the Retry-After of the site when the "
        "audit stopped: the retry was not sent, and it has no record"
    ) in records[-1]["notes"]
    assert f"{site.base}/busy" not in [r["url"] for r in by_record(records, "url")]
    assert "Traceback" not in stderr.decode()
