"""Report records as flat rows with stable columns, for spreadsheets.

Each record type has a fixed column order (``URL_COLUMNS``, ``SITEMAP_COLUMNS``,
``CHANGE_COLUMNS``); new columns are only ever appended. The flatteners accept the record
dataclasses of :mod:`sitemapaudit.report.records` and plain dicts (a JSON Lines report read
back) alike, and return typed cells: ``str``, ``int``, ``float``, ``bool`` or ``None``.

How values become cells:

- lists (``sitemaps``, ``issues``, ``errors``, ``noindex``) are joined with ``"; "``;
- ``redirect_chain`` becomes its hop count (``redirect_hops``) and a readable chain,
  ``"301 https://a -> 302 https://b"``: the status of each redirect response and the URL that
  sent it, in order;
- a change's ``old`` and ``new`` values are kept when they are scalars, joined when they are
  lists of scalars, and written as compact JSON otherwise;
- a missing field is ``None``.

:func:`csv_text` turns a cell into CSV text: booleans as ``true``/``false``, ``None`` as an
empty string, and text that a spreadsheet would run as a formula (starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) prefixed with an apostrophe, so that a hostile URL
stays inert text. Numbers are never altered.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from itemadapter import ItemAdapter, is_item

from sitemapaudit.report.records import another_run

Cell = str | int | float | bool | None
"""One spreadsheet cell value."""

Row = dict[str, Cell]

LIST_SEPARATOR = "; "
HOP_SEPARATOR = " -> "

URL_COLUMNS: tuple[str, ...] = (
    "url",
    "status",
    "fetched",
    "final_url",
    "redirect_hops",
    "redirect_chain",
    "last_modified",
    "lastmod",
    "lastmod_delta_s",
    "noindex",
    "robots_blocked",
    "canonical",
    "sitemaps",
    "issues",
    "errors",
    "checked_at",
    "carried_over",
)
"""Columns of a flattened ``"url"`` record, in order."""

SITEMAP_COLUMNS: tuple[str, ...] = (
    "url",
    "found_via",
    "parent",
    "kind",
    "status",
    "gzip",
    "bytes",
    "url_count",
    "child_count",
    "issues",
    "errors",
    "not_modified",
)
"""Columns of a flattened ``"sitemap"`` record, in order."""

CHANGE_COLUMNS: tuple[str, ...] = ("change", "url", "sitemap", "code", "old", "new")
"""Columns of a flattened ``"diff"`` record, in order."""

SUMMARY_FIELDS = frozenset(
    (
        "record",
        "origin",
        "started_at",
        "finished_at",
        "sitemaps_found",
        "urls_listed",
        "urls_fetched",
        "counts",
        "severities",
        "robots_txt",
        "notes",
        "settings",
    )
)
"""The summary fields of the report contract; exports list any other field generically."""

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def record_kind(item: object) -> str | None:
    """The ``record`` field of a report record (``"url"``, ``"sitemap"``...), else ``None``."""
    if not is_item(item):
        return None
    kind = ItemAdapter(item).get("record")
    return kind if isinstance(kind, str) else None


def fields_of(item: object) -> Mapping[str, Any]:
    """A read-only mapping view of a record, whether a dataclass, a dict or another item."""
    if isinstance(item, Mapping):
        return item
    return ItemAdapter(item)


def scalar(value: Any) -> Cell:
    """A JSON scalar as a cell; anything else (a list, an object) as compact JSON text."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def joined(value: Any) -> str | None:
    """A list of values joined with ``"; "``; a lone string is kept; ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return LIST_SEPARATOR.join(_text(v) for v in value)
    return _text(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    cell = scalar(value)
    return cell if isinstance(cell, str) else str(cell)


def redirect_hops(chain: Any) -> int:
    """How many redirect responses a ``redirect_chain`` holds."""
    return len(chain) if isinstance(chain, list | tuple) else 0


def redirect_chain_text(chain: Any) -> str | None:
    """A ``redirect_chain`` as ``"301 https://a -> 302 https://b"``; ``None`` when empty."""
    if not isinstance(chain, list | tuple) or not chain:
        return None
    hops: list[str] = []
    for hop in chain:
        if isinstance(hop, Mapping):
            status, url = hop.get("status"), hop.get("url")
            hops.append(" ".join(_text(part) for part in (status, url) if part is not None))
        else:
            hops.append(_text(hop))
    return HOP_SEPARATOR.join(hops)


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else _text(value)


def flatten_url(item: object) -> Row:
    """A ``"url"`` record as a row of :data:`URL_COLUMNS`."""
    r = fields_of(item)
    chain = r.get("redirect_chain")
    return {
        "url": _str(r.get("url")),
        "status": _number(r.get("status")),
        "fetched": _flag(r.get("fetched")),
        "final_url": _str(r.get("final_url")),
        "redirect_hops": redirect_hops(chain),
        "redirect_chain": redirect_chain_text(chain),
        "last_modified": _str(r.get("last_modified")),
        "lastmod": _str(r.get("lastmod")),
        "lastmod_delta_s": _number(r.get("lastmod_delta_s")),
        "noindex": joined(r.get("noindex")),
        "robots_blocked": _flag(r.get("robots_blocked")),
        "canonical": _str(r.get("canonical")),
        "sitemaps": joined(r.get("sitemaps")),
        "issues": joined(r.get("issues")),
        "errors": joined(r.get("errors")),
        "checked_at": _str(r.get("checked_at")),
        "carried_over": _flag(r.get("carried_over")),
    }


def flatten_sitemap(item: object) -> Row:
    """A ``"sitemap"`` record as a row of :data:`SITEMAP_COLUMNS`."""
    r = fields_of(item)
    return {
        "url": _str(r.get("url")),
        "found_via": _str(r.get("found_via")),
        "parent": _str(r.get("parent")),
        "kind": _str(r.get("kind")),
        "status": _number(r.get("status")),
        "gzip": _flag(r.get("gzip")),
        "bytes": _number(r.get("bytes")),
        "url_count": _number(r.get("url_count")),
        "child_count": _number(r.get("child_count")),
        "issues": joined(r.get("issues")),
        "errors": joined(r.get("errors")),
        "not_modified": _flag(r.get("not_modified")),
    }


def _change_value(value: Any) -> Cell:
    if isinstance(value, list | tuple) and all(
        v is None or isinstance(v, str | int | float | bool) for v in value
    ):
        return joined(value)
    return scalar(value)


def flatten_change(item: object) -> Row:
    """A ``"diff"`` record as a row of :data:`CHANGE_COLUMNS`."""
    r = fields_of(item)
    return {
        "change": _str(r.get("change")),
        "url": _str(r.get("url")),
        "sitemap": _str(r.get("sitemap")),
        "code": _str(r.get("code")),
        "old": _change_value(r.get("old")),
        "new": _change_value(r.get("new")),
    }


FLATTENERS: dict[str, tuple[tuple[str, ...], Callable[[object], Row]]] = {
    "url": (URL_COLUMNS, flatten_url),
    "sitemap": (SITEMAP_COLUMNS, flatten_sitemap),
    "diff": (CHANGE_COLUMNS, flatten_change),
}
"""Record type to (columns, flattener)."""


def format_number(value: int | float) -> str:
    """A number as plain text: integers and whole floats without a decimal part."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def csv_text(value: Cell) -> str:
    """A cell as CSV text (see the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_number(value)
    if value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_row(row: Row, columns: Iterable[str]) -> list[str]:
    """The CSV texts of ``row`` in the order of ``columns``."""
    return [csv_text(row.get(name)) for name in columns]


@cache
def _codes() -> dict[tuple[str, str], tuple[str, str]]:
    from sitemapaudit.checks.registry import ALL_CHECKS  # noqa: PLC0415

    return {(c.record, c.code): (c.severity.value, c.meaning()) for c in ALL_CHECKS}


def _code_info(code: str, record: str | None) -> tuple[str, str] | None:
    codes = _codes()
    if record is not None and (record, code) in codes:
        return codes[(record, code)]
    for kind in ("url", "sitemap"):
        if (kind, code) in codes:
            return codes[(kind, code)]
    return None


def severity_of(code: str, record: str | None = None) -> str | None:
    """The severity (``error``, ``warning``, ``notice``) of a finding code, if it is known."""
    info = _code_info(code, record)
    return info[0] if info else None


def meaning_of(code: str, record: str | None = None) -> str | None:
    """The one-line meaning of a finding code, as documented, if it is known."""
    info = _code_info(code, record)
    return info[1] if info else None


class ReportFormatError(ValueError):
    """A line of a JSON Lines report is not a JSON object."""


REPORT_RECORDS = ("sitemap", "url", "diff", "summary")
"""The kinds of record a report holds (their ``"record"`` field)."""


def iter_report(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The records of a JSON Lines report, one dict per non-blank line, read as a stream.

    A gzip-compressed report (recognised by its magic bytes) is decompressed on the fly and a
    UTF-8 BOM is ignored. A line that is not a JSON object, or not a report record (see
    :data:`REPORT_RECORDS`), or a record after the summary (a file that several runs appended
    to, with ``-o``), raises :class:`ReportFormatError` naming the file and the line number.
    """
    summary_line = 0
    with open(path, "rb") as raw:
        magic = raw.read(2)
        raw.seek(0)
        binary: Iterable[bytes] = gzip.GzipFile(fileobj=raw) if magic == b"\x1f\x8b" else raw
        try:
            for number, line in enumerate(binary, 1):
                data = (
                    line[len(codecs.BOM_UTF8) :]
                    if number == 1 and line.startswith(codecs.BOM_UTF8)
                    else line
                )
                if not data.strip():
                    continue
                try:
                    record = json.loads(data.decode("utf-8"))
                except ValueError as exc:
                    raise ReportFormatError(f"{path}:{number}: not a JSON line: {exc}") from None
                if not isinstance(record, dict):
                    raise ReportFormatError(f"{path}:{number}: not a JSON object")
                if record.get("record") not in REPORT_RECORDS:
                    raise ReportFormatError(
                        f'{path}:{number}: not a report record (its "record" is '
                        f"{record.get('record')!r}, not one of {', '.join(REPORT_RECORDS)})"
                    )
                if summary_line:
                    raise ReportFormatError(another_run(path, number, summary_line))
                if record.get("record") == "summary":
                    summary_line = number
                yield record
        except (OSError, EOFError) as exc:
            raise ReportFormatError(f"{path}: unreadable: {exc}") from None
