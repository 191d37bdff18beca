"""The URL inventory: every listing of every sitemap, on disk (SQLite), drained lazily.

Scrapy keeps every pending request in memory, so the listed URLs do not go into its queue
all at once: the sitemap reader streams entries in here, and the spider takes small batches
out as the downloader has room. URLs are handed out in the order they were first listed
(a cursor over their ids), and each one then moves through these states::

    NEW -> DONE -> EMITTED

A URL becomes DONE when its outcome is known (fetched, failed, or not to be fetched), and
EMITTED once its record is out. Records are emitted once the listings are final (no sitemap
left to read), because only then is the list of sitemaps that list a URL complete.

Most URLs are listed once: such a URL keeps the id of its sitemap in its own row, and only the
listings of URLs listed more than once go to the ``listings`` table (appended without an index
while sitemaps stream in; the index is built once, at the end).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from sitemapaudit.errors import ConfigError
from sitemapaudit.facts import FetchOutcome, UrlFacts
from sitemapaudit.page.dates import parse_rfc822_date, parse_w3c_datetime
from sitemapaudit.sqlitefiles import is_damaged, roll_back, storage_detail

NEW, DONE, EMITTED = 0, 2, 3
SITEMAP_PENDING, SITEMAP_DONE = 0, 1

# Only URLs whose outcome is known and whose record is not out yet (state DONE, 2) are
# indexed by state: few at a time, and the index costs nothing while URLs are listed, handed
# out (by id, from a cursor) and emitted. Queries on that index name the state literally.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sitemaps (
    id INTEGER PRIMARY KEY,
    url TEXT UNIQUE NOT NULL,
    state INTEGER NOT NULL DEFAULT 1,
    ref TEXT,
    facts TEXT,
    read INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS urls (
    id INTEGER PRIMARY KEY,
    url TEXT UNIQUE NOT NULL,
    lastmod TEXT,
    lastmod_format TEXT NOT NULL DEFAULT 'w3c',
    rules TEXT NOT NULL DEFAULT '',
    state INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    sitemap_id INTEGER
);
CREATE TABLE IF NOT EXISTS listings (url TEXT NOT NULL, sitemap_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS urls_done ON urls (id) WHERE state = 2;
CREATE TABLE IF NOT EXISTS url_notes (url TEXT NOT NULL, note TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS url_notes_url ON url_notes (url);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sitemap_redirects (
    target TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    parent TEXT
);
"""


class Listing(NamedTuple):
    """What the sitemaps say about one URL. (A named tuple: one is made per URL handed out,
    and a tuple is made several times faster than a frozen dataclass.)"""

    url_id: int
    url: str
    lastmod: str | None
    lastmod_format: str
    rules: tuple[str, ...]
    sitemaps: tuple[str, ...]
    times_listed: int

    def facts(
        self,
        outcome: FetchOutcome,
        *,
        robots_blocked: bool = False,
        hreflang: list[str] | None = None,
    ) -> UrlFacts:
        """The URL's facts for its record, with its fetch outcome."""
        return UrlFacts(
            url=self.url,
            sitemaps=list(self.sitemaps),
            lastmod=self.lastmod,
            lastmod_format=self.lastmod_format,
            times_listed=self.times_listed,
            rules=list(self.rules),
            robots_blocked=robots_blocked,
            outcome=outcome,
            hreflang=hreflang or [],
        )


@lru_cache(maxsize=4096)
def lastmod_order(lastmod: str, lastmod_format: str) -> str:
    """What the lastmods of a URL listed more than once are compared by (the greatest is
    kept): a date by the instant it names, written in UTC as ``2017-01-05T12:34:50Z`` (a W3C
    Datetime in any offset, an Atom date, an RSS pubDate, whose day name would otherwise
    decide, ``Wed`` over ``Thu``); a date alone as written (``2017-01-05`` comes before that
    day's times); a value that is no date after any date, by its text, so that the record
    keeps it and says it is ``lastmod_invalid`` (a valid value of another listing would hide
    it)."""
    if lastmod_format == "rfc822":
        instant = parse_rfc822_date(lastmod)
    else:
        parsed = parse_w3c_datetime(lastmod)
        if parsed is not None and parsed.date_only:
            return lastmod.strip()
        instant = None if parsed is None else parsed.value
    if instant is None:
        return "\uffff" + lastmod
    if instant.microsecond:
        return instant.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


