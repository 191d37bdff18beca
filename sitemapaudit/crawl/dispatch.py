"""Handing out the listed URLs: which to request (robots.txt, the URL rules, the incremental
policy), which to settle without a request, and the records of their outcomes, sent in
batches once every sitemap is read."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.counts import RunTotals, Stats
from sitemapaudit.crawl.rules import NOT_FETCHABLE
from sitemapaudit.crawl.run_history import IncrementalPolicy
from sitemapaudit.discovery.robots import RobotsPolicy
from sitemapaudit.facts import (
    NOT_REQUESTED,
    NOT_REQUESTED_JSON,
    FetchOutcome,
    UrlFacts,
    UrlFactsBatch,
)
from sitemapaudit.inventory import Inventory, Listing

_BATCH = 500
_PAGE_BATCH = 64
# As the inventory's _EMIT_SECONDS: the pages a crash can make a resumed audit request again.
_PAGE_BATCH_SECONDS = 0.1
_EMPTY = {"blocked": False, "outcome": NOT_REQUESTED_JSON}


@dataclass(slots=True)
class PageAction:
    """A listed URL to request (``blocked``: robots.txt disallows it; ``retry``: it was handed
    out before by a worker that is gone)."""

    url_id: int
    url: str
    blocked: bool = False
    retry: bool = False


class PageDispatch:
    """The URLs taken from the inventory to hand out, the actions and records ready to go,
    and the outcomes of fetched pages whose records go out together."""

    def __init__(
        self,
        inventory: Inventory,
        config: AuditConfig,
        stats: Stats,
        totals: RunTotals,
        incremental: IncrementalPolicy,
    ) -> None:
        self.inventory = inventory
        self.config = config
        self.stats = stats
        self.totals = totals
        self.incremental = incremental
        self.queue: deque[tuple[int, str, tuple[str, ...], str | None]] = deque()
        self.ready: deque[PageAction | UrlFactsBatch] = deque()
        # Outcomes of fetched pages whose records go out together (see fetched).
        self._fetched: list[tuple[int, dict[str, Any]]] = []
        self._fetched_since = 0.0
        # Every URL is dispatched or emitted (see AuditRun._all_handed_out); once it is true,
        # a page's record goes out at once.
        self.handed_out = False
        # Listings of URLs handed out once the listings were final, read with their batch.
        self._listings: dict[int, Listing] = {}
        # Whether URLs have hreflang notes, to read with their records.
        self.hreflang_notes = False
        # A resumed audit: the outcomes its earlier parts knew go out before any request, so
        # a part stopped again leaves only pages it requested itself without a record.
        self.earlier_first = False

    def waited_batch(self) -> UrlFactsBatch | None:
        """The records of fetched pages, once the first of them waited long enough."""
        if self._fetched and self._fetched_waited(time.monotonic()):
            return self._fetched_batch()
        return None

    def hand_out(self, robots: RobotsPolicy, final: bool) -> PageAction | UrlFactsBatch | None:
        """The next URL to request, or finished URLs' facts to emit, or ``None`` for now;
        ``final``: the listings are final (records go out)."""
        if final and self.earlier_first:
            earlier = [(i, o or _EMPTY) for i, o in self.inventory.take_done(_BATCH)]
            if earlier:
                return UrlFactsBatch(self._facts_batch(earlier))
            self.earlier_first = False
        settled: list[tuple[int, dict[str, Any]]] = []
        while len(settled) < _BATCH:
            if not self.queue:
                self.queue = deque(self._take_new(final))
                if not self.queue:
                    break
            url_id, url, rules, lastmod = self.queue.popleft()
            blocked, request = self.verdict(robots, url, rules)
            if request:
                carried = self.incremental.carried_over(url, lastmod) if not blocked else None
                if carried is not None:
                    self._settle(url_id, {"blocked": False, "outcome": carried}, settled, final)
                    continue
                self.ready.extend(self.settled_batch(settled))
                self.ready.append(PageAction(url_id, url, blocked))
                return self.ready.popleft()
            self._settle(
                url_id, {"blocked": blocked, "outcome": NOT_REQUESTED_JSON}, settled, final
            )
        if not settled and final:
            settled = [(i, o or _EMPTY) for i, o in self.inventory.take_done(_BATCH)]
        if not settled and self._fetched:
            return self._fetched_batch()  # nothing left to hand out: the last pages' records
        self.ready.extend(self.settled_batch(settled))
        return self.ready.popleft() if self.ready else None

    def verdict(self, robots: RobotsPolicy, url: str, rules: tuple[str, ...]) -> tuple[bool, bool]:
        """Whether robots.txt blocks a listed URL (counted), and whether to request it."""
        fetchable = NOT_FETCHABLE.isdisjoint(rules)
        blocked = fetchable and not robots.can_fetch(url)
        if blocked:
            self.stats.inc_value("sitemapaudit/urls/robots_blocked")
        config = self.config
        return blocked, config.fetch_urls and fetchable and (not blocked or config.fetch_blocked)

    def _settle(
        self,
        url_id: int,
        stored: dict[str, Any],
        settled: list[tuple[int, dict[str, Any]]],
        final: bool,
    ) -> None:
        """A URL whose outcome is known without a request: emit with the batch, or keep."""
        if final:
            settled.append((url_id, stored))
        else:
            self.inventory.finish(url_id, stored)

    def fetched(self, url_id: int, stored: dict[str, Any]) -> UrlFactsBatch | None:
        """A fetched page's outcome once the listings are final: its record goes out
        ``_PAGE_BATCH`` pages at a time, or when the first of them waited
        ``_PAGE_BATCH_SECONDS``, or at once when every URL is handed out (the last pages)."""
        fetched = self._fetched
        now = time.monotonic()
        if not fetched:
            self._fetched_since = now
        fetched.append((url_id, stored))
        if not self.handed_out and len(fetched) < _PAGE_BATCH and not self._fetched_waited(now):
            return None
        return self._fetched_batch()

    def unsent(self) -> int:
        """Fetched pages whose records wait for the rest of their batch."""
        return len(self._fetched)

    def idle(self) -> bool:
        """No URL is left to hand out, nor an action or record ready, nor an outcome kept."""
        return (
            not self.queue
            and not self.ready
            and not self.inventory.has_new()
            and not self.inventory.has_done()
        )

    def _fetched_waited(self, now: float) -> bool:
        """The first of the pages waiting for their records waited long enough."""
        return now - self._fetched_since >= _PAGE_BATCH_SECONDS

    def _fetched_batch(self) -> UrlFactsBatch:
        fetched, self._fetched = self._fetched, []
        return UrlFactsBatch(self._facts_batch(fetched))

    def settled_batch(self, items: list[tuple[int, dict[str, Any]]]) -> list[UrlFactsBatch]:
        """The facts of these settled URLs as one item for the pipelines (none if empty)."""
        return [UrlFactsBatch(self._facts_batch(items))] if items else []

    def _facts_batch(self, items: list[tuple[int, dict[str, Any]]]) -> list[UrlFacts]:
        """Facts of URLs whose outcome is known, marked emitted (listings must be final)."""
        if not items:
            return []
        self.inventory.mark_emitted(items)
        self.totals.urls_emitted += len(items)
        listings = self._take_listings([url_id for url_id, _ in items])
        return [
            listing.facts(
                NOT_REQUESTED
                if stored["outcome"] is NOT_REQUESTED_JSON
                else FetchOutcome.from_json(stored["outcome"]),
                robots_blocked=bool(stored["blocked"]),
                hreflang=self.inventory.url_notes(listing.url) if self.hreflang_notes else None,
            )
            for listing, (_, stored) in zip(listings, items, strict=True)
        ]

    def _take_new(self, final: bool) -> list[tuple[int, str, tuple[str, ...], str | None]]:
        """A batch of URLs to hand out; once the listings are final, their listings are read
        along (kept for their records)."""
        if not final:
            return self.inventory.take_new(_BATCH)
        listed = self.inventory.take_listed(_BATCH)
        self._listings.update((listing.url_id, listing) for listing in listed)
        return [(x.url_id, x.url, x.rules, x.lastmod) for x in listed]

    def _take_listings(self, url_ids: list[int]) -> list[Listing]:
        """The listings of these URLs: prefetched ones, the rest read now."""
        found = [self._listings.pop(url_id, None) for url_id in url_ids]
        missing = [url_id for url_id, listing in zip(url_ids, found, strict=True) if not listing]
        read = {listing.url_id: listing for listing in self.inventory.listings(missing)}
        return [listing or read[url_id] for url_id, listing in zip(url_ids, found, strict=True)]
