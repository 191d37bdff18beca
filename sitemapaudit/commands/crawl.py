"""``scrapy crawl``, checking the audit's arguments and settings before anything is requested."""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.utils.misc import load_object

from sitemapaudit.arguments import check_fail_on, parse_arguments
from sitemapaudit.checks.registry import enabled_checks
from sitemapaudit.commands.refusal import check_log_file, refusing_in_one_line
from sitemapaudit.commands.stopping import stop_when_started
from sitemapaudit.config import (
    AuditConfig,
    check_robotstxt_obey,
    check_scrapy_settings,
    check_setting_names,
)
from sitemapaudit.crawl.workdir import configured_work_dir
from sitemapaudit.errors import ConfigError
from sitemapaudit.history.store import check_history_path
from sitemapaudit.inventory import audit_identity, check_resumable
from sitemapaudit.report.paths import default_report_dir


class Command(ScrapyCrawlCommand):
    """Scrapy's ``crawl``; for the audit it also exits 1 when ``-a fail_on=...`` findings exist,
    the audit stopped before it was complete, or its history could not be written."""

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        check_log_file(self)

    @refusing_in_one_line
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] != "audit":
            super().run(args, opts)
            return
        try:
            arguments = parse_arguments(**opts.spargs)
            assert self.settings is not None
            check_setting_names(self.settings)
            config = AuditConfig.from_settings(self.settings)
            check_robotstxt_obey(self.settings)
            check_scrapy_settings(self.settings)
            check_fail_on(arguments.fail_on, config.disabled_checks)
            enabled_checks(config)
            work_dir = configured_work_dir(config, self.settings.get("JOBDIR") or None)
            if work_dir:
                check_directory(
                    work_dir, f"the work directory {work_dir!r} (SITEMAPAUDIT_WORK_DIR or JOBDIR)"
                )
                fetch_urls = (
                    config.fetch_urls if arguments.fetch_urls is None else arguments.fetch_urls
                )
                identity = audit_identity(arguments.origin.url, arguments.sitemaps, fetch_urls)
                check_resumable(Path(work_dir) / "inventory.sqlite3", identity)
            if config.history_path:
                check_history_path(config.history_path)
            if config.distributed:
                from sitemapaudit.distributed import state  # noqa: PLC0415 (Redis)

                client = state.connect(config.distributed)
                joined = (
                    config
                    if arguments.fetch_urls is None
                    else config.with_fetch_urls(arguments.fetch_urls)
                )
                identity = state.audit_identity(
                    arguments.origin.url,
                    list(arguments.sitemaps),
                    joined.fetch_urls,
                    joined.shaping_settings(),
                )
                try:
                    state.check_joinable(client, arguments.origin.url, identity)
                finally:
                    client.close()
            check_report_paths(self.settings.getdict("FEEDS"), default_report_dir(self.settings))
            check_appends(
                self.settings.getdict("FEEDS"), self.settings.getwithbase("FEED_EXPORTERS")
            )
        except ConfigError as exc:
            raise UsageError(str(exc), print_help=False) from None
        resolve_ipv6_literals(self.settings, [arguments.origin.host])
        if len(args) > 1:
            raise UsageError("running 'scrapy crawl' with more than one spider is not supported")
        assert self.crawler_process is not None
        crawler = self._create_crawler(args[0])
        stop_when_started(crawler)
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
    "sitemapaudit/report/failed",
    "sitemapaudit/distributed/stopped",
)
"""Stats that make ``scrapy crawl audit`` exit with 1: ``fail_on`` matched, the audit stopped
before it was complete (in a distributed audit: this worker stopped before the cluster was
done), the history failed during the run, the report could not be written (and any
``feedexport/failed_count/...``: a feed Scrapy could not store)."""


def resolve_ipv6_literals(settings: BaseSettings, hosts: Iterable[str]) -> None:
    """Use Scrapy's ``CachingHostnameResolver`` when a host is an IPv6 literal (Scrapy's
    default resolver knows IPv4 only), unless the command line names a resolver."""
    if (
        any(":" in host for host in hosts)
        and (settings.getpriority("TWISTED_DNS_RESOLVER") or 0) < SETTINGS_PRIORITIES["cmdline"]
    ):
        settings.set("TWISTED_DNS_RESOLVER", "scrapy.resolver.CachingHostnameResolver", "cmdline")


