"""Scrapy's feed exporter and item counter, record by record: a :class:`UrlRecordBatch` is
one Scrapy item but many records, written as one line each by any feed format and counted as
that many items in ``item_scraped_count``."""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Spider
from scrapy.extensions.corestats import CoreStats
from scrapy.extensions.feedexport import FeedExporter

from sitemapaudit.report.records import UrlRecordBatch

logger = logging.getLogger(__name__)


class RecordFeedExporter(FeedExporter):
    """Scrapy's ``FeedExporter`` (every feed option, batch and filter works the same); each
    record of a batch reaches every feed as an item of its own.

    A record that cannot be written (a full disk, a directory that went away) is counted in
    ``sitemapaudit/report/records_lost``, the first failure is logged with its traceback, and
    ``sitemapaudit/report/failed`` makes the command exit with 1: a report with holes is not
    taken for a complete one."""

    def item_scraped(self, item: Any, spider: Spider) -> None:
        records = item.records if isinstance(item, UrlRecordBatch) else [item]
        scraped = super().item_scraped
        for record in records:
            try:
                scraped(record, spider)
            except Exception:
                self._lost(record)

    def _lost(self, record: Any) -> None:
        stats = self.crawler.stats
        assert stats is not None
        if not stats.get_value("sitemapaudit/report/failed"):
            stats.set_value("sitemapaudit/report/failed", True)
            logger.exception("the report could not be written; records are being lost")
        stats.inc_value("sitemapaudit/report/records_lost")


class RecordCoreStats(CoreStats):
    """Scrapy's ``CoreStats``; ``item_scraped_count`` counts the records of a batch."""

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if isinstance(item, UrlRecordBatch):
            self.stats.inc_value("item_scraped_count", len(item.records))
        else:
            super().item_scraped(item, spider)
