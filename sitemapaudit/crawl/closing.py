"""What a closing audit tells its user, in the log and on standard output: where its report
is, or why this worker of a distributed audit wrote none."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from scrapy.statscollectors import StatsCollector

from sitemapaudit.words import count_noun

Logger = logging.Logger | logging.LoggerAdapter[Any]


def worker_stopped(logger: Logger, reason: str) -> None:
    """A worker stopped (Ctrl-C, SIGTERM, a CLOSESPIDER limit, Redis lost) before the cluster
    was done: no worker may be left to write the report."""
    logger.warning("This worker stopped (%s) before the distributed audit was complete", reason)
    print(
        f"sitemapaudit: this worker stopped ({reason}) before the distributed audit was "
        "complete; start workers again with the same command to go on"
        + (
            " (a Redis that restarted without the audit's state starts a new audit)"
            if reason == "redis_lost"
            else ""
        )
    )


def another_worker_writes(logger: Logger) -> None:
    logger.info("Another worker of the distributed audit writes the report")
    print("sitemapaudit: another worker of this distributed audit writes the report")


def report_written(logger: Logger, path: Path, stats: StatsCollector | None) -> None:
    """The default report at ``path``, written whole or not (``stats`` say)."""
    if stats is not None and stats.get_value("sitemapaudit/report/failed"):
        lost = stats.get_value("sitemapaudit/report/records_lost", 0)
        print(
            f"sitemapaudit: {count_noun(lost, 'record')} could not be written to the "
            f"report {path}, which is incomplete (see the log)"
        )
    else:
        logger.info("Report written to %s", path)
        print(f"sitemapaudit: report written to {path}")
