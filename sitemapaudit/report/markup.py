"""HTML fragments of the report page: escaping, links, finding badges, grid rows and SVG charts.

Every value from a report goes through :func:`esc`; only http(s) URLs become links."""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import urlsplit

from sitemapaudit.history.diff import CHANGES
from sitemapaudit.report.flat import (
    format_number,
    joined,
    meaning_of,
    redirect_chain_text,
    scalar,
    severity_of,
)
from sitemapaudit.report.timebins import human_seconds
from sitemapaudit.words import count_noun

_LONG_URL = 200
SEVERITY_RANK = {"error": 0, "warning": 1, "notice": 2}


# What an HTML document may not hold as text, even escaped: controls other than tab, line feed,
# form feed and carriage return (a NUL included), DEL, the C1 controls and noncharacters.
_NOT_IN_HTML = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef"
    + "".join(
        f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17)
    )
    + "]"
)


def _visible(match: re.Match[str]) -> str:
    """A character an HTML page may not hold, written as its escape (``\\x1b``), as the
    ``--table`` output of ``audit-diff`` writes it."""
    return match.group().encode("unicode_escape").decode("ascii")


def esc(value: Any) -> str:
    """HTML-escaped text of any value (``None`` is empty); characters an HTML page may not
    hold are written as their escapes (``\\x01``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_number(value)
    text = value if isinstance(value, str) else str(value)
    return escape(_NOT_IN_HTML.sub(_visible, text), quote=True)


def count_text(value: int) -> str:
    return f"{value:,}"


def _percent(part: int, whole: int) -> str:
    if whole <= 0:
        return ""
    share = 100.0 * part / whole
    return f"{share:.1f}%" if share < 10 else f"{share:.0f}%"


def strings(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [v if isinstance(v, str) else str(v) for v in value if v is not None]
    if isinstance(value, str):
        return [value]
    return []


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def worst_rank(codes: Iterable[str], record: str) -> int:
    ranks = [SEVERITY_RANK.get(severity_of(code, record) or "", 3) for code in codes]
    return min(ranks, default=4)


def str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def status_label(r: Any, issues: list[str]) -> str:
    status = as_int(r.get("status"))
    if status is not None:
        return str(status)
    if "fetch_failed" in issues:
        return "failed"
    if r.get("robots_blocked") is True:
        return "robots blocked"
    return "not requested"


def duration(delta: Any) -> str:
    seconds = int(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min {secs:02d} s"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def robots_outcome_meaning(outcome: str | None) -> str:
    return {
        "rules": "(rules read and applied)",
        "allow_all": "(no rules: everything allowed)",
        "disallow_all": "(unreadable: every URL treated as disallowed)",
    }.get(outcome or "", "")


def prose(text: str) -> str:
    """Escaped text with its ```code``` spans as ``<code>`` elements."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:
        return esc(text)
    return "".join(
        f"<code>{esc(piece)}</code>" if index % 2 else esc(piece)
        for index, piece in enumerate(pieces)
    )


def time_html(text: str) -> str:
    return f'<time datetime="{esc(text)}">{esc(text)}</time>'


def _is_web_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def link(url: str | None) -> str:
    if not url:
        return '<span class="muted">\u2014</span>'
    title = f' title="{esc(url)}"' if len(url) > _LONG_URL else ""
    if _is_web_url(url) and url.isprintable():
        return f'<a href="{esc(url)}" rel="noopener noreferrer nofollow"{title}>{esc(url)}</a>'
    return f'<span class="raw"{title}>{esc(url)}</span>'


def value_html(value: Any) -> str:
    if value is None:
        return '<span class="muted">none</span>'
    if isinstance(value, list | tuple):
        if not value:
            return '<span class="muted">none</span>'
        return esc(joined(value))
    cell = scalar(value)
    return esc(cell)


def badge(code: str, record: str, suffix: str = "") -> str:
    severity = severity_of(code, record) or "unknown"
    meaning = meaning_of(code, record) or ""
    title = f"{severity}: {meaning.replace('`', '')}" if meaning else severity
    return (
        f'<span class="badge sev-{esc(severity)}" title="{esc(title)}">'
        f"{esc(code)}{esc(suffix)}</span>"
    )


def badges(codes: list[str], record: str) -> str:
    return " ".join(badge(code, record) for code in codes)


def details(lines: list[str]) -> str:
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    label = "1 detail" if len(lines) == 1 else f"{len(lines)} details"
    return f'<details class="errors"><summary>{label}</summary><ul>{items}</ul></details>'


