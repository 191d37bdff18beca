"""``scrapy validate PATH_OR_URL...``: validate sitemaps before they are deployed.

Local files (plain or gzip) are validated without any network access; URLs are read by the
audit crawl in inventory-only mode (an index's children are followed; no page is requested).
Prints the ``sitemap`` and ``url`` records as JSON Lines on standard output. Exit status: 0
when no error-level finding exists, 1 when one does, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import asdict, fields, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.commands import ScrapyCommand
from scrapy.crawler import Crawler
from scrapy.exceptions import UsageError
from scrapy.utils.defer import deferred_from_coro

from sitemapaudit.checks.base import Severity
from sitemapaudit.commands.crawl import audit_failed, resolve_ipv6_literals
from sitemapaudit.commands.refusal import check_log_file, path_refused, refusing_in_one_line
from sitemapaudit.config import (
    AuditConfig,
    check_robotstxt_obey,
    check_scrapy_settings,
    check_setting_names,
)
from sitemapaudit.crawl.collector import GC_THRESHOLDS
from sitemapaudit.errors import ConfigError, SitemapAuditError
from sitemapaudit.localfiles import validate_files
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.jsonlines import unrequested_line
from sitemapaudit.report.records import SitemapRecord, UrlRecord, UrlRecordBatch
from sitemapaudit.spiders.audit import AuditSpider
from sitemapaudit.urls import loc_problems, parse_origin

# Lines are written in batches of this many records (and whenever a file or crawl is done).
_BATCH = 1000

_FIELDS: dict[type[SitemapRecord | UrlRecord], tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls)) for cls in (SitemapRecord, UrlRecord)
}


def _nested(value: object) -> Any:
    """What ``dataclasses.asdict`` would have made of a dataclass nested in a record."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The same text as ``json.dumps(asdict(record), ensure_ascii=False)``, without asdict's deep
# copy of every value: one reused encoder, and a plain dict of the record's fields.
_encode = json.JSONEncoder(ensure_ascii=False, default=_nested).encode


def record_line(record: SitemapRecord | UrlRecord) -> str:
    """One JSON Lines line (with its newline) for a record, fields in their declared order."""
    line = unrequested_line(record)
    if line is not None:
        return line
    return _encode({name: getattr(record, name) for name in _FIELDS[type(record)]}) + "\n"


