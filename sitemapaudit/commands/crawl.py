"""``scrapy crawl``, checking the audit's arguments and settings before anything is requested."""

from __future__ import annotations

import argparse
from pathlib import Path

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from sitemapaudit.arguments import parse_arguments
from sitemapaudit.checks.registry import enabled_checks
from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.run import configured_work_dir
from sitemapaudit.errors import ConfigError
from sitemapaudit.inventory import check_resumable


class Command(ScrapyCrawlCommand):
    """Scrapy's ``crawl``; for the audit it also exits 1 when ``-a fail_on=...`` findings exist
    or the audit stopped before it was complete."""

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
        stats = crawler.stats
        if stats.get_value("sitemapaudit/fail_on/failed") or stats.get_value(
            "sitemapaudit/summary/incomplete"
        ):
            self.exitcode = 1
