"""Two crafted runs of one site that between them show every change type, and their diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

E = "https://ex.com"
INDEX = f"{E}/sitemap.xml"
A = f"{E}/a.xml"
B = f"{E}/b.xml"
OLD_SITEMAP = f"{E}/old.xml"
NEW_SITEMAP = f"{E}/new.xml"

LM_JAN = "Mon, 01 Jan 2024 00:00:00 GMT"
LM_MAR = "Fri, 01 Mar 2024 08:00:00 GMT"
LM_JUN = "Wed, 05 Jun 2024 09:00:00 GMT"


def url(path: str, **fields: Any) -> dict[str, Any]:
    """A fetched, indexable URL record listed by a.xml, with ``fields`` changed."""
    record: dict[str, Any] = {
        "record": "url",
        "url": E + path,
        "sitemaps": [A],
        "lastmod": None,
        "status": 200,
        "fetched": True,
        "redirect_chain": [],
        "final_url": E + path,
        "last_modified": None,
        "lastmod_delta_s": None,
        "noindex": [],
        "robots_blocked": False,
        "canonical": None,
        "issues": [],
        "errors": [],
        "checked_at": "2024-06-01T00:10:00Z",
    }
    record.update(fields)
    return record


def sitemap(loc: str, **fields: Any) -> dict[str, Any]:
    """A fetched urlset sitemap record listed by the index, with ``fields`` changed."""
    record: dict[str, Any] = {
        "record": "sitemap",
        "url": loc,
        "found_via": "index",
        "parent": INDEX,
        "kind": "urlset",
        "status": 200,
        "gzip": False,
        "bytes": 1000,
        "url_count": 10,
        "child_count": 0,
        "issues": [],
        "errors": [],
    }
    record.update(fields)
    return record


def not_fetched(path: str, **fields: Any) -> dict[str, Any]:
    return url(path, status=None, fetched=False, final_url=None, checked_at=None, **fields)


INDEX_RECORD = sitemap(
    INDEX, found_via="robots.txt", parent=None, kind="sitemapindex", issues=["index_cycle"]
)

OLD_RECORDS: list[dict[str, Any]] = [
    INDEX_RECORD,
    sitemap(A),
    sitemap(B),
    sitemap(OLD_SITEMAP, url_count=0, issues=["empty"]),
    url("/removed", sitemaps=[OLD_SITEMAP], issues=["redirect"]),
    url("/moved", sitemaps=[A, OLD_SITEMAP]),
    url("/fixed", status=404, issues=["http_error"]),
    url("/broken"),
    url(
        "/failed",
        redirect_chain=[{"url": f"{E}/failed", "status": 301}],
        final_url=f"{E}/failed/",
        issues=["redirect"],
    ),
    url("/noindexed"),
    url("/blocked"),
    url("/redirected"),
    url("/persist", issues=["canonical_mismatch"]),
    url("/back", lastmod="2024-05-02T10:00:00Z"),
    url("/near", lastmod="2024-05-02T10:00:00Z"),
    url("/stale", lastmod="2024-01-01", last_modified=LM_JAN),
    url("/silent", lastmod="2024-03-01", last_modified=LM_MAR),
    url("/same-instant", lastmod="2024-03-01T10:00:00Z", last_modified=LM_MAR),
    url(
        "/generated",
        lastmod="2024-03-01",
        last_modified=LM_MAR,
        issues=["lastmod_unverifiable"],
    ),
    url("/text-dates", lastmod="version-b"),
    url("/unchanged", lastmod="2024-01-01", last_modified=LM_JAN),
    url("/inventory"),
    url("/caf\u00e9", issues=["canonical_mismatch"]),
]

NEW_RECORDS: list[dict[str, Any]] = [
    INDEX_RECORD,
    sitemap(A, issues=["xml_malformed"]),
    sitemap(B, status=404, url_count=0, issues=["http_error"]),
    sitemap(NEW_SITEMAP),
    url("/added", sitemaps=[A, NEW_SITEMAP], issues=["lastmod_unverifiable"]),
    url("/moved", sitemaps=[A, NEW_SITEMAP]),
    url("/fixed"),
    url("/broken", status=500, issues=["http_error"]),
    not_fetched("/failed", issues=["fetch_failed"], errors=["fetch_failed: timeout"]),
    url("/noindexed", noindex=["meta:robots"], issues=["noindex"]),
    not_fetched("/blocked", robots_blocked=True, issues=["robots_blocked"]),
    url(
        "/redirected",
        status=301,
        redirect_chain=[{"url": f"{E}/redirected", "status": 301}],
        final_url="https://elsewhere.example/",
        issues=["redirect"],
    ),
    url("/persist", issues=["canonical_mismatch"]),
    url("/back", lastmod="2024-04-30"),
    url("/near", lastmod="2024-05-01"),
    url("/stale", lastmod="2024-06-01", last_modified=LM_JAN),
    url("/silent", lastmod="2024-03-01", last_modified=LM_JUN),
    url("/same-instant", lastmod="2024-03-01T12:00:00+02:00", last_modified=LM_MAR),
    url(
        "/generated",
        lastmod="2024-03-01",
        last_modified=LM_JUN,
        issues=["lastmod_unverifiable"],
    ),
    url("/text-dates", lastmod="version-a"),
    url("/unchanged", lastmod="2024-01-01", last_modified=LM_JAN),
    not_fetched("/inventory"),
    url("/caf\u00e9", issues=["canonical_mismatch"]),
]

OLD_SUMMARY: dict[str, Any] = {
    "record": "summary",
    "origin": E,
    "started_at": "2024-06-01T00:00:00Z",
    "finished_at": "2024-06-01T01:00:00Z",
    "sitemaps_found": 4,
    "urls_listed": 19,
    "urls_fetched": 19,
    "counts": {},
    "severities": {},
    "robots_txt": {"outcome": "rules"},
    "notes": [],
    "settings": {},
}
NEW_SUMMARY: dict[str, Any] = {
    **OLD_SUMMARY,
    "started_at": "2024-06-02T00:00:00Z",
    "finished_at": "2024-06-02T01:00:00Z",
}


def diff(
    change: str,
    url: str | None,
    sitemap: str | None = None,
    *,
    code: str | None = None,
    old: Any = None,
    new: Any = None,
) -> dict[str, Any]:
    return {
        "record": "diff",
        "change": change,
        "url": url,
        "sitemap": sitemap,
        "code": code,
        "old": old,
        "new": new,
    }


EXPECTED: list[dict[str, Any]] = [
    diff("url_added", f"{E}/added", A),
    diff("url_removed", f"{E}/removed", OLD_SITEMAP),
    diff("url_moved", f"{E}/moved", old=[A, OLD_SITEMAP], new=[A, NEW_SITEMAP]),
    diff("sitemap_added", NEW_SITEMAP, NEW_SITEMAP),
    diff("sitemap_removed", OLD_SITEMAP, OLD_SITEMAP),
    diff("finding_new", A, A, code="xml_malformed"),
    diff("finding_new", f"{E}/added", code="lastmod_unverifiable"),
    diff("finding_new", B, B, code="http_error"),
    diff("finding_new", f"{E}/blocked", code="robots_blocked"),
    diff("finding_new", f"{E}/broken", code="http_error"),
    diff("finding_new", f"{E}/failed", code="fetch_failed"),
    diff("finding_new", f"{E}/noindexed", code="noindex"),
    diff("finding_new", f"{E}/redirected", code="redirect"),
    diff("finding_fixed", f"{E}/failed", code="redirect"),
    diff("finding_fixed", f"{E}/fixed", code="http_error"),
    diff("finding_fixed", OLD_SITEMAP, OLD_SITEMAP, code="empty"),
    diff("finding_fixed", f"{E}/removed", code="redirect"),
    diff("finding_persisting", f"{E}/caf\u00e9", code="canonical_mismatch"),
    diff("finding_persisting", f"{E}/generated", code="lastmod_unverifiable"),
    diff("finding_persisting", f"{E}/persist", code="canonical_mismatch"),
    diff("finding_persisting", INDEX, INDEX, code="index_cycle"),
    diff("status_regression", B, B, old=200, new=404),
    diff("status_regression", f"{E}/broken", old=200, new=500),
    diff("status_regression", f"{E}/failed", old=200, new=None),
    diff("status_changed", f"{E}/fixed", old=404, new=200),
    diff("status_changed", f"{E}/redirected", old=200, new=301),
    diff("indexability_regression", f"{E}/blocked", old="indexable", new="robots_blocked"),
    diff("indexability_regression", f"{E}/broken", old="indexable", new="500"),
    # /failed redirected in the old run already: not indexable then either (no record).
    diff("indexability_regression", f"{E}/noindexed", old="indexable", new="noindex"),
    diff("indexability_regression", f"{E}/redirected", old="indexable", new="301"),
    diff("indexability_restored", f"{E}/fixed", old="404", new="indexable"),
    diff("lastmod_backwards", f"{E}/back", old="2024-05-02T10:00:00Z", new="2024-04-30"),
    diff("lastmod_backwards", f"{E}/text-dates", old="version-b", new="version-a"),
    diff("lastmod_changed_page_unchanged", f"{E}/stale", old="2024-01-01", new="2024-06-01"),
    diff("page_changed_lastmod_unchanged", f"{E}/silent", old=LM_MAR, new=LM_JUN),
]


def write_report(path: Path, records: list[dict[str, Any]], summary: dict[str, Any] | None) -> Path:
    """Write a JSON Lines report the way the crawl does: one record per line, summary last."""
    lines = [*records, *([summary] if summary is not None else [])]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8"
    )
    return path
