"""``scrapy audit-diff OLD NEW``: what changed between two audit runs.

OLD and NEW are each a JSON Lines report file or ``run:<id>``, a run stored in the history
database (``--db``). Report files are imported into a temporary database, never into the
history, and the diff is computed there.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from sitemapaudit.commands.refusal import path_refused, refusing_in_one_line, report_file
from sitemapaudit.config import MAX_INTEGER
from sitemapaudit.history.diff import diff_runs, summarize
from sitemapaudit.history.store import HistoryError, HistoryStore

DEFAULT_HISTORY_PATH = "reports/history.sqlite3"

# Widest URL column of the text table; longer URLs push their own row out of line.
_URL_COLUMN_MAX = 100


@dataclass(frozen=True, slots=True)
class Operand:
    """One side of the diff: a report file or a stored run."""

    text: str
    path: Path | None = None
    run_id: int | None = None


def parse_operand(text: str) -> Operand:
    """Read ``run:<id>`` or a report path; raises :class:`UsageError` for a bad one."""
    if text.startswith("run:"):
        digits = text[4:]
        if not (digits.isascii() and digits.isdigit()):
            raise UsageError(f"bad run reference {text!r}: use run:<id>", print_help=False)
        if int(digits) > MAX_INTEGER:
            raise UsageError(
                f"bad run reference {text!r}: no run has so large an id", print_help=False
            )
        return Operand(text, run_id=int(digits))
    return Operand(text, path=report_file(text))


class AuditDiffCommand(ScrapyCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[options] OLD NEW"

    def short_desc(self) -> str:
        return "Show what changed between two audit runs (report files or stored runs)"

    def long_desc(self) -> str:
        return (
            "Compare two audit runs and print one diff record per change, as JSON Lines or "
            "(--table) as a text table with a summary line. OLD and NEW are each a JSON "
            "Lines report file or run:<id>, a run of the history database given by --db."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--db",
            metavar="PATH",
            default=None,
            help="the history database that holds the run:<id> operands; by default the "
            f"SITEMAPAUDIT_HISTORY_PATH setting, else {DEFAULT_HISTORY_PATH}",
        )
        parser.add_argument(
            "--table",
            action="store_true",
            help="print a readable text table and a summary line instead of JSON Lines",
        )

    def history_path(self, opts: argparse.Namespace) -> str:
        if opts.db:
            return str(opts.db)
        configured = self.settings.get("SITEMAPAUDIT_HISTORY_PATH") if self.settings else None
        return str(configured) if configured else DEFAULT_HISTORY_PATH

    @refusing_in_one_line
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        unknown = [arg for arg in args if arg.startswith("--")]
        if unknown:
            raise UsageError(f"unknown option {unknown[0]}", print_help=False)
        if len(args) != 2:
            raise UsageError(
                f"expected two arguments, OLD and NEW (got {len(args)})", print_help=False
            )
        old, new = parse_operand(args[0]), parse_operand(args[1])
        try:
            with ExitStack() as stack:
                history: HistoryStore | None = None
                if old.run_id is not None or new.run_id is not None:
                    history = stack.enter_context(self._open_history(opts))
                    for operand in (old, new):
                        if operand.run_id is not None and history.run(operand.run_id) is None:
                            raise UsageError(
                                f"unknown run id {operand.run_id} in {history.path}",
                                print_help=False,
                            )
                if history is not None and old.run_id is not None and new.run_id is not None:
                    store = history
                    old_id, new_id = old.run_id, new.run_id
                else:
                    work = stack.enter_context(tempfile.TemporaryDirectory(prefix="auditdiff-"))
                    store = stack.enter_context(HistoryStore(Path(work) / "diff.sqlite3"))
                    old_id = _load(store, old, history)
                    new_id = _load(store, new, history)
                _check_comparable(store, (old, old_id), (new, new_id))
                _print(diff_runs(store, old_id, new_id), table=opts.table)
        except HistoryError as exc:
            raise UsageError(str(exc), print_help=False) from None

    def _open_history(self, opts: argparse.Namespace) -> HistoryStore:
        path = self.history_path(opts)
        with path_refused(f"cannot use the history database {path}"):
            found = Path(path).is_file()
        if not found:
            raise UsageError(f"no history database at {path}", print_help=False)
        return HistoryStore(path, read_only=True)


def _check_comparable(store: HistoryStore, *operands: tuple[Operand, int]) -> None:
    """Refuse a run that is not a complete audit, and two runs of different sites: their
    diff would report everything missing from them as removed or fixed."""
    origins: list[str] = []
    for operand, run_id in operands:
        info = store.run(run_id)
        summary = store.summary(run_id) or {}
        if info is None or info.finished_at is None or not summary:
            if operand.run_id is None:
                why = (
                    "no summary record, so not a finished audit (stopped early, cut short, "
                    "or not a report)"
                )
            elif info is None or info.finished_at is None:
                why = "the run never finished (the audit stopped early, or is still running)"
            else:
                why = (
                    "the run has no summary (the audit was forced to stop before it wrote "
                    "one, as by a second Ctrl-C, or it was stored from a report without one)"
                )
            raise UsageError(
                f"{operand.text}: {why}; only complete audits can be compared", print_help=False
            )
        if summary.get("complete") is False:
            raise UsageError(
                f"{operand.text}: the audit stopped before it was complete (its summary says "
                '"complete": false); only complete audits can be compared',
                print_help=False,
            )
        origins.append(info.origin)
    if len(set(origins)) > 1:
        raise UsageError(
            f"the runs audit different sites ({' and '.join(origins)}); a diff compares two "
            "audits of one site",
            print_help=False,
        )


def _load(store: HistoryStore, operand: Operand, history: HistoryStore | None) -> int:
    if history is not None and operand.run_id is not None:
        return store.copy_run(history, operand.run_id)
    return store.import_report(operand.path or operand.text)


def _print(records: Iterator[dict[str, Any]], *, table: bool) -> None:
    counts: Counter[str] = Counter()

    def counted() -> Iterator[dict[str, Any]]:
        for record in records:
            counts[record["change"]] += 1
            yield record

    with _utf8_stdout() as out:
        try:
            if table:
                _write_table(out, counted())
                out.write(summarize(counts) + "\n")
            else:
                for record in counted():
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
        except BrokenPipeError:
            _silence_stdout()
            return
    if not table:
        sys.stderr.write(summarize(counts) + "\n")


@contextmanager
def _utf8_stdout() -> Iterator[IO[str]]:
    """Standard output as UTF-8 text whatever the locale, left open afterwards."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        yield sys.stdout
        return
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", newline="\n")
    try:
        yield wrapper
    finally:
        try:
            wrapper.detach()
        except (BrokenPipeError, ValueError):
            _silence_stdout()


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(str(x) for x in value) or "(none)"
    return str(value)


