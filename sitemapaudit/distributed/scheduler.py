"""scrapy-redis's shared scheduler, fitted to Scrapy 2.13+ and to the audit.

scrapy-redis 0.9.1 passes ``spider=`` to the stats collector, which Scrapy 2.13 deprecated,
and keys its queue by spider name, which would mix the audits of different sites. This
subclass only changes those two things: stats are counted without the argument, and the
queue and the duplicate filter are keyed by the audit (``<audit>:requests``,
``<audit>:dupefilter``). Requests are fingerprinted by their exact URL: two listed URLs that
differ only in query order or fragment are two URLs of the sitemap, each requested once.
"""

from __future__ import annotations

import hashlib
from typing import Any

from scrapy import Request, Spider
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.scheduler import Scheduler


class ExactUrlDupeFilter(RFPDupeFilter):  # type: ignore[misc]
    """scrapy-redis's shared duplicate filter, on the request's method and exact URL."""

    def request_fingerprint(self, request: Request) -> str:
        return hashlib.sha1(f"{request.method} {request.url}".encode()).hexdigest()


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
        return super().open(spider)

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            if self.stats:
                self.stats.inc_value("sitemapaudit/distributed/duplicates_filtered")
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        self.queue.push(request)
        return True

    def next_request(self) -> Request | None:
        request: Request | None = self.queue.pop(self.idle_before_close)
        if request is not None and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request
