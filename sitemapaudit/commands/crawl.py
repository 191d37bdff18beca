"""``scrapy crawl``, checking the audit's arguments and settings before anything is requested."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from sitemapaudit.arguments import parse_arguments
from sitemapaudit.checks.registry import enabled_checks
from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.run import configured_work_dir
from sitemapaudit.errors import ConfigError
from sitemapaudit.history.store import check_history_path
from sitemapaudit.inventory import check_resumable


class Command(ScrapyCrawlCommand):
    """Scrapy's ``crawl``; for the audit it also exits 1 when ``-a fail_on=...`` findings exist,
    the audit stopped before it was complete, or its history could not be written."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] != "audit":
            super().run(args, opts)
            return
        try:
            parse_arguments(**opts.spargs)
            assert self.settings is not None
            config = AuditConfig.from_settings(self.settings)
            enabled_checks(config)
            work_dir = configured_work_dir(config, self.settings.get("JOBDIR") or None)
            if work_dir:
                check_resumable(Path(work_dir) / "inventory.sqlite3")
            if config.history_path:
                check_history_path(config.history_path)
        except ConfigError as exc:
            raise UsageError(str(exc), print_help=False) from None
        if len(args) > 1:
            raise UsageError("running 'scrapy crawl' with more than one spider is not supported")
        assert self.crawler_process is not None
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
            return
        if audit_failed(crawler.stats.get_stats()):
            self.exitcode = 1


FAILURE_STATS = (
    "sitemapaudit/fail_on/failed",
    "sitemapaudit/summary/incomplete",
    "sitemapaudit/history/failed",
)
"""Stats that make ``scrapy crawl audit`` exit with 1: ``fail_on`` matched, the audit stopped
before it was complete, the history failed during the run."""


def audit_failed(stats: Mapping[str, Any]) -> bool:
    """Whether an audit with these final stats exits with 1."""
    return any(stats.get(key) for key in FAILURE_STATS)
