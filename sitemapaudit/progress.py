"""A periodic progress line while an audit runs: URLs done, queued, rate and an ETA."""

from __future__ import annotations

import logging
import time
from typing import Any, Self

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from sitemapaudit.config import AuditConfig
from sitemapaudit.words import count_noun

logger = logging.getLogger(__name__)


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class ProgressLog:
    """Logs every SITEMAPAUDIT_PROGRESS_INTERVAL seconds how far the audit is."""

    def __init__(self, crawler: Crawler, interval: float) -> None:
        self.crawler = crawler
        self.interval = interval
        self.task: Any = None
        self._last: tuple[float, int] | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        interval = AuditConfig.from_settings(crawler.settings).progress_interval
        if interval <= 0:
            raise NotConfigured
        return cls(crawler, interval)

    def spider_opened(self) -> None:
        self.start_counting()
        self.task = create_looping_call(self.log)
        self.task.start(self.interval, now=False)

    def start_counting(self) -> None:
        """The first line's rate counts from now (a resumed audit's done URLs excluded)."""
        run = getattr(self.crawler.spider, "run", None)
        self._last = (time.monotonic(), run.progress()["urls_done"] if run is not None else 0)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()

    def log(self) -> None:
        spider: Any = self.crawler.spider
        run = getattr(spider, "run", None)
        if run is None:
            return
        try:
            progress = run.progress()
        except Exception as exc:
            if not spider.redis_lost(exc):  # (the worker stops: it said why)
                raise
            return
        now = time.monotonic()
        done = progress["urls_done"]
        rate = 0.0
        if self._last is not None and now > self._last[0]:
            rate = (done - self._last[1]) / (now - self._last[0])
        self._last = (now, done)
        remaining = progress["urls_known"] - done
        eta = remaining / rate if rate > 0 else None
        logger.info(
            "progress: %s of %s done, %s queued, %s read (%s pending), %.1f URL/s, ETA %s",
            f"{done:,}",
            count_noun(progress["urls_known"], "URL"),
            f"{progress['urls_queued']:,}",
            count_noun(progress["sitemaps_read"], "sitemap"),
            f"{progress['sitemaps_pending']:,}",
            rate,
            format_eta(eta),
        )
