"""The URL inventory: every listing of every sitemap, on disk (SQLite), drained lazily.

Scrapy keeps every pending request in memory, so the listed URLs do not go into its queue
all at once: the sitemap reader streams entries in here, and the spider takes small batches
out as the downloader has room. Each distinct URL moves through these states::

    NEW -> IN_FLIGHT -> DONE -> EMITTED      (fetched)
    NEW -> DONE -> EMITTED                   (not fetched: blocked, invalid, inventory-only)

A URL's record is emitted once the listings are final (no sitemap left to read), because only
then is the list of sitemaps that list it complete.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NEW, IN_FLIGHT, DONE, EMITTED = 0, 1, 2, 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sitemaps (id INTEGER PRIMARY KEY, url TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS urls (
    id INTEGER PRIMARY KEY,
    url TEXT UNIQUE NOT NULL,
    lastmod TEXT,
    lastmod_format TEXT NOT NULL DEFAULT 'w3c',
    rules TEXT NOT NULL DEFAULT '',
    state INTEGER NOT NULL DEFAULT 0,
    outcome TEXT
);
CREATE TABLE IF NOT EXISTS listings (url_id INTEGER NOT NULL, sitemap_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS listings_url ON listings (url_id);
CREATE INDEX IF NOT EXISTS urls_state ON urls (state, id);
CREATE TABLE IF NOT EXISTS url_notes (url TEXT NOT NULL, note TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS url_notes_url ON url_notes (url);
"""


@dataclass(frozen=True, slots=True)
class Listing:
    """What the sitemaps say about one URL."""

    url_id: int
    url: str
    lastmod: str | None
    lastmod_format: str
    rules: tuple[str, ...]
    sitemaps: tuple[str, ...]
    times_listed: int


@dataclass(frozen=True, slots=True)
class NewEntry:
    """One listing to store: a loc of a sitemap, its lastmod and the URL-rule codes it broke."""

    loc: str
    lastmod: str | None
    lastmod_format: str
    rules: tuple[str, ...]


