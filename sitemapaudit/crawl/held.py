"""Records of sitemap indexes that wait for the first answers of the children they fetched.

A child may redirect back to its index, or to an index above it: a loop found only once the
child answered, which the index's ``index_cycle`` finding names. The index's record waits
until each child it had fetched answered (or was given up).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field

from sitemapaudit.crawl.tree import ChildProblems, SitemapRef
from sitemapaudit.facts import SitemapFacts
from sitemapaudit.inventory import Inventory
from sitemapaudit.sitemap.records import Problem
from sitemapaudit.urls import normalize_url

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _HeldIndex:
    """The record of an index, waiting for the first answers of ``waiting`` (normalized)."""

    facts: SitemapFacts
    waiting: set[str]
    # The children that redirect back to it or to an index above it.
    cycles: list[str] = field(default_factory=list)


class HeldIndexes:
    """Indexes whose records wait for the first answers of the children they had fetched,
    and the records of those whose children all answered, to send."""

    def __init__(self, inventory: Inventory) -> None:
        # Where a record that gained a loop is kept again (a resumed audit reports it).
        self.inventory = inventory
        self._held: dict[str, _HeldIndex] = {}
        self._released: list[SitemapFacts] = []

    def hold(self, facts: SitemapFacts, children: list[SitemapRef]) -> None:
        """Keep the record of an index until each child it had fetched answered (or was
        given up): a child may redirect back to it, a loop found only then."""
        if children:
            waiting = {normalize_url(child.url) for child in children}
            self._held[normalize_url(facts.url)] = _HeldIndex(facts, waiting)

    def reportable(self, facts: SitemapFacts | None) -> SitemapFacts | None:
        """``facts`` to send now, or ``None`` when the record waits (see :meth:`hold`)."""
        if facts is None or normalize_url(facts.url) in self._held:
            return None
        return facts

    def answered(self, index: str, child: str) -> None:
        held = self._held.get(normalize_url(index))
        if held is None:
            return
        held.waiting.discard(normalize_url(child))
        if not held.waiting:
            self._released.append(self._release(normalize_url(index)))

    def late_cycle(self, index: str, child: str) -> None:
        """``index`` lists ``child``, which redirects back to it or to an index above it: an
        ``index_cycle`` of the index, whose record waits for it (see :meth:`hold`)."""
        held = self._held.get(normalize_url(index))
        if held is not None:
            held.cycles.append(child)
        else:  # (an index reported before a resume)
            logger.info("index %s lists %s, which redirects back to it: a loop", index, child)

    def _release(self, key: str) -> SitemapFacts:
        held = self._held.pop(key)
        if held.cycles:
            add_cycles(held.facts, held.cycles)
            self.inventory.sitemap_done(held.facts.url, asdict(held.facts))
        return held.facts

    def take_released(self, *, all_held: bool = False) -> list[SitemapFacts]:
        """The records of indexes whose children all answered; ``all_held``: every record
        still waiting too (the audit is over, or stopped)."""
        if all_held:
            self._released.extend(self._release(key) for key in list(self._held))
        released, self._released = self._released, []
        return released


def add_cycles(facts: SitemapFacts, children: list[str]) -> None:
    """Add to an index's ``index_cycle`` the children that redirect back to it (or above it),
    found once they answered."""
    for position, problem in enumerate(facts.problems):
        if problem.code == "index_cycle":
            facts.problems[position] = Problem(
                "index_cycle", f"{problem.message}, {', '.join(children)}"
            )
            return
    cycle = ChildProblems()
    for child in children:
        cycle.add("index_cycle", child)
    facts.problems.extend(cycle.problems())
