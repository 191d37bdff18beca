"""Validating sitemap files on disk, without crawling (the ``validate`` command's core)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.intake import read_sitemap
from sitemapaudit.crawl.tree import ChildProblems
from sitemapaudit.facts import NOT_REQUESTED, SitemapFacts, UrlFacts
from sitemapaudit.inventory import Inventory, NewEntry
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import SitemapRecord, UrlRecord
from sitemapaudit.sitemap.records import PROTOCOL_MAX_ENTRIES
from sitemapaudit.urls import loc_problems

# Distinct URLs of one file held in memory; past this many its listings go to an SQLite
# inventory. A sitemap within the protocol's limit never leaves memory.
MEMORY_URLS = PROTOCOL_MAX_ENTRIES


class FileListings:
    """The listings of one sitemap file, one entry per distinct URL in first-listing order.

    An entry sink for :func:`read_sitemap`. Up to ``memory_urls`` distinct URLs are kept in
    a dict; the first URL past that moves everything to an SQLite :class:`Inventory` in a
    temporary directory, which takes every later listing, so memory stays bounded however
    many URLs the file lists. :meth:`close` removes that directory.
    """

    def __init__(self, memory_urls: int = MEMORY_URLS) -> None:
        self.memory_urls = memory_urls
        self.sitemap = ""
        # The first listing of each URL (with the greatest lastmod of all), and how many more
        # times it was listed.
        self._first: dict[str, NewEntry] = {}
        self._again: dict[str, int] = {}
        self._work: tempfile.TemporaryDirectory[str] | None = None
        self._inventory: Inventory | None = None

    @property
    def spilled(self) -> bool:
        return self._inventory is not None

    def add_entries(self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = 5000) -> int:
        """Take the listings of the file (called once: this sink holds one sitemap); returns
        how many there were."""
        self.sitemap = sitemap_url
        first, again, room = self._first, self._again, self.memory_urls
        count = 0
        rest = iter(entries)
        for entry in rest:
            loc = entry.loc
            if loc in first:
                again[loc] = again.get(loc, 0) + 1
                held = first[loc]
                if entry.lastmod is not None and (
                    held.lastmod is None or held.lastmod < entry.lastmod
                ):
                    # The greatest lastmod of the listings, as the crawl's inventory keeps it.
                    first[loc] = held._replace(
                        lastmod=entry.lastmod, lastmod_format=entry.lastmod_format
                    )
            elif len(first) < room:
                first[loc] = entry
            else:
                return self._spill(chain((entry,), rest), batch)
            count += 1
        return count

    def _spill(self, rest: Iterator[NewEntry], batch: int) -> int:
        """Move the listings held so far to an inventory, then store ``rest`` there too;
        returns how many listings the inventory took (those held and ``rest``)."""
        self._work = tempfile.TemporaryDirectory(prefix="sitemapaudit-validate-")
        self._inventory = Inventory(Path(self._work.name) / "inventory.sqlite3", resumable=False)
        first, again = self._first, self._again
        self._first, self._again = {}, {}
        replay = (entry for loc, entry in first.items() for _ in range(1 + again.get(loc, 0)))
        return self._inventory.add_entries(self.sitemap, chain(replay, rest), batch)

    def facts(self) -> Iterator[UrlFacts]:
        """The facts of each distinct URL (not requested), in the order first listed."""
        sitemaps = [self.sitemap]
        if self._inventory is None:
            again = self._again
            for loc, entry in self._first.items():
                yield UrlFacts(
                    url=loc,
                    sitemaps=sitemaps,
                    lastmod=entry.lastmod,
                    lastmod_format=entry.lastmod_format,
                    times_listed=1 + again.get(loc, 0),
                    rules=list(entry.rules),
                    robots_blocked=False,
                    outcome=NOT_REQUESTED,
                )
            return
        inventory = self._inventory
        inventory.listings_complete()
        while batch := inventory.take_listed(1000):
            for listing in batch:
                yield listing.facts(NOT_REQUESTED)

    def close(self) -> None:
        if self._inventory is not None:
            self._inventory.close()
        if self._work is not None:
            self._work.cleanup()


def validate_file(
    path: Path, config: AuditConfig, builder: RecordBuilder, children: list[str]
) -> Iterator[SitemapRecord | UrlRecord]:
    """The sitemap record of one file, then one URL record per distinct URL it lists.

    Child sitemap locations of an index are appended to ``children``. At most
    SITEMAPAUDIT_SITEMAP_READ_LIMIT bytes of the file are read.
    """
    with path.open("rb") as handle:
        body = handle.read(config.sitemap_read_limit)
    listings = FileListings(MEMORY_URLS)
    invalid = ChildProblems()

    def on_child(loc: str) -> None:
        # An index's child locations are judged as the crawl judges them.
        if loc_problems(loc, max_length=config.max_url_length):
            invalid.add("invalid_url", loc)
        children.append(loc)

    try:
        facts = read_sitemap(
            body,
            SitemapFacts(url=str(path), found_via="argument"),
            inventory=listings,
            rules=lambda loc: tuple(loc_problems(loc, max_length=config.max_url_length)),
            on_child=on_child,
            read_limit=config.sitemap_read_limit,
            now=datetime.now(UTC),
            near_limit_fraction=config.near_limit_fraction,
        )
        facts.problems.extend(invalid.problems())
        yield builder.sitemap_record(facts)
        url_record = builder.url_record
        for url_facts in listings.facts():
            yield url_record(url_facts)
    finally:
        listings.close()
