"""``scrapy crawl``, checking the audit's arguments and settings before anything is requested."""

from __future__ import annotations

import argparse

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from sitemapaudit.arguments import parse_arguments
from sitemapaudit.checks.registry import enabled_checks
from sitemapaudit.config import AuditConfig
from sitemapaudit.errors import ConfigError


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args and args[0] == "audit":
            try:
                parse_arguments(**opts.spargs)
                assert self.settings is not None
                enabled_checks(AuditConfig.from_settings(self.settings))
            except ConfigError as exc:
                raise UsageError(str(exc), print_help=False) from None
        super().run(args, opts)
