"""The report as one self-contained HTML page, for people.

The page needs nothing but itself: CSS and JavaScript are inline, charts are inline SVG, fonts
are the system's, and a Content-Security-Policy allows no network access at all (``default-src
'none'``) and runs only the page's own script and style (by hash), so an injected ``<script>``
would not run even if escaping failed. Every value from the report is HTML-escaped; only
http(s) URLs become links.

Sections: the summary (origin, times, totals, robots.txt outcome, notes, settings), findings
per code with their severity and meaning, charts (final status codes, age of each ``<lastmod>``
at the end of the audit, ``Last-Modified`` minus ``<lastmod>``), findings per sitemap, the
changes since the previous run (counts per change type and a table), and a URL table with a
text filter and a finding-code filter.

Memory is bounded: records are read once and counted; only the rows of the URL table and of
the table of changes are kept, at most ``max_rows`` each (URLs with the most severe findings
first, then in report order; changes by tone, bad first, and within a tone in the order of
:data:`CHANGE_TONES`: status and indexability regressions first), and the page says how many were
left out. The ages of lastmods are counted in bins whose width grows (second, minute, hour,
day) when there are many distinct values, so their memory is bounded too.

This module aggregates the records and lays out the page; its HTML fragments (escaping,
links, badges, rows, charts) are in :mod:`sitemapaudit.report.markup`, the buckets of ages and
deltas in :mod:`sitemapaudit.report.timebins`.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any, TextIO

from sitemapaudit import __version__
from sitemapaudit.history.diff import summarize
from sitemapaudit.report.flat import (
    SUMMARY_FIELDS,
    fields_of,
    meaning_of,
    record_kind,
    severity_of,
)
from sitemapaudit.report.markup import (
    GRID_END,
    SEVERITY_RANK,
    age_class,
    as_int,
    badge,
    badges,
    bar_chart,
    change_row,
    count_text,
    delta_class,
    details,
    duration,
    esc,
    grid_row,
    grid_start,
    link,
    prose,
    robots_outcome_meaning,
    status_label,
    str_or_none,
    strings,
    time_html,
    url_row,
    value_html,
    worst_rank,
)
from sitemapaudit.report.timebins import (
    AGE_BUCKETS,
    DELTA_BUCKETS,
    TimeHistogram,
    age_bucket,
    delta_bucket,
    lastmod_timestamp,
)
from sitemapaudit.words import are, count_noun

DEFAULT_MAX_ROWS = 20_000
"""Rows of the URL table (and of the table of changes) kept by default."""

MAX_SITEMAP_ROWS = 100_000
"""Sitemaps known only from URL records that the page tracks (sitemap records always count)."""

CHANGE_TONES: dict[str, str] = {
    "status_regression": "bad",
    "indexability_regression": "bad",
    "finding_new": "bad",
    "lastmod_backwards": "bad",
    "lastmod_changed_page_unchanged": "bad",
    "page_changed_lastmod_unchanged": "bad",
    "url_removed": "neutral",
    "sitemap_removed": "neutral",
    "status_changed": "neutral",
    "url_moved": "neutral",
    "url_added": "neutral",
    "sitemap_added": "neutral",
    "finding_fixed": "good",
    "indexability_restored": "good",
    "finding_persisting": "persisting",
}
"""Change types of ``"diff"`` records and their tone, in display order."""

_TONE_RANK = {"bad": 0, "good": 1, "neutral": 2, "persisting": 3}
# The rank of a change in the table: its tone's, then its place in CHANGE_TONES (status and
# indexability regressions before new findings); an unknown change type is last of its tone.
_CHANGE_RANK = {
    change: _TONE_RANK[tone] * (len(CHANGE_TONES) + 1) + index
    for index, (change, tone) in enumerate(CHANGE_TONES.items())
}


def _change_rank(change: str, tone: str) -> int:
    rank = _CHANGE_RANK.get(change)
    return rank if rank is not None else (_TONE_RANK[tone] + 1) * (len(CHANGE_TONES) + 1) - 1


_SEVERITY_PLURAL = {"error": "errors", "warning": "warnings", "notice": "notices"}


@cache
def _asset(name: str) -> str:
    return (resources.files("sitemapaudit.report") / "assets" / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(slots=True)
class SitemapSummary:
    """What the page shows about one sitemap."""

    url: str
    found_via: str | None = None
    kind: str | None = None
    status: int | None = None
    url_count: int | None = None
    child_count: int | None = None
    issues: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reported: bool = False
    listed: int = 0
    url_findings: Counter[str] = field(default_factory=Counter)


class _Capped:
    """The ``limit`` rows with the smallest rank, ties kept in arrival order."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.heap: list[tuple[int, int, str, frozenset[str]]] = []
        self.seen = 0

    def wants(self, rank: int) -> bool:
        return self.limit > 0 and (len(self.heap) < self.limit or -self.heap[0][0] > rank)

    def add(self, rank: int, html: str, codes: frozenset[str] = frozenset()) -> None:
        entry = (-rank, -self.seen, html, codes)
        self.seen += 1
        if len(self.heap) < self.limit:
            heapq.heappush(self.heap, entry)
        else:
            heapq.heapreplace(self.heap, entry)

    def skip(self) -> None:
        self.seen += 1

    def rows(self) -> list[tuple[str, frozenset[str]]]:
        return [(html, codes) for _, _, html, codes in sorted(self.heap, reverse=True)]

    @property
    def left_out(self) -> int:
        return self.seen - len(self.heap)


