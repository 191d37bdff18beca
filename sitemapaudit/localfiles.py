"""Validating sitemap files on disk, without crawling (the ``validate`` command's core)."""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path

from sitemapaudit.checks.base import FILES_SITE
from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.intake import read_sitemap
from sitemapaudit.crawl.tree import ChildProblems
from sitemapaudit.errors import ConfigError
from sitemapaudit.facts import NOT_REQUESTED, SitemapFacts, UrlFacts
from sitemapaudit.inventory import Inventory, NewEntry, lastmod_order
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import SitemapRecord, UrlRecord
from sitemapaudit.sitemap.records import PROTOCOL_MAX_ENTRIES
from sitemapaudit.urls import Origin, loc_problems, parse_origin, url_origin
from sitemapaudit.validation.hreflang import HreflangGraph

# Distinct URLs of one file held in memory; past this many its listings go to an SQLite
# inventory. A sitemap within the protocol's limit never leaves memory.
MEMORY_URLS = PROTOCOL_MAX_ENTRIES


class FileListings:
    """The listings of the sitemap files given, one entry per distinct URL in first-listing
    order.

    An entry sink for :func:`read_sitemap`. The listings of one file, up to ``memory_urls``
    distinct URLs, are kept in a dict. The first URL past that, a second file, or messages
    to attach to URLs move everything to an SQLite :class:`Inventory` in a temporary
    directory, which takes every later listing, so memory stays bounded however many URLs
    the files list. :meth:`close` removes that directory.
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
        self._notes = False

    @property
    def spilled(self) -> bool:
        return self._inventory is not None

    def add_entries(self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = 5000) -> int:
        """Take the listings of one file; returns how many there were."""
        if self._inventory is None and self.sitemap and sitemap_url != self.sitemap:
            self._spill(batch)
        if self._inventory is not None:
            return self._inventory.add_entries(sitemap_url, entries, batch)
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
                    held.lastmod is None
                    or lastmod_order(held.lastmod, held.lastmod_format)
                    < lastmod_order(entry.lastmod, entry.lastmod_format)
                ):
                    # The greatest lastmod of the listings, as the crawl's inventory keeps it.
                    first[loc] = held._replace(
                        lastmod=entry.lastmod, lastmod_format=entry.lastmod_format
                    )
            elif len(first) < room:
                first[loc] = entry
            else:
                inventory = self._spill(batch)
                return count + inventory.add_entries(sitemap_url, chain((entry,), rest), batch)
            count += 1
        return count

    def _spill(self, batch: int) -> Inventory:
        """Move the listings held so far to a new inventory, and return it."""
        self._work = tempfile.TemporaryDirectory(prefix="sitemapaudit-validate-")
        inventory = self._inventory = Inventory(
            Path(self._work.name) / "inventory.sqlite3", resumable=False
        )
        first, again = self._first, self._again
        self._first, self._again = {}, {}
        if first:
            replay = (entry for loc, entry in first.items() for _ in range(1 + again.get(loc, 0)))
            inventory.add_entries(self.sitemap, replay, batch)
        return inventory

    def add_notes(self, notes: Iterable[tuple[str, str]]) -> int:
        """Attach messages to URLs, ``(url, message)``, once every file is read (for
        ``hreflang_not_reciprocal``); returns how many."""
        pending = iter(notes)
        note = next(pending, None)
        if note is None:
            return 0
        inventory = self._inventory if self._inventory is not None else self._spill(5000)
        self._notes = True
        return inventory.add_url_notes(chain((note,), pending))

    def facts(self) -> Iterator[UrlFacts]:
        """The facts of each distinct URL (not requested), in the order first listed."""
        if self._inventory is None:
            sitemaps = [self.sitemap]
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
        notes = inventory.url_notes if self._notes else None
        while batch := inventory.take_listed(1000):
            for listing in batch:
                yield listing.facts(
                    NOT_REQUESTED, hreflang=None if notes is None else notes(listing.url)
                )

    def close(self) -> None:
        if self._inventory is not None:
            self._inventory.close()
        if self._work is not None:
            self._work.cleanup()


class FileSite:
    """The site whose URLs the files given list: the origin of the first valid URL among them
    (a sitemap lists the URLs of one host; the sitemaps of one site are given together). A
    URL on another origin (host, or port; http and https are one site, as for an audit) is
    ``off_host``."""

    def __init__(self) -> None:
        self.origin: Origin | None = None
        # The first URL's ``scheme://authority/`` as written: most URLs start with it, and
        # are on its site without being parsed.
        self._prefix = ""

    def off_host(self, loc: str) -> bool:
        """Whether a valid ``loc`` is on another site than the first one listed."""
        if self.origin is None:
            self.origin = url_origin(loc)
            end = loc.find("/", loc.find("//") + 2)
            self._prefix = loc[: end + 1] if end != -1 else ""
            return False
        if self._prefix and loc.startswith(self._prefix):
            return False
        return not self.origin.owns(loc)


class FileAlternates:
    """The hreflang alternates of the files given, and the sites whose pages they list.

    An alternate sink for :func:`read_sitemap`. Reciprocity is judged among the files, for
    alternates on a site that one of the files lists pages of: the sitemaps of another site
    are not given, as the audit does not read them either.
    """

    def __init__(self) -> None:
        self.graph = HreflangGraph()
        # ``scheme://authority`` of every listed URL, as written (a few distinct values).
        self._sites: set[str] = set()

    def note_listed(self, loc: str) -> None:
        """A file lists ``loc`` (with or without alternates)."""
        start = loc.find("//")
        end = loc.find("/", start + 2) if start >= 0 else -1
        self._sites.add(loc if end < 0 else loc[:end])

    def add(self, loc: str, alternates: Iterable[tuple[str, str]], sitemap: str) -> None:
        self.graph.add(loc, alternates, sitemap)

    def flush(self) -> None:
        self.graph.flush()

    def _origins(self) -> list[Origin]:
        origins: dict[Origin, None] = {}
        for site in self._sites:
            try:
                origins[parse_origin(site.strip())] = None
            except ConfigError:
                # Not a URL of any site (the loc has its own invalid_url finding).
                continue
        return list(origins)

    def not_reciprocal(self) -> Iterator[tuple[str, str]]:
        """``(page, message)`` for each alternate of a page that does not link back."""
        origins = self._origins()

        def listed_site(url: str) -> bool:
            return any(origin.owns(url) for origin in origins)

        for page, _href, message in self.graph.not_reciprocal(listed_site):
            yield page, message

    def close(self) -> None:
        self.graph.close()


def validate_files(
    paths: Sequence[Path],
    config: AuditConfig,
    builder: RecordBuilder,
    children: list[tuple[str, str, str | None]],
) -> Iterator[SitemapRecord | UrlRecord]:
    """The sitemap record of each file, then one URL record per distinct URL they list.

    The files are judged together, as the sitemaps of one site are: a URL listed by two of
    them has one record, naming both (``duplicate``), and hreflang alternates are judged for
    reciprocity across them. Child sitemap locations of an index are appended to
    ``children``, each with the index file that lists it and the ``<lastmod>`` it gives
    for it: ``(loc, str(path), lastmod)``. At most
    SITEMAPAUDIT_SITEMAP_READ_LIMIT bytes of each file are read.
    """
    listings = FileListings(MEMORY_URLS)
    alternates = FileAlternates()
    site = FileSite()
    now = datetime.now(UTC)
    try:
        for path in paths:
            yield _read_file(
                path,
                config=config,
                builder=builder,
                children=children,
                listings=listings,
                alternates=alternates,
                site=site,
                now=now,
            )
        if site.origin is not None:
            builder.ctx.extras[FILES_SITE] = site.origin.url
        listings.add_notes(alternates.not_reciprocal())
        url_record = builder.url_record
        for url_facts in listings.facts():
            yield url_record(url_facts)
    finally:
        alternates.close()
        listings.close()


def _read_capped(path: Path, limit: int) -> bytes:
    """The first ``limit`` bytes of a file, read a piece at a time: a limit far above the
    file's size allocates nothing for it."""
    buffer = io.BytesIO()
    with path.open("rb") as handle:
        while buffer.tell() < limit:
            piece = handle.read(min(limit - buffer.tell(), _READ_PIECE))
            if not piece:
                break
            buffer.write(piece)
    return buffer.getvalue()


