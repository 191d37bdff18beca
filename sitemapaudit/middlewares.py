"""Downloader middlewares for politeness: Retry-After on 429/503 and robots.txt Crawl-delay."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any, Self

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.response import response_status_message

from sitemapaudit.config import AuditConfig
from sitemapaudit.page.dates import parse_http_date

logger = logging.getLogger(__name__)

# How often a Retry-After wait looks whether the audit is being stopped (seconds).
_STOP_CHECK_S = 0.25

# Retries of 429/503 answers not sent because the audit stopped during their wait.
UNSENT_AT_STOP = "sitemapaudit/retry_after/unsent_at_stop"

META_KEY = "sitemapaudit_retry_after_refused"
"""Request meta of a 429/503 answer not retried because its Retry-After asked for a longer
wait than SITEMAPAUDIT_RETRY_AFTER_MAX: ``{"value": the header, "seconds": the wait}``."""


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # (str.isdigit() also takes "²")
        return float(value)
    when = parse_http_date(value)
    if when is None:
        return None
    return max(0.0, when.timestamp() - now)


class RetryAfterMiddleware(RetryMiddleware):
    """Scrapy's retries, waiting as long as a 429/503 response's Retry-After asks (capped).

    The server asks the client, not one URL, to wait: the host's downloader slot sends nothing
    until the wait is over (where the host is paced by a delay, as by default: Scrapy's slot
    looks at the time of its last request only then), and the retry itself is handed back once
    it is over. (A ``process_request`` that held every request would be one more step for each
    request of the audit.)"""

    def __init__(self, settings: BaseSettings) -> None:
        super().__init__(settings)
        config = AuditConfig.from_settings(settings)
        self.max_wait = config.retry_after_max
        self.distributed = config.distributed
        self._cluster: Any = None  # the cluster's pace (HostPace), once a wait is asked for
        self._held: set[Any] = set()  # the downloader slots' keys of the hosts held

    def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response | Coroutine[Any, Any, Request]:
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        wait = None
        if response.status in (429, 503):
            header = response.headers.get("Retry-After")
            wait = retry_after_seconds(header.decode("latin-1") if header else None, time.time())
            if wait is not None and wait > self.max_wait:
                self._stat("sitemapaudit/retry_after/too_long")
                if self._retries_left(request):  # else the retries were over anyway
                    value = header.decode("latin-1").strip() if header else ""
                    request.meta[META_KEY] = {"value": value, "seconds": wait}
                return response
        retry = self._retry(request, response_status_message(response.status))
        if retry is None:
            if wait:
                # The retries are over, but the server asked the client to wait: the host's
                # other requests still do.
                self._hold_host(request, wait)
            return response
        if wait:
            self._stat("sitemapaudit/retry_after/honoured")
            self._hold_host(request, wait)
            return self._after(wait, retry)
        return retry

    async def _after(self, seconds: float, request: Request) -> Request:
        """``request`` once ``seconds`` are over, or at once when the audit is stopped
        (Ctrl-C, SIGTERM): the scheduler sends nothing more then, and a stop that waited out
        a hold of minutes would look hung and be killed before its summary."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if self._stopping():
                self._release_holds()
                self._stat(UNSENT_AT_STOP)
                break
            await asyncio.sleep(min(left, _STOP_CHECK_S))
        return request

    def _stopping(self) -> bool:
        engine = self.crawler.engine
        return engine is not None and not engine.running

    def _release_holds(self) -> None:
        """Let the held hosts' downloader slots send what they queued before the hold (at
        most the backlog a stop sends anyway), so that the engine can close now."""
        engine = self.crawler.engine
        if engine is None:
            return
        downloader = engine.downloader
        now = time.monotonic()
        for key in self._held:
            slot = downloader.slots.get(key)
            if slot is not None and slot.lastseen > now:
                slot.lastseen = now - slot.delay
                slot.close()  # (its timer until the hold's end)
                downloader._process_queue(slot)  # (Scrapy has no public call for it)
        self._held.clear()

    def _hold_host(self, request: Request, wait: float) -> None:
        """Keep the downloader slot of ``request`` from sending anything for ``wait`` seconds:
        its next request goes out no sooner than ``wait`` plus its delay from now."""
        engine = self.crawler.engine
        if engine is None:
            return
        downloader = engine.downloader
        key = downloader.get_slot_key(request)
        slot = downloader.slots.get(key)
        if slot is not None and slot.delay > 0:
            slot.lastseen = max(slot.lastseen, time.monotonic() + wait)
            self._held.add(key)
            self._stat("sitemapaudit/retry_after/host_held")
            if self.distributed:
                self._hold_cluster(request, wait)

    def _hold_cluster(self, request: Request, wait: float) -> None:
        """In a distributed audit, the other workers send nothing to the host either."""
        try:
            if self._cluster is None:
                # Redis's client loads only for a distributed audit.
                from sitemapaudit.distributed.ratelimit import HostPace  # noqa: PLC0415
                from sitemapaudit.distributed.state import connect  # noqa: PLC0415

                self._cluster = HostPace(connect(self.distributed))
            self._cluster.hold(request.url, wait)
        except Exception as exc:
            lost = getattr(self.crawler.spider, "redis_lost", None)
            if lost is None or not lost(exc):
                raise

    def _retries_left(self, request: Request) -> bool:
        tries = request.meta.get("retry_times", 0)
        return bool(tries < request.meta.get("max_retry_times", self.max_retry_times))

    def _stat(self, key: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key)


