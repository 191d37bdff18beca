"""Log formatting: the audit logs per sitemap, not per URL."""

from __future__ import annotations

from typing import Any

from scrapy.logformatter import LogFormatter, LogFormatterResult


class AuditLogFormatter(LogFormatter):
    """Scrapy's formatter without the per-item "Scraped from" line: every record is in the
    report, and building a log record per URL costs time on audits of millions of URLs even
    when it is never shown."""

    def scraped(self, item: Any, response: Any, spider: Any) -> LogFormatterResult | None:  # type: ignore[override]
        return None
