"""``scrapy validate PATH_OR_URL...``: validate sitemaps before they are deployed.

Local files (plain or gzip) are validated without any network access; URLs are read by the
audit crawl in inventory-only mode (an index's children are followed; no page is requested).
Prints the ``sitemap`` and ``url`` records as JSON Lines on standard output. Exit status: 0
when no error-level finding exists, 1 when one does, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from sitemapaudit.checks.base import Severity
from sitemapaudit.config import AuditConfig
from sitemapaudit.errors import ConfigError
from sitemapaudit.localfiles import validate_file
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import SitemapRecord, UrlRecord
from sitemapaudit.spiders.audit import AuditSpider
from sitemapaudit.urls import loc_problems, parse_origin


class Command(ScrapyCommand):
    requires_project = True
    # Records go to standard output only; the log stays quiet unless asked (-L, -s).
    forced = {"LOG_LEVEL": "WARNING", "SITEMAPAUDIT_REPORT_DIR": "", "FEEDS": {}}

    def syntax(self) -> str:
        return "[options] PATH_OR_URL..."

    def short_desc(self) -> str:
        return "Validate sitemap files or URLs and print sitemap and url records as JSON Lines"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
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
            if (self.settings.getpriority(name) or 0) < 40:
                self.settings.set(name, value, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one sitemap file or URL", print_help=False)
        assert self.settings is not None
        try:
            config = AuditConfig.from_settings(self.settings).with_fetch_urls(False)
            builder = RecordBuilder(config, datetime.now(UTC))
        except ConfigError as exc:
            raise UsageError(str(exc), print_help=False) from None
        urls: list[str] = []
        files: list[Path] = []
        for arg in args:
            if arg.startswith(("http://", "https://")):
                if loc_problems(arg):
                    raise UsageError(f"not a valid URL: {arg!r}", print_help=False)
                urls.append(arg)
            elif Path(arg).is_file():
                files.append(Path(arg))
            else:
                raise UsageError(f"no such file: {arg!r}", print_help=False)
        self.errors = 0
        self.builder = builder
        for path in files:
            children: list[str] = []
            for record in validate_file(path, config, builder, children):
                self._emit(record)
            if opts.follow:
                urls.extend(c for c in children if not loc_problems(c))
        if urls:
            self._crawl(urls)
        self.exitcode = 1 if self.errors else 0

    def _crawl(self, urls: list[str]) -> None:
        by_origin: dict[str, list[str]] = defaultdict(list)
        for url in urls:
            by_origin[parse_origin(url.split("/", 3)[0] + "//" + url.split("/", 3)[2]).url].append(
                url
            )
        assert self.crawler_process is not None
        for origin, sitemaps in by_origin.items():
            crawler = self.crawler_process.create_crawler(AuditSpider)
            crawler.signals.connect(self._scraped, signal=signals.item_scraped)
            self.crawler_process.crawl(
                crawler, domain=origin, sitemap=",".join(sitemaps), fetch_urls="no"
            )
        self.crawler_process.start()

    def _scraped(self, item: Any, **kwargs: Any) -> None:
        if isinstance(item, SitemapRecord | UrlRecord):
            self._emit(item)

    def _emit(self, record: SitemapRecord | UrlRecord) -> None:
        for code in record.issues:
            if self.builder.severity.get((record.record, code)) is Severity.ERROR:
                self.errors += 1
        sys.stdout.write(json.dumps(asdict(record), ensure_ascii=False) + "\n")
        sys.stdout.flush()
