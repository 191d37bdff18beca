"""``scrapy audit-report``: turn an audit report (JSON Lines) into CSV, XLSX and HTML files."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.exporters import BaseItemExporter

from sitemapaudit.commands.refusal import path_refused, refusing_in_one_line, report_file
from sitemapaudit.report.exporters import (
    ChangesCsvItemExporter,
    FlatCsvItemExporter,
    HtmlItemExporter,
    SitemapCsvItemExporter,
    UrlCsvItemExporter,
    XlsxItemExporter,
)
from sitemapaudit.report.flat import ReportFormatError, iter_report
from sitemapaudit.report.html import DEFAULT_MAX_ROWS

CSV_FILES: tuple[tuple[str, type[FlatCsvItemExporter]], ...] = (
    ("urls.csv", UrlCsvItemExporter),
    ("sitemaps.csv", SitemapCsvItemExporter),
    ("changes.csv", ChangesCsvItemExporter),
)
"""The files ``--csv DIR`` writes, and the exporter of each."""


class _Outputs:
    """Output files written beside their targets and moved into place only on success. A
    symlink's target is the file replaced (the link stays); a pipe or a device (``/dev/stdout``)
    is written to directly, never replaced by a file."""

    def __init__(self) -> None:
        self.stack = ExitStack()
        self.pending: list[tuple[Path, Path]] = []
        self.written: list[Path] = []

    def open(self, target: Path) -> IO[bytes]:
        try:
            direct = not stat.S_ISREG(os.stat(target).st_mode)  # (through a symlink)
        except OSError:
            direct = False  # none yet
        real = Path(os.path.realpath(target))
        partial = target if direct else real.with_name(f".{real.name}.{os.getpid()}.part")
        try:
            handle = open(partial, "wb")  # noqa: SIM115 (closed by the stack)
        except OSError as exc:
            raise OSError(f"cannot write {target}: {exc.strerror or exc}") from None
        if not direct:
            self.pending.append((partial, real))
            # (What goes to a pipe or a device is not announced: it may be standard output.)
            self.written.append(target)
        return self.stack.enter_context(handle)

    def commit(self) -> list[Path]:
        self.stack.close()
        for partial, real in self.pending:
            os.replace(partial, real)
        return self.written

    def abort(self, made: Path | None = None) -> None:
        """Remove the partial files (after an error, which the caller reports), and the
        directory ``made`` for them when it is left empty."""
        try:
            # Closing flushes what is buffered, which fails again on a full disk: the files
            # go anyway, and the error that stopped the writing is the one to report.
            self.stack.close()
        except OSError:
            pass
        finally:
            for partial, _ in self.pending:
                partial.unlink(missing_ok=True)
            if made is not None:
                with contextlib.suppress(OSError):  # (not empty: something else is there)
                    made.rmdir()


def _refuse_clashes(report: Path, opts: argparse.Namespace) -> None:
    """A usage error when two outputs are one file, or an output is the report itself: the
    second would replace the first, or the report would be lost."""
    outputs: list[tuple[str, Path]] = []
    if opts.csv:
        outputs += [(f"--csv {opts.csv}", Path(opts.csv) / name) for name, _ in CSV_FILES]
    outputs += [
        (f"--{name} {path}", Path(path))
        for name, path in (("xlsx", opts.xlsx), ("html", opts.html))
        if path
    ]
    source = _identity(report)
    seen: dict[object, str] = {}
    for option, path in outputs:
        identity = _identity(path)
        if identity == source:
            raise UsageError(
                f"{option} would overwrite the report it reads ({report}): "
                "write the outputs to other files",
                print_help=False,
            )
        if identity in seen:
            raise UsageError(
                f"{seen[identity]} and {option} both write {path}: give each output its own file",
                print_help=False,
            )
        seen[identity] = option


def _identity(path: Path) -> object:
    """What tells files apart: device and inode of an existing file (links to it included),
    else its absolute path with symbolic links resolved."""
    try:
        status = path.stat()
    except OSError:
        return path.resolve()
    return (status.st_dev, status.st_ino)


class AuditReportCommand(ScrapyCommand):
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "REPORT.jsonl [--csv DIR] [--bom] [--xlsx FILE] [--html FILE] [--max-rows N]"

    def short_desc(self) -> str:
        return "Convert an audit report to CSV, XLSX or HTML"

    def long_desc(self) -> str:
        return (
            "Convert an existing audit report (JSON Lines, optionally gzip-compressed) into "
            "files for spreadsheets and people, reading it once: --csv writes urls.csv, "
            "sitemaps.csv and changes.csv into a directory, --xlsx one workbook (sheets URLs, "
            "Sitemaps, Changes, Summary), --html one self-contained page with charts and a "
            "filterable URL table. At least one output is required. Outputs appear only "
            "when the whole report was read."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        group = parser.add_argument_group(title="Outputs")
        group.add_argument(
            "--csv",
            metavar="DIR",
            help="write urls.csv, sitemaps.csv and changes.csv into DIR (created if missing)",
        )
        group.add_argument(
            "--bom",
            action="store_true",
            help="start the CSV files with a UTF-8 byte order mark (for Excel)",
        )
        group.add_argument("--xlsx", metavar="FILE", help="write an XLSX workbook to FILE")
        group.add_argument("--html", metavar="FILE", help="write an HTML page to FILE")
        group.add_argument(
            "--max-rows",
            metavar="N",
            type=int,
            default=DEFAULT_MAX_ROWS,
            help=f"most rows of the HTML URL table and change table (default: {DEFAULT_MAX_ROWS})",
        )

    @refusing_in_one_line
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        unknown = [a for a in args if a.startswith("-") and a != "-"]
        if unknown:
            raise UsageError(
                f"unknown option {unknown[0]} (options: --csv DIR, --bom, --xlsx FILE, "
                "--html FILE, --max-rows N)",
                print_help=False,
            )
        if len(args) != 1:
            raise UsageError(
                "give exactly one report file (scrapy audit-report REPORT.jsonl --html FILE)",
                print_help=False,
            )
        if not (opts.csv or opts.xlsx or opts.html):
            raise UsageError(
                "nothing to write: give at least one of --csv DIR, --xlsx FILE, --html FILE",
                print_help=False,
            )
        if opts.bom and not opts.csv:
            raise UsageError("--bom applies to CSV files: use it with --csv DIR", print_help=False)
        if opts.max_rows < 0:
            raise UsageError(f"--max-rows must be 0 or more, not {opts.max_rows}", print_help=False)
        report = report_file(args[0])
        _refuse_clashes(report, opts)
        # A --csv directory this command made (gone if it fails).
        made = _csv_directory(opts.csv) if opts.csv else None
        for target in [Path(p) for p in (opts.xlsx, opts.html) if p]:
            with path_refused(f"cannot write {target}"):
                is_dir, parent_found = target.is_dir(), target.parent.is_dir()
            if is_dir:
                raise UsageError(f"{target} is a directory, not a file", print_help=False)
            if not parent_found:
                raise UsageError(f"no such directory: {target.parent}", print_help=False)

        outputs = _Outputs()
        try:
            exporters = self._exporters(outputs, opts)
            for exporter in exporters:
                exporter.start_exporting()
            summarized = False
            for record in iter_report(report):
                summarized = summarized or record.get("record") == "summary"
                for exporter in exporters:
                    exporter.export_item(record)
            for exporter in exporters:
                exporter.finish_exporting()
            written = outputs.commit()
        except (ReportFormatError, OSError) as exc:
            outputs.abort(made)
            print(f"audit-report: {exc}", file=sys.stderr)
            self.exitcode = 1
            return
        except BaseException:
            outputs.abort(made)
            raise
        for path in written:
            print(f"wrote {path}")
        if not summarized:
            print(
                f"audit-report: {report} has no summary record: the audit did not finish, "
                "or its report could not be written to the end (a full disk), so these files "
                "hold only the records it has",
                file=sys.stderr,
            )

    def _exporters(self, outputs: _Outputs, opts: argparse.Namespace) -> list[BaseItemExporter]:
        exporters: list[BaseItemExporter] = []
        if opts.csv:
            # --bom, or the setting that gives the crawl's CSV feeds a BOM.
            given = str((self.settings.get("FEED_EXPORT_ENCODING") if self.settings else "") or "")
            bom = opts.bom or given.strip().lower().replace("_", "-") == "utf-8-sig"
            encoding = "utf-8-sig" if bom else "utf-8"
            for name, exporter_class in CSV_FILES:
                file = outputs.open(Path(opts.csv) / name)
                exporters.append(exporter_class(file, encoding=encoding))
        if opts.xlsx:
            exporters.append(XlsxItemExporter(outputs.open(Path(opts.xlsx))))
        if opts.html:
            exporters.append(
                HtmlItemExporter(outputs.open(Path(opts.html)), max_rows=opts.max_rows)
            )
        return exporters


def _csv_directory(name: str) -> Path | None:
    """Make the ``--csv`` directory if need be; returns it when this command made it (to be
    removed if the command fails), ``None`` when it was there."""
    folder = Path(name)
    with path_refused(f"cannot use the --csv directory {folder}"):
        found = folder.exists()
        if found and not folder.is_dir():
            raise UsageError(f"--csv needs a directory: {folder} is a file", print_help=False)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot create the --csv directory {folder}: {exc.strerror or exc}",
            print_help=False,
        ) from None
    return None if found else folder
