"""The crawler's stats collector as the audit's run counts into it, from before the crawl
starts."""

from __future__ import annotations

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector


class CrawlerStats:
    """The crawler's stats collector, looked up when used. It exists once the crawl starts:
    what is counted before, as the spider is made (a history whose first write fails), is
    added to it when the spider opens."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        self._early: list[tuple[str, int, int]] = []
        crawler.signals.connect(self._opened, signal=signals.spider_opened)

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        stats = self._stats()
        if stats is None:
            self._early.append((key, count, start))
        else:
            stats.inc_value(key, count, start)

    def _stats(self) -> StatsCollector | None:
        try:
            return self._crawler.stats
        except RuntimeError:  # (Scrapy's "not set yet")
            return None

    def _opened(self) -> None:
        early, self._early = self._early, []
        for key, count, start in early:
            self.inc_value(key, count, start)
