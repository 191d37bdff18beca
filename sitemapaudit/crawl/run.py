"""One audit's state between callbacks: discovery, the sitemap tree, the URL inventory.

The spider asks :class:`AuditRun` what to do and tells it what happened; everything here is
plain Python (no Scrapy), so the decisions are testable without a crawler. The run holds the
lifecycle (start, resume, when the listings are final, close) and the discovery of sitemaps;
its parts live in their own modules: reading the sitemaps (:mod:`.sitemaps`), the records of
indexes waiting for their children (:mod:`.held`), conditional requests and 304 reuse
(:mod:`.conditional`), the history and the incremental policy (:mod:`.run_history`), the
discovery notes (:mod:`.discovery`), the URL rules (:mod:`.rules`) and the pages handed out
(:mod:`.dispatch`).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.conditional import ConditionalRequests
from sitemapaudit.crawl.counts import RunTotals, Stats
from sitemapaudit.crawl.discovery import (
    Discovery,
    DiscoveryNotes,
    every_url_blocked,
    sitemap_blocked,
)
from sitemapaudit.crawl.dispatch import PageAction, PageDispatch
from sitemapaudit.crawl.held import HeldIndexes
from sitemapaudit.crawl.intake import AlternateSink
from sitemapaudit.crawl.redirects import HopWaits
from sitemapaudit.crawl.rules import UrlRules
from sitemapaudit.crawl.run_history import IncrementalPolicy, RunHistory
from sitemapaudit.crawl.sitemaps import SitemapReading, skipped_sitemap
from sitemapaudit.crawl.tree import (
    SITEMAP_URL_MAX_LENGTH,
    Decision,
    SitemapRef,
    SitemapTree,
    off_host_sitemap,
    sitemap_hosts_hint,
    why_invalid,
)
from sitemapaudit.crawl.workdir import configured_work_dir, work_dir
from sitemapaudit.discovery.robots import RobotsPolicy, robots_policy
from sitemapaudit.facts import (
    FetchOutcome,
    SitemapFacts,
    UrlFactsBatch,
    sitemap_facts_from_json,
)
from sitemapaudit.history.background import BackgroundHistoryStore
from sitemapaudit.history.store import STORE_FAILURES, HistoryStore
from sitemapaudit.inventory import Inventory, audit_identity
from sitemapaudit.sitemap.records import Problem
from sitemapaudit.urls import Origin, url_origin
from sitemapaudit.validation import HreflangGraph
from sitemapaudit.words import count_noun

# (The spider imports sitemap_hosts_hint from here.)
__all__ = ["AuditRun", "PageAction", "sitemap_hosts_hint"]

logger = logging.getLogger(__name__)


class AuditRun(SitemapReading):
    """The bookkeeping of one audit."""

    # When every sitemap was read (set once they are).
    sitemaps_read_at: datetime | None = None

    def __init__(
        self,
        origin: Origin,
        config: AuditConfig,
        stats: Stats,
        *,
        sitemap_args: list[str] | None = None,
        listed_by: Mapping[str, tuple[str, str | None]] | None = None,
        jobdir: str | None = None,
        started: datetime | None = None,
    ) -> None:
        self.origin = origin
        self.config = config
        self.stats = stats
        self.sitemap_args = sitemap_args or []
        # The index that lists a sitemap given as an argument, with the lastmod it gives for
        # it: a local index file whose children ``scrapy validate --follow`` hands the crawl.
        self.listed_by = dict(listed_by or {})
        self.tree = self._make_tree()
        self.discovery = Discovery(homepage_done=bool(self.sitemap_args))
        # Common paths not tried yet: the sitemap cap held them back (common_path_refs).
        self.waiting_guesses: deque[str] = deque()
        self.discovery_notes = DiscoveryNotes(origin, config, stats)
        self.robots: RobotsPolicy | None = None
        self.totals = RunTotals()
        self._work_dir, self._own_work_dir = work_dir(configured_work_dir(config, jobdir))
        self.inventory: Inventory = self._make_inventory()
        if self.inventory.finished():
            self.inventory = self._start_afresh(self.inventory)
        self._sitemaps_outstanding = 0
        self._waiter: asyncio.Future[None] | None = None
        self.url_rules = UrlRules(origin, config.max_url_length)
        self._skipped_children: list[SitemapFacts] = []
        # Indexes whose records wait for the first answers of the children they had fetched (a
        # child that redirects back to the index, or above it, is a loop: see _late_cycle).
        self.held = HeldIndexes(self.inventory)
        # Sitemaps that wait for the answer of a followed redirect (see hop_requested).
        self.hops = HopWaits(stats)
        # Sitemaps that answered 304: the run that read the body each stands for, which the
        # history keeps with the sitemap's result (see SitemapFacts.read_run).
        self.read_runs: dict[str, int] = {}
        self.audit_time = started or datetime.now(UTC)
        now = self.audit_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.resumed = bool(self.inventory.sitemap_urls())
        self.first_started_at, self.resumed_at = self._start_times(now)
        self.hreflang: AlternateSink = self._make_hreflang()
        self._final = False
        self.run_history = RunHistory(origin.url, config, stats, self.totals)
        if config.history_path:
            self._begin_history(BackgroundHistoryStore, config.history_path, now)
        self.incremental = IncrementalPolicy(self.run_history, config, self.totals)
        self.conditional = ConditionalRequests(self.run_history, config, stats, self.audit_time)
        self.pages = PageDispatch(self.inventory, config, stats, self.totals, self.incremental)
        self.resumed_refs: list[SitemapRef] = []
        if self.resumed:
            self._resume()
        else:
            self.inventory.set_identity(
                audit_identity(origin.url, self.sitemap_args, config.fetch_urls)
            )
            self.inventory.record_start(now)

    # -- where the state lives (a distributed audit keeps it in Redis) ----------------------
    def _make_tree(self) -> SitemapTree:
        return SitemapTree(
            self.origin,
            max_depth=self.config.max_index_depth,
            max_sitemaps=self.config.max_sitemaps,
            max_url_length=SITEMAP_URL_MAX_LENGTH,
            sitemap_hosts=self.sitemap_hosts(),
        )

    def sitemap_hosts(self) -> tuple[Origin, ...]:
        """The other hosts whose sitemaps are fetched: SITEMAPAUDIT_SITEMAP_HOSTS and the
        hosts of the sitemaps given as arguments (the user named them)."""
        hosts = list(self.config.sitemap_hosts)
        for url in self.sitemap_args:
            origin = url_origin(url)
            if origin is not None and origin not in hosts and origin != self.origin:
                hosts.append(origin)
        return tuple(hosts)

    def _make_inventory(self) -> Inventory:
        # A temporary work directory goes with the run: nothing will resume from it.
        return Inventory(
            Path(self._work_dir) / "inventory.sqlite3", resumable=not self._own_work_dir
        )

    def _start_afresh(self, finished: Inventory) -> Inventory:
        """The work directory holds an audit that finished: this run is a new audit, not a
        replay of that one's results."""
        finished.close()
        for name in ("inventory.sqlite3", "hreflang.sqlite3"):
            for suffix in ("", "-wal", "-shm"):
                (Path(self._work_dir) / f"{name}{suffix}").unlink(missing_ok=True)
        logger.info("the audit in %s had finished: starting a new audit", self._work_dir)
        return self._make_inventory()

    def _make_hreflang(self) -> AlternateSink:
        return HreflangGraph(Path(self._work_dir) / "hreflang.sqlite3")

    # -- lifecycle -----------------------------------------------------------------------
    def _start_times(self, now: str) -> tuple[str | None, list[str]]:
        """An audit resumed from its work directory: when it first started (``None`` when its
        inventory did not keep it) and each time it was resumed, this run included."""
        if not self.resumed:
            return None, []
        return self.inventory.record_resume(now)

    def _resume(self) -> None:
        """Pick up an interrupted audit from its work directory (Scrapy's JOBDIR)."""
        self.inventory.prepare_resume()
        self.pages.earlier_first = True
        self.resumed_refs = [SitemapRef(**ref) for ref in self.inventory.pending_sitemaps()]
        parents = {ref.url: ref.parent for ref in self.resumed_refs}
        # Read before the interruption (an empty entry is a common path that held no sitemap).
        done = {data["url"]: data.get("parent") for data in self.inventory.done_sitemaps() if data}
        parents.update(done)
        self.tree.restore(self.inventory.sitemap_urls(), parents)
        # A sitemap read where another redirects sits in that one's place in the tree. (An
        # audit interrupted by an earlier version read it under the record of the sitemap that
        # redirects: it was read once that record is out.)
        known = set(self.inventory.sitemap_urls())
        for target, source, _parent in self.inventory.sitemap_redirects():
            if target in known or source in done:
                self.tree.restore_redirect(target, source)
        # A common path that held no sitemap has no place under the cap.
        self.tree.scheduled = len(self.inventory.sitemap_urls()) - sum(
            1 for data in self.inventory.done_sitemaps() if not data
        )
        self._sitemaps_outstanding += len(self.resumed_refs)
        self.totals.sitemaps = len(done)
        logger.info(
            "resuming the audit in %s: %s still to read",
            self._work_dir,
            count_noun(len(self.resumed_refs), "sitemap"),
        )

    def resumed_sitemap_facts(self) -> Iterator[SitemapFacts]:
        """The sitemaps reported before the interruption, to report again."""
        for data in self.inventory.done_sitemaps():
            if data:  # an empty entry is a common path that held no sitemap
                facts = sitemap_facts_from_json(data)
                self._note_read_run(facts)
                yield facts

    def _note_read_run(self, facts: SitemapFacts) -> None:
        if facts.not_modified and facts.read_run is not None:
            self.read_runs[facts.url] = facts.read_run

    def _pending(self, ref: SitemapRef) -> SitemapRef:
        self.inventory.sitemap_pending(ref.url, asdict(ref))
        return ref

    def settle(self, facts: SitemapFacts) -> SitemapFacts:
        """Keep a sitemap's facts (a resumed audit reports them again) and hand them on; a
        requested sitemap of the audited host that robots.txt disallows says so: by a rule,
        or because robots.txt answered 5xx or 429 or could not be fetched, which disallows
        every URL of the host (RFC 9309), when the sitemap itself was answered."""
        robots = self.robots
        answered = facts.fetched or facts.status is not None
        if (
            robots is not None
            # Under a robots.txt that could not be read, a sitemap that got no answer either
            # has the same outage: its fetch_failed says it.
            and (answered or (facts.error is not None and robots.outcome == "rules"))
            and self.origin.owns(facts.url)
            and not robots.can_fetch(facts.url)
        ):
            message = sitemap_blocked(robots, self.config.robots_user_agent)
            facts.problems.append(Problem("robots_blocked", message))
        self._note_read_run(facts)
        self.inventory.sitemap_done(facts.url, asdict(facts))
        return facts

    def robots_unreadable(self) -> str | None:
        """Why every URL is ``robots_blocked`` when robots.txt could not be read (no rule
        disallows them), for their findings; ``None`` while robots.txt has rules (or is not
        read yet)."""
        robots = self.robots
        if robots is None or robots.outcome != "disallow_all":
            return None
        return every_url_blocked(robots)

    def close(self, *, finished: bool = False) -> None:
        """End the run; ``finished``: its report is complete, and a run with the same work
        directory is a new audit."""
        if finished and not self._own_work_dir:
            self.inventory.mark_finished()
        if self.history is not None:
            try:
                self.history.close()
            except STORE_FAILURES as exc:
                self.history_failed(exc)
        self.hreflang.close()
        self.inventory.close()
        if self._own_work_dir:
            shutil.rmtree(self._work_dir, ignore_errors=True)

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float = 0.5) -> None:
        """Sleep until something changes (or ``timeout`` passes).

        A bare future and a timer: ``start()`` sleeps here once per page handed out, and
        ``asyncio.wait_for`` on an event costs a task and more per call."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(timeout, _release, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            if self._waiter is waiter:
                self._waiter = None

    @property
    def listings_final(self) -> bool:
        """No sitemap is left to read: the list of sitemaps of every URL is complete."""
        if self._final:
            return True
        d = self.discovery
        final = (
            d.robots_done
            and d.homepage_done
            and not d.needs_common_paths()
            and self._sitemaps_outstanding == 0
        )
        if final:
            self._mark_final()
            self._listings_complete()
        return final

    def _mark_final(self) -> None:
        """Every sitemap is read: note when (a URL's lastmod past it is in the future)."""
        self._final = True
        self.sitemaps_read_at = datetime.now(UTC)

    def _listings_complete(self) -> None:
        """Every sitemap is read: settle what needs all of them (hreflang reciprocity)."""
        assert isinstance(self.hreflang, HreflangGraph)
        self.inventory.listings_complete()
        count = self.inventory.add_url_notes(
            (page, message)
            for page, _href, message in self.hreflang.not_reciprocal(self.origin.owns)
        )
        urls, listings = self.inventory.totals()
        logger.info(
            "all sitemaps read: %s of %s",
            count_noun(listings, "listing"),
            count_noun(urls, "distinct URL"),
        )
        self.pages.hreflang_notes = count > 0
        if count:
            self.stats.inc_value("sitemapaudit/hreflang/not_reciprocal", count)

    def start_done(self) -> bool:
        """Nothing is left for ``start()`` to hand out or send: every URL is dispatched or
        emitted (the records of pages still being fetched are sent by their callbacks)."""
        return self._all_handed_out() and not self.pages.unsent()

    def _all_handed_out(self) -> bool:
        """Every URL is dispatched or emitted. Once true it stays true: the listings are
        final, so no URL is added, and a fetched page's outcome does not go back to the
        inventory."""
        pages = self.pages
        if not pages.handed_out:
            pages.handed_out = self.listings_final and pages.idle()
        return pages.handed_out

    # -- the history -------------------------------------------------------------------------
    @property
    def history(self) -> HistoryStore | None:
        """The history store (``None`` without one, or once it failed)."""
        return self.run_history.store

    @property
    def history_run(self) -> int:
        """This run's id in the history."""
        return self.run_history.run

    def _begin_history(self, store: Callable[[str], HistoryStore], path: str, now: str) -> None:
        """Open the history at ``path`` and begin this run in it (see
        :meth:`RunHistory.begin`)."""
        self.run_history.begin(store, path, self.first_started_at or now)

    def incremental_summary(self) -> dict[str, Any]:
        """The summary's ``incremental`` field: ``{}`` unless the incremental policy is on."""
        return self.incremental.summary()

    def history_failed(self, exc: Exception, path: str | None = None) -> str:
        """The history failed: the audit goes on without it (see :meth:`RunHistory.failed`).
        Returns the note."""
        return self.run_history.failed(exc, path)

    # -- discovery -------------------------------------------------------------------------
    def argument_refs(self) -> list[SitemapRef]:
        """The sitemaps given as arguments, to request now; none while robots.txt is being read:
        they are handed out with its answer, so that each record can say whether robots.txt
        disallows the sitemap."""
        if self.resumed:
            # Registered by the first part: found, so no common path is guessed.
            self.discovery.found = max(self.discovery.found, len(self.sitemap_args))
            return []
        if self.robots is None:
            self.discovery.arguments_held = True
            return []
        return self._candidates([(url, "argument") for url in self.sitemap_args])[0]

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
        """Evaluate robots.txt; return the sitemaps it names (unless given as arguments).
        ``moved_to``: robots.txt redirects to this URL on another host (not followed);
        ``gave_up``: its redirects were given up after this many hops (a loop, or too many);
        ``error``: why it got no HTTP answer (``status`` is ``None``)."""
        self.robots = self.evaluate_robots(status, body, url)
        self.discovery.robots_done = True
        self.stats.inc_value(f"sitemapaudit/robots/{self.robots.outcome}")
        self.discovery_notes.robots_read(
            self.robots, status, moved_to=moved_to, gave_up=gave_up, error=error
        )
        logger.info(
            "robots.txt: %s, %s named",
            self.robots.outcome,
            count_noun(len(self.robots.sitemaps), "sitemap"),
        )
        self.wake()
        if self.sitemap_args:
            if not self.discovery.arguments_held:
                return [], []
            self.discovery.arguments_held = False
            return self._candidates([(url, "argument") for url in self.sitemap_args])
        held, self.discovery.homepage_held = self.discovery.homepage_held, []
        found = [*((s, "robots.txt") for s in self.robots.sitemaps), *held]
        if found and self._hold_robots_sitemaps(found):
            return [], []
        return self._candidates(found)

    def evaluate_robots(self, status: int | None, body: bytes, url: str) -> RobotsPolicy:
        return robots_policy(
            status,
            body,
            url,
            user_agent=self.config.robots_user_agent,
            crawler_agent=self.config.user_agent,
            max_bytes=self.config.robots_max_bytes,
        )

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
        """The sitemaps the homepage names (``<link rel="sitemap">``, ``Link`` header); before
        robots.txt is read they wait for it (see ``robots_received``). ``moved_to``: the
        homepage redirects to this URL on another host (not followed); ``error``: why it got
        no HTTP answer; ``unread``: why it could not be read (an error status, a redirect
        loop; ``error`` by default); ``partial``: ``found`` comes from what arrived of it
        before ``error``; ``blocked``: it was not requested, as robots.txt disallows it."""
        self.discovery.homepage_done = True
        why = self.discovery_notes.homepage_read(
            moved_to=moved_to, error=error, unread=unread, partial=partial, blocked=blocked
        )
        if why is not None:
            self.discovery.homepage_unread = why
        self.wake()
        if self._hold_homepage_sitemaps(found):
            return [], []
        held, self.discovery.robots_held = self.discovery.robots_held, []
        return self._candidates([*held, *found])

    def homepage_due(self) -> bool | None:
        """Whether to request the homepage now (``True``), not at all (``False``: robots.txt
        disallows it for the audited user agent, unless SITEMAPAUDIT_FETCH_BLOCKED; call
        ``homepage_received(blocked=True)``), or later: ``None`` until robots.txt has answered
        (or failed), then ``homepage_after_robots`` tells. Only a rule of robots.txt keeps the
        homepage from being read: a robots.txt that could not be read (``disallow_all``) says
        nothing of the site's wishes, and the homepage is where its sitemaps may be named."""
        if not self.robots_known():
            self.discovery.homepage_waits = True
            return None
        robots = self.robots
        assert robots is not None
        return (
            self.config.fetch_blocked
            or robots.outcome != "rules"
            or robots.can_fetch(self.origin.url + "/")
        )

    def homepage_after_robots(self) -> bool | None:
        """Once robots.txt is read: ``homepage_due()`` for a homepage that waited for it, or
        ``None`` if none did."""
        if not self.discovery.homepage_waits:
            return None
        self.discovery.homepage_waits = False
        return self.homepage_due()

    def robots_known(self) -> bool:
        """Whether robots.txt has answered (or failed)."""
        return self.robots is not None

    def homepage_unknown(self) -> str | None:
        """Why the sitemaps the homepage links to are unknown (``"could not be read"``...),
        for the summary's note on an audit that found no sitemap; ``None`` when it was read."""
        return self.discovery.homepage_unread

    def robots_unknown(self) -> str | None:
        """Why the sitemaps robots.txt names are unknown (``"could not be read"``), for the
        summary's note on an audit that found no sitemap; ``None`` when it was read (or is
        not there)."""
        if self.robots is not None and self.robots.outcome == "disallow_all":
            return "could not be read"
        return None

    def unreachable(self, answers: int) -> str | None:
        """The note of an audit in which no request got an HTTP answer (``answers`` is the
        number of responses): the site could not be reached, and nothing was audited; else
        ``None``."""
        return self.discovery_notes.unreachable(answers)

    def _hold_robots_sitemaps(self, found: list[tuple[str, str]]) -> bool:
        """Keep robots.txt's sitemaps (``found``) until the homepage has answered
        (``True``), when it waits for robots.txt and is to be requested now; else ``False``:
        they are registered now."""
        if self.discovery.homepage_done or not self.discovery.homepage_waits:
            return False
        if self.homepage_due() is not True:
            return False
        self.discovery.robots_held.extend(found)
        return True

    def _hold_homepage_sitemaps(self, found: list[tuple[str, str]]) -> bool:
        """Keep the homepage's sitemaps until robots.txt is read (``True``), or ``False``
        when it is read already: they are registered now."""
        if self.discovery.robots_done:
            return False
        self.discovery.homepage_held.extend(found)
        return True

    def common_path_refs(self) -> list[SitemapRef]:
        """The common paths, once robots.txt and the homepage named no sitemap. A guess takes
        no place under the sitemap cap until it holds a sitemap; those the cap holds back (it
        is full of sitemaps already, as in a resumed audit) wait for a place."""
        if self.discovery.needs_common_paths():
            self.discovery.common_paths_tried = True
            logger.info("no sitemap named by robots.txt or the homepage; trying common paths")
            self.waiting_guesses.extend(self.origin.url + path for path in self.config.common_paths)
        refs = []
        while self.waiting_guesses:
            decision = self.tree.consider(self.waiting_guesses[0], depth=0)
            if decision is Decision.CAPPED:
                break
            url = self.waiting_guesses.popleft()
            if decision is Decision.FETCH:
                self.tree.release()
                refs.append(self._pending(SitemapRef(url, "common-path", None, 0)))
        self._sitemaps_outstanding += len(refs)
        return refs

    def _candidates(
        self, found: list[tuple[str, str]]
    ) -> tuple[list[SitemapRef], list[SitemapFacts]]:
        refs: list[SitemapRef] = []
        skipped: list[SitemapFacts] = []
        for url, how in found:
            via, parent, depth, lastmod = how, None, 0, None
            if how == "argument" and url in self.listed_by:
                # Read as that index's child, as if the index had been read by this crawl.
                via, depth = "index", 1
                parent, lastmod = self.listed_by[url]
            decision = self.tree.consider(url, depth=0)
            if decision is Decision.FETCH:
                refs.append(self._pending(SitemapRef(url, via, parent, depth, lastmod)))
            elif decision is Decision.OFF_HOST:
                skipped.append(skipped_sitemap(url, via, parent, "off_host", off_host_sitemap(url)))
            elif decision is Decision.INVALID:
                why = f"not a valid http(s) URL: {why_invalid(url)}"
                skipped.append(skipped_sitemap(url, via, parent, "invalid_url", why))
            elif decision is Decision.CAPPED:
                skipped.append(
                    skipped_sitemap(
                        url, via, parent, "sitemap_limit", "sitemap-count cap reached, not fetched"
                    )
                )
        # Sitemaps seen before (a resumed audit) count as found: no common paths then.
        self.discovery.found += len(found)
        skipped = [self.settle(facts) for facts in skipped]
        self._sitemaps_outstanding += len(refs)
        return refs, skipped

    # -- pages -----------------------------------------------------------------------------
    def next_action(self) -> PageAction | UrlFactsBatch | SitemapFacts | None:
        """The next URL to request, or finished URLs' facts to emit, or ``None`` for now."""
        pages = self.pages
        if pages.ready:
            return pages.ready.popleft()
        waited = pages.waited_batch()
        if waited is not None:
            return waited
        if self.robots is None or (not self.config.fetch_urls and not self.listings_final):
            return None
        return pages.hand_out(self.robots, self.listings_final)

    def fetch_finished(
        self, url_id: int, outcome: FetchOutcome, blocked: bool
    ) -> UrlFactsBatch | None:
        """Record a fetched URL's outcome; returns the facts of fetched URLs to emit now.

        Once the listings are final, records go out ``_PAGE_BATCH`` pages at a time, or when
        the first of them waited ``_PAGE_BATCH_SECONDS``, or at once when every URL is handed
        out (the last pages): one Scrapy item per page cost as much as its checks."""
        self.totals.urls_fetched += int(outcome.fetched)
        stored = {"blocked": blocked, "outcome": outcome.to_json()}
        self.wake()
        if not self.listings_final:
            self.inventory.finish(url_id, stored)
            return None
        return self.pages.fetched(url_id, stored)

    def unrecorded(self) -> tuple[int, int]:
        """Pages requested whose outcome is known but whose record is not out: those kept
        until every sitemap is read (a URL's record names all the sitemaps listing it), and
        those waiting for the rest of their batch. URLs settled without a request (not to be
        fetched, robots-blocked, carried over) are no pages requested, and are not counted."""
        return self.inventory.requested_done_count(), self.pages.unsent()

    def notes(self) -> list[str]:
        """Notes for the summary (robots.txt that could not be read...): robots.txt's, the
        homepage's, then the others in the order they came."""
        return [*self.discovery_notes.notes(), *self.totals.notes]

    def changes(self) -> tuple[int | None, Iterator[dict[str, Any]]]:
        """The previous run of this origin, and the diff records against it."""
        return self.run_history.changes()

    def progress(self) -> dict[str, int]:
        """Counts for the progress line."""
        return {
            "urls_known": self.inventory.totals()[0],
            # Records out, and outcomes known whose records wait (those of a resumed audit too).
            "urls_done": self.totals.urls_emitted + self.inventory.done_count(),
            # Not requested yet: in the inventory, or taken from it to hand out.
            "urls_queued": self.inventory.new_count() + len(self.pages.queue),
            "sitemaps_read": self.totals.sitemaps,
            "sitemaps_pending": self._sitemaps_outstanding,
        }


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
