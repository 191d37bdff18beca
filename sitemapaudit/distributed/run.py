"""The bookkeeping of one worker in a distributed audit: :class:`AuditRun` on shared state.

The decisions are the single-process ones; what changes is where they are kept. Discovery
flags, the sitemap tree, the inventory, robots.txt and hreflang alternates live in Redis, and
no worker emits URL records while crawling: each stores the outcome of the URLs it fetched,
and when every URL has one, one worker (the first to claim it) builds every record from the
shared state and writes the whole report.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import redis

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.counts import Stats
from sitemapaudit.crawl.dispatch import PageAction
from sitemapaudit.crawl.held import add_cycles
from sitemapaudit.crawl.intake import AlternateSink
from sitemapaudit.crawl.run import AuditRun
from sitemapaudit.crawl.tree import SITEMAP_URL_MAX_LENGTH, Decision, SitemapRef, SitemapTree
from sitemapaudit.distributed.inventory import SharedInventory
from sitemapaudit.distributed.state import SharedAudit
from sitemapaudit.facts import (
    NOT_REQUESTED_JSON,
    FetchOutcome,
    SitemapFacts,
    UrlFactsBatch,
    sitemap_facts_from_json,
)
from sitemapaudit.history.store import HistoryStore
from sitemapaudit.inventory import Inventory
from sitemapaudit.urls import Origin, loc_problems, normalize_url
from sitemapaudit.validation import HreflangGraph
from sitemapaudit.words import are, count_noun

logger = logging.getLogger(__name__)

# URLs a worker takes from the shared list at a time: small, so that the last ones are spread
# over the workers rather than left queued in one of them.
_TAKE = 50
# ... and when no URL is requested (``fetch_urls=no``): every one is settled at once.
_TAKE_UNREQUESTED = 1000
_BATCH = 500
# The outcomes of fetched pages go to Redis this many at a time, or once the first of them
# waited this long (and on every tick of the worker, and before the audit is judged complete).
# The pages of the outcomes a dying worker had not sent are requested again by the others.
_OUTCOME_BATCH = 32
_OUTCOME_SECONDS = 0.1


class SharedSitemapTree(SitemapTree):
    """The sitemap tree of the whole cluster: seen sitemaps and the cap are counted in Redis."""

    def __init__(self, shared: SharedAudit, inventory: SharedInventory, **limits: Any) -> None:
        super().__init__(**limits)
        self.shared = shared
        self.inventory = inventory
        self._mine: set[str] = set()

    def __len__(self) -> int:
        return self.shared.sitemaps_seen()

    def consider(self, url: str, *, depth: int, parent: str | None = None) -> Decision:
        """The single-process decision, with "seen" and the cap counted for the cluster."""
        if loc_problems(url, max_length=self.max_url_length):
            return Decision.INVALID
        key = normalize_url(url)
        first = self.shared.seen_by(key)
        if first is not None:
            return self._again(key, url, first, parent)
        if not self.hosts.owns(url):
            self._register(key, parent)
            return Decision.OFF_HOST
        if depth > self.max_depth:
            return Decision.TOO_DEEP
        if not self.shared.count_scheduled(self.max_sitemaps):
            return Decision.CAPPED
        first = self._register(key, parent)
        if first is not None:
            self.shared.uncount_scheduled()
            return self._again(key, url, first, parent)
        return Decision.FETCH

    def release(self) -> None:
        """The single-process release, of the cluster's count."""
        self.shared.uncount_scheduled()

    def count(self) -> None:
        """The single-process count, of the cluster's count."""
        self.shared.client.incr(self.shared.key("scheduled"))

    def redirect_target(self, url: str, *, source: str) -> Decision:
        """The single-process decision, registered for the cluster in one step with the sitemap
        that redirects as its parent. A sitemap read again because its first reader left reads
        the target too if that reader did not get to queue it (see :meth:`_again`)."""
        key = normalize_url(url)
        first = self._register(key, source)
        if first is None or self._again(key, url, first, source) is Decision.FETCH:
            return Decision.FETCH
        return Decision.SEEN

    def redirect_known(self, url: str, *, source: str) -> bool:
        """The single-process answer, for the whole cluster: not for a target the sitemap that
        redirects registered in a reader that left before queueing it."""
        key = normalize_url(url)
        first = self.shared.seen_by(key)
        return first is not None and self._again(key, url, first, source) is not Decision.FETCH

    def parent_of(self, url: str) -> str | None:
        """The sitemap that first listed ``url``, for the whole cluster."""
        return self.shared.seen_by(normalize_url(url)) or None

    def _register(self, key: str, parent: str | None) -> str | None:
        first = self.shared.register_sitemap(key, parent)
        if first is None:
            self._mine.add(key)
        return first

    def _again(self, key: str, url: str, first: str, parent: str | None) -> Decision:
        """Seen before. By this worker, or by another parent: a repeat. By the same parent in
        another worker: the parent is read again because its first reader left, and the
        child is fetched only if that reader did not get to register it."""
        if key in self._mine or first != (parent or "") or not self.hosts.owns(url):
            return Decision.SEEN
        return Decision.KNOWN if self.inventory.is_settled(url) else Decision.FETCH


