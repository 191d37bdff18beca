"""Scrapy item exporters for spreadsheets and people: CSV, XLSX and HTML.

Register them in ``FEED_EXPORTERS`` and use them in ``FEEDS`` like any other feed format::

    FEED_EXPORTERS = {
        "urls_csv": "sitemapaudit.report.exporters.UrlCsvItemExporter",
        "sitemaps_csv": "sitemapaudit.report.exporters.SitemapCsvItemExporter",
        "changes_csv": "sitemapaudit.report.exporters.ChangesCsvItemExporter",
        "xlsx": "sitemapaudit.report.exporters.XlsxItemExporter",
        "html": "sitemapaudit.report.exporters.HtmlItemExporter",
    }
    FEEDS = {"urls.csv": {"format": "urls_csv", "encoding": "utf-8-sig", "overwrite": True}}

Every exporter accepts the record dataclasses of :mod:`sitemapaudit.report.records` and plain
dicts (``"diff"`` records, a report read back), and silently skips what it does not export.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from typing import IO, Any, ClassVar

from scrapy.exporters import BaseItemExporter, CsvItemExporter

from sitemapaudit.report.flat import (
    CHANGE_COLUMNS,
    LIST_SEPARATOR,
    SITEMAP_COLUMNS,
    URL_COLUMNS,
    Row,
    csv_row,
    flatten_change,
    flatten_sitemap,
    flatten_url,
    record_kind,
)
from sitemapaudit.report.html import DEFAULT_MAX_ROWS, HtmlReport
from sitemapaudit.words import noun


class FlatCsvItemExporter(CsvItemExporter):
    """Writes the records of one type as flat CSV rows with a fixed column order.

    The header line is written when exporting starts, so a report without any record of the
    type still gives a CSV file with its header. ``FEED_EXPORT_ENCODING`` (the feed's
    ``encoding`` option) is honoured: ``utf-8-sig`` starts the file with a BOM, which Excel
    needs to read UTF-8. ``FEED_EXPORT_FIELDS`` (the feed's ``fields``), when given, selects
    and orders columns among the documented ones (a mapping also renames them in the header);
    an unknown column name raises ``ValueError``. Other ``item_export_kwargs`` go to
    :func:`csv.writer` (``delimiter``...).
    """

    record_type: ClassVar[str]
    columns: ClassVar[tuple[str, ...]]
    # Appended to an existing file (``-o``), a second header line would follow its rows.
    appendable: ClassVar[bool] = False

    def __init__(
        self,
        file: IO[bytes],
        include_headers_line: bool = True,
        join_multivalued: str = LIST_SEPARATOR,
        errors: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            file,  # type: ignore[arg-type]
            include_headers_line=include_headers_line,
            join_multivalued=join_multivalued,
            errors=errors,
            **kwargs,
        )
        self.selected, self.headers = self._select(self.fields_to_export)
        self.fields_to_export = dict(zip(self.selected, self.headers, strict=True))

    def _select(
        self, fields: Mapping[str, str] | Iterable[str] | None
    ) -> tuple[list[str], list[str]]:
        if fields is None:
            return list(self.columns), list(self.columns)
        pairs = list(fields.items()) if isinstance(fields, Mapping) else [(f, f) for f in fields]
        if not pairs:
            return list(self.columns), list(self.columns)
        unknown = [name for name, _ in pairs if name not in self.columns]
        if unknown:
            raise ValueError(
                f"{type(self).__name__}: unknown {noun(len(unknown), 'column')} "
                f"{', '.join(map(repr, unknown))}; "
                f"the columns are {', '.join(self.columns)}"
            )
        return [name for name, _ in pairs], [header for _, header in pairs]

    def start_exporting(self) -> None:
        if self._headers_not_written:
            self._headers_not_written = False
            if self.include_headers_line:
                self.csv_writer.writerow(self.headers)

    def accepts(self, item: Any) -> bool:
        """Whether ``item`` becomes a row of this file (records of other types do not)."""
        return record_kind(item) == self.record_type

    def export_item(self, item: Any) -> None:
        if not self.accepts(item):
            return
        self.start_exporting()
        self.csv_writer.writerow(csv_row(self.flatten(item), self.selected))

    def flatten(self, item: object) -> Row:
        """The item as a row of :attr:`columns`."""
        raise NotImplementedError


class UrlCsvItemExporter(FlatCsvItemExporter):
    """CSV of the ``"url"`` records, columns ``URL_COLUMNS`` of the flat module."""

    record_type = "url"
    columns = URL_COLUMNS

    def flatten(self, item: object) -> Row:
        return flatten_url(item)


class SitemapCsvItemExporter(FlatCsvItemExporter):
    """CSV of the ``"sitemap"`` records, columns ``SITEMAP_COLUMNS`` of the flat module."""

    record_type = "sitemap"
    columns = SITEMAP_COLUMNS

    def flatten(self, item: object) -> Row:
        return flatten_sitemap(item)


class ChangesCsvItemExporter(FlatCsvItemExporter):
    """CSV of the ``"diff"`` records, columns ``CHANGE_COLUMNS`` of the flat module."""

    record_type = "diff"
    columns = CHANGE_COLUMNS

    def flatten(self, item: object) -> Row:
        return flatten_change(item)


class XlsxItemExporter(BaseItemExporter):
    """One XLSX workbook with the sheets URLs, Sitemaps, Changes and Summary.

    Rows are streamed to temporary files as items arrive (openpyxl write-only mode); the
    workbook is assembled into the feed's file at ``finish_exporting``.
    """

    # Nothing reaches the file before finish_exporting, which writes it whole; appended to
    # an existing file (``-o``), a second zip archive would follow the first.
    writes_at_end = True
    appendable: ClassVar[bool] = False

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        # openpyxl loads only when a workbook is written, not with every command.
        from sitemapaudit.report.xlsx import XlsxReport  # noqa: PLC0415

        self.workbook = XlsxReport()

    def export_item(self, item: Any) -> None:
        self.workbook.add(item)

    def finish_exporting(self) -> None:
        self.workbook.save(self.file)


class HtmlItemExporter(BaseItemExporter):
    """One self-contained HTML page summarising the report, with charts and a URL table.

    The item export option ``max_rows`` (``FEEDS`` ``item_export_kwargs``) caps the URL table
    and the table of changes (default 20,000 rows each); counts and charts cover every record.
    The page is always UTF-8.
    """

    # Nothing reaches the file before finish_exporting, which writes it whole; appended to
    # an existing file (``-o``), a second HTML document would follow the first.
    writes_at_end = True
    appendable: ClassVar[bool] = False

    def __init__(self, file: IO[bytes], *, max_rows: int = DEFAULT_MAX_ROWS, **kwargs: Any) -> None:
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        self.report = HtmlReport(max_rows=max_rows)

    def export_item(self, item: Any) -> None:
        self.report.add(item)

    def finish_exporting(self) -> None:
        stream = io.TextIOWrapper(
            self.file,
            encoding="utf-8",
            errors="replace",
            newline="\n",
            write_through=False,
        )
        try:
            self.report.write(stream)
            stream.flush()
        finally:
            stream.detach()


def write_csv(
    records: Iterable[object],
    urls_path: str | os.PathLike[str],
    sitemaps_path: str | os.PathLike[str],
    *,
    bom: bool = False,
    changes_path: str | os.PathLike[str] | None = None,
) -> None:
    """Writes the URL records and the sitemap records of a report as two CSV files.

    ``bom`` starts each file with a UTF-8 byte order mark, which Excel needs to read UTF-8.
    With ``changes_path``, the ``"diff"`` records go to a third file. Records are read once.
    """
    encoding = "utf-8-sig" if bom else "utf-8"
    targets: list[tuple[type[FlatCsvItemExporter], str | os.PathLike[str] | None]] = [
        (UrlCsvItemExporter, urls_path),
        (SitemapCsvItemExporter, sitemaps_path),
        (ChangesCsvItemExporter, changes_path),
    ]
    with ExitStack() as stack:
        exporters: list[FlatCsvItemExporter] = []
        for exporter_class, path in targets:
            if path is None:
                continue
            file = stack.enter_context(open(path, "wb"))
            exporter = exporter_class(file, encoding=encoding)
            exporter.start_exporting()
            exporters.append(exporter)
        for record in records:
            for exporter in exporters:
                exporter.export_item(record)
        for exporter in exporters:
            exporter.finish_exporting()
