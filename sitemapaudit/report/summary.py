"""Counting what the report says, for the summary record that ends it."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from sitemapaudit.checks.base import Severity
from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord


class SummaryCounter:
    """Counts records, findings per code and findings per severity."""

    def __init__(self, severity: dict[tuple[str, str], Severity]) -> None:
        self.severity = severity
        self.codes: Counter[str] = Counter()
        self.severities: Counter[str] = Counter()
        self.sitemaps = 0
        self.urls = 0
        self.fetched = 0
        self.changes: Counter[str] = Counter()

    def add_change(self, change: str) -> None:
        self.changes[change] += 1

    def add(self, record: SitemapRecord | UrlRecord) -> None:
        if isinstance(record, SitemapRecord):
            self.sitemaps += 1
        else:
            self.urls += 1
            self.fetched += int(record.fetched)
        for code in record.issues:
            self.codes[code] += 1
            self.severities[self.severity[(record.record, code)].value] += 1

    def complete(self, summary: SummaryRecord) -> SummaryRecord:
        summary.finished_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        summary.sitemaps_found = self.sitemaps
        summary.urls_listed = self.urls
        summary.urls_fetched = self.fetched
        summary.counts = dict(sorted(self.codes.items()))
        summary.severities = {s.value: self.severities.get(s.value, 0) for s in Severity}
        if summary.changes.get("previous_run") is not None:
            summary.changes["counts"] = dict(self.changes)
        if self.sitemaps == 0 and summary.complete:  # else discovery may not have ended
            summary.notes.append(
                "no sitemap was found: robots.txt and the homepage name none, and none of the "
                "common paths holds one"
            )
        return summary
