"""What the crawl observed, before any judgement: the items the spider hands to the pipelines.

The checks pipeline turns these facts into report records (:mod:`sitemapaudit.report.records`)
by running the enabled checks over them. Nothing here imports Scrapy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sitemapaudit.sitemap.records import Problem


@dataclass(slots=True)
class SitemapFacts:
    """One sitemap as fetched and read (or as skipped, with the reason in ``problems``)."""

    url: str
    found_via: str
    parent: str | None = None
    depth: int = 0
    fetched: bool = False
    status: int | None = None
    error: str | None = None
    kind: str = "unknown"
    gzip: bool = False
    bytes: int = 0
    url_count: int = 0
    child_count: int = 0
    not_modified: bool = False
    problems: list[Problem] = field(default_factory=list)
    # See FetchOutcome.retry_after.
    retry_after: dict[str, Any] | None = None
    # When the body read has findings that depend on the time (news_too_old, video_expired):
    # the earliest moment (ISO 8601, UTC) past which it would have one more, read again
    # unchanged. A 304 carries the body's findings over only until then.
    rejudge_after: str | None = None
    # A 304 Not Modified: the run that read the body its findings were carried over from
    # (``None`` when the history did not keep it). Not a field of the report: the history keeps
    # it with the sitemap's result.
    read_run: int | None = None


@dataclass(slots=True)
class FetchOutcome:
    """What requesting one listed URL showed (JSON-serialisable, stored in the inventory)."""

    fetched: bool = False
    status: int | None = None
    error: str | None = None
    redirect_chain: list[dict[str, Any]] = field(default_factory=list)
    final_url: str | None = None
    redirect_loop: bool = False
    redirect_stopped: str | None = None
    # Why the last redirect cannot be followed (no Location, not an http(s) URL), if so.
    redirect_broken: str | None = None
    # A redirect target that robots.txt disallows (not requested unless fetch_blocked).
    redirect_blocked: str | None = None
    last_modified: str | None = None
    date: str | None = None
    content_type: str | None = None
    noindex: list[str] = field(default_factory=list)
    canonical: str | None = None
    canonical_source: str | None = None
    checked_at: str | None = None
    carried_over: bool = False
    # The sources of ``noindex`` that are there because their ``unavailable_after`` date had
    # passed when the page was checked, each with that date (UTC, ISO 8601).
    unavailable_after: dict[str, str] = field(default_factory=dict)
    # Other canonical URLs the page names besides ``canonical`` (see PageFacts).
    canonical_others: list[str] = field(default_factory=list)
    # A refresh to another URL: {"source": "meta" or "header", "delay": seconds, "url": ...}.
    refresh: dict[str, Any] | None = None
    # A head that ended early: {"start": what started the body, "ignored": signals after it}.
    head_broken: dict[str, Any] | None = None
    # A head that does not end within the bytes of the page the audit reads: that many bytes.
    head_too_large: int | None = None
    # A 429/503 answer not retried because its Retry-After asked for a longer wait than
    # SITEMAPAUDIT_RETRY_AFTER_MAX: {"value": the header as sent, "seconds": the wait}.
    retry_after: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        # What dataclasses.asdict gives (fresh lists and dicts), without its generic recursion.
        return {
            "fetched": self.fetched,
            "status": self.status,
            "error": self.error,
            "redirect_chain": [dict(hop) for hop in self.redirect_chain],
            "final_url": self.final_url,
            "redirect_loop": self.redirect_loop,
            "redirect_stopped": self.redirect_stopped,
            "redirect_broken": self.redirect_broken,
            "redirect_blocked": self.redirect_blocked,
            "last_modified": self.last_modified,
            "date": self.date,
            "content_type": self.content_type,
            "noindex": list(self.noindex),
            "canonical": self.canonical,
            "canonical_source": self.canonical_source,
            "checked_at": self.checked_at,
            "carried_over": self.carried_over,
            "unavailable_after": dict(self.unavailable_after),
            "canonical_others": list(self.canonical_others),
            "refresh": None if self.refresh is None else dict(self.refresh),
            "head_broken": None
            if self.head_broken is None
            else {**self.head_broken, "ignored": list(self.head_broken["ignored"])},
            "head_too_large": self.head_too_large,
            "retry_after": None if self.retry_after is None else dict(self.retry_after),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FetchOutcome:
        return cls(**data)


# The outcome of every URL that was not requested: one object, shared by all their facts
# (nothing changes an outcome once its facts exist).
NOT_REQUESTED = FetchOutcome()
# The same as stored in an inventory (one dict, never changed either).
NOT_REQUESTED_JSON = NOT_REQUESTED.to_json()


@dataclass(slots=True)
class UrlFacts:
    """One distinct listed URL: its listings, robots verdict and fetch outcome."""

    url: str
    sitemaps: list[str]
    lastmod: str | None
    lastmod_format: str
    times_listed: int
    rules: list[str]
    robots_blocked: bool
    outcome: FetchOutcome
    hreflang: list[str] = field(default_factory=list)


@dataclass(slots=True)
class UrlFactsBatch:
    """The facts of several URLs, sent to the pipelines as one item: those settled without a
    request (an inventory, robots.txt blocks) and those of fetched pages, once the listings
    are final. One Scrapy item per URL costs more than everything else an inventory does
    with a URL, and as much as the checks of a page."""

    facts: list[UrlFacts]


def sitemap_facts_from_json(data: dict[str, Any]) -> SitemapFacts:
    """The facts of a sitemap as kept in JSON (the inventory, Redis), read back."""
    problems = [Problem(**problem) for problem in data.pop("problems", [])]
    return SitemapFacts(**data, problems=problems)
