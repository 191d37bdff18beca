"""Scrapy's ``log_count/<level>`` stats, counted until the engine stops.

Scrapy's own counter stops at ``spider_closed``, before the lines the audit logs as it closes
(``fail_on`` matched, records a report lacks): an operator who alerts on
``log_count/WARNING`` or ``log_count/ERROR`` would miss exactly those. The stats dump comes
after the ``spider_closed`` handlers, so it counts them.
"""

from __future__ import annotations

import logging
from typing import Any, Self

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.extensions.logcount import LogCount


class ClosingLogCount(LogCount):
    """:class:`~scrapy.extensions.logcount.LogCount`, its handler removed when the engine
    stops instead of when the spider closes."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        counter = cls(crawler)
        crawler.signals.connect(counter.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(counter.engine_stopped, signal=signals.engine_stopped)
        return counter

    def engine_stopped(self, **kwargs: Any) -> None:
        if self.handler:
            logging.root.removeHandler(self.handler)
            self.handler = None
