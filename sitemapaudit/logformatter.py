"""Log formatting: the audit logs per sitemap, not per URL."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

from scrapy.logformatter import LogFormatter, LogFormatterResult

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class AuditLogFormatter(LogFormatter):
    """Scrapy's formatter without the per-item "Scraped from" line (every record is in the
    report), and without the per-response "Crawled" line unless the log shows ``DEBUG``.

    Scrapy's logger passes ``DEBUG`` records on and its handler drops them when
    ``LOG_LEVEL`` is higher, so a line nobody sees still costs a log record per URL: time on
    audits of millions of URLs.
    """

    def __init__(self, *, crawled_lines: bool = True) -> None:
        self.crawled_lines = crawled_lines

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        _DOWNLOAD_HANDLER_LOG.addFilter(_MAX_SIZE_FILTER)  # (once: a filter is added once)
        settings = crawler.settings
        shown = settings.getbool("LOG_ENABLED") and _level(settings.get("LOG_LEVEL")) <= (
            logging.DEBUG
        )
        return cls(crawled_lines=shown)

    def crawled(  # type: ignore[override]
        self, request: Request, response: Response, spider: Spider
    ) -> LogFormatterResult | None:
        if not self.crawled_lines:
            return None
        return super().crawled(request, response, spider)

    def scraped(self, item: Any, response: Any, spider: Any) -> LogFormatterResult | None:  # type: ignore[override]
        return None


class _NoMaxSizeLines(logging.Filter):
    """Drops Scrapy's warning for each response larger than ``DOWNLOAD_MAXSIZE``: each is
    a ``fetch_failed`` finding of its URL, which says the same (a line per URL otherwise,
    with ``SITEMAPAUDIT_HEAD_ONLY`` off)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        return not (
            message.startswith(("Expected to receive ", "Received "))
            and " bytes which is larger than download max size (" in message
        )


_DOWNLOAD_HANDLER_LOG = logging.getLogger("scrapy.core.downloader.handlers.http11")
_MAX_SIZE_FILTER = _NoMaxSizeLines()


def _level(value: object) -> int:
    """A ``LOG_LEVEL`` as a number; one that is not a known level counts as shown (Scrapy
    itself reports it)."""
    if isinstance(value, int):
        return value
    number = logging.getLevelName(str(value).upper())
    return number if isinstance(number, int) else logging.NOTSET
