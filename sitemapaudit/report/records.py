"""The records of the JSON Lines report: a public contract.

Every line of a report is one of these, serialised with its fields in this order. Field names
and the meaning of each field are documented in the README; renaming one breaks users.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SitemapRecord:
    """One sitemap: how it was found, what it is and what is wrong with it."""

    record: str = field(default="sitemap", init=False)
    url: str
    found_via: str
    parent: str | None = None
    kind: str = "unknown"
    status: int | None = None
    gzip: bool = False
    bytes: int = 0
    url_count: int = 0
    child_count: int = 0
    issues: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    not_modified: bool = False


@dataclass(slots=True)
class UrlRecord:
    """One distinct URL listed by the audited sitemaps, with what fetching it showed."""

    record: str = field(default="url", init=False)
    url: str
    sitemaps: list[str] = field(default_factory=list)
    lastmod: str | None = None
    status: int | None = None
    fetched: bool = False
    redirect_chain: list[dict[str, Any]] = field(default_factory=list)
    final_url: str | None = None
    last_modified: str | None = None
    lastmod_delta_s: float | None = None
    noindex: list[str] = field(default_factory=list)
    robots_blocked: bool = False
    canonical: str | None = None
    issues: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    checked_at: str | None = None
    carried_over: bool = False


@dataclass(slots=True)
class UrlRecordBatch:
    """Not a line of the report: URL records that travel through the item pipelines as one
    Scrapy item (see :class:`sitemapaudit.facts.UrlFactsBatch`). Every pipeline of the audit
    handles it record by record, and the feed exporter writes one line per record."""

    records: list[UrlRecord]


@dataclass(slots=True)
class DiffRecordBatch:
    """Not a line of the report: ``diff`` records (dicts) that travel through the item
    pipelines as one Scrapy item, as URL records do (see :class:`UrlRecordBatch`): a night
    that replaced a million URLs has two million of them."""

    records: list[dict[str, Any]]


@dataclass(slots=True)
class SummaryRecord:
    """The last line of a report: totals, counts per code and the settings that shaped it."""

    record: str = field(default="summary", init=False)
    origin: str
    started_at: str
    finished_at: str | None = None
    resumed_at: list[str] = field(default_factory=list)
    """When an audit interrupted and resumed from its work directory was resumed (UTC), in
    order, or, for a distributed audit, when a worker started it again after every worker had
    stopped; ``started_at`` is then its first start."""
    sitemaps_found: int = 0
    urls_listed: int = 0
    urls_fetched: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    severities: dict[str, int] = field(default_factory=dict)
    robots_txt: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    fail_on: dict[str, Any] = field(default_factory=dict)
    changes: dict[str, Any] = field(default_factory=dict)
    incremental: dict[str, Any] = field(default_factory=dict)
    complete: bool = True
    """False when the crawl closed before the audit was done (interrupted, or a CLOSESPIDER
    limit): the report holds the records written until then."""


def another_run(path: str | os.PathLike[str], line: int, summary_line: int) -> str:
    """Why a report file with a record after its summary cannot be read as one report (a
    report holds one run, its summary last)."""
    return (
        f"{path}:{line}: a record after the summary of line {summary_line}: the file holds "
        "more than one run (-o appends each run to it); write each run to its own file (-O)"
    )