class SharedAlternates:
    """hreflang alternates of the sitemaps this worker reads, sent to Redis in batches."""

    def __init__(self, shared: SharedAudit) -> None:
        self.shared = shared
        self._rows: list[str] = []

    def add(self, loc: str, alternates: Iterable[tuple[str, str]], sitemap: str) -> None:
        self._rows.append(json.dumps([loc, list(alternates), sitemap]))
        if len(self._rows) >= 2000:
            self.flush()

    def flush(self) -> None:
        self.shared.add_alternates(self._rows)
        self._rows = []

    def close(self) -> None:
        self.flush()

    def drop(self) -> None:
        """Forget the rows not sent (Redis is lost: nothing more is sent to it)."""
        self._rows = []


class SharedAuditRun(AuditRun):
    """One worker's view of a distributed audit."""

    def __init__(
        self,
        origin: Origin,
        config: AuditConfig,
        stats: Stats,
        shared: SharedAudit,
        *,
        sitemap_args: list[str] | None = None,
        listed_by: Mapping[str, tuple[str, str | None]] | None = None,
    ) -> None:
        self.shared = shared
        self.shared_inventory = SharedInventory(shared.client, shared.prefix)
        self.history_path = config.history_path
        # Conditional requests and history belong to the worker that writes the report.
        local = replace(config, history_path="", conditional_sitemaps=False)
        super().__init__(origin, local, stats, sitemap_args=sitemap_args, listed_by=listed_by)
        self.writer = False
        self._emitting: Iterator[SitemapFacts | UrlFactsBatch] | None = None
        self._outcomes: list[tuple[int, dict[str, Any] | None]] = []
        self._outcomes_since = 0.0
        self._progress = {
            "urls_known": 0,
            "urls_done": 0,
            "urls_queued": 0,
            "sitemaps_read": 0,
            "sitemaps_pending": 0,
        }
        # Why Redis cannot be reached, once it cannot (the worker stops: see the spider's
        # ``redis_lost``); from then on nothing is read from it or sent to it.
        self.lost: str | None = None
        if shared.created:
            logger.info("opened distributed audit %s as worker %s", shared.prefix, shared.worker)
        else:
            logger.info("joined distributed audit %s as worker %s", shared.prefix, shared.worker)

    def _start_times(self, now: str) -> tuple[str | None, list[str]]:
        """A distributed audit started when its first worker did: a worker that joins it later,
        or after the whole cluster stopped, reports that start; it resumed each time a worker
        started it again after every worker had stopped (see ``SharedAudit.start``)."""
        return self.shared.start(now, self.config.worker_timeout)

    def _make_tree(self) -> SitemapTree:
        return SharedSitemapTree(
            self.shared,
            self.shared_inventory,
            origin=self.origin,
            max_depth=self.config.max_index_depth,
            max_sitemaps=self.config.max_sitemaps,
            max_url_length=SITEMAP_URL_MAX_LENGTH,
            sitemap_hosts=self.sitemap_hosts(),
        )

    def _make_inventory(self) -> SharedInventory:  # type: ignore[override]
        return self.shared_inventory

    def _make_hreflang(self) -> AlternateSink:
        return SharedAlternates(self.shared)

    def close(self, *, finished: bool = False) -> None:
        if self.lost is None:
            self._leave()
        elif isinstance(self.hreflang, SharedAlternates):
            self.hreflang.drop()
        if self.shared_inventory.notes is not None:
            self.shared_inventory.notes.close()
        super().close(finished=finished)

    def _leave(self) -> None:
        """Send the outcomes still waiting, hand back the URLs this worker holds (stopped
        before the audit is complete), and leave: the other workers go on with that work at
        once, without waiting for this worker to be gone."""
        try:
            self._send_outcomes()
        except redis.RedisError as exc:
            logger.warning(
                "the outcomes of fetched pages could not be sent to Redis (%s): the other "
                "workers will request those pages again",
                exc,
            )
        try:
            released = self.shared_inventory.release()
        except redis.RedisError as exc:
            logger.warning(
                "the URLs this worker held could not be handed back in Redis (%s): the other "
                "workers queue them again once they have nothing left to do",
                exc,
            )
        else:
            if released:
                logger.info(
                    "%s this worker held %s handed back to the others",
                    count_noun(released, "URL"),
                    are(released),
                )
                self.stats.inc_value("sitemapaudit/distributed/released", released)
        try:
            self.shared.leave()
        except redis.RedisError as exc:
            # Its heartbeat expires instead: the others see it gone.
            logger.warning("this worker could not say in Redis that it leaves (%s)", exc)

    # -- discovery: one worker requests robots.txt and the homepage --------------------------
    def _hold(self, facts: SitemapFacts, children: list[SitemapRef]) -> None:
        """No record waits: the writer builds every record once the audit is complete, with
        the loops found as children answered in any worker (see :meth:`_late_cycle`)."""

    def _late_cycle(self, index: str, child: str) -> None:
        self.shared.add_cycle(normalize_url(index), child)

    def claim_discovery(self) -> bool:
        return self.shared.claim("discovery")

    def robots_received(
        self,
        status: int | None,
        body: bytes,
        url: str,
        *,
        moved_to: str | None = None,
        gave_up: int | None = None,
        error: str | None = None,
    ) -> tuple[list[SitemapRef], list[SitemapFacts]]:
        refs, skipped = super().robots_received(
            status, body, url, moved_to=moved_to, gave_up=gave_up, error=error
        )
        assert self.robots is not None
        self.shared.store_robots(status, body, url)
        for note in super().notes():
            self.shared.add_note(note)
        if not self.sitemap_args:
            self.shared.add_found(len(self.robots.sitemaps))
        self.shared.flag("robots_done")
        # What the homepage named before (read by any worker) comes after robots.txt's own.
        more_refs, more_skipped = self._candidates(self.shared.take_held_sitemaps())
        return [*refs, *more_refs], [*skipped, *more_skipped]

    def homepage_received(
        self,
        found: list[tuple[str, str]],
        *,
        moved_to: str | None = None,
        error: str | None = None,
        unread: str | None = None,
        partial: bool = False,
        blocked: bool = False,
    ) -> tuple[list[SitemapRef], list[SitemapFacts]]:
        refs, skipped = super().homepage_received(
            found, moved_to=moved_to, error=error, unread=unread, partial=partial, blocked=blocked
        )
        for note in super().notes():
            self.shared.add_note(note)
        if self.discovery.homepage_unread is not None:
            self.shared.set_value("homepage_unread", self.discovery.homepage_unread)
        self.shared.add_found(len(found))
        self.shared.flag("homepage_done")
        return refs, skipped

    def hop_requested(self, target: str) -> None:
        """Nothing waits for a followed redirect: its answer may come to another worker."""

    def _hold_robots_sitemaps(self, found: list[tuple[str, str]]) -> bool:
        """Never: the homepage's answer may come to another worker, which could not hand
        them out."""
        return False

    def _hold_homepage_sitemaps(self, found: list[tuple[str, str]]) -> bool:
        """As in one process, with robots.txt read by any worker: the homepage's sitemaps
        wait in Redis until it is."""
        return self.shared.hold_homepage_sitemaps(found)

    def argument_refs(self) -> list[SitemapRef]:
        # robots.txt read by another worker counts as read: the arguments need not wait.
        self.load_robots()
        refs = super().argument_refs()
        self.shared.add_found(len(self.sitemap_args))
        self.shared.flag("homepage_done")
        return refs

    def common_path_refs(self) -> list[SitemapRef]:
        if self.waiting_guesses:  # this worker's common paths that waited for the cap
            return super().common_path_refs()
        flags = self.shared.flags()
        if not _needs_common_paths(flags) or not self.shared.claim("common_paths"):
            return []
        self.discovery.found = 0
        self.discovery.robots_done = self.discovery.homepage_done = True
        refs = super().common_path_refs()
        self.shared.flag("common_paths_tried")
        return refs

    def robots_known(self) -> bool:
        # robots.txt read by another worker counts as read.
        return self.load_robots()

    def load_robots(self) -> bool:
        """robots.txt as the discovering worker stored it (every worker evaluates it)."""
        if self.robots is not None:
            return True
        stored = self.shared.robots()
        if stored is None:
            return False
        status, body, url = stored
        # The same evaluation as the discovering worker; its stats are that worker's.
        self.robots = self.evaluate_robots(status, body, url)
        return True

    # -- progress of the whole cluster ---------------------------------------------------------
    @property
    def listings_final(self) -> bool:
        if self._final:
            return True
        flags = self.shared.flags()
        final = (
            "robots_done" in flags
            and "homepage_done" in flags
            and not _needs_common_paths(flags)
            and self.shared_inventory.pending_count() == 0
        )
        if final:
            self._mark_final()
            logger.info(
                "all sitemaps read: %s listed",
                count_noun(self.shared_inventory.url_count(), "distinct URL"),
            )
        return final

    def poll(self) -> None:
        """Send the outcomes still waiting; notice (and log) once every sitemap of the cluster
        is read."""
        self._send_outcomes()
        if not self._final:
            self._final = self.listings_final

    def progress(self) -> dict[str, int]:
        """The whole cluster's counts for the progress line."""
        if self.lost is not None:  # (the last counts: the worker is closing)
            return self._progress
        inventory = self.shared_inventory
        counts = inventory.counts()
        pending = inventory.pending_count()
        self._progress = {
            "urls_known": counts["urls"],
            "urls_done": counts["done"],
            "urls_queued": counts["new"],
            "sitemaps_read": inventory.sitemaps_done(),
            "sitemaps_pending": pending,
        }
        return self._progress

    def complete(self) -> bool:
        """Every sitemap is read and every listed URL has its outcome."""
        self._send_outcomes()
        inventory = self.shared_inventory
        return (
            self.listings_final
            and not inventory.has_new()
            and inventory.outcome_count() >= inventory.url_count()
        )

    def has_local_work(self) -> bool:
        return bool(self.pages.queue or self.pages.ready or self._outcomes)

    def start_done(self) -> bool:
        if self.lost is not None:
            return True
        if self.writer:
            return self._emitting is None and not self.pages.ready
        return self.shared.finished()

    # -- pages ---------------------------------------------------------------------------------
    def next_action(self) -> PageAction | UrlFactsBatch | SitemapFacts | None:
        if self.pages.ready:
            return self.pages.ready.popleft()
        if self.writer:
            return self._next_record()
        if not self.load_robots() or (not self.config.fetch_urls and not self.listings_final):
            return None
        inventory = self.shared_inventory
        # The outcomes of URLs settled without a request go to Redis a batch at a time (a
        # worker that dies before writing them leaves them without an outcome: they are
        # handed out again).
        settled: list[tuple[int, dict[str, Any] | None]] = []
        robots = self.robots
        assert robots is not None
        pages = self.pages
        take = _TAKE if self.config.fetch_urls else _TAKE_UNREQUESTED
        try:
            while True:
                if not pages.queue:
                    inventory.finish_many(settled)
                    settled.clear()
                    pages.queue = deque(inventory.take_new(take))
                    if not pages.queue:
                        return None
                url_id, url, rules, _lastmod = pages.queue.popleft()
                blocked, request = pages.verdict(robots, url, rules)
                if request:
                    return PageAction(url_id, url, blocked, retry=url_id in inventory.retries)
                settled.append((url_id, {"blocked": blocked, "outcome": NOT_REQUESTED_JSON}))
        finally:
            inventory.finish_many(settled)

    def fetch_finished(
        self, url_id: int, outcome: FetchOutcome, blocked: bool
    ) -> UrlFactsBatch | None:
        self.totals.urls_fetched += int(outcome.fetched)
        now = time.monotonic()
        if not self._outcomes:
            self._outcomes_since = now
        self._outcomes.append((url_id, {"blocked": blocked, "outcome": outcome.to_json()}))
        if len(self._outcomes) >= _OUTCOME_BATCH or now - self._outcomes_since >= _OUTCOME_SECONDS:
            self._send_outcomes()
        self.wake()
        return None

    def page_queued(self, url_id: int) -> None:
        """The request of a URL this worker took went to the shared queue: the worker that
        takes it from there requests it."""
        self.shared_inventory.held.discard(url_id)

    def page_taken(self, url_id: int) -> None:
        """This worker took a page request from the shared queue: the URL is its own until its
        outcome is sent."""
        self.shared_inventory.held.add(url_id)

    def _send_outcomes(self) -> None:
        if self._outcomes and self.lost is None:
            self.shared_inventory.finish_many(self._outcomes)
            self._outcomes = []

    # -- writing the report: one worker, once everything is in ---------------------------------
    def try_to_write(self) -> bool:
        """Claim the report once the audit is complete; ``True`` when this worker writes it."""
        if self.writer or not self.complete():
            return self.writer
        if not self.shared.lock("writer", self.config.worker_timeout):
            return False
        self.writer = True
        logger.info("every URL of %s is done: this worker writes the report", self.origin.url)
        self._open_history()
        self._collect_notes()
        self._emitting = self._records()
        return True

    def _open_history(self) -> None:
        if not self.history_path:
            return
        self._begin_history(
            HistoryStore, self.history_path, self.audit_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        )

    def _collect_notes(self) -> None:
        """hreflang reciprocity over the alternates every worker sent."""
        graph = HreflangGraph(Path(self._work_dir) / "hreflang.sqlite3")
        for loc, alternates, sitemap in self.shared.alternates():
            graph.add(loc, alternates, sitemap)
        store = Inventory(Path(self._work_dir) / "notes.sqlite3")
        count = store.add_url_notes(
            (page, message) for page, _href, message in graph.not_reciprocal(self.origin.owns)
        )
        graph.close()
        self.shared_inventory.notes = store
        self.pages.hreflang_notes = count > 0
        if count:
            self.stats.inc_value("sitemapaudit/hreflang/not_reciprocal", count)

    def _records(self) -> Iterator[SitemapFacts | UrlFactsBatch]:
        cycles = self.shared.cycles()
        for data in self.shared_inventory.done_sitemaps():
            if data:
                facts = sitemap_facts_from_json(data)
                if late := cycles.get(normalize_url(facts.url)):
                    add_cycles(facts, late)
                yield facts
        inventory = self.shared_inventory
        total = inventory.url_count()
        for start in range(1, total + 1, _BATCH):
            ids = list(range(start, min(start + _BATCH, total + 1)))
            stored = inventory.outcomes(ids)
            items = [
                (i, s or {"blocked": False, "outcome": NOT_REQUESTED_JSON})
                for i, s in zip(ids, stored, strict=True)
            ]
            yield from self.pages.settled_batch(items)

    def _next_record(self) -> SitemapFacts | UrlFactsBatch | None:
        if self._emitting is None:
            return None
        item = next(self._emitting, None)
        if item is None:
            self._emitting = None
        return item

    def notes(self) -> list[str]:
        return self.shared.notes() or super().notes()

    def homepage_unknown(self) -> str | None:
        return self.discovery.homepage_unread or self.shared.value("homepage_unread")

    def finish(self) -> None:
        """The report is written: the audit is over for every worker."""
        self.shared.finish()

    # -- recovery: the work of workers that are gone ----------------------------------------
    def lost_work(self) -> tuple[list[str], list[SitemapRef]]:
        """What to request again now that the cluster stands still without being done:
        discovery requests (``"robots"``, ``"homepage"``) and sitemaps; URLs without an
        outcome go back to the shared list of URLs to hand out."""
        flags = self.shared.flags()
        discovery = []
        if "robots_done" not in flags:
            discovery.append("robots")
        if "homepage_done" not in flags:
            if self.sitemap_args:
                discovery.append("arguments")
            else:
                discovery.append("homepage")
        refs = [SitemapRef(**ref) for ref in self.shared_inventory.pending_sitemaps()]
        if _needs_common_paths(flags):
            # The worker that claimed the common paths left before registering them.
            self.shared.release("common_paths")
            refs.extend(self.common_path_refs())
        inventory = self.shared_inventory
        if inventory.outcome_count() < inventory.url_count():
            lost = list(inventory.without_outcome())
            inventory.requeue(lost)
            if lost:
                logger.warning(
                    "%s held by workers that left %s queued again",
                    count_noun(len(lost), "URL"),
                    are(len(lost)),
                )
        for ref in refs:
            logger.warning("sitemap %s held by a worker that left is queued again", ref.url)
        return discovery, refs


def _needs_common_paths(flags: dict[str, str]) -> bool:
    return (
        "robots_done" in flags
        and "homepage_done" in flags
        and int(flags.get("found", 0)) == 0
        and "common_paths_tried" not in flags
    )