_READ_PIECE = 1 << 20


def _read_file(
    path: Path,
    *,
    config: AuditConfig,
    builder: RecordBuilder,
    children: list[tuple[str, str, str | None]],
    listings: FileListings,
    alternates: FileAlternates,
    site: FileSite,
    now: datetime,
) -> SitemapRecord:
    # One byte more than the limit, as a download stopped there has: the document goes on.
    body = _read_capped(path, config.sitemap_read_limit + 1)
    invalid = ChildProblems()

    def on_child(loc: str, lastmod: str | None) -> None:
        # An index's child locations are judged as the crawl judges them.
        if loc_problems(loc, max_length=config.max_url_length):
            invalid.add("invalid_url", loc)
        children.append((loc, str(path), lastmod))

    def rules(loc: str) -> tuple[str, ...]:
        alternates.note_listed(loc)
        problems = loc_problems(loc, max_length=config.max_url_length)
        if "invalid_url" not in problems and site.off_host(loc):
            problems.append("off_host")
        return tuple(problems)

    facts = read_sitemap(
        body,
        SitemapFacts(url=str(path), found_via="argument"),
        inventory=listings,
        rules=rules,
        on_child=on_child,
        read_limit=config.sitemap_read_limit,
        now=now,
        near_limit_fraction=config.near_limit_fraction,
        hreflang=alternates,
    )
    facts.problems.extend(invalid.problems())
    return builder.sitemap_record(facts)
