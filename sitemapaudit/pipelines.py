"""Item pipelines: run the checks over crawl facts, then count the report for its summary."""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any, Self

from scrapy.crawler import Crawler

from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import SitemapFacts, UrlFacts
from sitemapaudit.history.diff import summarize
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord
from sitemapaudit.report.summary import SummaryCounter

logger = logging.getLogger(__name__)


class ChecksPipeline:
    """Turns :class:`SitemapFacts` and :class:`UrlFacts` into report records."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        self.builder = RecordBuilder(AuditConfig.from_settings(crawler.settings), datetime.now(UTC))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, SitemapFacts):
            record: SitemapRecord | UrlRecord = self.builder.sitemap_record(item)
        elif isinstance(item, UrlFacts):
            record = self.builder.url_record(item)
        else:
            return item
        assert self.stats is not None
        self.stats.inc_value(f"sitemapaudit/records/{record.record}")
        for code in record.issues:
            self.stats.inc_value(f"sitemapaudit/findings/{record.record}/{code}")
        return record


class SummaryPipeline:
    """Counts every record and completes the summary record, which comes last."""

    def __init__(self, crawler: Crawler) -> None:
        builder = RecordBuilder(AuditConfig.from_settings(crawler.settings), datetime.now(UTC))
        self.counter = SummaryCounter(builder.severity)
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, SitemapRecord | UrlRecord):
            self.counter.add(item)
        elif isinstance(item, dict) and item.get("record") == "diff":
            self.counter.add_change(str(item["change"]))
        elif isinstance(item, SummaryRecord):
            self.counter.complete(item)
            fail_on = getattr(self.crawler.spider, "fail_on", None)
            if fail_on is not None and fail_on.failed(item.counts, item.severities):
                item.fail_on["failed"] = True
                assert self.crawler.stats is not None
                self.crawler.stats.set_value("sitemapaudit/fail_on/failed", True)
            logger.info(
                "audit of %s: %d sitemap(s), %d URL(s) listed, %d fetched; findings: %s",
                item.origin,
                item.sitemaps_found,
                item.urls_listed,
                item.urls_fetched,
                ", ".join(f"{code}={n}" for code, n in item.counts.items()) or "none",
            )
            for note in item.notes:
                logger.warning("%s", note)
            previous = item.changes.get("previous_run")
            if previous is not None:
                logger.info("changes since run %s: %s", previous, summarize(item.changes["counts"]))
        return item


class HistoryPipeline:
    """Keeps every record of the run in the history store (SITEMAPAUDIT_HISTORY_PATH)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        run = getattr(self.crawler.spider, "run", None)
        history = getattr(run, "history", None)
        if history is None or run is None:
            return item
        if isinstance(item, SitemapRecord | UrlRecord):
            history.add_record(run.history_run, asdict(item))
        elif isinstance(item, SummaryRecord):
            history.finish_run(run.history_run, item.finished_at or "", asdict(item))
        return item
