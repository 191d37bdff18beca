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
first, then in report order; regressions first among changes), and the page says how many were
left out. The ages of lastmods are counted in bins whose width grows (second, minute, hour,
day) when there are many distinct values, so their memory is bounded too.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from html import escape
from importlib import resources
from typing import Any, TextIO
from urllib.parse import urlsplit

from sitemapaudit import __version__
from sitemapaudit.history.diff import CHANGES
from sitemapaudit.page.dates import parse_rfc822_date, parse_w3c_datetime
from sitemapaudit.report.flat import (
    SUMMARY_FIELDS,
    fields_of,
    format_number,
    joined,
    meaning_of,
    record_kind,
    redirect_chain_text,
    scalar,
    severity_of,
)

DEFAULT_MAX_ROWS = 20_000
"""Rows of the URL table (and of the table of changes) kept by default."""

MAX_SITEMAP_ROWS = 100_000
"""Sitemaps known only from URL records that the page tracks (sitemap records always count)."""

DAY = 86_400.0
HOUR = 3_600.0

AGE_BUCKETS: tuple[str, ...] = (
    "in the future",
    "< 1 day",
    "< 1 week",
    "< 1 month",
    "< 1 year",
    "older",
    "invalid",
    "none",
)
"""Buckets of the lastmod-age histogram; a month is 30 days and a year 365 days."""

_AGE_LIMITS: tuple[tuple[float, str], ...] = (
    (DAY, "< 1 day"),
    (7 * DAY, "< 1 week"),
    (30 * DAY, "< 1 month"),
    (365 * DAY, "< 1 year"),
)

DELTA_BUCKETS: tuple[str, ...] = (
    "lastmod ahead > 30 d",
    "lastmod ahead 1\u201330 d",
    "lastmod ahead 1 h\u20131 d",
    "within \u00b11 h",
    "lastmod behind 1 h\u20131 d",
    "lastmod behind 1\u201330 d",
    "lastmod behind > 30 d",
)
"""Buckets of ``lastmod_delta_s`` (``Last-Modified`` minus ``<lastmod>``), most negative first."""

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


_LONG_URL = 200
_TONE_RANK = {"bad": 0, "good": 1, "neutral": 2, "persisting": 3}
_SEVERITY_RANK = {"error": 0, "warning": 1, "notice": 2}
_SEVERITY_PLURAL = {"error": "errors", "warning": "warnings", "notice": "notices"}


