"""One pace per host for the whole cluster.

Scrapy's ``DOWNLOAD_DELAY`` and AutoThrottle space the requests of one process. With several
workers on one site, each request first reserves its start time from Redis: the reservations
of all workers for one host are at least the delay apart, where the delay is the larger of
``DOWNLOAD_DELAY`` and the robots.txt ``Crawl-delay`` (when honoured). Redis's own clock is
used, so the workers' clocks need not agree. The local delays still apply on top.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Self, cast

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from sitemapaudit.config import AuditConfig

if TYPE_CHECKING:
    import redis

# KEYS[1]: the host's key. ARGV[1]: the delay in microseconds. Returns microseconds to wait.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now, nxt)
local delay = tonumber(ARGV[1])
local ttl = math.floor((start - now + delay) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%d', start + delay), 'PX', ttl)
return string.format('%d', start - now)
"""


class HostPace:
    """Reserves request start times for hosts, shared by every client of one Redis."""

    def __init__(self, client: redis.Redis) -> None:
        self._reserve = client.register_script(_RESERVE)

    def reserve(self, host: str, delay: float) -> float:
        """Seconds to wait before the next request to ``host`` may start."""
        waited = self._reserve(keys=[f"sitemapaudit:pace:{host}"], args=[int(delay * 1e6)])
        return int(cast(str, waited)) / 1e6


class ClusterRateLimit:
    """Downloader middleware: waits for the host's next cluster-wide slot."""

    def __init__(self, crawler: Crawler, config: AuditConfig) -> None:
        self.crawler = crawler
        self.delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.honor_crawl_delay = config.honor_crawl_delay
        self.max_crawl_delay = config.max_crawl_delay
        # Every crawl loads this middleware: Redis's client loads only for a distributed one.
        from sitemapaudit.distributed.state import connect  # noqa: PLC0415

        self.pace = HostPace(connect(config.distributed))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = AuditConfig.from_settings(crawler.settings)
        if not config.distributed:
            raise NotConfigured  # a single-process audit
        return cls(crawler, config)

    def _delay(self) -> float:
        delay = self.delay
        if self.honor_crawl_delay:
            run: Any = getattr(self.crawler.spider, "run", None)
            crawl_delay = getattr(getattr(run, "robots", None), "crawl_delay", None)
            if crawl_delay:
                delay = max(delay, min(float(crawl_delay), self.max_crawl_delay))
        return delay

    async def process_request(self, request: Request) -> None:
        if request.url.startswith("data:"):
            return
        delay = self._delay()
        if delay <= 0:
            return
        spider: Any = self.crawler.spider
        if spider.shared.lost is not None:
            raise IgnoreRequest("Redis cannot be reached")
        try:
            wait = self.pace.reserve(urlparse_cached(request).netloc, delay)
        except Exception as exc:
            if not spider.redis_lost(exc):
                raise
            # Not sent without the cluster's pace (the worker stops: it said why).
            raise IgnoreRequest(f"Redis cannot be reached: {exc}") from None
        if wait > 0:
            await asyncio.sleep(wait)