def _printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``, ``\\n``): a site's URLs must not
    recolour or break the lines of a terminal table."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _row(record: dict[str, Any]) -> tuple[str, str, str, str]:
    url = record["url"] or "-"
    if record["sitemap"] is not None and record["sitemap"] == record["url"]:
        url = f"{url} (sitemap)"
    code = record["code"] or ""
    if record["old"] is None and record["new"] is None:
        change = "" if record["sitemap"] in (None, record["url"]) else f"in {record['sitemap']}"
    else:
        change = f"{_cell(record['old'])} -> {_cell(record['new'])}"
    return record["change"], _printable(url), code, _printable(change)


def _write_table(out: IO[str], records: Iterable[dict[str, Any]]) -> None:
    """Spool the rows to a temporary file while measuring the columns, then print them."""
    widths = [len("change"), len("url"), len("code")]
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for record in records:
            row = _row(record)
            for i in range(3):
                widths[i] = max(widths[i], len(row[i]))
            spool.write(json.dumps(row, ensure_ascii=False) + "\n")
        widths[1] = min(widths[1], _URL_COLUMN_MAX)
        out.write(_line(widths, ("change", "url", "code", "old -> new")))
        out.write(_line(widths, (*("-" * w for w in widths), "-" * 10)))
        spool.seek(0)
        for line in spool:
            out.write(_line(widths, tuple(json.loads(line))))


def _line(widths: list[int], cells: tuple[str, ...]) -> str:
    padded = [cell.ljust(width) for cell, width in zip(cells, widths, strict=False)]
    return ("  ".join([*padded, *cells[len(widths) :]])).rstrip() + "\n"