class NewEntry(NamedTuple):
    """One listing to store: a loc of a sitemap, its lastmod and the URL-rule codes it broke.

    (A named tuple, as :class:`Listing`: one is made per listed URL.)"""

    loc: str
    lastmod: str | None
    lastmod_format: str
    rules: tuple[str, ...]


class Inventory:
    """SQLite-backed store of sitemaps, listings and per-URL progress."""

    def __init__(self, path: str | Path, *, resumable: bool = True) -> None:
        self.path = str(path)
        # Whether a later run may resume from this file: only then are the outcomes of
        # emitted URLs worth writing down (see mark_emitted).
        self.resumable = resumable
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.create_function("lastmod_order", 2, lastmod_order, deterministic=True)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("PRAGMA temp_store=FILE")
        self._db.execute("PRAGMA cache_size=-16000")
        self._check_layout()
        self._db.executescript(_SCHEMA)
        self._cursor = int(self._meta("cursor", "0"))
        self._indexed = self._meta("indexed", "") == "1"
        # mark_emitted's updates, written in batches (see flush()): (id, outcome to keep).
        self._emitted: list[tuple[int, str | None]] = []
        self._flushed_at = time.monotonic()
        self._sitemap_urls: dict[int, str] = {}
        # Distinct URLs and listings stored, kept up to date by _store (None: count them).
        self._totals: tuple[int, int] | None = None
        self.totals()

    def _check_layout(self) -> None:
        try:
            _check_layout(self._db, self.path)
        except ConfigError:
            self._db.close()
            raise

    def close(self) -> None:
        self.flush()
        self._db.close()

    def flush(self) -> None:
        """Write the buffered :meth:`mark_emitted` updates (one transaction)."""
        if not self._emitted:
            return
        rows, self._emitted = self._emitted, []
        self._flushed_at = time.monotonic()
        # Runs of consecutive ids with no outcome to keep take one statement each.
        runs: list[list[int]] = []
        kept: list[tuple[int, str, int]] = []
        for url_id, outcome in rows:
            if outcome is not None:
                kept.append((EMITTED, outcome, url_id))
            elif runs and runs[-1][1] == url_id - 1:
                runs[-1][1] = url_id
            else:
                runs.append([url_id, url_id])
        db = self._db
        db.execute("BEGIN")
        try:
            db.executemany(
                "UPDATE urls SET state = ? WHERE id BETWEEN ? AND ?",
                [(EMITTED, first, last) for first, last in runs],
            )
            db.executemany("UPDATE urls SET state = ?, outcome = ? WHERE id = ?", kept)
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            raise

    def _meta(self, key: str, default: str) -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- listings ------------------------------------------------------------------------------
    def sitemap_id(self, url: str) -> int:
        """The id of a sitemap URL, registering it on first use."""
        self._db.execute("INSERT OR IGNORE INTO sitemaps (url) VALUES (?)", (url,))
        row = self._db.execute("SELECT id FROM sitemaps WHERE url = ?", (url,)).fetchone()
        return int(row[0])

    def add_entries(self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = 5000) -> int:
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
        db.execute("BEGIN IMMEDIATE")
        try:
            last_id = int(db.execute("SELECT COALESCE(MAX(id), 0) FROM urls").fetchone()[0])
            rows = [
                (e.loc, e.lastmod, e.lastmod_format, ",".join(e.rules), sitemap_id) for e in chunk
            ]
            stored = db.executemany(
                "INSERT OR IGNORE INTO urls (url, lastmod, lastmod_format, rules, sitemap_id) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            ).rowcount
            if stored < len(chunk):
                rules: dict[str, set[str]] = {}
                for e in chunk:
                    if e.rules:
                        rules.setdefault(e.loc, set()).update(e.rules)
                relisted = self._relist(sitemap_id, Counter(e.loc for e in chunk), last_id, rules)
                # A URL listed again keeps the greatest <lastmod> of its listings (a non-empty
                # one over none): the same whatever order the sitemaps are read in.
                db.executemany(
                    "UPDATE urls SET lastmod = ?, lastmod_format = ? WHERE url = ? AND "
                    "(lastmod IS NULL OR lastmod_order(lastmod, lastmod_format) < ?)",
                    [
                        (
                            e.lastmod,
                            e.lastmod_format,
                            e.loc,
                            lastmod_order(e.lastmod, e.lastmod_format),
                        )
                        for e in chunk
                        if e.lastmod is not None and e.loc in relisted
                    ],
                )
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            self._totals = None
            raise
        if self._totals is not None:
            # Every entry is one more listing, whichever table keeps it (see _relist).
            urls, listings = self._totals
            self._totals = (urls + stored, listings + len(chunk))
        return len(chunk)

    def _relist(
        self, sitemap_id: int, listed: Counter[str], last_id: int, rules: dict[str, set[str]]
    ) -> set[str]:
        """Some locs of a chunk were listed before (by this chunk or earlier): their listings
        go to the ``listings`` table, the first one too if it was kept in the URL's row. A URL
        keeps the rules any of its listings broke (``out_of_scope`` depends on the sitemap):
        the same whatever order the sitemaps are read in. Returns those locs."""
        db = self._db
        rows: list[tuple[str, int]] = []
        cleared: list[tuple[int]] = []
        merged: list[tuple[str, int]] = []
        relisted: set[str] = set()
        locs = list(listed)
        for start in range(0, len(locs), _LOOKUP_CHUNK):
            part = locs[start : start + _LOOKUP_CHUNK]
            for url_id, url, first, kept in db.execute(
                "SELECT id, url, sitemap_id, rules FROM urls "
                f"WHERE url IN ({','.join('?' * len(part))})",
                part,
            ):
                # A row made by this chunk holds its first listing here.
                again = listed[url] - (1 if url_id > last_id else 0)
                if not again:
                    continue
                relisted.add(url)
                if first is not None:
                    rows.append((url, int(first)))
                    cleared.append((int(url_id),))
                rows.extend([(url, sitemap_id)] * again)
                old = set(kept.split(",")) if kept else set()
                if not rules.get(url, set()) <= old:
                    merged.append((",".join(sorted(old | rules[url])), int(url_id)))
        db.executemany("UPDATE urls SET sitemap_id = NULL WHERE id = ?", cleared)
        db.executemany("INSERT INTO listings (url, sitemap_id) VALUES (?, ?)", rows)
        db.executemany("UPDATE urls SET rules = ? WHERE id = ?", merged)
        return relisted

    # -- sitemap progress (what a resumed audit needs) ------------------------------------------
    def sitemap_pending(self, url: str, ref: dict[str, Any]) -> None:
        """A sitemap is to be fetched (``ref`` says how to request it again after a restart)."""
        self._db.execute(
            "INSERT INTO sitemaps (url, state, ref) VALUES (?, ?, ?) "
            "ON CONFLICT(url) DO UPDATE SET state = excluded.state, ref = excluded.ref",
            (url, SITEMAP_PENDING, json.dumps(ref)),
        )

    def sitemap_reading(self, url: str) -> None:
        """A sitemap is about to be read: drop listings left by an interrupted earlier read."""
        sitemap_id = self.sitemap_id(url)
        db = self._db
        if db.execute(
            "UPDATE sitemaps SET read = 1 WHERE id = ? AND read = 0", (sitemap_id,)
        ).rowcount:
            return
        self._totals = None
        db.execute("BEGIN")
        try:
            db.execute("UPDATE urls SET sitemap_id = NULL WHERE sitemap_id = ?", (sitemap_id,))
            db.execute("DELETE FROM listings WHERE sitemap_id = ?", (sitemap_id,))
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            raise

    def sitemap_done(self, url: str, facts: dict[str, Any]) -> None:
        """A sitemap's record is out: keep its facts so a resumed audit can report it again."""
        self._db.execute(
            "INSERT INTO sitemaps (url, state, facts) VALUES (?, ?, ?) "
            "ON CONFLICT(url) DO UPDATE SET state = excluded.state, facts = excluded.facts",
            (url, SITEMAP_DONE, json.dumps(facts)),
        )

    def sitemap_redirected(self, target: str, source: str, parent: str | None) -> None:
        """The sitemap ``source`` (listed by ``parent``) redirects to ``target``, where it is
        read: a resumed audit knows ``target`` as read once ``source`` is done."""
        self._db.execute(
            "INSERT OR REPLACE INTO sitemap_redirects (target, source, parent) VALUES (?, ?, ?)",
            (target, source, parent),
        )

    def sitemap_redirects(self) -> list[tuple[str, str, str | None]]:
        """``(target, source, parent)`` of every redirect followed from a sitemap."""
        rows = self._db.execute(
            "SELECT target, source, parent FROM sitemap_redirects ORDER BY rowid"
        )
        return [(str(target), str(source), parent) for target, source, parent in rows]

    def pending_sitemaps(self) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT ref FROM sitemaps WHERE state = ? AND ref IS NOT NULL ORDER BY id",
            (SITEMAP_PENDING,),
        )
        return [json.loads(row[0]) for row in rows]

    def done_sitemaps(self) -> Iterator[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT facts FROM sitemaps WHERE state = ? AND facts IS NOT NULL ORDER BY id",
            (SITEMAP_DONE,),
        )
        for (facts,) in rows:
            yield json.loads(facts)

    def sitemap_urls(self) -> list[str]:
        return [str(r[0]) for r in self._db.execute("SELECT url FROM sitemaps ORDER BY id")]

    def prepare_resume(self) -> None:
        """After an interrupted audit: hand out again every URL whose record is not settled,
        and emit again every record (the resumed audit's report is complete on its own)."""
        self.flush()
        db = self._db
        db.execute("UPDATE urls SET state = ? WHERE state = ? AND outcome IS NULL", (NEW, EMITTED))
        db.execute("UPDATE urls SET state = ? WHERE state = ?", (DONE, EMITTED))
        db.execute("DELETE FROM url_notes")
        self._cursor = 0
        self._set_meta("cursor", "0")

    def mark_finished(self) -> None:
        """The audit of this inventory finished: running it again starts a new audit."""
        self.flush()
        self._set_meta("finished", "1")

    def finished(self) -> bool:
        return self._meta("finished", "") == "1"

    def identity(self) -> str | None:
        """What the audit of this inventory audits (see :func:`audit_identity`), if known."""
        value = self._meta("audit", "")
        return value or None

    def set_identity(self, identity: str) -> None:
        self._set_meta("audit", identity)

    def record_start(self, started_at: str) -> None:
        """A new audit starts in this inventory at ``started_at`` (UTC, as the summary)."""
        self._set_meta("started_at", started_at)
        self._set_meta("resumed_at", "[]")

    def record_resume(self, resumed_at: str) -> tuple[str | None, list[str]]:
        """The interrupted audit of this inventory resumes at ``resumed_at``: when it first
        started (``None`` for an inventory that did not keep it) and each time it was resumed,
        this time included."""
        resumes = [*json.loads(self._meta("resumed_at", "[]")), resumed_at]
        self._set_meta("resumed_at", json.dumps(resumes))
        return self._meta("started_at", "") or None, resumes

    def listings_complete(self) -> None:
        """Every sitemap is read: index the listings for the lookups of record building."""
        if not self._indexed:
            self._db.execute("CREATE INDEX IF NOT EXISTS listings_url ON listings (url)")
            self._set_meta("indexed", "1")
            self._indexed = True

    # -- handing URLs out ------------------------------------------------------------------------
    def take_new(self, limit: int) -> list[tuple[int, str, tuple[str, ...], str | None]]:
        """Up to ``limit`` URLs not handed out yet, in listing order:
        ``(id, url, rules, lastmod)``."""
        rows = self._db.execute(
            "SELECT id, url, rules, lastmod FROM urls WHERE id > ? AND state = ? "
            "ORDER BY id LIMIT ?",
            (self._cursor, NEW, limit),
        ).fetchall()
        if rows:
            self._cursor = int(rows[-1][0])
            self._set_meta("cursor", str(self._cursor))
        return [(int(r[0]), str(r[1]), _rules(r[2]), r[3]) for r in rows]

    def take_listed(self, limit: int) -> list[Listing]:
        """:meth:`take_new` with what the sitemaps say about each URL (needs
        :meth:`listings_complete` first)."""
        rows = self._db.execute(
            f"SELECT {_LISTING_COLUMNS} FROM urls WHERE id > ? AND state = ? ORDER BY id LIMIT ?",
            (self._cursor, NEW, limit),
        ).fetchall()
        if rows:
            self._cursor = int(rows[-1][0])
            self._set_meta("cursor", str(self._cursor))
        return self._listings(rows)

    def has_new(self) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM urls WHERE id > ? AND state = ? LIMIT 1", (self._cursor, NEW)
        )
        return row.fetchone() is not None

    def done_count(self) -> int:
        """URLs whose outcome is known and whose record is not out yet (a few at a time, and
        counted on the index of that state)."""
        self.flush()
        row = self._db.execute(f"SELECT COUNT(*) FROM urls WHERE state = {DONE}").fetchone()
        return int(row[0])

    def requested_done_count(self) -> int:
        """Of :meth:`done_count`, the URLs requested by this audit: fetched or failed, not
        settled without a request (not to be fetched, robots-blocked, carried over)."""
        self.flush()
        row = self._db.execute(
            f"SELECT COUNT(*) FROM urls WHERE state = {DONE} AND outcome IS NOT NULL"
            " AND (json_extract(outcome, '$.outcome.status') IS NOT NULL"
            " OR json_extract(outcome, '$.outcome.error') IS NOT NULL)"
            " AND NOT coalesce(json_extract(outcome, '$.outcome.carried_over'), 0)"
        ).fetchone()
        return int(row[0])

    def has_done(self) -> bool:
        self.flush()
        row = self._db.execute(f"SELECT 1 FROM urls WHERE state = {DONE} LIMIT 1")
        return row.fetchone() is not None

    def finish(self, url_id: int, outcome: dict[str, Any] | None) -> None:
        """Record the outcome of one URL (``None`` when it was not fetched)."""
        self._db.execute(
            "UPDATE urls SET state = ?, outcome = ? WHERE id = ?",
            (DONE, None if outcome is None else json.dumps(outcome), url_id),
        )

    def mark_emitted(self, items: Sequence[tuple[int, dict[str, Any] | None]]) -> None:
        """Records are out for these URLs; fetched outcomes are kept for a resumed audit.

        The updates are buffered and written once ``_EMIT_SECONDS`` have passed since the
        last write, or ``_EMIT_BATCH`` are waiting (and before any read of the states and on
        close): one page at a time, a transaction per page cost more than the page. A crash
        (SIGKILL) loses only the updates not written yet, of URLs emitted less than
        ``_EMIT_SECONDS`` after the previous write; a resumed audit requests those again.

        An inventory nothing resumes from writes nothing here: these URLs were handed out
        (the cursor is past them) and their states are never read again. (URLs that waited
        for their records as ``DONE`` are marked by :meth:`take_done`.) Its ``counts()`` then
        leave them out of ``emitted``.
        """
        if not self.resumable:
            return
        self._emitted.extend((url_id, _fetched_json(outcome)) for url_id, outcome in items)
        if (
            len(self._emitted) >= _EMIT_BATCH
            or time.monotonic() - self._flushed_at >= _EMIT_SECONDS
        ):
            self.flush()

    def take_done(self, limit: int) -> list[tuple[int, dict[str, Any] | None]]:
        """Up to ``limit`` finished URLs whose record is not out yet, marked emitted."""
        self.flush()
        rows = self._db.execute(
            f"SELECT id, outcome FROM urls WHERE state = {DONE} ORDER BY id LIMIT ?", (limit,)
        ).fetchall()
        self._db.executemany(
            "UPDATE urls SET state = ? WHERE id = ?", [(EMITTED, int(row[0])) for row in rows]
        )
        return [(int(r[0]), None if r[1] is None else json.loads(r[1])) for r in rows]

    # -- what the sitemaps say -------------------------------------------------------------------
    def listing(self, url_id: int) -> Listing:
        """Everything the sitemaps say about one URL."""
        return self.listings([url_id])[0]

    def listings(self, url_ids: Sequence[int]) -> list[Listing]:
        """:meth:`listing` for many URLs at once (needs :meth:`listings_complete` first)."""
        if not url_ids:
            return []
        marks = ",".join("?" * len(url_ids))
        rows = self._db.execute(
            f"SELECT {_LISTING_COLUMNS} FROM urls WHERE id IN ({marks})", list(url_ids)
        ).fetchall()
        by_id = {int(r[0]): r for r in rows}
        return self._listings([by_id[url_id] for url_id in url_ids])

    def _listings(self, rows: list[tuple[Any, ...]]) -> list[Listing]:
        """The listings of URL rows read with ``_LISTING_COLUMNS``."""
        listed = self._listed([str(r[1]) for r in rows if r[5] is None])
        result = []
        for url_id, url, lastmod, lastmod_format, rules, sitemap_id in rows:
            if sitemap_id is None:
                sitemaps = listed[url]
                urls = tuple(s for s, _ in sitemaps)
                times = sum(c for _, c in sitemaps)
            else:
                urls, times = (self._sitemap_url(sitemap_id),), 1
            result.append(Listing(url_id, url, lastmod, lastmod_format, _rules(rules), urls, times))
        return result

    def _listed(self, urls: list[str]) -> dict[str, list[tuple[str, int]]]:
        """The sitemaps (by URL) and listing counts of URLs whose listings are in ``listings``."""
        sitemaps: dict[str, list[tuple[str, int]]] = {u: [] for u in urls}
        if not urls:
            return sitemaps
        for url, sitemap, count in self._db.execute(
            f"SELECT l.url, s.url, COUNT(*) FROM listings l JOIN sitemaps s ON s.id = l.sitemap_id "
            f"WHERE l.url IN ({','.join('?' * len(urls))}) GROUP BY l.url, s.id ORDER BY s.url",
            urls,
        ):
            sitemaps[str(url)].append((str(sitemap), int(count)))
        return sitemaps

    def _sitemap_url(self, sitemap_id: int) -> str:
        url = self._sitemap_urls.get(sitemap_id)
        if url is None:
            row = self._db.execute("SELECT url FROM sitemaps WHERE id = ?", (sitemap_id,))
            url = self._sitemap_urls[sitemap_id] = str(row.fetchone()[0])
        return url

    def add_url_notes(self, notes: Iterable[tuple[str, str]]) -> int:
        """Attach messages to URLs (found once every sitemap is read); returns how many."""
        db = self._db
        count = 0
        db.execute("BEGIN")
        try:
            for url, note in notes:
                db.execute("INSERT INTO url_notes (url, note) VALUES (?, ?)", (url, note))
                count += 1
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            raise
        return count

    def url_notes(self, url: str) -> list[str]:
        rows = self._db.execute("SELECT note FROM url_notes WHERE url = ? ORDER BY rowid", (url,))
        return [str(row[0]) for row in rows]

    def totals(self) -> tuple[int, int]:
        """``(distinct URLs, listings)`` stored so far: counted once, then kept up to date as
        sitemaps are read (counting a million rows takes a tenth of a second)."""
        if self._totals is None:
            urls = int(self._db.execute("SELECT COUNT(*) FROM urls").fetchone()[0])
            self._totals = (urls, self._listing_count())
        return self._totals

    def _listing_count(self) -> int:
        return int(
            self._db.execute(
                "SELECT (SELECT COUNT(*) FROM listings) "
                "+ (SELECT COUNT(*) FROM urls WHERE sitemap_id IS NOT NULL)"
            ).fetchone()[0]
        )

    def new_count(self) -> int:
        """URLs not handed out yet."""
        row = self._db.execute(
            "SELECT COUNT(*) FROM urls WHERE id > ? AND state = ?", (self._cursor, NEW)
        ).fetchone()
        return int(row[0])

    def counts(self) -> dict[str, int]:
        """Distinct URLs handed out or not, finished, emitted; and the number of listings."""
        self.flush()
        total = int(self._db.execute("SELECT COUNT(*) FROM urls").fetchone()[0])
        new = int(
            self._db.execute(
                "SELECT COUNT(*) FROM urls WHERE id > ? AND state = ?", (self._cursor, NEW)
            ).fetchone()[0]
        )
        by_state = dict.fromkeys((NEW, DONE, EMITTED), 0)
        for state, count in self._db.execute("SELECT state, COUNT(*) FROM urls GROUP BY state"):
            by_state[int(state)] = int(count)
        return {
            "urls": total,
            "new": new,
            "done": by_state[DONE],
            "emitted": by_state[EMITTED],
            "listings": self._listing_count(),
        }

    def iter_urls(self) -> Iterator[str]:
        for (url,) in self._db.execute("SELECT url FROM urls ORDER BY id"):
            yield str(url)