def _check_readable(path: str) -> None:
    """A file that cannot be opened is a usage error, before any record is written."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot read {path!r}: {exc.strerror or exc}", print_help=False) from None


class _OutputLostError(SitemapAuditError):
    """Standard output could not be written (said on standard error): stop as for a reader
    that went away."""


def _inputs(args: list[str]) -> tuple[list[Path], list[str]]:
    """The files (each once) and the URLs given; a :class:`UsageError` for anything else."""
    urls: list[str] = []
    files: list[Path] = []
    for arg in args:
        with path_refused(f"cannot read {arg!r}"):
            is_file = Path(arg).is_file()
        if arg.startswith("-") and not is_file:
            raise UsageError(f"unknown option {arg} (options: --follow)", print_help=False)
        if arg[:8].lower().startswith(("http://", "https://")):
            if loc_problems(arg):
                raise UsageError(f"not a valid URL: {arg!r}", print_help=False)
            urls.append(arg)
        elif is_file:
            _check_readable(arg)
            # A file named twice (or by two spellings of its path) is one sitemap.
            if all(not Path(arg).samefile(f) for f in files):
                files.append(Path(arg))
        elif re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", arg):
            raise UsageError(
                f"not an http(s) URL: {arg!r} (sitemaps are read over http or https, or "
                "from a local file)",
                print_help=False,
            )
        elif Path(arg).exists():
            raise UsageError(f"not a regular file: {arg!r}", print_help=False)
        else:
            raise UsageError(f"no such file: {arg!r}", print_help=False)
    return files, urls


class Command(ScrapyCommand):
    requires_project = True
    # Records go to standard output only; the log stays quiet unless asked (-L, -s). A
    # validation is not an audit run, whatever -s options an audit's command line brings
    # along: nothing goes to the audit history, whose runs the next audit's diff is against,
    # no sitemap is fetched conditionally (a 304 would validate the entries of the last
    # audit, not the sitemap as it is now), and no audit's state is read or left behind (a
    # JOBDIR's interrupted audit, a work directory, a distributed audit's Redis).
    defaults = {"LOG_LEVEL": "WARNING"}
    forced = {
        "SITEMAPAUDIT_REPORT_DIR": "",
        "SITEMAPAUDIT_HISTORY_PATH": "",
        "FEEDS": {},
        "JOBDIR": "",
        "SITEMAPAUDIT_WORK_DIR": "",
        "SITEMAPAUDIT_DISTRIBUTED": "",
    }

    def syntax(self) -> str:
        return "[options] PATH_OR_URL..."

    def short_desc(self) -> str:
        return "Validate sitemap files or URLs and print sitemap and url records as JSON Lines"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        assert self.settings is not None
        # (Before Scrapy's options, whose help shows the log level's default.)
        for name, level in self.defaults.items():
            if (self.settings.getpriority(name) or 0) < 40:
                self.settings.set(name, level, priority="cmdline")
        super().add_options(parser)
        parser.add_argument(
            "--follow",
            action="store_true",
            help="also fetch and validate the child sitemaps listed by local index files",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        for name, value in self.forced.items():
            self.settings.set(name, value, priority="cmdline")
        check_log_file(self)

    @refusing_in_one_line
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one sitemap file or URL", print_help=False)
        if sys.stdout is None:
            raise UsageError(
                "standard output is closed: the records have nowhere to go", print_help=False
            )
        assert self.settings is not None
        config, builder = self._config()
        files, urls = _inputs(args)
        self.errors = 0
        self.builder = builder
        self._pending: list[str] = []
        self._gone = False
        self._crawlers: list[Crawler] = []
        # The local index file that first lists each child sitemap fetched with --follow, and
        # the lastmod it gives for it: the crawl judges the child as that index's.
        self._indexes: dict[str, tuple[str, str | None]] = {}
        # Everything loaded so far lives as long as the command: keep the collector from
        # walking it again and again while the records of a large file come and go, and let
        # it collect as seldom as an audit's does.
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLDS)
        try:
            children: list[tuple[str, str, str | None]] = []
            for record in validate_files(files, config, builder, children):
                self._emit(record)
            self._flush()
            if opts.follow:
                self._follow(children, urls)
            if urls:
                self._crawl(urls)
            self._flush()
        except (BrokenPipeError, _OutputLostError):
            self._reader_gone()
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
        self.exitcode = 1 if self.errors or self._gone or self._crawls_failed() else 0

    def _crawls_failed(self) -> bool:
        """A crawl of sitemap URLs did not start, or stopped before it was complete (Ctrl-C,
        SIGTERM, a CLOSESPIDER_* limit): what it did not read is not vouched for."""
        if not self._crawlers:
            return False
        assert self.crawler_process is not None
        return self.crawler_process.bootstrap_failed or any(
            crawler.stats is not None and audit_failed(crawler.stats.get_stats())
            for crawler in self._crawlers
        )

    def _config(self) -> tuple[AuditConfig, RecordBuilder]:
        """The audit's configuration (inventory only) and a record builder for it; a bad
        setting is a usage error."""
        assert self.settings is not None
        try:
            check_setting_names(self.settings)
            check_robotstxt_obey(self.settings)
            check_scrapy_settings(self.settings)
            config = AuditConfig.from_settings(self.settings).with_fetch_urls(False)
            return config, RecordBuilder(config, datetime.now(UTC))
        except ConfigError as exc:
            raise UsageError(str(exc), print_help=False) from None

    def _follow(self, children: list[tuple[str, str, str | None]], urls: list[str]) -> None:
        """Add the valid child locations of the local indexes to the ``urls`` to crawl. A URL
        also given as an argument stays an argument, as it does in an audit."""
        given = set(urls)
        for loc, index_path, lastmod in children:
            if loc in given or loc in self._indexes or loc_problems(loc):
                continue
            self._indexes[loc] = (index_path, lastmod)
            urls.append(loc)

    def _reader_gone(self) -> None:
        """The reader went away (``| head``): stop quietly, as a shell tool does (exit status
        1: what was not read is not vouched for), with any crawl, and keep Python from
        complaining again when it flushes standard output at exit."""
        self._gone = True
        self._pending.clear()
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if any(crawler.crawling for crawler in self._crawlers):
            # As Ctrl-C does, once the item that found the pipe closed is through. (Records
            # of a finished crawl that the last write did not take stop nothing.)
            asyncio.get_running_loop().call_soon(self._stop_crawls)

    def _stop_crawls(self) -> None:
        for crawler in self._crawlers:
            # No summary, nor its warning that the audit stopped before it was complete.
            if isinstance(crawler.spider, AuditSpider):
                crawler.spider.summary_wanted = False
            deferred_from_coro(crawler.stop_async())

    def _crawl(self, urls: list[str]) -> None:
        by_origin: dict[str, list[str]] = defaultdict(list)
        for url in urls:
            by_origin[parse_origin(url.split("/", 3)[0] + "//" + url.split("/", 3)[2]).url].append(
                url
            )
        assert self.crawler_process is not None
        assert self.settings is not None
        resolve_ipv6_literals(self.settings, [parse_origin(origin).host for origin in by_origin])
        for origin, sitemaps in by_origin.items():
            crawler = self.crawler_process.create_crawler(AuditSpider)
            crawler.signals.connect(self._scraped, signal=signals.item_scraped)
            self._crawlers.append(crawler)
            self.crawler_process.crawl(
                crawler,
                domain=origin,
                sitemap=",".join(sitemaps),
                fetch_urls="no",
                listed_by={url: self._indexes[url] for url in sitemaps if url in self._indexes},
            )
        self.crawler_process.start()

    def _scraped(self, item: Any, **kwargs: Any) -> None:
        if self._gone:
            return
        try:
            if isinstance(item, UrlRecordBatch):
                for record in item.records:
                    self._emit(record)
            elif isinstance(item, SitemapRecord | UrlRecord):
                self._emit(item)
        except (BrokenPipeError, _OutputLostError):
            self._reader_gone()

    def _emit(self, record: SitemapRecord | UrlRecord) -> None:
        if record.issues:
            severity = self.builder.severity
            for code in record.issues:
                if severity.get((record.record, code)) is Severity.ERROR:
                    self.errors += 1
        self._pending.append(record_line(record))
        if len(self._pending) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._gone:
            return
        try:
            if self._pending:
                sys.stdout.write("".join(self._pending))
                self._pending.clear()
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            # A full disk, a lost mount: said in one line, as a report that cannot be written
            # is, and the command stops as when the reader went away (exit status 1).
            sys.stderr.write(
                "scrapy: error: standard output cannot be written "
                f"({exc.strerror or exc}): the records from here on are lost\n"
            )
            sys.stderr.flush()
            raise _OutputLostError from None