class HtmlReport:
    """Aggregates the records of a report and writes them as one HTML page."""

    def __init__(self, *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        if max_rows < 0:
            raise ValueError(f"max_rows must be 0 or more, not {max_rows}")
        self.max_rows = max_rows
        self.summary: dict[str, Any] | None = None
        self.sitemaps: dict[str, SitemapSummary] = {}
        self.sitemap_total = 0
        self.url_total = 0
        self.urls_fetched = 0
        self.urls_with_findings = 0
        self.codes: Counter[tuple[str, str]] = Counter()
        self.statuses: Counter[str] = Counter()
        self.lastmods = TimeHistogram()
        self.lastmod_other: Counter[str] = Counter()
        self.deltas: Counter[str] = Counter()
        self.no_delta = 0
        self.latest_check: datetime | None = None
        self.changes: Counter[str] = Counter()
        self.url_rows = _Capped(max_rows)
        self.change_rows = _Capped(max_rows)

    def add(self, item: object) -> None:
        """Counts one record (dataclass or dict); unknown record types are ignored."""
        kind = record_kind(item)
        if kind == "url":
            self._add_url(fields_of(item))
        elif kind == "sitemap":
            self._add_sitemap(fields_of(item))
        elif kind == "diff":
            self._add_change(fields_of(item))
        elif kind == "summary":
            self.summary = dict(fields_of(item))

    def _sitemap(self, url: str, *, reported: bool = False) -> SitemapSummary | None:
        entry = self.sitemaps.get(url)
        if entry is None and (reported or len(self.sitemaps) < MAX_SITEMAP_ROWS):
            entry = self.sitemaps[url] = SitemapSummary(url=url)
        return entry

    def _add_sitemap(self, r: Any) -> None:
        self.sitemap_total += 1
        entry = self._sitemap(str(r.get("url")), reported=True)
        assert entry is not None
        entry.reported = True
        entry.found_via = str_or_none(r.get("found_via"))
        entry.kind = str_or_none(r.get("kind"))
        entry.status = as_int(r.get("status"))
        entry.url_count = as_int(r.get("url_count"))
        entry.child_count = as_int(r.get("child_count"))
        entry.issues = strings(r.get("issues"))
        entry.errors = strings(r.get("errors"))
        for code in entry.issues:
            self.codes[("sitemap", code)] += 1

    def _add_url(self, r: Any) -> None:
        self.url_total += 1
        issues = strings(r.get("issues"))
        fetched = r.get("fetched") is True
        self.urls_fetched += int(fetched)
        if issues:
            self.urls_with_findings += 1
        for code in issues:
            self.codes[("url", code)] += 1
        self.statuses[status_label(r, issues)] += 1
        lastmod = r.get("lastmod")
        if not isinstance(lastmod, str) or not lastmod.strip():
            self.lastmod_other["none"] += 1
        else:
            stamp = None if "lastmod_invalid" in issues else lastmod_timestamp(lastmod)
            if stamp is None:
                self.lastmod_other["invalid"] += 1
            else:
                self.lastmods.add(stamp)
        delta = r.get("lastmod_delta_s")
        if isinstance(delta, int | float) and not isinstance(delta, bool):
            self.deltas[delta_bucket(float(delta))] += 1
        else:
            self.no_delta += 1
        checked = _parse_time(r.get("checked_at"))
        if checked is not None and (self.latest_check is None or checked > self.latest_check):
            self.latest_check = checked
        for sitemap in strings(r.get("sitemaps")):
            listing = self._sitemap(sitemap)
            if listing is not None:
                listing.listed += 1
                listing.url_findings.update(issues)
        rank = worst_rank(issues, "url")
        if self.url_rows.wants(rank):
            self.url_rows.add(rank, url_row(r, issues), frozenset(issues))
        else:
            self.url_rows.skip()

    def _add_change(self, r: Any) -> None:
        change = str(r.get("change"))
        self.changes[change] += 1
        tone = CHANGE_TONES.get(change, "neutral")
        rank = _change_rank(change, tone)
        if self.change_rows.wants(rank):
            self.change_rows.add(rank, change_row(r, change, tone))
        else:
            self.change_rows.skip()

    def reference_time(self) -> tuple[datetime, str]:
        """The instant lastmod ages are measured from, and what it is."""
        summary = self.summary or {}
        finished = _parse_time(summary.get("finished_at"))
        if finished is not None:
            return finished, "the end of the audit"
        if self.latest_check is not None:
            return self.latest_check, "the last response of the audit"
        started = _parse_time(summary.get("started_at"))
        if started is not None:
            return started, "the start of the audit"
        return datetime.now(UTC).replace(microsecond=0), "the time this page was written"

    def age_counts(self) -> dict[str, int]:
        """Lastmods per :data:`AGE_BUCKETS` label."""
        reference, _ = self.reference_time()
        counts = dict.fromkeys(AGE_BUCKETS, 0)
        for age, count in self.lastmods.ages(reference.timestamp()):
            counts[age_bucket(age)] += count
        counts["invalid"] = self.lastmod_other["invalid"]
        counts["none"] = self.lastmod_other["none"]
        return counts

    def write(self, out: TextIO) -> None:
        """Writes the page to a text stream."""
        css, js = _asset("report.css"), _asset("report.js")
        summary = self.summary or {}
        origin = str_or_none(summary.get("origin")) or "report"
        csp = (
            "default-src 'none'; "
            f"style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; "
            "img-src data:; base-uri 'none'; form-action 'none'"
        )
        out.write(
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="sitemapaudit {esc(__version__)}">\n'
            f"<title>Sitemap audit: {esc(origin)}</title>\n"
            f"<style>{css}</style>\n</head>\n<body>\n"
        )
        out.write(self._header(origin))
        out.write('<main id="top">\n')
        out.write(self._summary_section())
        out.write(self._findings_section())
        out.write(self._charts_section())
        out.write(self._sitemaps_section())
        out.write(self._changes_section())
        self._write_urls_section(out)
        out.write("</main>\n")
        records = self.url_total + self.sitemap_total + sum(self.changes.values())
        out.write(
            f"<footer><p>Written by sitemapaudit {esc(__version__)} from the report's "
            f"{count_noun(records, 'record')}.</p></footer>\n"
        )
        out.write(f"<script>{js}</script>\n</body>\n</html>\n")

    def _header(self, origin: str) -> str:
        summary = self.summary or {}
        finished = str_or_none(summary.get("finished_at"))
        if summary.get("complete") is False:
            stopped = f" {time_html(finished)}" if finished else ""
            when = f'<strong class="incomplete">incomplete: stopped{stopped}</strong>'
        else:
            when = f"finished {time_html(finished)}" if finished else "not finished"
        nav = "".join(
            f'<a href="#{anchor}">{label}</a>'
            for anchor, label in (
                ("summary", "Summary"),
                ("findings", "Findings"),
                ("charts", "Charts"),
                ("sitemaps", "Sitemaps"),
                ("changes", "Changes"),
                ("urls", "URLs"),
            )
        )
        return (
            '<header class="page-header">\n'
            f'<h1>Sitemap audit <span class="origin">{esc(origin)}</span></h1>\n'
            f'<p class="when">{when}</p>\n'
            f'<nav aria-label="Sections">{nav}</nav>\n'
            "</header>\n"
        )

    def _severity_totals(self) -> dict[str, int]:
        summary = self.summary or {}
        given = summary.get("severities")
        if isinstance(given, dict) and given:
            return {str(k): as_int(v) or 0 for k, v in given.items()}
        totals: Counter[str] = Counter()
        for (record, code), count in self.codes.items():
            totals[severity_of(code, record) or "unknown"] += count
        return {s: totals.get(s, 0) for s in ("error", "warning", "notice")}

    def _summary_section(self) -> str:
        summary = self.summary
        parts = ['<section id="summary">\n<h2>Summary</h2>\n']
        if summary is None:
            parts.append(
                '<p class="alert">The report has no summary record: the audit may not have '
                "finished. The figures below are counted from the records it has.</p>\n"
            )
            summary = {}
        elif summary.get("complete") is False:
            parts.append(
                '<p class="alert">The audit stopped before it was complete (its summary says '
                '<code>"complete": false</code>; the notes below say why): the report holds '
                "the records written until then, and what it lacks is not known to be fine. "
                "The figures below count those records.</p>\n"
            )
        sitemaps = as_int(summary.get("sitemaps_found"))
        listed = as_int(summary.get("urls_listed"))
        fetched = as_int(summary.get("urls_fetched"))
        # (label of one, label of another number, the number, extra classes)
        cards = [
            (
                "Sitemap found",
                "Sitemaps found",
                sitemaps if sitemaps is not None else self.sitemap_total,
                "",
            ),
            ("URL listed", "URLs listed", listed if listed is not None else self.url_total, ""),
            (
                "URL fetched",
                "URLs fetched",
                fetched if fetched is not None else self.urls_fetched,
                "",
            ),
            ("URL with findings", "URLs with findings", self.urls_with_findings, ""),
        ]
        for severity, count in self._severity_totals().items():
            plural = _SEVERITY_PLURAL.get(severity, severity).capitalize()
            cards.append((severity.capitalize(), plural, count, f" sev-{esc(severity)}"))
        total_changes = sum(self.changes.values())
        if total_changes:
            cards.append(("Change since last run", "Changes since last run", total_changes, ""))
        parts.append('<div class="cards">\n')
        for one, many, value, extra in cards:
            parts.append(
                f'<div class="card{extra}"><span class="value">{count_text(value)}</span>'
                f'<span class="label">{esc(one if value == 1 else many)}</span></div>\n'
            )
        parts.append("</div>\n")

        started = str_or_none(summary.get("started_at"))
        finished = str_or_none(summary.get("finished_at"))
        rows: list[tuple[str, str]] = [
            ("Origin", link(str_or_none(summary.get("origin")))),
            ("Started", time_html(started) if started else "\u2014"),
            ("Finished", time_html(finished) if finished else "\u2014"),
        ]
        resumed = strings(summary.get("resumed_at"))
        if resumed:
            rows.append(("Resumed", ", ".join(time_html(at) for at in resumed)))
        start_time, end_time = _parse_time(started), _parse_time(finished)
        if start_time and end_time:
            rows.append(("Duration", esc(duration(end_time - start_time))))
        robots = summary.get("robots_txt")
        if isinstance(robots, dict):
            outcome = str_or_none(robots.get("outcome"))
            rows.append(
                (
                    "robots.txt",
                    f'<span class="outcome outcome-{esc(outcome)}">{esc(outcome or "unknown")}'
                    f"</span> {esc(robots_outcome_meaning(outcome))}",
                )
            )
            for key, value in robots.items():
                if key != "outcome":
                    rows.append((f"robots.txt {key}", value_html(value)))
        for key, value in summary.items():
            if (
                key not in SUMMARY_FIELDS
                and key != "resumed_at"
                and value not in (None, {}, [], "")
            ):
                rows.append(
                    (str(key), _summary_value(str(key), value, complete=summary.get("complete")))
                )
        parts.append('<dl class="facts">\n')
        for term, html in rows:
            parts.append(f"<dt>{esc(term)}</dt><dd>{html}</dd>\n")
        parts.append("</dl>\n")
        notes = strings(summary.get("notes"))
        if notes:
            parts.append('<h3>Notes</h3>\n<ul class="notes">\n')
            parts.extend(f"<li>{esc(note)}</li>\n" for note in notes)
            parts.append("</ul>\n")
        settings = summary.get("settings")
        if isinstance(settings, dict) and settings:
            parts.append(
                '<details class="settings"><summary>Settings that shaped the result</summary>\n'
                '<table class="kv"><tbody>\n'
            )
            for key, value in settings.items():
                parts.append(f"<tr><th>{esc(key)}</th><td>{value_html(value)}</td></tr>\n")
            parts.append("</tbody></table></details>\n")
        parts.append("</section>\n")
        return "".join(parts)

    def _findings_section(self) -> str:
        parts = ['<section id="findings">\n<h2>Findings by code</h2>\n']
        if not self.codes:
            parts.append('<p class="empty">No findings.</p>\n</section>\n')
            return "".join(parts)

        def order(item: tuple[tuple[str, str], int]) -> tuple[int, int, str, str]:
            (record, code), count = item
            rank = SEVERITY_RANK.get(severity_of(code, record) or "", 3)
            return rank, -count, code, record

        parts.append(
            '<table class="data findings"><thead><tr><th>Code</th><th>Record</th>'
            '<th>Severity</th><th class="num">Count</th><th>Meaning</th></tr></thead><tbody>\n'
        )
        for (record, code), count in sorted(self.codes.items(), key=order):
            severity = severity_of(code, record) or "unknown"
            code_html = (
                f'<a href="#urls" data-filter-code="{esc(code)}" class="code">{esc(code)}</a>'
                if record == "url"
                else f'<span class="code">{esc(code)}</span>'
            )
            parts.append(
                f"<tr><td>{code_html}</td><td>{esc(record)}</td>"
                f'<td><span class="badge sev-{esc(severity)}">{esc(severity)}</span></td>'
                f'<td class="num">{count_text(count)}</td>'
                f"<td>{prose(meaning_of(code, record) or '')}</td></tr>\n"
            )
        parts.append("</tbody></table>\n</section>\n")
        return "".join(parts)

    def _charts_section(self) -> str:
        reference, what = self.reference_time()
        ages = self.age_counts()
        age_bars = [
            (label, count, age_class(label))
            for label, count in ages.items()
            if count or label not in ("in the future", "invalid")
        ]
        delta_bars = [
            (label, self.deltas.get(label, 0), delta_class(label)) for label in DELTA_BUCKETS
        ]
        delta_total = sum(self.deltas.values())
        return (
            '<section id="charts">\n<h2>Charts</h2>\n<div class="charts">\n'
            '<figure class="chart-box" id="chart-status">\n'
            "<figcaption><strong>Final status</strong> of each listed URL</figcaption>\n"
            f"{bar_chart(self._status_bars(), label='Final HTTP status of each URL')}"
            "</figure>\n"
            '<figure class="chart-box" id="chart-lastmod-age">\n'
            "<figcaption><strong>Age of lastmod</strong> at "
            f"{esc(what)} ({time_html(reference.strftime('%Y-%m-%dT%H:%M:%SZ'))})"
            "</figcaption>\n"
            f"{bar_chart(age_bars, label='Age of each URL lastmod')}"
            "</figure>\n"
            '<figure class="chart-box" id="chart-lastmod-delta">\n'
            "<figcaption><strong>Last-Modified minus lastmod</strong>: "
            "&ldquo;behind&rdquo; means the page changed after its lastmod, "
            "&ldquo;ahead&rdquo; that the lastmod claims a change the server does not show"
            "</figcaption>\n"
            f"{bar_chart(delta_bars, label='Last-Modified minus lastmod')}"
            f'<p class="chart-note">{count_noun(delta_total, "URL")} compared; '
            f"{count_text(self.no_delta)} "
            "without both a lastmod and a usable Last-Modified.</p>\n"
            "</figure>\n"
            "</div>\n</section>\n"
        )

    def _status_bars(self) -> list[tuple[str, int, str]]:
        numeric = sorted((label for label in self.statuses if label.isdigit()), key=int)
        other = [
            label
            for label in ("failed", "robots blocked", "not requested")
            if label in self.statuses
        ]
        if len(numeric) > 16:
            classes: Counter[str] = Counter()
            for label in numeric:
                classes[f"{label[0]}xx"] += self.statuses[label]
            bars = [(label, count, f"st-{label}") for label, count in sorted(classes.items())]
        else:
            bars = [(label, self.statuses[label], f"st-{label[0]}xx") for label in numeric]
        bars += [(label, self.statuses[label], "st-none") for label in other]
        return bars

    def _sitemaps_section(self) -> str:
        parts = ['<section id="sitemaps">\n<h2>Findings by sitemap</h2>\n']
        if not self.sitemaps:
            parts.append('<p class="empty">No sitemap was found.</p>\n</section>\n')
            return "".join(parts)
        parts.append(
            grid_start(
                "sitemaps",
                "sitemap-table",
                "Findings by sitemap",
                [
                    ("Sitemap", ""),
                    ("Found via", ""),
                    ("Kind", ""),
                    ("Status", "num"),
                    ("Entries", "num"),
                    ("URL records", "num"),
                    ("Sitemap findings", ""),
                    ("Findings of its URLs", ""),
                ],
            )
        )
        for entry in self.sitemaps.values():
            entries = []
            if entry.url_count:
                entries.append(count_noun(entry.url_count, "URL"))
            if entry.child_count:
                entries.append(count_noun(entry.child_count, "sitemap"))
            own = badges(entry.issues, "sitemap")
            if entry.errors:
                own += details(entry.errors)
            url_badges = " ".join(
                badge(code, "url", f" \u00d7{count_text(count)}")
                for code, count in sorted(
                    entry.url_findings.items(),
                    key=lambda kv: (SEVERITY_RANK.get(severity_of(kv[0], "url") or "", 3), kv[0]),
                )
            )
            status = entry.status
            status_html = (
                f'<span class="status st-{str(status)[0]}xx">{status}</span>'
                if status is not None
                else '<span class="muted">\u2014</span>'
            )
            via = entry.found_via if entry.reported else "(listed by URL records only)"
            parts.append(
                grid_row(
                    "",
                    [
                        ("url", link(entry.url)),
                        ("", esc(via)),
                        ("", esc(entry.kind)),
                        ("num", status_html),
                        ("num", ", ".join(entries)),
                        ("num", count_text(entry.listed)),
                        ("", own),
                        ("", url_badges),
                    ],
                )
            )
        parts.append(GRID_END + "</section>\n")
        return "".join(parts)

    def _changes_section(self) -> str:
        parts = ['<section id="changes">\n<h2>Changes since the previous run</h2>\n']
        total = sum(self.changes.values())
        if not total:
            parts.append(f'<p class="empty">{_no_change_records(self.summary)}</p>\n</section>\n')
            return "".join(parts)
        known = [c for c in CHANGE_TONES if c in self.changes]
        unknown = sorted(c for c in self.changes if c not in CHANGE_TONES)
        bars = [
            (change, self.changes[change], f"tone-{CHANGE_TONES.get(change, 'neutral')}")
            for change in [*known, *unknown]
        ]
        parts.append('<div class="charts one">\n<figure class="chart-box" id="chart-changes">\n')
        parts.append(
            f"<figcaption><strong>{count_noun(total, 'change')}</strong> per type</figcaption>\n"
            f"{bar_chart(bars, label='Changes per type', unit='change')}</figure>\n</div>\n"
        )
        rows = self.change_rows.rows()
        parts.append(
            grid_start(
                "changes",
                "change-table",
                "Changes since the previous run",
                [
                    ("Change", ""),
                    ("URL", ""),
                    ("Sitemap", ""),
                    ("Code", ""),
                    ("Old", ""),
                    ("New", ""),
                ],
            )
        )
        parts.extend(html for html, _ in rows)
        parts.append(GRID_END)
        left_out = self.change_rows.left_out
        if left_out:
            parts.append(
                f'<p class="left-out" id="changes-left-out">'
                f"{count_noun(left_out, 'more change')} {are(left_out)} not in this table "
                f"(it holds at most {count_noun(self.max_rows, 'row')}; "
                "regressions come first).</p>\n"
            )
        parts.append("</section>\n")
        return "".join(parts)

    def _write_urls_section(self, out: TextIO) -> None:
        rows = self.url_rows.rows()
        in_rows: Counter[str] = Counter()
        for _, codes in rows:
            in_rows.update(codes)
        options = "".join(
            f'<option value="{esc(code)}">{esc(code)} ({count_text(count)})</option>'
            for code, count in sorted(
                in_rows.items(),
                key=lambda kv: (SEVERITY_RANK.get(severity_of(kv[0], "url") or "", 3), kv[0]),
            )
        )
        out.write(
            '<section id="urls">\n<h2>URLs</h2>\n'
            '<form class="filters" id="filters" role="search" hidden>\n'
            '<label>Filter <input type="search" id="filter-text" autocomplete="off" '
            'spellcheck="false" placeholder="text in the URL, status, finding\u2026"></label>\n'
            '<label>Finding <select id="filter-code">'
            '<option value="">all rows</option>'
            '<option value="*any">any finding</option>'
            '<option value="*none">no finding</option>'
            f"{options}</select></label>\n"
            '<output id="filter-status" aria-live="polite"></output>\n'
            "</form>\n"
            '<noscript><p class="muted">Filtering the table needs JavaScript.</p></noscript>\n'
        )
        left_out = self.url_rows.left_out
        if left_out:
            out.write(
                f'<p class="left-out" id="urls-left-out">{count_text(left_out)} of '
                f"{count_noun(self.url_total, 'URL')} {are(left_out)} not in this table: it "
                f"holds at most {count_noun(self.max_rows, 'row')}, URLs with findings first."
                "</p>\n"
            )
        out.write(
            f'<p class="muted" id="urls-count">{count_noun(len(rows), "URL")} in the table.</p>\n'
            + grid_start(
                "urls",
                "url-table",
                "URLs",
                [
                    ("URL", ""),
                    ("Status", "num"),
                    ("Findings", ""),
                    ("lastmod", ""),
                    ("Last-Modified", ""),
                    ("\u0394", "num"),
                    ("Sitemaps", "num"),
                ],
            )
        )
        for html, _ in rows:
            out.write(html)
        out.write(
            GRID_END + '<p class="empty" id="filter-empty" hidden>'
            "No URL in the table matches the filter.</p>\n"
            "</section>\n"
        )


def _summary_value(key: str, value: Any, *, complete: Any = True) -> str:
    """HTML of a summary field that the page has no place of its own for: ``fail_on`` and
    ``changes`` in words (``complete`` is the summary's: an audit that stopped early is not
    compared), another object as its ``key: value`` pairs."""
    if key == "fail_on" and isinstance(value, dict):
        policy = str_or_none(value.get("policy", value.get("threshold"))) or "unknown"
        failed = value.get("failed")
        if failed is True:
            return f"{esc(policy)}: <strong>matched</strong> (the command exits with status 1)"
        if failed is False:
            return f"{esc(policy)}: not matched"
        return esc(policy)
    if key == "changes" and isinstance(value, dict):
        if complete is False:
            return esc(NOT_COMPARED_STOPPED)
        counts = value.get("counts")
        previous = value.get("previous_run")
        if previous is None:
            return esc(NOT_COMPARED_NO_RUN)
        if isinstance(counts, dict):
            numbers = {str(change): as_int(count) or 0 for change, count in counts.items()}
            return f"since run {esc(previous)}: {esc(summarize(numbers))}"
    if isinstance(value, dict):
        return "; ".join(f"{esc(k)}: {value_html(v)}" for k, v in value.items()) or value_html(None)
    return value_html(value)


NOT_COMPARED_STOPPED = "not compared: the audit stopped before it was complete"
"""The summary's ``changes`` of an audit that stopped early: such a run gets no diff records."""

NOT_COMPARED_NO_RUN = (
    "not compared: no earlier finished run of this origin was in the history, or no history "
    "was kept"
)
"""The summary's ``changes`` of a finished audit without a previous run to compare with."""


def _no_change_records(summary: dict[str, Any] | None) -> str:
    """HTML of the section of changes when the report holds no diff records: whether the
    run was compared, as its summary says (a comparison that found nothing is not the
    absence of one)."""
    if summary is None:
        return (
            "The report has no summary record and no diff records: whether this audit was "
            "compared with a previous run is not known."
        )
    changes = summary.get("changes")
    if summary.get("complete") is False:
        return (
            "Not compared with a previous run: the audit stopped before it was complete, and "
            "only a complete audit is compared."
        )
    if not isinstance(changes, dict):
        return "The summary does not say whether this audit was compared with a previous run."
    previous = changes.get("previous_run")
    if previous is None:
        return (
            "Not compared with a previous run: no earlier finished run of this origin was in "
            "the history, or no history was kept."
        )
    counts = changes.get("counts")
    numbers = (
        {str(change): as_int(count) or 0 for change, count in counts.items()}
        if isinstance(counts, dict)
        else {}
    )
    if not sum(numbers.values()):
        return f"Compared with run {esc(previous)}: no changes."
    return (
        f"Compared with run {esc(previous)}: {esc(summarize(numbers))}, but this report holds "
        "none of their diff records."
    )


def write_html(
    records: Iterable[object], path: str | os.PathLike[str], *, max_rows: int = DEFAULT_MAX_ROWS
) -> None:
    """Writes the records of a report (dataclasses or dicts) as one HTML page at ``path``."""
    report = HtmlReport(max_rows=max_rows)
    for record in records:
        report.add(record)
    with open(path, "w", encoding="utf-8", errors="replace", newline="\n") as out:
        report.write(out)