_EMIT_BATCH = 500
_EMIT_SECONDS = 0.1
# Placeholders per SELECT ... IN (...) when looking up the rows of a chunk of locs.
_LOOKUP_CHUNK = 500
# The columns of a URL's row that make its Listing (with _listed and _sitemap_url).
_LISTING_COLUMNS = "id, url, lastmod, lastmod_format, rules, sitemap_id"


def _fetched_json(outcome: dict[str, Any] | None) -> str | None:
    """Only outcomes of requested URLs are worth keeping; the rest are cheap to decide again."""
    if outcome is None or (
        not outcome.get("outcome", {}).get("status") and not outcome.get("outcome", {}).get("error")
    ):
        return None
    return json.dumps(outcome)


def _rules(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(code for code in value.split(",") if code)


def audit_identity(origin: str, sitemaps: Iterable[str], fetch_urls: bool) -> str:
    """What an audit audits, as kept in its inventory: a work directory resumes only the
    audit of the same origin, sitemap arguments and ``fetch_urls``."""
    return json.dumps(
        {"origin": origin, "sitemaps": sorted(sitemaps), "fetch_urls": fetch_urls},
        sort_keys=True,
    )


def check_resumable(path: str | Path, identity: str | None = None) -> None:
    """Raise :class:`ConfigError` when ``path`` holds an inventory this version cannot resume,
    or the interrupted audit of something else than ``identity`` (nothing there, or a finished
    audit, is fine: the audit starts afresh)."""
    if not Path(path).is_file():
        return
    db = sqlite3.connect(str(path))
    try:
        _check_layout(db, str(path))
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        meta: dict[str, str] = (
            dict(db.execute("SELECT key, value FROM meta WHERE key IN ('finished', 'audit')"))
            if "meta" in tables
            else {}
        )
    except sqlite3.DatabaseError as exc:
        if not is_damaged(exc):
            raise ConfigError(
                f"the inventory {path} (JOBDIR or SITEMAPAUDIT_WORK_DIR) cannot be read: "
                f"{exc}{storage_detail(exc, path)}"
            ) from None
        raise ConfigError(
            f"{path} is not an inventory sitemapaudit can resume ({exc}): start the audit "
            "with a new JOBDIR (or SITEMAPAUDIT_WORK_DIR)"
        ) from None
    finally:
        db.close()
    stored = meta.get("audit")
    if identity is None or meta.get("finished") == "1" or not stored or stored == identity:
        return
    raise ConfigError(
        f"{path} holds the interrupted audit of {_described(stored)}, not of "
        f"{_described(identity)}: resume it with the same arguments, or start this audit with "
        "another JOBDIR (or SITEMAPAUDIT_WORK_DIR)"
    )


def _described(identity: str) -> str:
    data = json.loads(identity)
    sitemaps = ", ".join(data.get("sitemaps") or []) or "discovered sitemaps"
    fetch = "fetch_urls=yes" if data.get("fetch_urls") else "fetch_urls=no"
    return f"{data.get('origin')} ({sitemaps}; {fetch})"


def _check_layout(db: sqlite3.Connection, path: str) -> None:
    """An inventory of an interrupted audit must have this version's tables to resume."""
    columns = {str(row[1]) for row in db.execute("PRAGMA table_info(urls)")}
    if columns and "sitemap_id" not in columns:
        raise ConfigError(
            f"{path} holds an interrupted audit of an earlier sitemapaudit version, which this "
            "version cannot resume: start the audit again with a new JOBDIR "
            "(or SITEMAPAUDIT_WORK_DIR)"
        )