class Inventory:
    """SQLite-backed store of sitemaps, listings and per-URL progress."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("PRAGMA temp_store=FILE")
        self._db.execute("PRAGMA cache_size=-16000")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def sitemap_id(self, url: str) -> int:
        """The id of a sitemap URL, registering it on first use."""
        self._db.execute("INSERT OR IGNORE INTO sitemaps (url) VALUES (?)", (url,))
        row = self._db.execute("SELECT id FROM sitemaps WHERE url = ?", (url,)).fetchone()
        return int(row[0])

    def add_entries(self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = 2000) -> int:
        """Store the listings of one sitemap as they stream in; returns how many were stored."""
        sitemap_id = self.sitemap_id(sitemap_url)
        count = 0
        chunk: list[NewEntry] = []
        for entry in entries:
            chunk.append(entry)
            if len(chunk) >= batch:
                count += self._store(sitemap_id, chunk)
                chunk = []
        if chunk:
            count += self._store(sitemap_id, chunk)
        return count

    def _store(self, sitemap_id: int, chunk: list[NewEntry]) -> int:
        db = self._db
        db.execute("BEGIN")
        try:
            db.executemany(
                "INSERT OR IGNORE INTO urls (url, lastmod, lastmod_format, rules) "
                "VALUES (?, ?, ?, ?)",
                [(e.loc, e.lastmod, e.lastmod_format, ",".join(e.rules)) for e in chunk],
            )
            db.executemany(
                "INSERT INTO listings (url_id, sitemap_id) SELECT id, ? FROM urls WHERE url = ?",
                [(sitemap_id, e.loc) for e in chunk],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return len(chunk)

    def take_new(self, limit: int) -> list[tuple[int, str, tuple[str, ...]]]:
        """Up to ``limit`` URLs not yet handled, marked in flight: ``(id, url, rules)``."""
        rows = self._db.execute(
            "SELECT id, url, rules FROM urls WHERE state = ? ORDER BY id LIMIT ?", (NEW, limit)
        ).fetchall()
        if rows:
            self._db.executemany(
                "UPDATE urls SET state = ? WHERE id = ?", [(IN_FLIGHT, row[0]) for row in rows]
            )
        return [(int(r[0]), str(r[1]), _rules(r[2])) for r in rows]

    def has_new(self) -> bool:
        return self._db.execute("SELECT 1 FROM urls WHERE state = ? LIMIT 1", (NEW,)).fetchone() is not None

    def has_done(self) -> bool:
        return self._db.execute("SELECT 1 FROM urls WHERE state = ? LIMIT 1", (DONE,)).fetchone() is not None

    def finish(self, url_id: int, outcome: dict[str, Any] | None) -> None:
        """Record the outcome of one URL (``None`` when it was not fetched)."""
        self._db.execute(
            "UPDATE urls SET state = ?, outcome = ? WHERE id = ?",
            (DONE, None if outcome is None else json.dumps(outcome), url_id),
        )

    def mark_emitted(self, url_id: int) -> None:
        self._db.execute("UPDATE urls SET state = ? WHERE id = ?", (EMITTED, url_id))

    def take_done(self, limit: int) -> list[tuple[int, dict[str, Any] | None]]:
        """Up to ``limit`` finished URLs whose record is not out yet, marked emitted."""
        rows = self._db.execute(
            "SELECT id, outcome FROM urls WHERE state = ? ORDER BY id LIMIT ?", (DONE, limit)
        ).fetchall()
        if rows:
            self._db.executemany(
                "UPDATE urls SET state = ? WHERE id = ?", [(EMITTED, row[0]) for row in rows]
            )
        return [(int(r[0]), None if r[1] is None else json.loads(r[1])) for r in rows]

    def listing(self, url_id: int) -> Listing:
        """Everything the sitemaps say about one URL."""
        row = self._db.execute(
            "SELECT url, lastmod, lastmod_format, rules FROM urls WHERE id = ?", (url_id,)
        ).fetchone()
        sitemaps = self._db.execute(
            "SELECT s.url, COUNT(*) FROM listings l JOIN sitemaps s ON s.id = l.sitemap_id "
            "WHERE l.url_id = ? GROUP BY s.id ORDER BY s.url",
            (url_id,),
        ).fetchall()
        return Listing(
            url_id=url_id,
            url=str(row[0]),
            lastmod=row[1],
            lastmod_format=str(row[2]),
            rules=_rules(row[3]),
            sitemaps=tuple(str(s[0]) for s in sitemaps),
            times_listed=sum(int(s[1]) for s in sitemaps),
        )

    def counts(self) -> dict[str, int]:
        """How many distinct URLs are in each state, plus the number of listings."""
        names = {NEW: "new", IN_FLIGHT: "in_flight", DONE: "done", EMITTED: "emitted"}
        result = dict.fromkeys(names.values(), 0)
        for state, count in self._db.execute("SELECT state, COUNT(*) FROM urls GROUP BY state"):
            result[names[int(state)]] = int(count)
        result["listings"] = int(self._db.execute("SELECT COUNT(*) FROM listings").fetchone()[0])
        return result

    def add_url_notes(self, notes: Iterable[tuple[str, str]]) -> int:
        """Attach messages to URLs (found once every sitemap is read); returns how many."""
        db = self._db
        count = 0
        db.execute("BEGIN")
        for url, note in notes:
            db.execute("INSERT INTO url_notes (url, note) VALUES (?, ?)", (url, note))
            count += 1
        db.execute("COMMIT")
        return count

    def url_notes(self, url: str) -> list[str]:
        rows = self._db.execute("SELECT note FROM url_notes WHERE url = ? ORDER BY rowid", (url,))
        return [str(row[0]) for row in rows]

    def iter_urls(self) -> Iterator[str]:
        for (url,) in self._db.execute("SELECT url FROM urls ORDER BY id"):
            yield str(url)


def _rules(value: str | None) -> tuple[str, ...]:
    return tuple(code for code in (value or "").split(",") if code)
