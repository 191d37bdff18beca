"""Stops a sitemap download at SITEMAPAUDIT_SITEMAP_READ_LIMIT, so that a huge sitemap is read
up to the limit and reported (``too_large``) instead of being cancelled by Scrapy's
DOWNLOAD_MAXSIZE and lost; and a robots.txt download past what is parsed of it
(SITEMAPAUDIT_ROBOTS_MAX_BYTES), so that a huge robots.txt is read for its first rules instead
of failing (which would disallow everything)."""

from __future__ import annotations

from typing import Any, Self

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import StopDownload

from sitemapaudit.config import AuditConfig

META_KEY = "sitemapaudit_read_limit"
# A limit of the request's own (bytes), and the stat that counts the stops, instead of the
# sitemap read limit.
OWN_LIMIT_KEY = "sitemapaudit_read_limit_own"


class SitemapReadLimit:
    """Counts the bytes of requests marked with ``meta[META_KEY]`` and stops them at the limit."""

    def __init__(self, crawler: Crawler) -> None:
        self.limit = AuditConfig.from_settings(crawler.settings).sitemap_read_limit
        self.stats = crawler.stats
        crawler.signals.connect(self.bytes_received, signal=signals.bytes_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        received = request.meta.get(META_KEY)
        if received is None:
            return
        received += len(data)
        request.meta[META_KEY] = received
        limit, stat = request.meta.get(
            OWN_LIMIT_KEY, (self.limit, "sitemapaudit/sitemaps/stopped_at_read_limit")
        )
        if received > limit:
            if self.stats is not None:
                self.stats.inc_value(stat)
            raise StopDownload(fail=False)
