"""Scrapy's feed exporter and item counter, record by record: a :class:`UrlRecordBatch` is
one Scrapy item but many records, written as one line each by any feed format and counted as
that many items in ``item_scraped_count``."""

from __future__ import annotations

from typing import Any

from scrapy import Spider
from scrapy.extensions.corestats import CoreStats
from scrapy.extensions.feedexport import FeedExporter

from sitemapaudit.report.records import UrlRecordBatch


class RecordFeedExporter(FeedExporter):
    """Scrapy's ``FeedExporter`` (every feed option, batch and filter works the same); each
    record of a batch reaches every feed as an item of its own."""

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if isinstance(item, UrlRecordBatch):
            scraped = super().item_scraped
            for record in item.records:
                scraped(record, spider)
        else:
            super().item_scraped(item, spider)


class RecordCoreStats(CoreStats):
    """Scrapy's ``CoreStats``; ``item_scraped_count`` counts the records of a batch."""

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if isinstance(item, UrlRecordBatch):
            self.stats.inc_value("item_scraped_count", len(item.records))
        else:
            super().item_scraped(item, spider)