@cache
def _asset(name: str) -> str:
    return (resources.files("sitemapaudit.report") / "assets" / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _e(value: Any) -> str:
    """HTML-escaped text of any value (``None`` is empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_number(value)
    return escape(value if isinstance(value, str) else str(value), quote=True)


def _n(value: int) -> str:
    return f"{value:,}"


def _pct(part: int, whole: int) -> str:
    if whole <= 0:
        return ""
    share = 100.0 * part / whole
    return f"{share:.1f}%" if share < 10 else f"{share:.0f}%"


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def lastmod_timestamp(text: str) -> float | None:
    """A lastmod (W3C Datetime, or an RSS date) as a POSIX timestamp; ``None`` if unreadable."""
    parsed = parse_w3c_datetime(text)
    if parsed is not None:
        return parsed.value.timestamp()
    rfc = parse_rfc822_date(text)
    return rfc.timestamp() if rfc is not None else None


def age_bucket(age_s: float) -> str:
    """The :data:`AGE_BUCKETS` label of a lastmod ``age_s`` seconds old (negative: future)."""
    if age_s < 0:
        return "in the future"
    for limit, label in _AGE_LIMITS:
        if age_s < limit:
            return label
    return "older"


def delta_bucket(delta_s: float) -> str:
    """The :data:`DELTA_BUCKETS` label of a ``lastmod_delta_s``."""
    size = abs(delta_s)
    if size <= HOUR:
        return "within \u00b11 h"
    side = "behind" if delta_s > 0 else "ahead"
    if size <= DAY:
        return f"lastmod {side} 1 h\u20131 d"
    if size <= 30 * DAY:
        return f"lastmod {side} 1\u201330 d"
    return f"lastmod {side} > 30 d"


def human_seconds(seconds: float) -> str:
    """A signed duration for people: ``+42 s``, ``-3 min``, ``+5.5 h``, ``+12.0 d``, ``+2.1 y``."""
    if not math.isfinite(seconds):
        return str(seconds)
    sign = "-" if seconds < 0 else "+" if seconds > 0 else ""
    size = abs(seconds)
    if size < 60:
        text = f"{size:.0f} s"
    elif size < HOUR:
        text = f"{size / 60:.0f} min"
    elif size < DAY:
        text = f"{size / HOUR:.1f} h"
    elif size < 365 * DAY:
        text = f"{size / DAY:.1f} d"
    else:
        text = f"{size / (365 * DAY):.1f} y"
    return sign + text


class TimeHistogram:
    """Counts timestamps in bins as fine as one second, widened when bins get too many.

    The bin width starts at one second and grows to a minute, an hour, then a day whenever
    more than ``max_bins`` distinct bins are in use, so memory stays bounded while ages near
    bucket edges stay exact for all but huge, widely spread reports.
    """

    WIDTHS: tuple[float, ...] = (1.0, 60.0, HOUR, DAY)

    def __init__(self, max_bins: int = 50_000) -> None:
        self.max_bins = max_bins
        self.level = 0
        self.bins: Counter[int] = Counter()
        self.total = 0

    @property
    def width(self) -> float:
        return self.WIDTHS[self.level]

    def add(self, timestamp: float) -> None:
        self.bins[math.floor(timestamp / self.width)] += 1
        self.total += 1
        while len(self.bins) > self.max_bins and self.level + 1 < len(self.WIDTHS):
            old, self.level = self.width, self.level + 1
            merged: Counter[int] = Counter()
            for key, count in self.bins.items():
                merged[math.floor(key * old / self.width)] += count
            self.bins = merged

    def ages(self, reference: float) -> Iterator[tuple[float, int]]:
        """``(age in seconds, count)`` per bin, the age taken at the bin's start."""
        for key, count in self.bins.items():
            yield reference - key * self.width, count


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


def _strings(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [v if isinstance(v, str) else str(v) for v in value if v is not None]
    if isinstance(value, str):
        return [value]
    return []


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _worst(codes: Iterable[str], record: str) -> int:
    ranks = [_SEVERITY_RANK.get(severity_of(code, record) or "", 3) for code in codes]
    return min(ranks, default=4)


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
        entry.found_via = _str_or_none(r.get("found_via"))
        entry.kind = _str_or_none(r.get("kind"))
        entry.status = _int(r.get("status"))
        entry.url_count = _int(r.get("url_count"))
        entry.child_count = _int(r.get("child_count"))
        entry.issues = _strings(r.get("issues"))
        entry.errors = _strings(r.get("errors"))
        for code in entry.issues:
            self.codes[("sitemap", code)] += 1

    def _add_url(self, r: Any) -> None:
        self.url_total += 1
        issues = _strings(r.get("issues"))
        fetched = r.get("fetched") is True
        self.urls_fetched += int(fetched)
        if issues:
            self.urls_with_findings += 1
        for code in issues:
            self.codes[("url", code)] += 1
        self.statuses[_status_label(r, issues)] += 1
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
        for sitemap in _strings(r.get("sitemaps")):
            listing = self._sitemap(sitemap)
            if listing is not None:
                listing.listed += 1
                listing.url_findings.update(issues)
        rank = _worst(issues, "url")
        if self.url_rows.wants(rank):
            self.url_rows.add(rank, _url_row(r, issues), frozenset(issues))
        else:
            self.url_rows.skip()

    def _add_change(self, r: Any) -> None:
        change = str(r.get("change"))
        self.changes[change] += 1
        tone = CHANGE_TONES.get(change, "neutral")
        rank = _TONE_RANK[tone]
        if self.change_rows.wants(rank):
            self.change_rows.add(rank, _change_row(r, change, tone))
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
        origin = _str_or_none(summary.get("origin")) or "report"
        csp = (
            "default-src 'none'; "
            f"style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; "
            "img-src data:; base-uri 'none'; form-action 'none'"
        )
        out.write(
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="sitemapaudit {_e(__version__)}">\n'
            f"<title>Sitemap audit: {_e(origin)}</title>\n"
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
        out.write(
            f"<footer><p>Written by sitemapaudit {_e(__version__)} from the report's "
            f"{_n(self.url_total + self.sitemap_total + sum(self.changes.values()))} records."
            "</p></footer>\n"
        )
        out.write(f"<script>{js}</script>\n</body>\n</html>\n")

    def _header(self, origin: str) -> str:
        summary = self.summary or {}
        finished = _str_or_none(summary.get("finished_at"))
        when = f"finished {_time_html(finished)}" if finished else "not finished"
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
            f'<h1>Sitemap audit <span class="origin">{_e(origin)}</span></h1>\n'
            f'<p class="when">{when}</p>\n'
            f'<nav aria-label="Sections">{nav}</nav>\n'
            "</header>\n"
        )

    def _severity_totals(self) -> dict[str, int]:
        summary = self.summary or {}
        given = summary.get("severities")
        if isinstance(given, dict) and given:
            return {str(k): _int(v) or 0 for k, v in given.items()}
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
        sitemaps = _int(summary.get("sitemaps_found"))
        listed = _int(summary.get("urls_listed"))
        fetched = _int(summary.get("urls_fetched"))
        cards = [
            ("Sitemaps found", sitemaps if sitemaps is not None else self.sitemap_total, ""),
            ("URLs listed", listed if listed is not None else self.url_total, ""),
            ("URLs fetched", fetched if fetched is not None else self.urls_fetched, ""),
            ("URLs with findings", self.urls_with_findings, ""),
        ]
        for severity, count in self._severity_totals().items():
            label = _SEVERITY_PLURAL.get(severity, severity).capitalize()
            cards.append((label, count, f" sev-{_e(severity)}"))
        total_changes = sum(self.changes.values())
        if total_changes:
            cards.append(("Changes since last run", total_changes, ""))
        parts.append('<div class="cards">\n')
        for label, value, extra in cards:
            parts.append(
                f'<div class="card{extra}"><span class="value">{_n(value)}</span>'
                f'<span class="label">{_e(label)}</span></div>\n'
            )
        parts.append("</div>\n")

        started = _str_or_none(summary.get("started_at"))
        finished = _str_or_none(summary.get("finished_at"))
        rows: list[tuple[str, str]] = [
            ("Origin", _link(_str_or_none(summary.get("origin")))),
            ("Started", _time_html(started) if started else "\u2014"),
            ("Finished", _time_html(finished) if finished else "\u2014"),
        ]
        start_time, end_time = _parse_time(started), _parse_time(finished)
        if start_time and end_time:
            rows.append(("Duration", _e(_duration(end_time - start_time))))
        robots = summary.get("robots_txt")
        if isinstance(robots, dict):
            outcome = _str_or_none(robots.get("outcome"))
            rows.append(
                (
                    "robots.txt",
                    f'<span class="outcome outcome-{_e(outcome)}">{_e(outcome or "unknown")}'
                    f"</span> {_e(_robots_outcome_meaning(outcome))}",
                )
            )
            for key, value in robots.items():
                if key != "outcome":
                    rows.append((f"robots.txt {key}", _value_html(value)))
        for key, value in summary.items():
            if key not in SUMMARY_FIELDS and value not in (None, {}, [], ""):
                rows.append((str(key), _value_html(value)))
        parts.append('<dl class="facts">\n')
        for term, html in rows:
            parts.append(f"<dt>{_e(term)}</dt><dd>{html}</dd>\n")
        parts.append("</dl>\n")
        notes = _strings(summary.get("notes"))
        if notes:
            parts.append('<h3>Notes</h3>\n<ul class="notes">\n')
            parts.extend(f"<li>{_e(note)}</li>\n" for note in notes)
            parts.append("</ul>\n")
        settings = summary.get("settings")
        if isinstance(settings, dict) and settings:
            parts.append(
                '<details class="settings"><summary>Settings that shaped the result</summary>\n'
                '<table class="kv"><tbody>\n'
            )
            for key, value in settings.items():
                parts.append(f"<tr><th>{_e(key)}</th><td>{_value_html(value)}</td></tr>\n")
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
            rank = _SEVERITY_RANK.get(severity_of(code, record) or "", 3)
            return rank, -count, code, record

        parts.append(
            '<table class="data findings"><thead><tr><th>Code</th><th>Record</th>'
            '<th>Severity</th><th class="num">Count</th><th>Meaning</th></tr></thead><tbody>\n'
        )
        for (record, code), count in sorted(self.codes.items(), key=order):
            severity = severity_of(code, record) or "unknown"
            code_html = (
                f'<a href="#urls" data-filter-code="{_e(code)}" class="code">{_e(code)}</a>'
                if record == "url"
                else f'<span class="code">{_e(code)}</span>'
            )
            parts.append(
                f"<tr><td>{code_html}</td><td>{_e(record)}</td>"
                f'<td><span class="badge sev-{_e(severity)}">{_e(severity)}</span></td>'
                f'<td class="num">{_n(count)}</td>'
                f"<td>{_prose(meaning_of(code, record) or '')}</td></tr>\n"
            )
        parts.append("</tbody></table>\n</section>\n")
        return "".join(parts)

    def _charts_section(self) -> str:
        reference, what = self.reference_time()
        ages = self.age_counts()
        age_bars = [
            (label, count, _age_class(label))
            for label, count in ages.items()
            if count or label not in ("in the future", "invalid")
        ]
        delta_bars = [
            (label, self.deltas.get(label, 0), _delta_class(label)) for label in DELTA_BUCKETS
        ]
        delta_total = sum(self.deltas.values())
        return (
            '<section id="charts">\n<h2>Charts</h2>\n<div class="charts">\n'
            '<figure class="chart-box" id="chart-status">\n'
            "<figcaption><strong>Final status</strong> of each listed URL</figcaption>\n"
            f"{_bar_chart(self._status_bars(), label='Final HTTP status of each URL')}"
            "</figure>\n"
            '<figure class="chart-box" id="chart-lastmod-age">\n'
            "<figcaption><strong>Age of lastmod</strong> at "
            f"{_e(what)} ({_time_html(reference.strftime('%Y-%m-%dT%H:%M:%SZ'))})"
            "</figcaption>\n"
            f"{_bar_chart(age_bars, label='Age of each URL lastmod')}"
            "</figure>\n"
            '<figure class="chart-box" id="chart-lastmod-delta">\n'
            "<figcaption><strong>Last-Modified minus lastmod</strong>: "
            "&ldquo;behind&rdquo; means the page changed after its lastmod, "
            "&ldquo;ahead&rdquo; that the lastmod claims a change the server does not show"
            "</figcaption>\n"
            f"{_bar_chart(delta_bars, label='Last-Modified minus lastmod')}"
            f'<p class="chart-note">{_n(delta_total)} URLs compared; {_n(self.no_delta)} '
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
            _grid_start(
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
                entries.append(f"{_n(entry.url_count)} URLs")
            if entry.child_count:
                entries.append(f"{_n(entry.child_count)} sitemaps")
            own = _badges(entry.issues, "sitemap")
            if entry.errors:
                own += _details(entry.errors)
            url_badges = " ".join(
                _badge(code, "url", f" \u00d7{_n(count)}")
                for code, count in sorted(
                    entry.url_findings.items(),
                    key=lambda kv: (_SEVERITY_RANK.get(severity_of(kv[0], "url") or "", 3), kv[0]),
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
                _grid_row(
                    "",
                    [
                        ("url", _link(entry.url)),
                        ("", _e(via)),
                        ("", _e(entry.kind)),
                        ("num", status_html),
                        ("num", ", ".join(entries)),
                        ("num", _n(entry.listed)),
                        ("", own),
                        ("", url_badges),
                    ],
                )
            )
        parts.append(_GRID_END + "</section>\n")
        return "".join(parts)

    def _changes_section(self) -> str:
        parts = ['<section id="changes">\n<h2>Changes since the previous run</h2>\n']
        total = sum(self.changes.values())
        if not total:
            parts.append(
                '<p class="empty">This report has no comparison with a previous run.</p>\n'
                "</section>\n"
            )
            return "".join(parts)
        known = [c for c in CHANGE_TONES if c in self.changes]
        unknown = sorted(c for c in self.changes if c not in CHANGE_TONES)
        bars = [
            (change, self.changes[change], f"tone-{CHANGE_TONES.get(change, 'neutral')}")
            for change in [*known, *unknown]
        ]
        parts.append('<div class="charts one">\n<figure class="chart-box" id="chart-changes">\n')
        parts.append(
            f"<figcaption><strong>{_n(total)} changes</strong> per type</figcaption>\n"
            f"{_bar_chart(bars, label='Changes per type', unit='changes')}</figure>\n</div>\n"
        )
        rows = self.change_rows.rows()
        parts.append(
            _grid_start(
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
        parts.append(_GRID_END)
        if self.change_rows.left_out:
            parts.append(
                f'<p class="left-out" id="changes-left-out">{_n(self.change_rows.left_out)} '
                f"more changes are not in this table (it holds at most {_n(self.max_rows)} rows; "
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
            f'<option value="{_e(code)}">{_e(code)} ({_n(count)})</option>'
            for code, count in sorted(
                in_rows.items(),
                key=lambda kv: (_SEVERITY_RANK.get(severity_of(kv[0], "url") or "", 3), kv[0]),
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
        if self.url_rows.left_out:
            out.write(
                f'<p class="left-out" id="urls-left-out">{_n(self.url_rows.left_out)} of '
                f"{_n(self.url_total)} URLs are not in this table: it holds at most "
                f"{_n(self.max_rows)} rows, URLs with findings first.</p>\n"
            )
        out.write(
            f'<p class="muted" id="urls-count">{_n(len(rows))} URLs in the table.</p>\n'
            + _grid_start(
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
            _GRID_END + '<p class="empty" id="filter-empty" hidden>'
            "No URL in the table matches the filter.</p>\n"
            "</section>\n"
        )


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _status_label(r: Any, issues: list[str]) -> str:
    status = _int(r.get("status"))
    if status is not None:
        return str(status)
    if "fetch_failed" in issues:
        return "failed"
    if r.get("robots_blocked") is True:
        return "robots blocked"
    return "not requested"


def _duration(delta: Any) -> str:
    seconds = int(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min {secs:02d} s"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _robots_outcome_meaning(outcome: str | None) -> str:
    return {
        "rules": "(rules read and applied)",
        "allow_all": "(no rules: everything allowed)",
        "disallow_all": "(unreadable: every URL treated as disallowed)",
    }.get(outcome or "", "")


def _prose(text: str) -> str:
    """Escaped text with its ```code``` spans as ``<code>`` elements."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:
        return _e(text)
    return "".join(
        f"<code>{_e(piece)}</code>" if index % 2 else _e(piece)
        for index, piece in enumerate(pieces)
    )


def _time_html(text: str) -> str:
    return f'<time datetime="{_e(text)}">{_e(text)}</time>'


def _is_web_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def _link(url: str | None) -> str:
    if not url:
        return '<span class="muted">\u2014</span>'
    title = f' title="{_e(url)}"' if len(url) > _LONG_URL else ""
    if _is_web_url(url) and url.isprintable():
        return f'<a href="{_e(url)}" rel="noopener noreferrer nofollow"{title}>{_e(url)}</a>'
    return f'<span class="raw"{title}>{_e(url)}</span>'


def _value_html(value: Any) -> str:
    if value is None:
        return '<span class="muted">none</span>'
    if isinstance(value, list | tuple):
        if not value:
            return '<span class="muted">none</span>'
        return _e(joined(value))
    cell = scalar(value)
    return _e(cell)


def _badge(code: str, record: str, suffix: str = "") -> str:
    severity = severity_of(code, record) or "unknown"
    meaning = meaning_of(code, record) or ""
    title = f"{severity}: {meaning.replace('`', '')}" if meaning else severity
    return (
        f'<span class="badge sev-{_e(severity)}" title="{_e(title)}">{_e(code)}{_e(suffix)}</span>'
    )


def _badges(codes: list[str], record: str) -> str:
    return " ".join(_badge(code, record) for code in codes)


def _details(lines: list[str]) -> str:
    items = "".join(f"<li>{_e(line)}</li>" for line in lines)
    label = "1 detail" if len(lines) == 1 else f"{len(lines)} details"
    return f'<details class="errors"><summary>{label}</summary><ul>{items}</ul></details>'


def _url_row(r: Any, issues: list[str]) -> str:
    url = _str_or_none(r.get("url")) or ""
    extra = []
    chain = redirect_chain_text(r.get("redirect_chain"))
    if chain:
        extra.append(f'<div class="sub">redirects: {_e(chain)}</div>')
    final = _str_or_none(r.get("final_url"))
    if final and final != url:
        extra.append(f'<div class="sub">final: {_link(final)}</div>')
    canonical = _str_or_none(r.get("canonical"))
    if canonical and canonical not in (url, final):
        extra.append(f'<div class="sub">canonical: {_link(canonical)}</div>')
    noindex = joined(r.get("noindex"))
    if noindex:
        extra.append(f'<div class="sub">noindex: {_e(noindex)}</div>')
    status = _int(r.get("status"))
    if status is not None:
        status_html = f'<span class="status st-{str(status)[0]}xx">{status}</span>'
    else:
        label = _status_label(r, issues)
        status_html = f'<span class="muted" title="{_e(label)}">\u2014</span>'
    errors = _strings(r.get("errors"))
    findings = _badges(issues, "url") + (_details(errors) if errors else "")
    delta = r.get("lastmod_delta_s")
    delta_html = (
        f'<span title="{_e(format_number(delta))} s">{_e(human_seconds(float(delta)))}</span>'
        if isinstance(delta, int | float) and not isinstance(delta, bool)
        else ""
    )
    sitemaps = _strings(r.get("sitemaps"))
    severity = _worst(issues, "url")
    row_class = ("sev-error", "sev-warning", "sev-notice", "sev-unknown", "ok")[severity]
    return _grid_row(
        row_class,
        [
            ("url", _link(url) + "".join(extra)),
            ("num", status_html),
            ("", findings),
            ("date", _e(_str_or_none(r.get("lastmod")))),
            ("date", _e(_str_or_none(r.get("last_modified")))),
            ("num", delta_html),
            ("num", f'<span title="{_e(chr(10).join(sitemaps))}">{_n(len(sitemaps))}</span>'),
        ],
        f' data-issues="{_e(" ".join(issues))}"',
    )


_GRID_END = "</div></div></div>\n"


def _grid_start(kind: str, element_id: str, label: str, headers: list[tuple[str, str]]) -> str:
    """Opens a grid table: header row, then the body that :func:`_grid_row` rows go into.

    Grid rows (unlike table rows) can skip layout while off screen, which keeps pages with
    tens of thousands of rows fast to open and to filter.
    """
    cells = "".join(
        f'<div class="cell{" " + css if css else ""}" role="columnheader">{_e(text)}</div>'
        for text, css in headers
    )
    return (
        f'<div class="scroll"><div class="grid {kind}" id="{element_id}" role="table" '
        f'aria-label="{_e(label)}"><div class="row head" role="row">{cells}</div>\n'
        '<div class="body" role="rowgroup">\n'
    )


def _grid_row(css: str, cells: list[tuple[str, str]], attributes: str = "") -> str:
    """One grid table row from (cell class, cell HTML) pairs."""
    body = "".join(
        f'<div class="cell{" " + kind if kind else ""}" role="cell">{html}</div>'
        for kind, html in cells
    )
    return f'<div class="row{" " + css if css else ""}" role="row"{attributes}>{body}</div>\n'


def _change_value_html(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return "<br>".join(_e(v) for v in value)
    return _e(scalar(value))


def _change_row(r: Any, change: str, tone: str) -> str:
    meaning = CHANGES.get(change, "")
    code = _str_or_none(r.get("code"))
    sitemap = r.get("sitemap")
    record = "sitemap" if sitemap is not None and sitemap == r.get("url") else "url"
    url, sitemap_url = _str_or_none(r.get("url")), _str_or_none(sitemap)
    return _grid_row(
        f"tone-{_e(tone)}",
        [
            ("", f'<span class="change tone-{_e(tone)}" title="{_e(meaning)}">{_e(change)}</span>'),
            ("url", _link(url) if url else ""),
            ("url", _link(sitemap_url) if sitemap_url else ""),
            ("", _badge(code, record) if code else ""),
            ("", _change_value_html(r.get("old"))),
            ("", _change_value_html(r.get("new"))),
        ],
    )


def _age_class(label: str) -> str:
    return {
        "in the future": "age-future",
        "< 1 day": "age-0",
        "< 1 week": "age-1",
        "< 1 month": "age-2",
        "< 1 year": "age-3",
        "older": "age-4",
        "invalid": "age-invalid",
        "none": "age-none",
    }[label]


def _delta_class(label: str) -> str:
    if label.startswith("within"):
        return "delta-ok"
    if "> 30 d" in label:
        return "delta-far"
    if "1\u201330 d" in label:
        return "delta-mid"
    return "delta-near"


_MIDDOT = " \u00b7 "
_ROW = 26
_BAR = 18
_WIDTH = 560
_LABEL = 170
_COUNT = 110


def _bar_chart(bars: list[tuple[str, int, str]], *, label: str, unit: str = "URLs") -> str:
    """A horizontal bar chart as inline SVG: one ``rect.bar`` per (label, count, class)."""
    if not bars:
        return '<p class="empty">No data.</p>\n'
    total = sum(count for _, count, _ in bars)
    peak = max(count for _, count, _ in bars) or 1
    span = _WIDTH - _LABEL - _COUNT
    height = len(bars) * _ROW + 6
    parts = [
        f'<svg class="chart" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" '
        f'height="{height}" role="img" aria-label="{_e(label)}" '
        'xmlns="http://www.w3.org/2000/svg">'
        f"<title>{_e(label)}</title>\n"
    ]
    for index, (name, count, css) in enumerate(bars):
        y = 3 + index * _ROW
        width = 0.0 if count == 0 else max(2.0, span * count / peak)
        text_y = y + _BAR / 2 + 4.5
        share = _pct(count, total) if count else ""
        parts.append(
            f'<g class="row" data-label="{_e(name)}" data-count="{count}">'
            f'<text class="label" x="{_LABEL - 8}" y="{text_y:.1f}" text-anchor="end">'
            f"{_e(name)}</text>"
            f'<rect class="track" x="{_LABEL}" y="{y}" width="{span}" height="{_BAR}" rx="3"/>'
            f'<rect class="bar {_e(css)}" x="{_LABEL}" y="{y}" width="{width:.1f}" '
            f'height="{_BAR}" rx="3"><title>{_e(name)}: {_n(count)} {_e(unit)}'
            f"{' (' + share + ')' if share else ''}</title></rect>"
            f'<text class="count" x="{_LABEL + width + 6:.1f}" y="{text_y:.1f}">{_n(count)}'
            f"{_MIDDOT + share if share else ''}</text></g>\n"
        )
    parts.append("</svg>\n")
    return "".join(parts)


def write_html(
    records: Iterable[object], path: str | os.PathLike[str], *, max_rows: int = DEFAULT_MAX_ROWS
) -> None:
    """Writes the records of a report (dataclasses or dicts) as one HTML page at ``path``."""
    report = HtmlReport(max_rows=max_rows)
    for record in records:
        report.add(record)
    with open(path, "w", encoding="utf-8", errors="replace", newline="\n") as out:
        report.write(out)
