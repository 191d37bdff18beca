"""This process's part in a distributed audit: its heartbeat, claiming the report once
everything is done, and re-queueing the work of workers that are gone.

The heartbeat runs in a thread, so a long sitemap parse in the reactor does not make the
worker look gone. The other duties run in the reactor once per interval: when every live
worker is idle, nothing is queued, and nothing has moved for a while, yet the audit is not
complete, the work that is missing was held by a worker that left; one worker (under a lock)
queues it again.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Self

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from sitemapaudit.config import AuditConfig
from sitemapaudit.words import noun

if TYPE_CHECKING:
    from sitemapaudit.distributed.run import SharedAuditRun

logger = logging.getLogger(__name__)


class DistributedWorker:
    """Scrapy extension, active with ``SITEMAPAUDIT_DISTRIBUTED``."""

    def __init__(self, crawler: Crawler, config: AuditConfig) -> None:
        self.crawler = crawler
        self.ttl = config.worker_timeout
        self.interval = max(0.2, min(1.0, self.ttl / 5))
        self.state = "busy"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._quiet: tuple[int, float] | None = None
        self._loop: Any = None
        self.run: SharedAuditRun | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = AuditConfig.from_settings(crawler.settings)
        if not config.distributed:
            raise NotConfigured  # a single-process audit
        worker = cls(crawler, config)
        crawler.signals.connect(worker.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(worker.spider_closed, signal=signals.spider_closed)
        return worker

    def spider_opened(self, spider: Spider) -> None:
        # Every crawl loads this extension: Redis's client loads only for a distributed one.
        run: SharedAuditRun | None = getattr(spider, "shared", None)
        if run is None:
            return
        self.run = run
        run.shared.heartbeat(self.state, self.ttl)
        self._thread = threading.Thread(target=self._beat, name="sitemapaudit-heartbeat")
        self._thread.daemon = True
        self._thread.start()
        self._loop = create_looping_call(self.tick)
        self._loop.start(self.interval, now=False)

    def spider_closed(self, spider: Spider) -> None:
        self._stop.set()
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _beat(self) -> None:
        import redis  # noqa: PLC0415

        assert self.run is not None
        shared = self.run.shared
        while not self._stop.wait(self.interval):
            if self.run.lost is not None:  # the worker is closing, its heartbeat expires
                return
            try:
                shared.heartbeat(self.state, self.ttl)
                if self.run.writer:
                    shared.renew("writer", self.ttl)
            except redis.RedisError as exc:
                logger.warning("heartbeat to Redis failed: %s", exc)

    def tick(self) -> None:
        run = self.run
        if run is None or run.lost is not None:
            return
        try:
            self._tick(run)
        except Exception as exc:
            spider: Any = self.crawler.spider
            if not spider.redis_lost(exc):  # (the worker stops: it said why)
                raise

    def _tick(self, run: SharedAuditRun) -> None:
        engine = self.crawler.engine
        if engine is None or run.writer:
            return
        run.poll()
        busy = self._busy()
        self.state = "busy" if busy else "idle"
        # Pull what other workers queued without waiting for the engine's own heartbeat.
        slot = getattr(engine, "_slot", None)
        if slot is not None:
            slot.nextcall.schedule()
        if busy or run.shared.finished():
            self._quiet = None
            return
        if run.try_to_write():
            self.state = "busy"
            run.wake()
            return
        self._sweep(run)

    def _busy(self) -> bool:
        engine = self.crawler.engine
        assert engine is not None
        assert self.run is not None
        scraper_slot = getattr(engine.scraper, "slot", None)
        return (
            bool(engine.downloader.active)
            or (scraper_slot is not None and not scraper_slot.is_idle())
            or self.run.has_local_work()
        )

    def _sweep(self, run: SharedAuditRun) -> None:
        view = run.shared.view(run.shared.key("requests"))
        if not view.quiet or run.complete():
            self._quiet = None
            return
        now = time.monotonic()
        if self._quiet is None or self._quiet[0] != view.progress:
            self._quiet = (view.progress, now)
            return
        if now - self._quiet[1] < max(3 * self.interval, 1.0):
            return
        if not run.shared.lock("sweep", self.ttl):
            return
        self._quiet = None
        if view.gone:
            logger.warning("%s gone: %s", noun(len(view.gone), "worker"), ", ".join(view.gone))
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("sitemapaudit/distributed/sweeps")
        discovery, refs = run.lost_work()
        spider: Any = self.crawler.spider
        for request in spider.recovery_requests(discovery, refs):
            assert self.crawler.engine is not None
            self.crawler.engine.crawl(request)
        run.shared.forget(view.gone)
        run.shared.bump()
        run.wake()
