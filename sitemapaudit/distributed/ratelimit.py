"""One pace per host for the whole cluster.

Scrapy's ``DOWNLOAD_DELAY`` and AutoThrottle space the requests of one process. With several
workers on one site, each request reserves its start time from Redis as it is sent: the
reservations of all workers for one host are at least the delay apart, where the delay is the
larger of ``DOWNLOAD_DELAY`` and the robots.txt ``Crawl-delay`` (when honoured). Redis's own
clock is used, so the workers' clocks need not agree.

The reservation is made by the download handler, once Scrapy's downloader has let the request
go (after its per-worker delay, random jitter and concurrency limits), so nothing that holds a
request back in a worker can bring it closer to another worker's request. A request waits for
its slot while it counts as in flight: each worker has at most
``CONCURRENT_REQUESTS_PER_DOMAIN`` requests to a host waiting or on the wire.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import TYPE_CHECKING, Any, ClassVar, Self, cast
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import ensure_awaitable, maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object

from sitemapaudit.config import AuditConfig

if TYPE_CHECKING:
    import redis

# KEYS[1]: the host's key, which holds the latest moment the last reserved request may
# start. ARGV[1]: the delay now in force in microseconds (a Crawl-delay learnt after the last
# reservation counts from it). ARGV[2]: how late the reserving worker may send it (its round
# trip to Redis: it learns the start only once the answer is back). Returns microseconds to
# wait.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local delay = tonumber(ARGV[1])
local last = redis.call('GET', KEYS[1])
local start = now
if last then
    start = math.max(now, tonumber(last) + delay)
end
-- Kept an hour past it: a longer delay learnt later still counts from it.
local ttl = math.floor((start - now) / 1000) + 3600000
redis.call('SET', KEYS[1], string.format('%d', start + tonumber(ARGV[2])), 'PX', ttl)
return string.format('%d', start - now)
"""

# KEYS[1]: the host's key. ARGV[1]: microseconds from now during which no request may start
# (a Retry-After). Nothing is shortened.
_HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local until_ = now + tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ > last then
    local ttl = math.floor(tonumber(ARGV[1]) / 1000) + 3600000
    redis.call('SET', KEYS[1], string.format('%d', until_), 'PX', ttl)
end
return 1
"""


def pace_key(url: str) -> str:
    """The Redis key of the pace of ``url``'s host: by host name, as Scrapy's downloader slots
    are (``127.0.0.1`` and ``127.0.0.1:80``, ``example.com.`` and ``example.com`` are one
    host), case aside."""
    host = (urlsplit(url).hostname or "").rstrip(".")
    return f"sitemapaudit:pace:{host}"


class HostPace:
    """Reserves request start times for hosts, shared by every client of one Redis."""

    def __init__(self, client: redis.Redis) -> None:
        self._reserve = client.register_script(_RESERVE)
        self._hold = client.register_script(_HOLD)
        # How late this client may send a reserved request: twice its slowest recent round
        # trip to Redis (the answer's way back, and the reactor held up by another's), from
        # a first one now.
        sent = time.monotonic()
        client.ping()
        self.lag = 2 * (time.monotonic() - sent)

    def reserve(self, url: str, delay: float) -> float:
        """Seconds to wait before the next request to the host of ``url`` may start."""
        sent = time.monotonic()
        waited = self._reserve(keys=[pace_key(url)], args=[int(delay * 1e6), int(self.lag * 1e6)])
        trip = time.monotonic() - sent
        self.lag = max(2 * trip, 0.9 * self.lag)
        return int(cast(str, waited)) / 1e6

    def hold(self, url: str, seconds: float) -> None:
        """No request to the host of ``url`` starts in the next ``seconds``, in the cluster."""
        self._hold(keys=[pace_key(url)], args=[int(seconds * 1e6)])


PACED_SCHEMES = ("http", "https")


def paced_handlers(settings: BaseSettings) -> dict[str, Any]:
    """``DOWNLOAD_HANDLERS`` for a distributed audit: the http and https handlers the settings
    name, each wrapped in the cluster's pace (a scheme switched off stays off)."""
    handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
    wrapped = dict(settings.getdict("DOWNLOAD_HANDLERS"))
    for scheme in PACED_SCHEMES:
        inner = handlers.get(scheme)
        if inner is not None and not _is_paced(inner):
            wrapped[scheme] = type(
                f"ClusterPaced{scheme.capitalize()}Handler",
                (ClusterPacedHandler,),
                {"inner": inner},
            )
    return wrapped


def _is_paced(handler: Any) -> bool:
    return isinstance(handler, type) and issubclass(handler, ClusterPacedHandler)


class ClusterPacedHandler:
    """Download handler: waits for the host's next cluster-wide slot, then lets the handler
    it wraps (``inner``, Scrapy's own unless the settings name another) send the request."""

    inner: ClassVar[Any]
    """The wrapped handler's class or import path (set by :func:`paced_handlers`)."""
    lazy = True

    def __init__(self, crawler: Crawler, config: AuditConfig, inner: Any) -> None:
        self.crawler = crawler
        self.delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.honor_crawl_delay = config.honor_crawl_delay
        self.max_crawl_delay = config.max_crawl_delay
        self.handler = inner
        # Redis's client loads only for a distributed audit, the only one with this handler.
        from sitemapaudit.distributed.state import connect  # noqa: PLC0415

        self.pace = HostPace(connect(config.distributed))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = AuditConfig.from_settings(crawler.settings)
        inner = build_from_crawler(load_object(cls.inner), crawler)
        return cls(crawler, config, inner)

    def _delay(self) -> float:
        delay = self.delay
        if self.honor_crawl_delay:
            run: Any = getattr(self.crawler.spider, "run", None)
            crawl_delay = getattr(getattr(run, "robots", None), "crawl_delay", None)
            if crawl_delay:
                delay = max(delay, min(float(crawl_delay), self.max_crawl_delay))
        return delay

    async def download_request(self, request: Request) -> Response:
        delay = self._delay()
        if delay > 0:
            await self._wait_for_slot(request, delay)
        if inspect.iscoroutinefunction(self.handler.download_request):
            return cast(Response, await self.handler.download_request(request))
        # A handler of the older kind, as Scrapy's own DownloadHandlers calls it.
        return cast(
            Response,
            await maybe_deferred_to_future(
                self.handler.download_request(request, self.crawler.spider)
            ),
        )

    async def _wait_for_slot(self, request: Request, delay: float) -> None:
        spider: Any = self.crawler.spider
        if spider.shared.lost is not None:
            raise IgnoreRequest("Redis cannot be reached")
        try:
            wait = self.pace.reserve(request.url, delay)
        except Exception as exc:
            if not spider.redis_lost(exc):
                raise
            # Not sent without the cluster's pace (the worker stops: it said why).
            raise IgnoreRequest(f"Redis cannot be reached: {exc}") from None
        if wait > 0:
            await asyncio.sleep(wait)

    async def close(self) -> None:
        close = getattr(self.handler, "close", None)
        if close is not None:
            await ensure_awaitable(close())
