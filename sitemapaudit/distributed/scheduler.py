"""scrapy-redis's shared scheduler, fitted to Scrapy 2.13+ and to the audit.

scrapy-redis 0.9.1 passes ``spider=`` to the stats collector, which Scrapy 2.13 deprecated,
and keys its queue by spider name, which would mix the audits of different sites. This
subclass changes those two things: stats are counted without the argument, and the queue and
the duplicate filter are keyed by the audit (``<audit>:requests``, ``<audit>:dupefilter``).
Requests are fingerprinted by their exact URL, and a page's first request also by its listed
URL's id: two listed URLs that differ only in query order or fragment are two URLs of the
sitemap, each requested once, and so are two that a browser requests alike (``/./a`` and
``/a``, ``127.1`` and ``127.0.0.1``: see :func:`~sitemapaudit.urls.request_url`).

It tells the audit which page requests this worker put in the shared queue and which it took
from it: a worker that stops hands back the URLs it holds (see :mod:`.inventory`), not those
whose requests wait in the queue for any worker.

Redis that cannot be reached stops the worker (see the spider's ``redis_lost``): the
scheduler then holds no request, and takes none, rather than failing in the engine's loop.

It also saves round trips to Redis, the largest cost of a worker after Scrapy's own:

- Scrapy asks the scheduler for requests until it answers none, so each round of the engine
  ended with a round trip that found the queue empty: as many as there were requests. Once
  this worker has taken as many requests as it queued, or Redis answered empty, the queue
  counts as empty for ``EMPTY_RECHECK`` seconds unless this worker queues another request:
  the requests other workers queue wait that much longer at most.
- With scrapy-redis's default priority queue, the requests this worker queues are sent with
  its next take from the queue, in the same transaction (one ``ZADD`` for all of them), and
  before anything else reads the queue (its length, the end of the crawl). They are encoded
  as scrapy-redis encodes them, with the names of their callbacks looked up in a table of
  the spider's methods made once (``Request.to_dict`` walks the whole spider with
  ``inspect.getmembers`` for each: 40 µs, twice per request).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import time
import warnings
from typing import Any

from scrapy import Request, Spider
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler

from sitemapaudit.words import count_noun

EMPTY_RECHECK = 0.05


logger = logging.getLogger(__name__)


class ExactUrlDupeFilter(RFPDupeFilter):  # type: ignore[misc]
    """scrapy-redis's shared duplicate filter, on the request's method and exact URL, and for
    a listed URL's request on its id: listed URLs requested at the same URL are each
    requested once, none filtered for the other."""

    def request_fingerprint(self, request: Request) -> str:
        url_id = request.meta.get("url_id")
        key = f"{request.method} {request.url}" + ("" if url_id is None else f" {url_id}")
        return hashlib.sha1(key.encode()).hexdigest()


class AuditScheduler(Scheduler):  # type: ignore[misc]
    """The shared Redis queue of a distributed audit (see the module docstring)."""

    def open(self, spider: Spider) -> Any:
        prefix = spider.run.shared.prefix.replace("%", "%%")  # type: ignore[attr-defined]
        self.queue_key = f"{prefix}:requests"
        self.df = ExactUrlDupeFilter(
            self.server,
            key=f"{spider.run.shared.prefix}:dupefilter",  # type: ignore[attr-defined]
            debug=spider.settings.getbool("DUPEFILTER_DEBUG"),
        )
        # Requests this worker queued and has not taken back (a hint: other workers take
        # some), and since when the queue counts as empty (``None``: it may hold requests).
        self._queued = 0
        self._empty_since: float | None = None
        # Scores and encoded requests not sent to Redis yet (priority queue only).
        self._outbox: list[Any] = []
        # The names of the spider's methods, by function.
        self._names = {
            method.__func__: name
            for name, method in inspect.getmembers(spider, inspect.ismethod)
            if not name.startswith("__")
        }
        with warnings.catch_warnings():
            # scrapy-redis says "Resuming crawl" with Spider.log(), which Scrapy deprecates;
            # the line is logged below instead.
            warnings.filterwarnings(
                "ignore", message=".*Spider.log", category=ScrapyDeprecationWarning
            )
            opened = super().open(spider)
        self._batched = type(self.queue) is PriorityQueue
        queued = len(self.queue)
        if queued:
            logger.info(
                "the shared queue holds %s: this worker takes %s too",
                count_noun(queued, "request"),
                "it" if queued == 1 else "them",
            )
        return opened

    def close(self, reason: str) -> Any:
        if not self._lost():
            try:
                self._send()
            except Exception as exc:
                if not self._lost(exc):
                    raise
        return super().close(reason)

    def flush(self) -> None:
        self._outbox = []
        super().flush()

    def __len__(self) -> int:
        if self._lost():
            return 0
        try:
            self._send()
            return len(self.queue)
        except Exception as exc:
            if not self._lost(exc):
                raise
            return 0

    def enqueue_request(self, request: Request) -> bool:
        if self._lost():
            return False
        try:
            return self._enqueue(request)
        except Exception as exc:
            if not self._lost(exc):
                raise
            return False

    def _enqueue(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            if self.stats:
                self.stats.inc_value("sitemapaudit/distributed/duplicates_filtered")
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        if self._batched:
            self._outbox += (-request.priority, self._encode(request))
        else:
            self.queue.push(request)
        self._queued += 1
        self._empty_since = None
        url_id = request.meta.get("url_id")
        if url_id is not None:
            self.spider.run.page_queued(url_id)
        return True

    def next_request(self) -> Request | None:
        if self._lost():
            return None
        try:
            return self._next()
        except Exception as exc:
            if not self._lost(exc):
                raise
            return None

    def _lost(self, exc: Exception | None = None) -> bool:
        """Whether Redis is lost: said by ``exc`` (and then the worker stops), or before."""
        if exc is not None:
            return bool(self.spider.redis_lost(exc))
        return self.spider.run.lost is not None

    def _next(self) -> Request | None:
        since = self._empty_since
        if since is not None and time.monotonic() - since < EMPTY_RECHECK:
            return None
        request = self._take() if self._batched else self.queue.pop(self.idle_before_close)
        if request is None:
            self._queued = 0
            self._empty_since = time.monotonic()
            return None
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        url_id = request.meta.get("url_id")
        if url_id is not None:
            self.spider.run.page_taken(url_id)
        if self._queued:  # (a request of another worker's leaves the hint as it was)
            self._queued -= 1
            if not self._queued:
                self._empty_since = time.monotonic()
        return request

    def _take(self) -> Request | None:
        """The first request of the priority queue, the waiting ones sent along (atomically,
        as scrapy-redis takes one)."""
        key = self.queue.key
        outbox = self._outbox
        pipe = self.server.pipeline()
        pipe.multi()
        if outbox:
            pipe.execute_command("ZADD", key, *outbox)
        pipe.zrange(key, 0, 0).zremrangebyrank(key, 0, 0)
        found = pipe.execute()[-2]
        if outbox:
            self._outbox = []
        return self.queue._decode_request(found[0]) if found else None

    def _encode(self, request: Request) -> Any:
        """What scrapy-redis's queue would store for ``request``."""
        try:
            callback = self._name_of(request.callback)
            errback = self._name_of(request.errback)
        except KeyError:  # not a method of the spider: scrapy-redis says why it cannot be
            return self.queue._encode_request(request)
        data = request.replace(callback=None, errback=None).to_dict()
        data["callback"], data["errback"] = callback, errback
        return self.queue.serializer.dumps(data)

    def _name_of(self, method: Any) -> str | None:
        if method is None:
            return None
        return self._names[getattr(method, "__func__", method)]

    def _send(self) -> None:
        if self._outbox:
            self.server.execute_command("ZADD", self.queue.key, *self._outbox)
            self._outbox = []