def audit_failed(stats: Mapping[str, Any]) -> bool:
    """Whether an audit with these final stats exits with 1 (also when the crawl never
    closed: a second Ctrl-C stops it at once, without a ``finish_reason``)."""
    return (
        "finish_reason" not in stats
        or any(stats.get(key) for key in FAILURE_STATS)
        or any(value and key.startswith("feedexport/failed_count/") for key, value in stats.items())
    )


def check_directory(path: str, what: str) -> None:
    """A :class:`ConfigError` saying ``what`` (the setting or option, and its value) cannot be
    used when ``path`` cannot be a directory to write in (created if need be, as the audit
    would create it)."""
    try:
        blocker = next((p for p in (Path(path), *Path(path).parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise ConfigError(f"{what} cannot be used: {str(blocker)!r} is a file, not a directory")
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{what} cannot be used: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{what} cannot be used: the directory is not writable")
    # os.access() trusts the mode bits (and says yes to root everywhere): only creating a file
    # tells, e.g. in /proc or on a read-only mount.
    try:
        descriptor, probe = tempfile.mkstemp(dir=path, prefix=".sitemapaudit-probe-")
    except OSError as exc:
        raise ConfigError(
            f"{what} cannot be used: no file can be created in {path!r} ({exc.strerror or exc})"
        ) from None
    os.close(descriptor)
    os.unlink(probe)


def check_report_paths(feeds: Mapping[str, Any], report_dir: str) -> None:
    """The directories of the local files the report goes to (``-o``/``-O``/``FEEDS``, and
    ``report_dir``, the default report's, see :func:`default_report_dir`) must be usable: a
    report that cannot be written fails at start, not after the audit."""
    if report_dir:
        check_directory(report_dir, f"SITEMAPAUDIT_REPORT_DIR={report_dir!r}")
    for uri in feeds:
        path = _local_path(str(uri))
        if path is None:
            continue
        parent = str(Path(path).parent)
        if "%(" not in parent:  # a directory named by URI parameters is known only later
            check_directory(parent, f"the output file {uri!r}")
        target = Path(path)
        try:
            found = "%(" not in path and target.exists()
        except OSError as exc:
            raise ConfigError(
                f"the output file {uri!r} cannot be used: {exc.strerror or exc}"
            ) from None
        if found:
            if target.is_dir():
                raise ConfigError(f"the output file {uri!r} cannot be used: it is a directory")
            if not os.access(target, os.W_OK):
                raise ConfigError(f"the output file {uri!r} cannot be used: it is not writable")


def check_appends(feeds: Mapping[str, Any], exporters: Mapping[str, Any]) -> None:
    """A local file appended to (``-o``, or ``FEEDS`` without ``overwrite``) must be in a
    format that can be: a CSV file has its header first, an XLSX workbook and an HTML page are
    written whole, so a second audit after the first is a broken file, whether the file exists
    yet or not (the same command would break it the next time)."""
    for uri, options in feeds.items():
        if _local_path(str(uri)) is None or not isinstance(options, Mapping):
            continue
        if options.get("overwrite", False):
            continue
        feed_format = options.get("format")
        exporter = exporters.get(feed_format) if isinstance(feed_format, str) else None
        if exporter is None:
            continue  # (Scrapy refuses an unknown format itself)
        try:
            exporter_class = load_object(exporter)
        except (ImportError, NameError, ValueError):
            continue  # (Scrapy refuses it as the crawl starts, with its own message)
        if getattr(exporter_class, "appendable", True) is False:
            raise ConfigError(
                f"the output file {uri!r} cannot be appended to (-o appends): the format "
                f"{feed_format} cannot hold a second audit after the first in one file; use -O "
                'to replace it (in FEEDS: "overwrite": true)'
            )


def _local_path(uri: str) -> str | None:
    """The path of a feed URI that names a local file, else ``None``."""
    if uri.startswith("file://"):
        return uri[len("file://") :]
    # A URI scheme (RFC 3986: a letter, then letters, digits, "+", "-", "."): s3:, ftp:,
    # stdout:... but not the C: of a Windows path.
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", uri):
        return None
    return uri
