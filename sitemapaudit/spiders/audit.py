"""The audit spider: discovers sitemaps, routes responses and yields facts. No checks here."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.utils.defer import deferred_from_coro
from twisted.python.failure import Failure

from sitemapaudit.arguments import check_fail_on, parse_arguments
from sitemapaudit.config import AuditConfig, parse_bool
from sitemapaudit.crawl import closing
from sitemapaudit.crawl.collector import tune_collector
from sitemapaudit.crawl.headerlines import allow_long_header_lines
from sitemapaudit.crawl.itemproc import RecordSender
from sitemapaudit.crawl.pacing import more_actions, paced_backlog
from sitemapaudit.crawl.pages import PageQueue, PendingPage, redirect_outcome
from sitemapaudit.crawl.redirects import (
    REDIRECT_STATUSES,
    Hosts,
    RedirectState,
    next_hop,
)
from sitemapaudit.crawl.requests import (
    homepage_request,
    page_request,
    robots_request,
    sitemap_hop,
    sitemap_request,
)
from sitemapaudit.crawl.responses import (
    conflicting_locations,
    decoded_body,
    failure_reason,
    link_text,
    location,
    partial_homepage_sitemaps,
    response_headers,
    sitemap_body,
    sitemap_validators,
)
from sitemapaudit.crawl.run import AuditRun, PageAction
from sitemapaudit.crawl.stats import CrawlerStats
from sitemapaudit.crawl.summary import stopped_summary, stopped_worker_summary, summary_record
from sitemapaudit.crawl.tree import SitemapRef
from sitemapaudit.crawl.unfollowed import homepage_unread, redirect_problems
from sitemapaudit.discovery.homepage import HOMEPAGE_READ_LIMIT, homepage_sitemaps
from sitemapaudit.distributed.guard import until_redis_lost
from sitemapaudit.facts import SitemapFacts, UrlFactsBatch
from sitemapaudit.middlewares import META_KEY as RETRY_AFTER_META
from sitemapaudit.page.coding import (
    body_coding,
    declares_gzip,
)
from sitemapaudit.readlimit import PARTIAL_KEY
from sitemapaudit.report.paths import default_report_dir, drop_reserved, reserve_report
from sitemapaudit.report.records import DiffRecordBatch, SummaryRecord
from sitemapaudit.urls import request_url

if TYPE_CHECKING:
    from sitemapaudit.distributed.run import SharedAuditRun


# Diff records per Scrapy item (see DiffRecordBatch).
_DIFF_BATCH = 1000
logger = logging.getLogger(__name__)

SUMMARY_URL = "data:,summary"
# How a worker of a distributed audit stops when Redis cannot be reached (its finish reason).
REDIS_LOST = "redis_lost"

# SITEMAPAUDIT_DISTRIBUTED: scrapy-redis's shared queue and duplicate filter, kept until the
# report is written (the worker that writes it removes the audit's keys); only that worker
# writes a report file.
DISTRIBUTED: dict[str, Any] = {
    "SCHEDULER": "sitemapaudit.distributed.scheduler.AuditScheduler",
    "DUPEFILTER_CLASS": "sitemapaudit.distributed.scheduler.ExactUrlDupeFilter",
    "SCHEDULER_PERSIST": True,
    "FEED_STORE_EMPTY": False,
}

# SITEMAPAUDIT_UNTHROTTLED: as fast as the machine and the site allow.
UNTHROTTLED: dict[str, Any] = {
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "CONCURRENT_REQUESTS": 64,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
    "SITEMAPAUDIT_HONOR_CRAWL_DELAY": False,
}


class AuditSpider(Spider):
    """``scrapy crawl audit -a domain=example.com [-a sitemap=URL,URL] [-a fetch_urls=no]``"""

    name = "audit"
    config: AuditConfig
    run: AuditRun
    # The same object as ``run`` when this is a worker of a distributed audit. (The
    # distributed modules, and Redis's client with them, load only then.)
    shared: SharedAuditRun | None = None
    pages: PageQueue
    records: RecordSender
    draining = False
    """Whether ``start()`` hands out URLs: while it does, it also reads the waiting pages."""
    closed = False
    """Whether the spider closed (a stopped audit: pages that still arrive are not read)."""
    summary_wanted = True
    """Whether a crawl stopped early still ends with a summary: ``scrapy validate`` (no report)
    stops its crawls without one when its reader goes away."""

    def __init__(
        self,
        domain: str | None = None,
        sitemap: str | None = None,
        fetch_urls: str | None = None,
        fail_on: str | None = None,
        *,
        listed_by: Mapping[str, tuple[str, str | None]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        arguments = parse_arguments(domain, sitemap, fetch_urls, fail_on)
        self.fail_on = arguments.fail_on
        self.origin = arguments.origin
        self.sitemap_args = list(arguments.sitemaps)
        # Not an argument of ``scrapy crawl``: ``scrapy validate --follow`` names the local
        # index file that lists each sitemap it hands the crawl, with the lastmod it gives.
        self.listed_by = dict(listed_by or {})
        self.fetch_urls_arg = arguments.fetch_urls
        self.started_at = datetime.now(UTC)
        # The host (an IPv6 literal's colons made underscores), and a port other than the
        # scheme's: two sites of one host get reports of their own names.
        host = self.origin.host.replace(":", "_")
        if self.origin.port is not None:
            host = f"{host}_{self.origin.port}"
        self.report_name = f"{host}-{self.started_at:%Y%m%dT%H%M%SZ}"
        self.summary_sent = False
        # Whether the complete summary went out (the run is then kept as finished).
        self.completed = False
        # The first error of the audit's own code (a bug), for the summary of the stopped audit.
        self.first_error: str | None = None
        self.item_errors = 0
        # Why nothing could be audited: no request got an HTTP answer (see on_idle).
        self.unreachable: str | None = None

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        if parse_bool("SITEMAPAUDIT_UNTHROTTLED", settings.get("SITEMAPAUDIT_UNTHROTTLED", False)):
            for name, value in UNTHROTTLED.items():
                settings.set(name, value, priority="spider")
        # (As the configuration reads it: surrounding spaces are no Redis URL, nor only spaces.)
        redis_url = str(settings.get("SITEMAPAUDIT_DISTRIBUTED") or "").strip()
        if redis_url:
            settings.setdict(DISTRIBUTED, priority="spider")
            settings.set("REDIS_URL", redis_url, priority="spider")
            # One pace per host for the whole cluster, reserved as each request is sent (one
            # priority above handlers given on the command line, as for FEEDS below).
            from sitemapaudit.distributed.ratelimit import paced_handlers  # noqa: PLC0415

            given = settings.getpriority("DOWNLOAD_HANDLERS") or 0
            priority = max(given + 1, SETTINGS_PRIORITIES["spider"])
            settings.set("DOWNLOAD_HANDLERS", paced_handlers(settings), priority=priority)
        report_dir = default_report_dir(settings)
        if report_dir:
            uri = f"{report_dir}/%(report_name)s.jsonl"
            feed = {"format": "jsonlines", "uri_params": f"{__name__}.default_report_params"}
            # Beside the feeds given, one priority above them: Scrapy applies the command
            # line's settings to a crawler again when it starts it (CrawlerProcess.crawl),
            # which would put their FEEDS back without the report.
            given = settings.getpriority("FEEDS") or 0
            priority = max(given + 1, SETTINGS_PRIORITIES["spider"])
            settings.set("FEEDS", {**settings.getdict("FEEDS"), uri: feed}, priority=priority)
            settings.set("SITEMAPAUDIT_DEFAULT_REPORT", uri, priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        allow_long_header_lines()
        config = AuditConfig.from_settings(crawler.settings)
        check_fail_on(spider.fail_on, config.disabled_checks)
        if spider.fetch_urls_arg is not None:
            config = config.with_fetch_urls(spider.fetch_urls_arg)
        spider.config = config
        spider.pages = PageQueue(config.robots_user_agent)
        spider.records = RecordSender(crawler)
        if config.distributed:
            from sitemapaudit.distributed.run import SharedAuditRun  # noqa: PLC0415
            from sitemapaudit.distributed.state import (  # noqa: PLC0415
                SharedAudit,
                audit_identity,
                connect,
            )

            identity = audit_identity(
                spider.origin.url, spider.sitemap_args, config.fetch_urls, config.shaping_settings()
            )
            spider.run = spider.shared = SharedAuditRun(
                spider.origin,
                config,
                CrawlerStats(crawler),
                SharedAudit(connect(config.distributed), spider.origin.url, identity=identity),
                sitemap_args=spider.sitemap_args,
                listed_by=spider.listed_by,
            )
            spider.summary_sent = True  # the worker that writes the report sends it itself
        else:
            spider.run = AuditRun(
                spider.origin,
                config,
                CrawlerStats(crawler),
                sitemap_args=spider.sitemap_args,
                listed_by=spider.listed_by,
                jobdir=crawler.settings.get("JOBDIR") or None,
                started=spider.started_at,
            )
        crawler.signals.connect(spider.on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.on_closed, signal=signals.spider_closed)
        crawler.signals.connect(spider.on_spider_error, signal=signals.spider_error)
        crawler.signals.connect(spider.on_item_error, signal=signals.item_error)
        return spider

    # -- start: discovery first, then the inventory drained as the downloader has room ---------
    async def start(self) -> AsyncIterator[Any]:
        tune_collector()
        if self.shared is not None:
            async for item in self._start_shared(self.shared):
                yield item
            return
        for request in self.recovery_requests(["robots"], []):
            yield request
        for facts in self.run.resumed_sitemap_facts():
            await self.records.process(facts)
        for ref in self.run.resumed_refs:
            yield self._sitemap_request(ref)
        for request in self.recovery_requests(["arguments", "homepage"], []):
            yield request
        async for item in self._drain():
            yield item

    async def _start_shared(self, run: SharedAuditRun) -> AsyncIterator[Any]:
        """A worker of a distributed audit: the first one discovers; all of them take URLs
        from the shared inventory; the one that writes the report sends the records last."""
        try:
            if run.claim_discovery():
                for request in self.recovery_requests(["robots", "arguments", "homepage"], []):
                    yield request
            async for item in self._drain():
                yield item
            if run.writer and run.lost is None:
                for record in self._summary_items():
                    await self.records.process(record)
                run.finish()
        except Exception as exc:
            if not self.redis_lost(exc):
                raise

    def recovery_requests(self, discovery: list[str], refs: list[SitemapRef]) -> Iterator[Request]:
        """Discovery requests (``robots``, ``arguments``, ``homepage``) and sitemap requests."""
        if "robots" in discovery:
            yield robots_request(
                self.origin.url, self.config.robots_max_bytes, self.parse_robots, self.robots_failed
            )
        if self.sitemap_args and "arguments" in discovery:
            refs = [*refs, *self.run.argument_refs()]
        elif not self.sitemap_args and "homepage" in discovery:
            # Requested once robots.txt has answered, and not if it disallows the homepage.
            due = self.run.homepage_due()
            if due:
                yield self._homepage_request()
            elif due is not None:
                self.run.homepage_received([], blocked=True)
                refs = [*refs, *self.run.common_path_refs()]
        for ref in refs:
            yield self._sitemap_request(ref)

    def _homepage_request(self) -> Request:
        return homepage_request(self.origin.url, self.parse_homepage, self.homepage_failed)

    def _after_robots(self, refs: list[SitemapRef]) -> tuple[list[SitemapRef], Request | None]:
        """The homepage that waited for robots.txt: its request, or, when robots.txt
        disallows it, the note that says so (the common paths may be due then)."""
        due = self.run.homepage_after_robots()
        if due:
            return refs, self._homepage_request()
        if due is not None:
            self.run.homepage_received([], blocked=True)
        return refs, None

    async def _drain(self) -> AsyncIterator[Any]:
        """Hand out the inventory as the downloader has room; send settled records on."""
        self.draining = True
        try:
            while not self.closed and not self.run.start_done():
                engine = self.crawler.engine
                action = (
                    None
                    if engine is None
                    or engine.needs_backout()
                    or paced_backlog(engine, self._paced_by_crawl_delay())
                    else self.run.next_action()
                )
                if action is None:
                    await self._pause()
                elif isinstance(action, PageAction):
                    crawl_delay = self._paced_by_crawl_delay()
                    actions, other = more_actions(self.run, action, engine, crawl_delay)
                    requests = [self._first_request(a) for a in actions]
                    if other is not None:
                        await self.records.process(other)
                    for request in requests:
                        yield request
                else:
                    await self.records.process(action)
        except Exception as exc:  # a bug: Scrapy logs it; the audit stops, its report incomplete
            if not self.redis_lost(exc):
                self._stop_on_error(exc, None, "start_error")
            raise
        finally:
            # Every URL is handed out: the pages still being fetched are read as they arrive,
            # and the crawl ends with the last of them (the engine sees it idle after a
            # response, not after start() ends).
            self.draining = False
        await self._read_waiting()
        # Return only once the scraper is through with its items, so that the engine sees the
        # crawl idle as soon as start() ends. (Records sent from here are through the
        # pipelines already: process() waits for them, no item signal handler is needed.)
        while self.records.scraper_busy():
            await self.run.wait(0.01)

    def _paced_by_crawl_delay(self) -> bool:
        """Whether robots.txt's Crawl-delay paces the requests (before the host's slot has the
        Crawl-delay: see CrawlDelayMiddleware)."""
        robots = self.run.robots
        return robots is not None and bool(robots.crawl_delay) and self.config.honor_crawl_delay

    async def _pause(self) -> None:
        """Wait for something to change; read the waiting pages once they are due."""
        left = self.pages.wait_left(time.monotonic())
        if left is None:
            await self.run.wait()
        elif left > 0:
            await self.run.wait(left)
        else:
            await self._read_waiting()

    async def _read_waiting(self) -> None:
        """Read the waiting pages from start() and send their records on."""
        for item in self._read_pages():
            await self.records.process(item)

    # -- errors of the audit's own code: the audit stops, its report marked incomplete ---------
    def on_spider_error(self, failure: Failure, response: Any, **kwargs: Any) -> None:
        """A callback raised (a bug). Scrapy logs it, and closes the audit on the first one
        with the ``CLOSESPIDER_ERRORCOUNT = 1`` the project ships: a report missing the
        records that error took with it, or a crawl waiting for a sitemap that will never be
        finished, would be worse. The summary says why it stopped."""
        self._note_error(failure.value, getattr(response, "url", None))

    def on_item_error(self, item: Any, failure: Failure, **kwargs: Any) -> None:
        """An item pipeline raised: the item's records are not in the report, so the audit
        stops as on a callback's error (``CLOSESPIDER_ERRORCOUNT`` counts these too)."""
        self.item_errors += 1
        limit = self.crawler.settings.getint("CLOSESPIDER_ERRORCOUNT")
        self._note_error(failure.value, None)
        if limit and self.item_errors >= limit:
            self._stop_on_error(failure.value, None, "item_error")

    def _note_error(self, exc: BaseException | None, url: str | None) -> None:
        if self.first_error is None:
            where = f" while processing {url}" if url else ""
            self.first_error = f"{type(exc).__name__}: {exc}{where}"

    def _stop_on_error(self, exc: BaseException | None, url: str | None, reason: str) -> None:
        self._note_error(exc, url)
        self._close(reason)

    def redis_lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` says that a distributed audit's Redis cannot be reached (down,
        restarted, loading its data, too slow to answer). Then the shared state can be neither
        read nor kept: this worker stops, as when stopped by hand, with the finish reason
        ``redis_lost`` (one error line says why, not a traceback per response; the exit
        status is 1). Workers started again with the same command go on with the audit if
        Redis kept its data. What fails after that, while the worker closes, is not said
        again: once Redis is lost, nothing more is sent to it."""
        if self.shared is None:
            return False
        from sitemapaudit.distributed.state import unreachable  # noqa: PLC0415 (Redis)

        if not unreachable(exc):
            return False
        if self.shared.lost is None:
            self.shared.lost = f"{type(exc).__name__}: {exc}"
            self.logger.error(
                "Redis cannot be reached (%s): this worker stops, the distributed audit is not "
                "complete",
                self.shared.lost,
            )
            self._close(REDIS_LOST)
        return True

    def _close(self, reason: str) -> None:
        engine = self.crawler.engine
        if engine is not None:
            deferred_from_coro(engine.close_spider_async(reason=reason))

    # -- discovery ------------------------------------------------------------------------------
    @until_redis_lost
    def parse_robots(self, response: Response) -> Iterator[Any]:
        if (hop := self._hop(response, max_redirects=ROBOTS_MAX_REDIRECTS)) is not None:
            yield hop
            return
        # A redirect chain that does not end (a loop, or more than 5 hops, where RFC 9309 lets
        # a crawler and Google do give up), or that leads to another host (not requested),
        # ends on its 3xx: robots.txt counts as not found.
        state: RedirectState = response.meta["redirects"]
        body, undecodable = response.body, None
        if 200 <= response.status < 300:
            body, undecodable = decoded_body(response, self.config.robots_max_bytes + 1)
        refs, skipped = self.run.robots_received(
            None if undecodable else response.status,
            body,
            response.url,
            moved_to=state.other_host,
            gave_up=len(state.chain) if state.loop else None,
            error=undecodable,
        )
        refs, homepage = self._after_robots(refs)
        yield from self._live(skipped)
        yield from self._sitemaps(refs)
        if homepage is not None:
            yield homepage

    @until_redis_lost
    def robots_failed(self, failure: Failure) -> Iterator[Any]:
        refs, skipped = self.run.robots_received(
            None, b"", self.origin.url + "/robots.txt", error=failure_reason(failure)
        )
        refs, homepage = self._after_robots(refs)
        yield from self._live(skipped)
        yield from self._sitemaps(refs)
        if homepage is not None:
            yield homepage

    @until_redis_lost
    def parse_homepage(self, response: Response) -> Iterator[Any]:
        response.meta[PARTIAL_KEY] = None  # (the whole answer came)
        if (hop := self._hop(response)) is not None:
            yield hop
            return
        links = [link_text(v) for v in response.headers.getlist("Link")]
        state: RedirectState = response.meta["redirects"]
        unread = homepage_unread(response.status, state, self.config.max_redirects)
        found: list[tuple[str, str]] = []
        # (The body of a 404 or 410 is an error page: not the homepage, naming nothing.)
        if unread is None and 200 <= response.status < 300:
            body, unread = decoded_body(response, HOMEPAGE_READ_LIMIT)
            if unread is None:
                found = homepage_sitemaps(body, response.url, links)
        refs, skipped = self.run.homepage_received(found, moved_to=state.other_host, unread=unread)
        yield from self._live(skipped)
        yield from self._sitemaps(refs)

    @until_redis_lost
    def homepage_failed(self, failure: Failure) -> Iterator[Any]:
        error = failure_reason(failure)
        found = None
        request: Request | None = getattr(failure, "request", None)
        if request is not None and (partial := request.meta.get(PARTIAL_KEY)) is not None:
            found = partial_homepage_sitemaps(partial, request.url)
        refs, skipped = self.run.homepage_received(
            found or [], error=error, partial=found is not None
        )
        yield from self._live(skipped)
        yield from self._sitemaps(refs)

    def _sitemaps(self, refs: list[SitemapRef]) -> Iterator[Any]:
        """Requests of these sitemaps and of common paths that wait, after the records of
        indexes whose children all answered."""
        yield from self._live(self.run.take_released())
        for ref in self.run.unparked(refs):
            yield self._sitemap_request(ref)
        for ref in self.run.common_path_refs():
            yield self._sitemap_request(ref)

    # -- sitemaps -------------------------------------------------------------------------------
    @until_redis_lost
    def parse_sitemap(self, response: Response) -> Iterator[Any]:
        ref: SitemapRef = response.meta["sitemap_ref"]
        redirects: RedirectState = response.meta["redirects"]
        # A sitemap listed where this followed redirect leads, which waited for its answer.
        waiting = self.run.hop_answered(response.url) if redirects.chain else None
        if (hop := self._hop(response, self.run.tree.hosts)) is not None:
            if waiting is not None:  # it redirects on: that one is requested itself
                yield self._sitemap_request(waiting)
            yield from self._sitemap_hop_or_known(ref, redirects, hop)
            return
        if redirects.chain and response.status not in REDIRECT_STATUSES:
            # The redirects ended at a sitemap of its own, read in the place of this one.
            facts, target = self.run.redirect_ended(ref, redirects, response.url, waiting)
            yield from self._present(facts)
            if target is None:
                yield from self._sitemaps([])
                return
            ref, redirects = target, RedirectState()
        elif waiting is not None:  # a redirect not followed: that one is requested itself
            yield self._sitemap_request(waiting)
        previous_run = response.meta.get("previous_run")
        if response.status == 304 and previous_run is not None:
            yield from self._sitemap_not_modified(response, ref, previous_run)
        elif response.status >= 300:
            yield from self._sitemap_failed(response, ref, redirects)
        else:
            yield from self._sitemap_read(response, ref)

    def _sitemap_hop_or_known(
        self, ref: SitemapRef, redirects: RedirectState, hop: Request
    ) -> Iterator[Any]:
        if self.run.redirect_known(ref, hop.url):
            # It redirects to a sitemap this audit reads under its own name.
            yield from self._present(self.run.sitemap_redirected(ref, redirects, hop.url))
            yield from self._sitemaps([])
        else:
            self.run.hop_requested(hop.url)
            yield self._sitemap_hop(hop)

    def _sitemap_not_modified(
        self, response: Response, ref: SitemapRef, previous_run: int
    ) -> Iterator[Any]:
        if not self.run.keep_not_modified(ref.url, *sitemap_validators(response), previous_run):
            # The previous run's entries cannot stand for the body: read it again, without
            # validators.
            yield self._sitemap_request(ref)
            return
        facts, children = self.run.reuse_sitemap(ref, previous_run)
        yield from self._present(self.run.reportable(facts))
        yield from self._live(self.run.take_skipped_children())
        yield from self._sitemaps(children)

    def _sitemap_failed(
        self, response: Response, ref: SitemapRef, redirects: RedirectState
    ) -> Iterator[Any]:
        problems = redirect_problems(redirects, self.config.max_redirects)
        yield from self._present(
            self.run.sitemap_failed(
                ref,
                status=response.status,
                problems=problems,
                retry_after=response.meta.get(RETRY_AFTER_META),
            )
        )
        yield from self._sitemaps([])  # a common path that was not there gave its place back

    def _sitemap_read(self, response: Response, ref: SitemapRef) -> Iterator[Any]:
        encodings = response_headers(response).get("content-encoding")
        body, undecodable = sitemap_body(
            response, body_coding(encodings), self.config.sitemap_read_limit
        )
        if undecodable is not None:
            yield from self._present(
                self.run.sitemap_failed(ref, status=response.status, error=undecodable)
            )
            yield from self._sitemaps([])
            return
        facts, children = self.run.read_sitemap(
            ref,
            response.status,
            body,
            url=response.url,
            # Once another coding is undone, the body is read as a file is.
            gzip_encoded=body is response.body and declares_gzip(encodings),
            gzip_undone=body is not response.body and declares_gzip(encodings),
        )
        self.run.remember_validators(
            ref.url, *sitemap_validators(response), None if facts is None else facts.rejudge_after
        )
        yield from self._present(self.run.reportable(facts))
        yield from self._live(self.run.take_skipped_children())
        yield from self._sitemaps(children)

    @until_redis_lost
    def sitemap_failed(self, failure: Failure) -> Iterator[Any]:
        request = failure.request  # type: ignore[attr-defined]
        ref: SitemapRef | None = request.meta["sitemap_ref"]
        redirects: RedirectState = request.meta["redirects"]
        if ref is not None and redirects.chain:
            # A redirect target that could not be fetched: a sitemap of its own all the same.
            waiting = self.run.hop_answered(request.url)
            facts, ref = self.run.redirect_ended(ref, redirects, request.url, waiting)
            yield from self._present(facts)
        if ref is not None:
            yield from self._present(self.run.sitemap_failed(ref, error=failure_reason(failure)))
        yield from self._sitemaps([])

    # -- pages ----------------------------------------------------------------------------------
    # The page callbacks return lists, not generators: for every response of a generator
    # callback Scrapy re-reads the callback's source to warn about ``return`` values (its cache
    # is keyed by the bound method, a new object per request), which costs more than the page.
    @until_redis_lost
    def parse_page(self, response: Response) -> list[Any]:
        meta = response.meta
        state: RedirectState = meta["redirects"]
        url_id: int = meta["url_id"]
        target = self._next_target(response, page=True)
        if target is not None:
            return [self._page_request(url_id, target, state, meta["blocked"])]
        outcome = redirect_outcome(state)
        outcome.retry_after = meta.get(RETRY_AFTER_META)
        page = PendingPage(
            url_id=url_id,
            blocked=meta["blocked"],
            url=response.url,
            status=response.status,
            headers=response_headers(response),
            body=response.body,
            outcome=outcome,
            stopped="download_stopped" in response.flags,
        )
        if self.pages.add(page, time.monotonic()) or not self.draining:
            return self._read_pages()
        self.run.wake()  # start() may hand out the next URL
        return []

    def _read_pages(self) -> list[Any]:
        """Read the waiting pages and record their outcomes (none once the spider closed)."""
        if self.closed:
            self._count("sitemapaudit/pages/after_close", self.pages.clear())
            return []
        items: list[Any] = []
        for page in self.pages.read(self._page_unreadable):
            items += self._emit(self.run.fetch_finished(page.url_id, page.outcome, page.blocked))
        return items

    def _count(self, key: str, count: int) -> None:
        stats = self.crawler.stats
        if count and stats is not None:
            stats.inc_value(key, count)

    def _page_unreadable(self, page: PendingPage, exc: Exception) -> None:
        """Reading one page raised (a bug): a spider error, as if its callback had raised (the
        pages are read in batches, from callbacks or from start()), so that it is logged and
        counted, and stops the audit under CLOSESPIDER_ERRORCOUNT; the page has no record."""
        self.logger.error("Spider error reading the page %s", page.url, exc_info=exc)
        self._note_error(exc, page.url)
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("spider_exceptions/count")
            stats.inc_value(f"spider_exceptions/{type(exc).__name__}")
        self.crawler.signals.send_catch_log(
            signal=signals.spider_error,
            failure=Failure(exc, type(exc), exc.__traceback__),  # type: ignore[no-untyped-call]
            response=None,
            spider=self,
        )

    @until_redis_lost
    def page_failed(self, failure: Failure) -> list[Any]:
        if self.closed:
            self._count("sitemapaudit/pages/after_close", 1)
            return []
        request = failure.request  # type: ignore[attr-defined]
        outcome = redirect_outcome(request.meta["redirects"])
        outcome.error = failure_reason(failure)
        outcome.final_url = request.url
        return self._emit(
            self.run.fetch_finished(request.meta["url_id"], outcome, request.meta["blocked"])
        )

    def _emit(self, facts: UrlFactsBatch | None) -> list[Any]:
        """Pages' records, sent straight to the item pipelines as the engine sends the items
        of start() (counted by the scraper at once, so the crawl is not idle before it is
        through). Returning them from the callback would also take them through every spider
        middleware's output chain, which only ever acts on requests.

        Once start() has handed out every URL, the last pages' records go the ordinary way:
        the engine looks for the end of the crawl when a response is through, and an item
        sent on its own would still be in the pipelines then (the engine would only look
        again at its next heartbeat, seconds later)."""
        if facts is None:
            return []
        if self.draining and self.records.send_nowait(facts):  # (not the last pages)
            return []
        return [facts]

    # -- the summary, last ------------------------------------------------------------------
    def on_idle(self) -> None:
        if self.summary_sent:
            return
        self.summary_sent = True
        assert self.crawler.engine is not None
        if self.shared is None and self._stop_if_unreachable():
            raise DontCloseSpider
        self.crawler.engine.crawl(
            Request(SUMMARY_URL, callback=self.emit_summary, dont_filter=True, priority=-100)
        )
        raise DontCloseSpider

    def _stop_if_unreachable(self) -> bool:
        """An audit that got no HTTP answer at all stops, its report incomplete: a run that
        saw nothing of the site is no baseline for the next run's changes."""
        assert self.crawler.stats is not None
        answers = self.crawler.stats.get_value("downloader/response_count", 0)
        self.unreachable = self.run.unreachable(answers)
        if self.unreachable is None:
            return False
        self._close("site_unreachable")
        return True

    def emit_summary(self, response: Response) -> Iterator[Any]:
        yield from self._summary_items()

    def _summary_items(self) -> Iterator[Any]:
        yield from self._live(self.run.take_released(all_held=True))
        previous, changes = self.run.changes()
        # A batch of diff records is one Scrapy item, as for URL records.
        while batch := list(islice(changes, _DIFF_BATCH)):
            yield DiffRecordBatch(batch)
        yield self._summary(previous)
        self.completed = True

    def unfinished_summary(self) -> SummaryRecord | None:
        """The summary of an audit whose crawl closed before its summary was due (Ctrl-C,
        SIGTERM, a CLOSESPIDER limit), or ``None`` when another worker of a distributed audit
        writes the report, or when none is wanted (``summary_wanted``). Without diff records:
        a run cut short is not compared with the previous one (nor kept as a finished run in
        the history)."""
        if not self.summary_wanted:
            return None
        if self.shared is not None:
            # (None for a worker that was not writing the report, or lost Redis, whose state
            # the summary is made of.)
            if not self.shared.writer or self.shared.lost is not None:
                return None
            return stopped_worker_summary(self._summary(None), self.shared)
        return stopped_summary(
            self._summary(None),
            self.run,
            history=bool(self.config.history_path),
            unreachable=self.unreachable,
            waiting_pages=len(self.pages),
            unsent_urls=self.records.unsent_urls,
            first_error=self.first_error,
            stats=self.crawler.stats,
        )

    def _summary(self, previous: int | None) -> SummaryRecord:
        return summary_record(
            self.run,
            self.config,
            origin=self.origin.url,
            started_at=self.started_at,
            fail_on=self.fail_on.policy,
            stats=self.crawler.stats,
            previous=previous,
        )

    def on_closed(self, reason: str) -> None:
        self.closed = True  # start() and the page callbacks stop: the run's stores are closed
        if self.shared is not None and self.shared.lost is not None:
            reason = REDIS_LOST  # (whatever else was stopping the worker when Redis went)
        stopped = self.shared is not None and reason != "finished"
        stats = self.crawler.stats
        if stopped and stats is not None:
            # Before anything that may fail as the worker closes: the exit status is 1.
            stats.set_value("sitemapaudit/distributed/stopped", reason)
        self.run.close(finished=reason == "finished" and self.completed)
        report = self.crawler.settings.get("SITEMAPAUDIT_DEFAULT_REPORT")
        if report and self.shared is not None and not self.shared.writer:
            drop_reserved(Path(report % {"report_name": self.report_name}))
        if stopped:
            closing.worker_stopped(self.logger, reason)
        elif self.shared is not None and not self.shared.writer:
            closing.another_worker_writes(self.logger)
        elif report:
            path = Path(report % {"report_name": self.report_name}).resolve()
            closing.report_written(self.logger, path, self.crawler.stats)

    def _present(self, facts: SitemapFacts | None) -> list[SitemapFacts]:
        return self._live([] if facts is None else [facts])

    def _live(self, facts: list[SitemapFacts]) -> list[SitemapFacts]:
        """Sitemap records to send now; in a distributed audit they are kept in Redis and the
        worker that writes the report sends them."""
        return [] if self.shared is not None else facts

    # -- requests -------------------------------------------------------------------------------
    def _sitemap_request(self, ref: SitemapRef) -> Request:
        headers, previous_run = self.run.conditional_headers(ref.url)
        return sitemap_request(
            ref, headers, previous_run, callback=self.parse_sitemap, errback=self.sitemap_failed
        )

    def _sitemap_hop(self, hop: Request) -> Request:
        validators, previous_run = self.run.conditional_headers(hop.url)
        return sitemap_hop(hop, validators, previous_run)

    def _first_request(self, action: PageAction) -> Request:
        request = self._page_request(action.url_id, action.url, RedirectState(), action.blocked)
        if self.config.distributed and not action.retry:
            # The cluster's shared duplicate filter sees each listed URL's first request.
            return request.replace(dont_filter=False)
        return request

    def _page_request(self, url_id: int, url: str, state: RedirectState, blocked: bool) -> Request:
        return page_request(
            url_id, url, state, blocked, callback=self.parse_page, errback=self.page_failed
        )

    def _next_target(
        self,
        response: Response,
        hosts: Hosts | None = None,
        *,
        page: bool = False,
        max_redirects: int | None = None,
    ) -> str | None:
        """Record the response in its request's redirect chain; the URL to request next, on
        the audited host (or on ``hosts``). A page's redirect is not followed to a URL that
        robots.txt disallows (unless SITEMAPAUDIT_FETCH_BLOCKED)."""
        status = response.status
        robots = self.run.robots if page else None
        return next_hop(
            response.meta["redirects"],
            url=response.url,
            status=status,
            location=location(response) if status in REDIRECT_STATUSES else None,
            origin=self.origin if hosts is None else hosts,
            max_redirects=self.config.max_redirects if max_redirects is None else max_redirects,
            allowed=None if robots is None else robots.can_fetch,
            follow_blocked=self.config.fetch_blocked,
            conflicting=conflicting_locations(response) if status in REDIRECT_STATUSES else (),
        )

    def _hop(
        self, response: Response, hosts: Hosts | None = None, *, max_redirects: int | None = None
    ) -> Request | None:
        """The next hop of a redirected robots.txt, homepage or sitemap request, if any."""
        target = self._next_target(response, hosts, max_redirects=max_redirects)
        if target is None:
            return None
        return response.request.replace(url=request_url(target))  # type: ignore[union-attr]


# Redirects of robots.txt followed: Google follows five, then treats robots.txt as not found
# (RFC 9309 asks for at least five).
ROBOTS_MAX_REDIRECTS = 5


def default_report_params(params: dict[str, Any], spider: Spider) -> dict[str, Any]:
    """The URI parameters of the default report (``FEEDS`` ``uri_params``), called as the feed
    opens: its file is created here, under a name no other report has (see
    :func:`~sitemapaudit.report.paths.reserve_report`). Every worker of a distributed audit
    reserves one too, as any of them may come to write the report; one that does not removes
    it as it closes."""
    template = spider.crawler.settings.get("SITEMAPAUDIT_DEFAULT_REPORT")
    if isinstance(spider, AuditSpider) and template:
        spider.report_name = reserve_report(template, spider.report_name)
    return {**params, "report_name": getattr(spider, "report_name", params.get("report_name"))}
