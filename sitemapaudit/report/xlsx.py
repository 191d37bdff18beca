"""The report as one XLSX workbook: sheets URLs, Sitemaps, Changes and Summary.

The workbook is written in openpyxl's write-only mode: rows stream to temporary files as
records arrive and are zipped into the workbook when it is saved, so memory stays flat
however large the report. Each data sheet has a bold, frozen header row, an autofilter over
its rows and fixed column widths. The Summary sheet has ``key``/``value`` rows (origin, times,
totals, robots.txt, notes, findings per severity and per code, changes per type, settings)
with the severity of each finding code in a third column.

Cells keep their types: numbers stay numbers and booleans are Excel booleans. Text is always
stored as text (a URL starting with ``=`` is never a formula); characters XML cannot carry are
replaced with U+FFFD and text is cut at Excel's 32,767-character cell limit. A sheet that
reaches Excel's 1,048,576-row limit continues in a sheet named ``"URLs (2)"`` and so on.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import IO, Any, cast

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._write_only import WriteOnlyWorksheet

from sitemapaudit.report.flat import (
    CHANGE_COLUMNS,
    SITEMAP_COLUMNS,
    SUMMARY_FIELDS,
    URL_COLUMNS,
    Cell,
    fields_of,
    flatten_change,
    flatten_sitemap,
    flatten_url,
    joined,
    record_kind,
    scalar,
    severity_of,
)

MAX_SHEET_ROWS = 1_048_576
MAX_CELL_CHARS = 32_767

URL_SHEET = "URLs"
SITEMAP_SHEET = "Sitemaps"
CHANGE_SHEET = "Changes"
SUMMARY_SHEET = "Summary"
SUMMARY_COLUMNS: tuple[str, ...] = ("key", "value", "severity")

_WIDTHS: dict[str, float] = {
    "url": 70,
    "status": 8,
    "fetched": 9,
    "final_url": 50,
    "redirect_hops": 9,
    "redirect_chain": 60,
    "last_modified": 31,
    "lastmod": 26,
    "lastmod_delta_s": 15,
    "noindex": 20,
    "robots_blocked": 10,
    "canonical": 50,
    "sitemaps": 50,
    "issues": 32,
    "errors": 90,
    "checked_at": 21,
    "carried_over": 13,
    "found_via": 12,
    "parent": 50,
    "kind": 13,
    "gzip": 7,
    "bytes": 12,
    "url_count": 10,
    "child_count": 11,
    "not_modified": 13,
    "change": 30,
    "sitemap": 50,
    "code": 22,
    "old": 40,
    "new": 40,
    "key": 42,
    "value": 60,
    "severity": 10,
}

_HEADER_FONT = Font(bold=True)


def text_cell(value: str) -> str:
    """Text an XLSX cell can hold: XML-illegal characters replaced, cut at 32,767 characters."""
    text = ILLEGAL_CHARACTERS_RE.sub("\ufffd", value)
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 1] + "\u2026"
    return text


class _Sheet:
    """A write-only data sheet (with its overflow sheets) and the rows written to it."""

    def __init__(self, report: XlsxReport, title: str, columns: tuple[str, ...]) -> None:
        self.report = report
        self.title = title
        self.columns = columns
        self.sheets: list[tuple[WriteOnlyWorksheet, int]] = []
        self._open(title, index=None)

    def _open(self, title: str, index: int | None) -> None:
        ws: WriteOnlyWorksheet = self.report.workbook.create_sheet(title, index)
        ws.freeze_panes = "A2"
        layout: Any = ws
        for number, name in enumerate(self.columns, 1):
            layout.column_dimensions[get_column_letter(number)].width = _WIDTHS.get(name, 16)
        header = []
        for name in self.columns:
            cell = WriteOnlyCell(ws, value=name)
            cell.font = _HEADER_FONT
            header.append(cell)
        ws.append(header)
        self.sheets.append((ws, 1))

    def append(self, values: Iterable[Cell]) -> None:
        ws, rows = self.sheets[-1]
        if rows >= self.report.max_sheet_rows:
            sheets = self.report.workbook.worksheets
            position = next(i for i, sheet in enumerate(sheets) if sheet is ws) + 1
            self._open(f"{self.title} ({len(self.sheets) + 1})", index=position)
            ws, rows = self.sheets[-1]
        ws.append([_cell(ws, v) for v in values])
        self.sheets[-1] = (ws, rows + 1)

    def close(self) -> None:
        last = get_column_letter(len(self.columns))
        for ws, rows in self.sheets:
            layout: Any = ws
            layout.auto_filter.ref = f"A1:{last}{rows}"


def _cell(ws: WriteOnlyWorksheet, value: Cell) -> Any:
    if not isinstance(value, str):
        return value
    text = text_cell(value)
    if not text:
        return None
    if text.startswith("="):
        cell = WriteOnlyCell(ws, value=text)
        cell.data_type = "s"
        return cell
    return text


class XlsxReport:
    """Collects report records into a write-only workbook; :meth:`save` writes it once."""

    def __init__(self, *, max_sheet_rows: int = MAX_SHEET_ROWS) -> None:
        self.max_sheet_rows = max_sheet_rows
        self.workbook = Workbook(write_only=True)
        self.urls = _Sheet(self, URL_SHEET, URL_COLUMNS)
        self.sitemaps = _Sheet(self, SITEMAP_SHEET, SITEMAP_COLUMNS)
        self.changes = _Sheet(self, CHANGE_SHEET, CHANGE_COLUMNS)
        self.summary_sheet = _Sheet(self, SUMMARY_SHEET, SUMMARY_COLUMNS)
        self.summary: dict[str, Any] | None = None
        self.change_counts: Counter[str] = Counter()
        self._saved = False

    def add(self, item: object) -> None:
        """Adds one record; records of other types are ignored."""
        kind = record_kind(item)
        if kind == "url":
            row = flatten_url(item)
            self.urls.append(row[c] for c in URL_COLUMNS)
        elif kind == "sitemap":
            row = flatten_sitemap(item)
            self.sitemaps.append(row[c] for c in SITEMAP_COLUMNS)
        elif kind == "diff":
            row = flatten_change(item)
            self.changes.append(row[c] for c in CHANGE_COLUMNS)
            self.change_counts[str(row["change"])] += 1
        elif kind == "summary":
            self.summary = dict(fields_of(item))

    def _write_summary(self) -> None:
        sheet = self.summary_sheet
        summary = self.summary
        if summary is None:
            sheet.append(("summary", "missing: the report has no summary record", None))
        else:
            for key in ("origin", "started_at", "finished_at"):
                sheet.append((key, scalar(summary.get(key)), None))
            for key in ("sitemaps_found", "urls_listed", "urls_fetched"):
                sheet.append((key, scalar(summary.get(key)), None))
            robots = summary.get("robots_txt")
            if isinstance(robots, dict):
                for key, value in robots.items():
                    sheet.append((f"robots_txt.{key}", _value(value), None))
            notes = summary.get("notes")
            for note in notes if isinstance(notes, list) else []:
                sheet.append(("note", _value(note), None))
            severities = summary.get("severities")
            if isinstance(severities, dict):
                for key, value in severities.items():
                    sheet.append((f"severity.{key}", _value(value), None))
            counts = summary.get("counts")
            if isinstance(counts, dict):
                for code, value in counts.items():
                    sheet.append((f"count.{code}", _value(value), severity_of(str(code))))
        for change, count in sorted(self.change_counts.items()):
            sheet.append((f"change.{change}", count, None))
        if summary is not None:
            settings = summary.get("settings")
            if isinstance(settings, dict):
                for key, value in settings.items():
                    sheet.append((f"setting.{key}", _value(value), None))
            for key, value in summary.items():
                if key in SUMMARY_FIELDS:
                    continue
                if isinstance(value, dict):
                    for sub, item in value.items():
                        sheet.append((f"{key}.{sub}", _value(item), None))
                else:
                    sheet.append((str(key), _value(value), None))

    def save(self, target: str | os.PathLike[str] | IO[bytes]) -> None:
        """Writes the workbook to a path or a binary file object (only once).

        A file object is written strictly sequentially, never seeked: a feed file opened for
        appending, a pipe or a compressing stream all get a valid workbook.
        """
        if self._saved:
            raise RuntimeError("the workbook has already been saved")
        self._saved = True
        self._write_summary()
        for sheet in (self.urls, self.sitemaps, self.changes, self.summary_sheet):
            sheet.close()
        try:
            if isinstance(target, str | os.PathLike):
                self.workbook.save(target)
            else:
                self.workbook.save(cast(IO[bytes], _SequentialWriter(target)))
        except BaseException:
            # The sheets openpyxl had not reached hold open writers, whose cleanup would fail
            # when they are dropped: finish them into their temporary files, and remove those.
            for ws in self.workbook.worksheets:
                unfinished: Any = ws
                if not unfinished.closed:
                    unfinished.close()
                    unfinished._writer.cleanup()
            raise


class _SequentialWriter:
    """A binary stream that can only be written forwards, so zipfile never seeks in it.

    After a write fails (a full disk), the save has failed and said so; later writes go
    nowhere, as the zip archive that openpyxl leaves open writes its end when it is dropped,
    into a file that may be closed by then.
    """

    def __init__(self, target: IO[bytes]) -> None:
        self.target = target
        self.failed = False

    def write(self, data: bytes) -> int:
        if not self.failed:
            try:
                self.target.write(data)
            except BaseException:
                self.failed = True
                raise
        return len(data)

    def flush(self) -> None:
        if not self.failed:
            try:
                self.target.flush()
            except BaseException:
                self.failed = True
                raise


def _value(value: Any) -> Cell:
    if isinstance(value, list | tuple) and all(
        isinstance(v, str | int | float | bool) for v in value
    ):
        return joined(value)
    return scalar(value)


def write_xlsx(records: Iterable[object], path: str | os.PathLike[str]) -> None:
    """Writes the records of a report (dataclasses or dicts) as one XLSX workbook at ``path``."""
    report = XlsxReport()
    for record in records:
        report.add(record)
    report.save(path)
