"""Stops a sitemap download at SITEMAPAUDIT_SITEMAP_READ_LIMIT, so that a huge sitemap is read
up to the limit and reported (``too_large``) instead of being cancelled by Scrapy's
DOWNLOAD_MAXSIZE and lost; and a robots.txt download past what is parsed of it
(SITEMAPAUDIT_ROBOTS_MAX_BYTES), so that a huge robots.txt is read for its first rules instead
of failing (which would disallow everything). It also keeps what arrived of a request marked
with ``meta[PARTIAL_KEY]`` (the homepage): a download that fails part way (a timeout) still
has its first bytes, whose head may name the sitemaps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import StopDownload

from sitemapaudit.config import AuditConfig

META_KEY = "sitemapaudit_read_limit"
# A limit of the request's own (bytes), and the stat that counts the stops, instead of the
# sitemap read limit.
OWN_LIMIT_KEY = "sitemapaudit_read_limit_own"
# ``None`` to keep what arrives of the request's answer: a PartialBody once its headers came.
PARTIAL_KEY = "sitemapaudit_partial_body"


@dataclass(slots=True)
class PartialBody:
    """What arrived of an answer: its headers and body bytes so far (up to its read limit).
    A retried request starts afresh with its own answer's headers. (Scrapy's signal gives no
    status: that of an answer that did not finish is unknown.)"""

    headers: Any
    chunks: list[bytes] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


class SitemapReadLimit:
    """Counts the bytes of requests marked with ``meta[META_KEY]`` and stops them at the limit."""

    def __init__(self, crawler: Crawler) -> None:
        self.limit = AuditConfig.from_settings(crawler.settings).sitemap_read_limit
        self.stats = crawler.stats
        crawler.signals.connect(self.bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(self.headers_received, signal=signals.headers_received)
        crawler.signals.connect(self.request_sent, signal=signals.request_reached_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def request_sent(self, request: Request, **kwargs: Any) -> None:
        if PARTIAL_KEY in request.meta:  # (a retry, a redirect's hop: a copy of the request)
            request.meta[PARTIAL_KEY] = None

    def headers_received(self, headers: Any, request: Request, **kwargs: Any) -> None:
        if PARTIAL_KEY in request.meta:
            request.meta[PARTIAL_KEY] = PartialBody(headers)

    def bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        partial = request.meta.get(PARTIAL_KEY)
        if partial is not None:
            partial.chunks.append(data)
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