def url_row(r: Any, issues: list[str]) -> str:
    url = str_or_none(r.get("url")) or ""
    extra = []
    chain = redirect_chain_text(r.get("redirect_chain"))
    if chain:
        extra.append(f'<div class="sub">redirects: {esc(chain)}</div>')
    final = str_or_none(r.get("final_url"))
    if final and final != url:
        extra.append(f'<div class="sub">final: {link(final)}</div>')
    canonical = str_or_none(r.get("canonical"))
    if canonical and canonical not in (url, final):
        extra.append(f'<div class="sub">canonical: {link(canonical)}</div>')
    noindex = joined(r.get("noindex"))
    if noindex:
        extra.append(f'<div class="sub">noindex: {esc(noindex)}</div>')
    status = as_int(r.get("status"))
    if status is not None:
        status_html = f'<span class="status st-{str(status)[0]}xx">{status}</span>'
    else:
        label = status_label(r, issues)
        status_html = f'<span class="muted" title="{esc(label)}">\u2014</span>'
    errors = strings(r.get("errors"))
    findings = badges(issues, "url") + (details(errors) if errors else "")
    delta = r.get("lastmod_delta_s")
    delta_html = (
        f'<span title="{esc(format_number(delta))} s">{esc(human_seconds(float(delta)))}</span>'
        if isinstance(delta, int | float) and not isinstance(delta, bool)
        else ""
    )
    sitemaps = strings(r.get("sitemaps"))
    severity = worst_rank(issues, "url")
    row_class = ("sev-error", "sev-warning", "sev-notice", "sev-unknown", "ok")[severity]
    return grid_row(
        row_class,
        [
            ("url", link(url) + "".join(extra)),
            ("num", status_html),
            ("", findings),
            ("date", esc(str_or_none(r.get("lastmod")))),
            ("date", esc(str_or_none(r.get("last_modified")))),
            ("num", delta_html),
            (
                "num",
                f'<span title="{esc(chr(10).join(sitemaps))}">{count_text(len(sitemaps))}</span>',
            ),
        ],
        f' data-issues="{esc(" ".join(issues))}"',
    )


GRID_END = "</div></div></div>\n"


def grid_start(kind: str, element_id: str, label: str, headers: list[tuple[str, str]]) -> str:
    """Opens a grid table: header row, then the body that :func:`grid_row` rows go into.

    Grid rows (unlike table rows) can skip layout while off screen, which keeps pages with
    tens of thousands of rows fast to open and to filter.
    """
    cells = "".join(
        f'<div class="cell{" " + css if css else ""}" role="columnheader">{esc(text)}</div>'
        for text, css in headers
    )
    return (
        f'<div class="scroll"><div class="grid {kind}" id="{element_id}" role="table" '
        f'aria-label="{esc(label)}"><div class="row head" role="row">{cells}</div>\n'
        '<div class="body" role="rowgroup">\n'
    )


def grid_row(css: str, cells: list[tuple[str, str]], attributes: str = "") -> str:
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
        return "<br>".join(esc(v) for v in value)
    return esc(scalar(value))


def change_row(r: Any, change: str, tone: str) -> str:
    meaning = CHANGES.get(change, "")
    code = str_or_none(r.get("code"))
    sitemap = r.get("sitemap")
    record = "sitemap" if sitemap is not None and sitemap == r.get("url") else "url"
    url, sitemap_url = str_or_none(r.get("url")), str_or_none(sitemap)
    return grid_row(
        f"tone-{esc(tone)}",
        [
            (
                "",
                f'<span class="change tone-{esc(tone)}" title="{esc(meaning)}">'
                f"{esc(change)}</span>",
            ),
            ("url", link(url) if url else ""),
            ("url", link(sitemap_url) if sitemap_url else ""),
            ("", badge(code, record) if code else ""),
            ("", _change_value_html(r.get("old"))),
            ("", _change_value_html(r.get("new"))),
        ],
    )


def age_class(label: str) -> str:
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


def delta_class(label: str) -> str:
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


def bar_chart(bars: list[tuple[str, int, str]], *, label: str, unit: str = "URL") -> str:
    """A horizontal bar chart as inline SVG: one ``rect.bar`` per (label, count, class); a
    bar's title counts its ``unit`` (a singular noun, made plural as :func:`count_noun` does)."""
    if not bars:
        return '<p class="empty">No data.</p>\n'
    total = sum(count for _, count, _ in bars)
    peak = max(count for _, count, _ in bars) or 1
    span = _WIDTH - _LABEL - _COUNT
    height = len(bars) * _ROW + 6
    parts = [
        f'<svg class="chart" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" '
        f'height="{height}" role="img" aria-label="{esc(label)}" '
        'xmlns="http://www.w3.org/2000/svg">'
        f"<title>{esc(label)}</title>\n"
    ]
    for index, (name, count, css) in enumerate(bars):
        y = 3 + index * _ROW
        width = 0.0 if count == 0 else max(2.0, span * count / peak)
        text_y = y + _BAR / 2 + 4.5
        share = _percent(count, total) if count else ""
        parts.append(
            f'<g class="row" data-label="{esc(name)}" data-count="{count}">'
            f'<text class="label" x="{_LABEL - 8}" y="{text_y:.1f}" text-anchor="end">'
            f"{esc(name)}</text>"
            f'<rect class="track" x="{_LABEL}" y="{y}" width="{span}" height="{_BAR}" rx="3"/>'
            f'<rect class="bar {esc(css)}" x="{_LABEL}" y="{y}" width="{width:.1f}" '
            f'height="{_BAR}" rx="3"><title>{esc(name)}: {esc(count_noun(count, unit))}'
            f"{' (' + share + ')' if share else ''}</title></rect>"
            f'<text class="count" x="{_LABEL + width + 6:.1f}" y="{text_y:.1f}">{count_text(count)}'
            f"{_MIDDOT + share if share else ''}</text></g>\n"
        )
    parts.append("</svg>\n")
    return "".join(parts)
