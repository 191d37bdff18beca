"""Counting what the report says, for the summary record that ends it."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from sitemapaudit.checks.base import Severity
from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord
from sitemapaudit.words import count_noun

# Statuses a site gives a crawler it refuses or throttles, whatever the page: when nearly
# every requested page answers one of them, the summary says what it likely means.
_REFUSALS = {
    401: "the site asks for credentials (HTTP authentication)",
    403: "the site may be refusing this crawler (its User-Agent, see USER_AGENT, or its IP "
    "address)",
    429: "the site throttles the audit: slow it down (DOWNLOAD_DELAY, "
    "CONCURRENT_REQUESTS_PER_DOMAIN)",
    503: "the site was unavailable or throttling the audit: slow it down (DOWNLOAD_DELAY, "
    "CONCURRENT_REQUESTS_PER_DOMAIN) or audit it later",
}
_REFUSAL_SHARE = 0.9
_REFUSAL_MIN_PAGES = 10


class SummaryCounter:
    """Counts records, findings per code and findings per severity."""

    def __init__(self, severity: dict[tuple[str, str], Severity]) -> None:
        self.severity = severity
        self.codes: Counter[str] = Counter()
        self.severities: Counter[str] = Counter()
        self.sitemaps = 0
        self.urls = 0
        self.fetched = 0
        # Pages requested in this run, and how many answered each refusing status.
        self.requested = 0
        self.refusals: Counter[int] = Counter()
        self.changes: Counter[str] = Counter()

    def add_change(self, change: str) -> None:
        self.changes[change] += 1

    def add(self, record: SitemapRecord | UrlRecord) -> None:
        if isinstance(record, SitemapRecord):
            self.sitemaps += 1
        else:
            self.urls += 1
            if record.fetched:
                self.fetched += 1
                if not record.carried_over:
                    self.requested += 1
                    if record.status in _REFUSALS:
                        self.refusals[record.status] += 1
        for code in record.issues:
            self.codes[code] += 1
            self.severities[self.severity[(record.record, code)].value] += 1

    def complete(
        self,
        summary: SummaryRecord,
        homepage_unread: str | None = None,
        robots_unread: str | None = None,
        *,
        common_paths: bool = True,
    ) -> SummaryRecord:
        """Complete ``summary`` with the counts; ``homepage_unread``: why the sitemaps the
        homepage links to are unknown (``"could not be read"``...), if they are;
        ``robots_unread``: the same of robots.txt's Sitemap lines; ``common_paths``: whether
        there were common paths to try (``SITEMAPAUDIT_COMMON_PATHS``)."""
        summary.finished_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        summary.sitemaps_found = self.sitemaps
        summary.urls_listed = self.urls
        summary.urls_fetched = self.fetched
        summary.counts = dict(sorted(self.codes.items()))
        summary.severities = {s.value: self.severities.get(s.value, 0) for s in Severity}
        if summary.changes.get("previous_run") is not None:
            summary.changes["counts"] = dict(self.changes)
        if self.sitemaps == 0 and summary.complete:  # else discovery may not have ended
            gone = self.changes.get("sitemap_removed", 0)
            if homepage_unread is None and robots_unread is None:
                named = "robots.txt and the homepage name none"
            else:
                named = (
                    "robots.txt names none"
                    if robots_unread is None
                    else f"robots.txt {robots_unread} (its Sitemap lines are unknown)"
                ) + (
                    ", the homepage names none"
                    if homepage_unread is None
                    else f", the homepage {homepage_unread} (its sitemap links are unknown)"
                )
            summary.notes.append(
                f"no sitemap was found: {named}, and "
                + (
                    "none of the common paths holds one"
                    if common_paths
                    else "no common path was tried (SITEMAPAUDIT_COMMON_PATHS is empty)"
                )
                + (
                    f"; the {count_noun(gone, 'sitemap')} of run "
                    f"{summary.changes['previous_run']} {'is' if gone == 1 else 'are all'} gone "
                    "(sitemap_removed)"
                    if gone
                    else ""
                )
            )
        if (refusal := self._refusal()) is not None:
            summary.notes.append(refusal)
        return summary

    def _refusal(self) -> str | None:
        """A note when nearly every page requested answered the same refusing status."""
        if self.requested < _REFUSAL_MIN_PAGES or not self.refusals:
            return None
        status, count = self.refusals.most_common(1)[0]
        if count < _REFUSAL_SHARE * self.requested:
            return None
        return (
            f"{count:,} of the {self.requested:,} pages requested answered {status}: "
            f"{_REFUSALS[status]}; their http_error findings say little about the pages"
        )