class CrawlDelayMiddleware:
    """Spaces requests to each host by the audited robots.txt's Crawl-delay (capped).

    The spacing is that of Scrapy's downloader slot of the host, which holds requests in its
    queue and sends them at most one per ``delay``: the slot's delay is raised to the
    Crawl-delay, without random jitter below it. AutoThrottle still raises it for a slow host
    (a site that asks for a delay is not given more load than one that does not), and after
    each of its adjustments the delay is put back to the Crawl-delay if it went below, before
    the slot sends its next request. (Waiting in this middleware would space requests only as
    they reach the slot's queue: requests held back there by slow answers would then go out
    together.)"""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        config = AuditConfig.from_settings(crawler.settings)
        # A distributed audit paces each host for the whole cluster instead (ratelimit.py).
        self.enabled = config.honor_crawl_delay and not config.distributed
        self.max_delay = config.max_crawl_delay

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls(crawler)
        if not middleware.enabled:
            # Off (e.g. SITEMAPAUDIT_UNTHROTTLED): not called for every request at all.
            raise NotConfigured
        # Connected after AutoThrottle's own handler (extensions are built before the
        # downloader's middlewares), and called before the slot sends its next request.
        crawler.signals.connect(middleware.response_downloaded, signal=signals.response_downloaded)
        return middleware

    def response_downloaded(self, request: Request, **kwargs: Any) -> None:
        self._floor(request)

    def _delay(self) -> float:
        run: Any = getattr(self.crawler.spider, "run", None)
        robots = getattr(run, "robots", None)
        delay = getattr(robots, "crawl_delay", None)
        return min(float(delay), self.max_delay) if delay else 0.0

    def process_request(self, request: Request) -> None:
        self._floor(request)

    def _floor(self, request: Request) -> None:
        """Raise the delay of the request's slot to the Crawl-delay, without jitter."""
        if request.url.startswith("data:"):
            return
        delay = self._delay()
        if delay <= 0:
            return
        engine = self.crawler.engine
        if engine is None:
            return
        downloader = engine.downloader
        slot = downloader.slots.get(downloader.get_slot_key(request))
        # (No slot yet: the host's first request, which no other request precedes.)
        if slot is not None and (slot.delay < delay or slot.jitter):
            slot.delay = max(slot.delay, delay)
            slot.jitter = 0.0
