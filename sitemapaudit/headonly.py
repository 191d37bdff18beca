"""Head-only page downloads: stop reading a page once its ``<head>`` has arrived.

The checks need a page's headers and ``<head>`` only. For large HTML pages the download stops at
the end of ``<head>``, and for pages of unknown length (chunked) at the end of ``<head>`` once
``SITEMAPAUDIT_HEAD_ONLY_MIN_BYTES`` have arrived; the head of an XHTML page ends by XML's
rules, and an ``application/xml`` or ``text/xml`` response stops as soon as its root element
shows it is not XHTML; a body that cannot be read as its ``Content-Encoding`` says stops as soon
as that shows; other responses are judged by their headers and not downloaded at all.
Small pages are read whole: on HTTP/1.1 a stopped download closes the connection, which costs
more than the bytes it saves.
"""

from __future__ import annotations

from typing import Any, Self

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.http import Headers

from sitemapaudit.config import AuditConfig
from sitemapaudit.page import (
    HTML_MEDIA_TYPES,
    XML_MEDIA_TYPES,
    XML_PAGE_TYPES,
    content_type_of,
    media_type,
)
from sitemapaudit.page.coding import body_coding
from sitemapaudit.page.stream import HeadWatcher

META_KEY = "sitemapaudit_head_only"


class HeadOnlyDownloads:
    """Stops page downloads (requests with ``meta[META_KEY]``) once the checks have their input."""

    def __init__(self, crawler: Crawler) -> None:
        config = AuditConfig.from_settings(crawler.settings)
        if not config.head_only:
            raise NotConfigured
        self.min_bytes = config.head_only_min_bytes
        self.stats = crawler.stats
        self.signals = crawler.signals
        self._watching = False
        crawler.signals.connect(self.headers_received, signal=signals.headers_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def headers_received(
        self, headers: Headers, body_length: int | str, request: Request, **kwargs: Any
    ) -> None:
        if not request.meta.get(META_KEY):
            return
        request.meta[META_KEY] = True  # a retried request starts afresh
        # An unknown length (chunked, or read to the connection's end) is Twisted's
        # UNKNOWN_LENGTH, a string: such a page is read up to min_bytes at least (a small
        # one whole), then stopped once its head is complete.
        known = isinstance(body_length, int)
        if isinstance(body_length, int) and 0 <= body_length <= self.min_bytes:
            return
        # (A redirect's body is read as a page's is: the status, which this signal does not
        # tell, may be a 200 that also sends a Location.)
        kind = media_type(
            content_type_of([value.decode("latin-1") for value in headers.getlist(b"Content-Type")])
        )
        if kind is not None and kind not in HTML_MEDIA_TYPES and kind not in XML_MEDIA_TYPES:
            self._stopped("after_headers")
            raise StopDownload(fail=False)
        # Every Content-Encoding line: two lines are two codings, as one line listing both.
        # The body is decoded as they say, by the rule the page is read by.
        encodings = [value.decode("latin-1") for value in headers.getlist(b"Content-Encoding")]
        # Read up to the end of the head whatever size the page announces: past
        # DOWNLOAD_MAXSIZE, Scrapy would cancel the download (and log it) before a byte came.
        request.meta["download_maxsize"] = 0
        request.meta["download_warnsize"] = 0
        request.meta[META_KEY] = HeadWatcher(
            coding=body_coding(encodings),
            min_bytes=0 if known else self.min_bytes,
            xml=kind in XML_PAGE_TYPES,
            xhtml_root=kind in XML_MEDIA_TYPES,
        )
        if not self._watching:
            # Connected on the first watched download only: every handler of bytes_received
            # costs a dispatch per chunk of every response, and small pages need none.
            self._watching = True
            self.signals.connect(self.bytes_received, signal=signals.bytes_received)

    def bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        watcher = request.meta.get(META_KEY)
        if isinstance(watcher, HeadWatcher) and watcher.feed(data):
            # A body that cannot be read as its Content-Encoding says is stopped at once: the
            # page is fetch_failed whatever follows (as a full download finds).
            self._stopped("after_head" if watcher.unreadable is None else "unreadable")
            raise StopDownload(fail=False)

    def _stopped(self, where: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"sitemapaudit/head_only/stopped_{where}")
