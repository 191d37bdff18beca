"""The history of audit runs: one SQLite file holding every run of every origin.

Each run keeps the facts of its report records that a later run is compared on, plus what
the crawl needs to reuse a sitemap that answers ``304 Not Modified`` (its listings and its
``ETag``/``Last-Modified`` validators). URLs and sitemap URLs are stored once, in the ``locs``
table, and the results of a run refer to them by id; a sitemap's listings are kept as
compressed chunks of its entries in order. A nightly run adds two rows of integers and dates
per URL, about 70 bytes per URL in all.

Writes of report records are buffered and committed in batches; every read first commits
what is pending, so a reader always sees what was added. Nothing here loads a whole run into
memory: reads stream from SQL cursors.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from sitemapaudit.errors import ConfigError, SitemapAuditError
from sitemapaudit.report.records import another_run
from sitemapaudit.sqlitefiles import is_damaged, roll_back, storage_detail
from sitemapaudit.urls import usable_canonical

# 2: a sitemap's listings are stored as compressed chunks (``listing_chunks``). Version 1
# files are read as they are (their ``listings`` rows) and written in the new layout, after
# which earlier versions of sitemapaudit, which would not see the new listings, refuse them.
SCHEMA_VERSION = 2
# A sitemap's validators also keep when the findings of its body that depend on the time would
# change (``rejudge_after``): version 2 files gain the column when this version opens them to
# write. Earlier versions of sitemapaudit go on reading and writing them (they leave the
# column to its default), so the schema version stays 2; the default, this value, says the
# moment is not known.
REJUDGE_UNKNOWN = ""
# A sitemap's result also keeps what a later 304 reports of it as the run that read its body
# did: its error lines (JSON text), whether it was a gzip file, its bytes, and the run that
# read the body (``read_run``; a 304 keeps the one it carries over). Version 2 files gain
# these columns the way they gain ``rejudge_after``; the rows earlier versions write leave
# them NULL, which says they are not known.
_SITEMAP_DETAILS = (
    ("errors", "TEXT"),
    ("gzip", "INTEGER"),
    ("bytes", "INTEGER"),
    ("read_run", "INTEGER"),
)
# A URL's result also keeps whether the page's canonical is one search engines ignore (not an
# http(s) URL, ``canonical_ignored``), for the diff's indexability: version 2 files gain the
# column when this version opens them to write, as for ``rejudge_after``. Rows written without
# it (by earlier versions) read 0, as those versions judged every canonical_mismatch.
# It keeps the canonical itself too (``canonical``, for the record of a result the incremental
# policy carries over): NULL when the page named none, or when an earlier version wrote the
# row; '' when it is the URL itself, as it mostly is, so that the file does not hold every URL
# twice.
# Indexes of version 1 that no query needs: results are looked up by run, then URL (the
# primary keys).
_DROPPED_INDEXES = ("url_results_url", "url_sitemaps_sitemap")

URL_RECORD = 0
SITEMAP_RECORD = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    origin TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    url_count INTEGER NOT NULL DEFAULT 0,
    sitemap_count INTEGER NOT NULL DEFAULT 0,
    summary TEXT
);
CREATE INDEX IF NOT EXISTS runs_origin ON runs (origin, id);
CREATE TABLE IF NOT EXISTS locs (id INTEGER PRIMARY KEY, loc TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS url_results (
    run_id INTEGER NOT NULL,
    url_id INTEGER NOT NULL,
    status INTEGER,
    fetched INTEGER NOT NULL,
    fetch_failed INTEGER NOT NULL,
    final_url TEXT,
    noindex TEXT NOT NULL,
    robots_blocked INTEGER NOT NULL,
    lastmod TEXT,
    last_modified TEXT,
    checked_at TEXT,
    canonical_ignored INTEGER NOT NULL DEFAULT 0,
    canonical TEXT,
    PRIMARY KEY (run_id, url_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS url_sitemaps (
    run_id INTEGER NOT NULL,
    url_id INTEGER NOT NULL,
    sitemap_id INTEGER NOT NULL,
    PRIMARY KEY (run_id, url_id, sitemap_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sitemap_results (
    run_id INTEGER NOT NULL,
    sitemap_id INTEGER NOT NULL,
    found_via TEXT,
    parent_id INTEGER,
    kind TEXT,
    status INTEGER,
    fetch_failed INTEGER NOT NULL,
    url_count INTEGER NOT NULL,
    errors TEXT,
    gzip INTEGER,
    bytes INTEGER,
    read_run INTEGER,
    PRIMARY KEY (run_id, sitemap_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS findings (
    run_id INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    loc_id INTEGER NOT NULL,
    code TEXT NOT NULL,
    PRIMARY KEY (run_id, kind, loc_id, code)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS findings_code ON findings (run_id, code);
CREATE TABLE IF NOT EXISTS listings (
    run_id INTEGER NOT NULL,
    sitemap_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    loc_id INTEGER NOT NULL,
    lastmod TEXT,
    lastmod_format TEXT NOT NULL,
    PRIMARY KEY (run_id, sitemap_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS listing_chunks (
    run_id INTEGER NOT NULL,
    sitemap_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    entries BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS listing_chunks_key ON listing_chunks (run_id, sitemap_id, seq);
CREATE TABLE IF NOT EXISTS validators (
    run_id INTEGER NOT NULL,
    sitemap_id INTEGER NOT NULL,
    etag TEXT,
    last_modified TEXT,
    rejudge_after TEXT DEFAULT '',
    PRIMARY KEY (run_id, sitemap_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS validators_sitemap ON validators (sitemap_id, run_id);
"""

_RUN_TABLES = (
    "url_results",
    "url_sitemaps",
    "sitemap_results",
    "findings",
    "listings",
    "listing_chunks",
    "validators",
)

# Seconds a connection waits for another one's lock (SQLite's busy timeout).
_LOCK_WAIT = 30.0
# Placeholders per SELECT ... IN (...) when looking up the ids of a batch of locations.
_LOOKUP_CHUNK = 500
# Rows read per query when paging through a run's listings.
_PAGE = 1000


# A buffered record: its URL, the URLs it refers to (sitemaps, or its parent), its finding
# codes and its column values.
_Buffered = tuple[str, Sequence[str], Sequence[str], tuple[Any, ...]]


class HistoryError(SitemapAuditError):
    """The history database or a report file cannot be used (the message says why)."""


STORE_FAILURES: tuple[type[Exception], ...] = (HistoryError, sqlite3.Error)
"""What a store raises when its file cannot be read or written any more (a full disk, an I/O
error, a writer process that died): a :class:`HistoryError`, or SQLite's own error from a
store that writes in-process."""


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One stored run. ``finished_at`` is ``None`` while the run is still being written."""

    id: int
    origin: str
    started_at: str
    finished_at: str | None
    url_count: int
    sitemap_count: int


class HistoryStore:
    """SQLite history of audit runs (one file, an origin column).

    Opening a path that does not exist creates the database. ``batch_size`` is how many
    report records :meth:`add_record` buffers before committing them. With ``read_only``
    the file must already be a history database; it is opened for reading and never
    changed. ``cache_kib`` is SQLite's page cache of the connection, in KiB.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 5000,
        read_only: bool = False,
        cache_kib: int = 16000,
    ) -> None:
        self.path = str(path)
        self.batch_size = max(1, batch_size)
        self.read_only = read_only
        self.cache_kib = cache_kib
        self._urls: list[_Buffered] = []
        self._sitemaps: list[_Buffered] = []
        self._pending_run: int | None = None
        try:
            if read_only:
                uri = Path(self.path).absolute().as_uri() + "?mode=ro"
                self._db = sqlite3.connect(
                    uri, uri=True, isolation_level=None, check_same_thread=False, timeout=_LOCK_WAIT
                )
            else:
                self._db = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False, timeout=_LOCK_WAIT
                )
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot open the history database {self.path}: {exc}") from None
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if is_damaged(exc):
                raise HistoryError(f"{self.path} is not a usable history database: {exc}") from None
            verb = "read" if read_only else "write to"
            raise HistoryError(
                f"cannot {verb} the history database {self.path}: {exc}"
                f"{storage_detail(exc, self.path)}"
            ) from None
        except HistoryError:
            self._db.close()
            raise

    def _setup(self) -> None:
        db = self._db
        db.execute("PRAGMA temp_store=FILE")
        db.execute(f"PRAGMA cache_size=-{int(self.cache_kib)}")
        if self.read_only:
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
            ).fetchone()
            if found is None:
                raise HistoryError(f"{self.path} is not a history database")
            self._check_version()
        else:
            _use_wal(db)
            db.execute("PRAGMA synchronous=NORMAL")
            # One write transaction, taken up front: audits that start together (cron, scrapyd)
            # on a new file wait for each other here instead of failing with "database is
            # locked" (SQLite does not wait for a lock it would have to upgrade to).
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                if self._check_version() < SCHEMA_VERSION:
                    for index in _DROPPED_INDEXES:
                        db.execute(f"DROP INDEX IF EXISTS {index}")
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                if not _has_column(db, "validators", "rejudge_after"):
                    db.execute(
                        "ALTER TABLE validators ADD COLUMN rejudge_after TEXT "
                        f"DEFAULT '{REJUDGE_UNKNOWN}'"
                    )
                for column, sql_type in _SITEMAP_DETAILS:
                    if not _has_column(db, "sitemap_results", column):
                        db.execute(f"ALTER TABLE sitemap_results ADD COLUMN {column} {sql_type}")
                if not _has_column(db, "url_results", "canonical_ignored"):
                    db.execute(
                        "ALTER TABLE url_results ADD COLUMN canonical_ignored INTEGER NOT NULL "
                        "DEFAULT 0"
                    )
                if not _has_column(db, "url_results", "canonical"):
                    db.execute("ALTER TABLE url_results ADD COLUMN canonical TEXT")
                db.execute("COMMIT")
            except BaseException:
                roll_back(db)
                raise
        self._chunked = (
            db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'listing_chunks'"
            ).fetchone()
            is not None
        )
        # (A file opened read-only keeps the layout it has.)
        self._rejudge_kept = _has_column(db, "validators", "rejudge_after")
        self._details_kept = all(
            _has_column(db, "sitemap_results", column) for column, _ in _SITEMAP_DETAILS
        )
        # Whether the file keeps ``canonical_ignored`` (one of an earlier version opened
        # read-only may not).
        self.canonical_kept = _has_column(db, "url_results", "canonical_ignored")
        self._canonical_text_kept = _has_column(db, "url_results", "canonical")
        self._url_result_columns = _URL_RESULT_COLUMNS + (
            "r.canonical" if self._canonical_text_kept else "NULL"
        )

    def _check_version(self) -> int:
        """The file's schema version (0 for a new file); refuses versions it cannot read."""
        row = self._db.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row[0] is not None and int(row[0]) > SCHEMA_VERSION:
            raise HistoryError(
                f"{self.path} has history schema version {row[0]}; this version of "
                f"sitemapaudit reads versions up to {SCHEMA_VERSION}"
            )
        if row[0] is None and self.read_only:
            raise HistoryError(f"{self.path} has no history schema version")
        return 0 if row[0] is None else int(row[0])

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Commit what is pending and close the database."""
        try:
            self.flush()
        finally:
            self._db.close()

    # Runs

    def begin_run(self, origin: str, started_at: str) -> int:
        """Start a run of ``origin`` and return its id."""
        cursor = self._db.execute(
            "INSERT INTO runs (origin, started_at) VALUES (?, ?)", (origin, started_at)
        )
        return int(cursor.lastrowid or 0)

    def finish_run(self, run_id: int, finished_at: str, summary: Mapping[str, Any]) -> None:
        """Commit the run's pending records and mark it finished with its summary record."""
        self.flush()
        url_count = self._count("url_results", run_id)
        sitemap_count = self._count("sitemap_results", run_id)
        self._db.execute(
            "UPDATE runs SET finished_at = ?, summary = ?, url_count = ?, sitemap_count = ? "
            "WHERE id = ?",
            (finished_at, json.dumps(dict(summary), default=str), url_count, sitemap_count, run_id),
        )

    def _count(self, table: str, run_id: int) -> int:
        row = self._db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?", (run_id,))
        return int(row.fetchone()[0])

    def previous_run(self, origin: str, before: int) -> int | None:
        """The latest finished run of ``origin`` whose id is lower than ``before``."""
        self.flush()
        row = self._db.execute(
            "SELECT MAX(id) FROM runs WHERE origin = ? AND id < ? AND finished_at IS NOT NULL",
            (origin, before),
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def run(self, run_id: int) -> RunInfo | None:
        """One run, or ``None`` when there is no run with that id."""
        rows = self._run_infos("WHERE id = ?", (run_id,))
        return rows[0] if rows else None

    def runs(self, origin: str | None = None) -> list[RunInfo]:
        """Every run (of ``origin`` when given), oldest first."""
        if origin is None:
            return self._run_infos("", ())
        return self._run_infos("WHERE origin = ?", (origin,))

    def _run_infos(self, where: str, params: Sequence[Any]) -> list[RunInfo]:
        self.flush()
        rows = self._db.execute(
            "SELECT id, origin, started_at, finished_at, "
            "CASE WHEN finished_at IS NULL "
            "THEN (SELECT COUNT(*) FROM url_results u WHERE u.run_id = runs.id) "
            "ELSE url_count END, "
            "CASE WHEN finished_at IS NULL "
            "THEN (SELECT COUNT(*) FROM sitemap_results s WHERE s.run_id = runs.id) "
            f"ELSE sitemap_count END FROM runs {where} ORDER BY id",
            params,
        )
        return [
            RunInfo(
                id=int(r[0]),
                origin=str(r[1]),
                started_at=str(r[2]),
                finished_at=r[3],
                url_count=int(r[4]),
                sitemap_count=int(r[5]),
            )
            for r in rows
        ]

    def summary(self, run_id: int) -> dict[str, Any] | None:
        """The summary record a finished run was stored with."""
        row = self._db.execute("SELECT summary FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None or row[0] is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def delete_run(self, run_id: int) -> None:
        """Remove a run and everything stored with it."""
        self.flush()
        db = self._db
        db.execute("BEGIN")
        try:
            for table in _RUN_TABLES:
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            raise

    def drop_parts(self, run_id: int) -> list[int]:
        """Delete the unfinished runs of the audit that ``run_id`` finished once resumed (those
        of its origin that began when it began: a resumed audit keeps its first start); returns
        their ids. The finished run holds every record of the audit, so its interrupted parts
        only stood in the way of the next diff and of pruning."""
        self.flush()
        row = self._db.execute(
            "SELECT origin, started_at FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None:
            return []
        parts = [
            int(part[0])
            for part in self._db.execute(
                "SELECT id FROM runs WHERE origin = ? AND started_at = ? AND finished_at IS NULL "
                "AND id <> ? ORDER BY id",
                (row[0], row[1], run_id),
            ).fetchall()
        ]
        for part in sorted(parts, reverse=True):  # the latest part's reads first
            self._keep_reusable_sitemaps(part, run_id)
            self.delete_run(part)
        return parts

    def _keep_reusable_sitemaps(self, part: int, run_id: int) -> None:
        """Hand the entries and validators of the sitemaps that ``part`` read, and that
        ``run_id`` did not read again, to ``run_id``: the next run's 304 reuses them."""
        db = self._db
        db.execute("BEGIN")
        try:
            for table in ("listing_chunks", "listings"):
                db.execute(
                    f"UPDATE {table} SET run_id = :run WHERE run_id = :part AND sitemap_id NOT IN "
                    f"(SELECT sitemap_id FROM {table} WHERE run_id = :run)",
                    {"run": run_id, "part": part},
                )
            db.execute(
                "UPDATE OR IGNORE validators SET run_id = :run WHERE run_id = :part",
                {"run": run_id, "part": part},
            )
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            raise

    def prune_runs(self, origin: str, keep: int) -> list[int]:
        """Delete the finished runs of ``origin`` but the newest ``keep``; returns their ids.

        Each run holds what a later run needs of it (a sitemap's listings and validators are
        stored again by every run that reads the sitemap, a 304 included), so the newest run
        alone is enough for the next diff and the next conditional fetch. Runs that never
        finished (an interrupted audit) are left as they are. SQLite reuses the freed pages,
        so a history pruned after every run stops growing once its oldest runs go.
        """
        if keep < 1:
            raise ValueError(f"keep must be at least 1, not {keep}")
        self.flush()
        rows = self._db.execute(
            "SELECT id FROM runs WHERE origin = ? AND finished_at IS NOT NULL "
            "ORDER BY id DESC LIMIT -1 OFFSET ?",
            (origin, keep),
        ).fetchall()
        deleted = [int(row[0]) for row in rows]
        for run_id in deleted:
            self.delete_run(run_id)
        return deleted

    # Records

    def add_record(self, run_id: int, record: Mapping[str, Any]) -> None:
        """Store one report record (``"url"`` or ``"sitemap"``; other records are ignored).

        A sitemap record that answered 304 (``not_modified``) may name the run that read the
        body it stands for as ``read_run`` (not a field of the report); any other sitemap
        record was read by this run.

        Records are buffered and committed every ``batch_size`` records, by
        :meth:`finish_run`, by :meth:`close` and before any read.
        """
        kind = record.get("record")
        url = record.get("url")
        if kind not in ("url", "sitemap") or not isinstance(url, str):
            return
        issues = _strings(record.get("issues"))
        if kind == "url":
            ignored = record.get("canonical_ignored")
            canonical = record.get("canonical")
            if not isinstance(ignored, bool):
                ignored = isinstance(canonical, str) and not usable_canonical(canonical)
            self.add_url(
                run_id,
                url,
                _strings(record.get("sitemaps")),
                issues,
                status=_int(record.get("status")),
                fetched=bool(record.get("fetched")),
                final_url=_text(record.get("final_url")),
                noindex=_strings(record.get("noindex")),
                robots_blocked=bool(record.get("robots_blocked")),
                lastmod=_text(record.get("lastmod")),
                last_modified=_text(record.get("last_modified")),
                checked_at=_text(record.get("checked_at")),
                canonical_ignored=ignored,
                canonical=_text(canonical),
            )
            return
        self._pending(run_id)
        parent = _text(record.get("parent"))
        errors = record.get("errors")
        gzip_file = record.get("gzip")
        values = (
            _text(record.get("found_via")),
            _text(record.get("kind")),
            _int(record.get("status")),
            int("fetch_failed" in issues),
            _int(record.get("url_count")) or 0,
            json.dumps(_strings(errors), ensure_ascii=False)
            if isinstance(errors, list | tuple)
            else None,
            int(gzip_file) if isinstance(gzip_file, bool) else None,
            _int(record.get("bytes")),
            _int(record.get("read_run")) if record.get("not_modified") else run_id,
        )
        self._sitemaps.append((url, [] if parent is None else [parent], issues, values))
        self._added()

    def add_url(
        self,
        run_id: int,
        url: str,
        sitemaps: Sequence[str],
        issues: Sequence[str],
        *,
        status: int | None,
        fetched: bool,
        final_url: str | None,
        noindex: Sequence[str],
        robots_blocked: bool,
        lastmod: str | None,
        last_modified: str | None,
        checked_at: str | None,
        canonical_ignored: bool = False,
        canonical: str | None = None,
    ) -> None:
        """Store one ``"url"`` record given as its typed fields (see :meth:`add_record`);
        ``canonical_ignored``: the page's canonical is not an http(s) URL."""
        self._pending(run_id)
        values = (
            status,
            int(fetched),
            int("fetch_failed" in issues),
            final_url,
            ",".join(noindex),
            int(robots_blocked),
            lastmod,
            last_modified,
            checked_at,
            int(canonical_ignored),
            "" if canonical == url else canonical,
        )
        self._urls.append((url, tuple(sitemaps), tuple(issues), values))
        self._added()

    def _pending(self, run_id: int) -> None:
        if self._pending_run is not None and self._pending_run != run_id:
            self.flush()
        self._pending_run = run_id

    def _added(self) -> None:
        if len(self._urls) + len(self._sitemaps) >= self.batch_size:
            self._write_buffered()

    def flush(self) -> None:
        """Commit the buffered records."""
        self._write_buffered()

    def _write_buffered(self) -> None:
        """Write the buffered records (and empty the buffer)."""
        taken = self._take_buffered()
        if taken is not None:
            self.commit_rows(*taken)

    def _take_buffered(self) -> tuple[int, list[_Buffered], list[_Buffered]] | None:
        """The run and the URL and sitemap rows buffered for it, taken out of the buffer."""
        run_id = self._pending_run
        urls, sitemaps = self._urls, self._sitemaps
        if run_id is None or not (urls or sitemaps):
            return None
        self._urls, self._sitemaps, self._pending_run = [], [], None
        return run_id, urls, sitemaps

    def commit_rows(
        self, run_id: int, urls: Sequence[_Buffered], sitemaps: Sequence[_Buffered]
    ) -> None:
        """Write one batch of buffered URL and sitemap rows of a run in one transaction."""
        # (A batch of URL records names a few sitemaps thousands of times: one union.)
        locs = {row[0] for row in urls}.union(*[row[1] for row in urls])
        for url, related, _, _ in sitemaps:
            locs.add(url)
            locs.update(related)
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            ids = self._intern(locs)
            self._write_urls(run_id, urls, ids)
            self._write_sitemaps(run_id, sitemaps, ids)
            db.execute("COMMIT")
        except BaseException:
            roll_back(db)
            raise

    def _intern(self, locs: Iterable[str]) -> dict[str, int]:
        """The ids of ``locs``, adding the new ones (inside a write transaction)."""
        db = self._db
        ordered = sorted(set(locs))
        ids: dict[str, int] = {}
        for start in range(0, len(ordered), _LOOKUP_CHUNK):
            chunk = ordered[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(f"SELECT id, loc FROM locs WHERE loc IN ({marks})", chunk)
            ids.update((loc, int(loc_id)) for loc_id, loc in rows)
        new = [loc for loc in ordered if loc not in ids]
        if new:
            # A new row's id is one more than the largest one (SQLite's rowid rule): the new
            # locs get the ids that follow the last one, in order.
            last = int(db.execute("SELECT COALESCE(MAX(id), 0) FROM locs").fetchone()[0])
            db.executemany("INSERT INTO locs (loc) VALUES (?)", ((loc,) for loc in new))
            ids.update(zip(new, range(last + 1, last + 1 + len(new)), strict=True))
        return ids

    def _loc_id(self, loc: str, *, create: bool) -> int | None:
        if create:
            self._db.execute("INSERT OR IGNORE INTO locs (loc) VALUES (?)", (loc,))
        row = self._db.execute("SELECT id FROM locs WHERE loc = ?", (loc,)).fetchone()
        return None if row is None else int(row[0])

    def _write_urls(self, run_id: int, rows: Sequence[_Buffered], ids: dict[str, int]) -> None:
        if not rows:
            return
        results: list[tuple[Any, ...]] = []
        listed: list[tuple[int, int, int]] = []
        findings: list[tuple[int, int, int, str]] = []
        for url, sitemaps, issues, values in rows:
            url_id = ids[url]
            results.append((run_id, url_id, *values))
            listed.extend([(run_id, url_id, ids[s]) for s in sitemaps])
            findings.extend([(run_id, URL_RECORD, url_id, code) for code in issues])
        db = self._db
        db.executemany(
            "INSERT OR REPLACE INTO url_results (run_id, url_id, status, fetched, fetch_failed, "
            "final_url, noindex, robots_blocked, lastmod, last_modified, checked_at, "
            "canonical_ignored, canonical) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            results,
        )
        db.executemany(
            "INSERT OR IGNORE INTO url_sitemaps (run_id, url_id, sitemap_id) VALUES (?, ?, ?)",
            listed,
        )
        db.executemany(
            "INSERT OR IGNORE INTO findings (run_id, kind, loc_id, code) VALUES (?, ?, ?, ?)",
            findings,
        )

    def _write_sitemaps(self, run_id: int, rows: Sequence[_Buffered], ids: dict[str, int]) -> None:
        if not rows:
            return
        results: list[tuple[Any, ...]] = []
        findings: list[tuple[int, int, int, str]] = []
        for url, parent, issues, values in rows:
            sitemap_id = ids[url]
            parent_id = ids[parent[0]] if parent else None
            found_via, kind, status, *rest = values
            results.append((run_id, sitemap_id, found_via, parent_id, kind, status, *rest))
            findings.extend([(run_id, SITEMAP_RECORD, sitemap_id, code) for code in issues])
        db = self._db
        db.executemany(
            "INSERT OR REPLACE INTO sitemap_results (run_id, sitemap_id, found_via, parent_id, "
            "kind, status, fetch_failed, url_count, errors, gzip, bytes, read_run) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            results,
        )
        db.executemany(
            "INSERT OR IGNORE INTO findings (run_id, kind, loc_id, code) VALUES (?, ?, ?, ?)",
            findings,
        )

    def records(self, run_id: int) -> Iterator[dict[str, Any]]:
        """The stored facts of a run as report-like records: sitemaps first, then URLs.

        Only the fields the history keeps are present; lists are sorted.
        """
        self.flush()
        sitemap_rows = self._db.execute(
            "SELECT l.loc, r.found_via, p.loc, r.kind, r.status, r.url_count, "
            "(SELECT json_group_array(f.code) FROM findings f WHERE f.run_id = r.run_id "
            f"AND f.kind = {SITEMAP_RECORD} AND f.loc_id = r.sitemap_id) "
            "FROM sitemap_results r JOIN locs l ON l.id = r.sitemap_id "
            "LEFT JOIN locs p ON p.id = r.parent_id WHERE r.run_id = ?",
            (run_id,),
        )
        for row in sitemap_rows:
            yield {
                "record": "sitemap",
                "url": row[0],
                "found_via": row[1],
                "parent": row[2],
                "kind": row[3],
                "status": row[4],
                "url_count": row[5],
                "issues": sorted(json.loads(row[6])),
            }
        url_rows = self._db.execute(
            "SELECT l.loc, "
            "(SELECT json_group_array(s.loc) FROM url_sitemaps us JOIN locs s "
            "ON s.id = us.sitemap_id WHERE us.run_id = r.run_id AND us.url_id = r.url_id), "
            "r.lastmod, r.status, r.fetched, r.final_url, r.last_modified, r.noindex, "
            "r.robots_blocked, "
            "(SELECT json_group_array(f.code) FROM findings f WHERE f.run_id = r.run_id "
            f"AND f.kind = {URL_RECORD} AND f.loc_id = r.url_id), "
            f"r.checked_at, {'r.canonical_ignored' if self.canonical_kept else '0'}, "
            f"{'r.canonical' if self._canonical_text_kept else 'NULL'} "
            "FROM url_results r JOIN locs l ON l.id = r.url_id WHERE r.run_id = ?",
            (run_id,),
        )
        for row in url_rows:
            yield {
                "record": "url",
                "url": row[0],
                "sitemaps": sorted(json.loads(row[1])),
                "lastmod": row[2],
                "status": row[3],
                "fetched": bool(row[4]),
                "final_url": row[5],
                "last_modified": row[6],
                "noindex": [x for x in str(row[7]).split(",") if x],
                "robots_blocked": bool(row[8]),
                "issues": sorted(json.loads(row[9])),
                "checked_at": row[10],
                "canonical_ignored": bool(row[11]),
                "canonical": _canonical(row[0], row[12]),
            }

    def sitemap_record(self, run_id: int, sitemap_url: str) -> dict[str, Any] | None:
        """One stored sitemap record of a run, or ``None``: the fields :meth:`records` gives,
        and what a 304 reports of it as the run that read its body did: ``errors`` (its error
        lines), ``gzip``, ``bytes`` and ``read_run`` (the run that read the body), each
        ``None`` when not known (kept by an earlier version of sitemapaudit)."""
        self.flush()
        sitemap_id = self._loc_id(sitemap_url, create=False)
        if sitemap_id is None:
            return None
        details = (
            "r.errors, r.gzip, r.bytes, r.read_run"
            if self._details_kept
            else "NULL, NULL, NULL, NULL"
        )
        row = self._db.execute(
            "SELECT r.found_via, p.loc, r.kind, r.status, r.url_count, "
            "(SELECT json_group_array(f.code) FROM findings f WHERE f.run_id = r.run_id "
            f"AND f.kind = {SITEMAP_RECORD} AND f.loc_id = r.sitemap_id), {details} "
            "FROM sitemap_results r LEFT JOIN locs p ON p.id = r.parent_id "
            "WHERE r.run_id = ? AND r.sitemap_id = ?",
            (run_id, sitemap_id),
        ).fetchone()
        if row is None:
            return None
        errors = None if row[6] is None else json.loads(row[6])
        return {
            "record": "sitemap",
            "url": sitemap_url,
            "found_via": row[0],
            "parent": row[1],
            "kind": row[2],
            "status": row[3],
            "url_count": row[4],
            "issues": sorted(json.loads(row[5])),
            "errors": _strings(errors) if isinstance(errors, list) else None,
            "gzip": None if row[7] is None else bool(row[7]),
            "bytes": row[8],
            "read_run": row[9],
        }

    def url_history(self, origin: str, url: str, limit: int = 10) -> list[dict[str, Any]]:
        """The latest results of one URL in finished runs of ``origin``, newest first."""
        self.flush()
        url_id = self._loc_id(url, create=False)
        if url_id is None:
            return []
        rows = self._db.execute(
            # The origin's runs, newest first, then the URL's row in each (by primary key).
            f"SELECT {self._url_result_columns} FROM runs run CROSS JOIN url_results r "
            "WHERE run.origin = ? AND run.finished_at IS NOT NULL "
            "AND r.run_id = run.id AND r.url_id = ? "
            "ORDER BY run.id DESC LIMIT ?",
            (origin, url_id, limit),
        )
        return [_url_result(url, row) for row in rows]

    def url_result(self, run_id: int, url: str) -> dict[str, Any] | None:
        """One URL's result in one run (the fields of :meth:`url_history`), or ``None``."""
        self.flush()
        url_id = self._loc_id(url, create=False)
        if url_id is None:
            return None
        row = self._db.execute(
            f"SELECT {self._url_result_columns} FROM url_results r "
            "JOIN runs run ON run.id = r.run_id WHERE r.run_id = ? AND r.url_id = ?",
            (run_id, url_id),
        ).fetchone()
        return None if row is None else _url_result(url, row)

    def check_age(self, origin: str, url: str, run_id: int, limit: int) -> int:
        """The age, in finished runs of ``origin``, of the check behind ``url``'s result in the
        finished run ``run_id``: 1 when that run requested it, 2 when it carried over the
        result of the run before, and so on (a carried-over result keeps its ``checked_at``);
        at most ``limit``, and 0 when the run has no result for ``url``."""
        self.flush()
        url_id = self._loc_id(url, create=False)
        if url_id is None:
            return 0
        rows = self._db.execute(
            # The origin's finished runs up to run_id, newest first, then the URL's row in each.
            "SELECT run.id, r.checked_at FROM runs run CROSS JOIN url_results r "
            "WHERE run.origin = ? AND run.finished_at IS NOT NULL AND run.id <= ? "
            "AND r.run_id = run.id AND r.url_id = ? ORDER BY run.id DESC LIMIT ?",
            (origin, run_id, url_id, limit),
        ).fetchall()
        if not rows or rows[0][0] != run_id:
            return 0
        checked_at = rows[0][1]
        if checked_at is None:
            return 1
        age = 0
        for _, other in rows:
            if other != checked_at:
                break
            age += 1
        return age

    # Sitemap listings and validators, for reuse when a sitemap answers 304

    def add_listings(
        self,
        run_id: int,
        sitemap_url: str,
        entries: Iterable[tuple[str, str | None, str]],
        batch: int = 5000,
    ) -> None:
        """Store the ``(loc, lastmod, lastmod_format)`` entries of one sitemap, in order.

        Entries stream in and are stored every ``batch`` entries, each batch as one
        compressed chunk; a second call for the same run and sitemap appends.
        """
        sitemap_id = self._loc_id(sitemap_url, create=True)
        assert sitemap_id is not None
        row = self._db.execute(
            "SELECT MAX(seq + count) FROM listing_chunks WHERE run_id = ? AND sitemap_id = ?",
            (run_id, sitemap_id),
        ).fetchone()
        seq = 0 if row[0] is None else int(row[0])
        for chunk in listing_chunks(entries, batch):
            self._store_listings(run_id, sitemap_id, seq, chunk)
            seq += len(chunk)

    def _store_listings(
        self, run_id: int, sitemap_id: int, seq: int, chunk: list[tuple[str, str | None, str]]
    ) -> None:
        data = zlib.compress(
            json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        )
        self._db.execute(
            "INSERT OR REPLACE INTO listing_chunks (run_id, sitemap_id, seq, count, entries) "
            "VALUES (?, ?, ?, ?, ?)",
            (run_id, sitemap_id, seq, len(chunk), data),
        )

    def listings(self, run_id: int, sitemap_url: str) -> Iterator[tuple[str, str | None, str]]:
        """The stored entries of one sitemap in one run, in the order they were stored."""
        sitemap_id = self._loc_id(sitemap_url, create=False)
        if sitemap_id is None:
            return
        found = False
        if self._chunked:
            seq = -1
            while True:
                row = self._db.execute(
                    "SELECT seq, entries FROM listing_chunks "
                    "WHERE run_id = ? AND sitemap_id = ? AND seq > ? ORDER BY seq LIMIT 1",
                    (run_id, sitemap_id, seq),
                ).fetchone()
                if row is None:
                    break
                found, seq = True, int(row[0])
                for loc, lastmod, fmt in json.loads(zlib.decompress(row[1])):
                    yield (str(loc), lastmod, str(fmt))
        if not found:
            yield from self._listing_rows(run_id, sitemap_id)

    def _listing_rows(self, run_id: int, sitemap_id: int) -> Iterator[tuple[str, str | None, str]]:
        """Listings as schema version 1 stored them: one row per entry."""
        seq = -1
        while True:
            rows = self._db.execute(
                "SELECT li.seq, l.loc, li.lastmod, li.lastmod_format FROM listings li "
                "JOIN locs l ON l.id = li.loc_id "
                "WHERE li.run_id = ? AND li.sitemap_id = ? AND li.seq > ? "
                "ORDER BY li.seq LIMIT ?",
                (run_id, sitemap_id, seq, _PAGE),
            ).fetchall()
            for row in rows:
                yield (str(row[1]), row[2], str(row[3]))
            if len(rows) < _PAGE:
                return
            seq = int(rows[-1][0])

    def set_validators(
        self,
        run_id: int,
        sitemap_url: str,
        etag: str | None,
        last_modified: str | None,
        rejudge_after: str | None = REJUDGE_UNKNOWN,
    ) -> None:
        """Remember a sitemap's ``ETag`` and ``Last-Modified`` as answered in this run, and
        ``rejudge_after``: the moment (ISO 8601) past which the findings of the body they
        stand for would change with the time, ``None`` when they never would,
        :data:`REJUDGE_UNKNOWN` when that is not known."""
        sitemap_id = self._loc_id(sitemap_url, create=True)
        self._db.execute(
            "INSERT OR REPLACE INTO validators "
            "(run_id, sitemap_id, etag, last_modified, rejudge_after) VALUES (?, ?, ?, ?, ?)",
            (run_id, sitemap_id, etag, last_modified, rejudge_after),
        )

    def rejudge_after(self, run_id: int, sitemap_url: str) -> str | None:
        """The ``rejudge_after`` stored with the validators of a sitemap in run ``run_id`` (see
        :meth:`set_validators`); :data:`REJUDGE_UNKNOWN` when that run kept none, or kept them
        with a version of sitemapaudit that did not keep this."""
        sitemap_id = self._loc_id(sitemap_url, create=False)
        if sitemap_id is None or not self._rejudge_kept:
            return REJUDGE_UNKNOWN
        row = self._db.execute(
            "SELECT rejudge_after FROM validators WHERE run_id = ? AND sitemap_id = ?",
            (run_id, sitemap_id),
        ).fetchone()
        return REJUDGE_UNKNOWN if row is None else row[0]

    def validators(
        self, origin: str, sitemap_url: str
    ) -> tuple[int, str | None, str | None] | None:
        """``(run_id, etag, last_modified)`` of a sitemap from the latest finished run of
        ``origin`` that stored at least one of the two, and the sitemap's entries a 304 would
        reuse (a file written by a version that kept validators without entries has such
        runs), or ``None``."""
        sitemap_id = self._loc_id(sitemap_url, create=False)
        if sitemap_id is None:
            return None
        row = self._db.execute(
            "SELECT v.run_id, v.etag, v.last_modified FROM validators v "
            "JOIN runs r ON r.id = v.run_id "
            "WHERE v.sitemap_id = ? AND r.origin = ? AND r.finished_at IS NOT NULL "
            "AND (v.etag IS NOT NULL OR v.last_modified IS NOT NULL) "
            "AND (EXISTS (SELECT 1 FROM listing_chunks c "
            "WHERE c.run_id = v.run_id AND c.sitemap_id = v.sitemap_id) "
            "OR EXISTS (SELECT 1 FROM listings l "
            "WHERE l.run_id = v.run_id AND l.sitemap_id = v.sitemap_id)) "
            "ORDER BY v.run_id DESC LIMIT 1",
            (sitemap_id, origin),
        ).fetchone()
        return None if row is None else (int(row[0]), row[1], row[2])

    # Reports and other stores

    def import_report(self, path: str | Path) -> int:
        """Load a JSON Lines report as a finished run and return the run's id.

        The origin and times come from the report's summary record; a report without one is
        stored with origin ``"unknown"`` and the file's modification time. A line that is
        not JSON raises :class:`HistoryError` and stores nothing.
        """
        path = Path(path)
        try:
            with path.open("rb") as probe:
                packed = probe.read(2) == b"\x1f\x8b"
            handle = (
                gzip.open(path, "rt", encoding="utf-8-sig")  # noqa: SIM115 (with handle: below)
                if packed
                else path.open(encoding="utf-8-sig")
            )
        except OSError as exc:
            raise HistoryError(f"cannot read report {path}: {exc.strerror or exc}") from None
        run_id = self.begin_run("unknown", "")
        summary: dict[str, Any] | None = None
        summary_line = 0
        try:
            with handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError:
                        raise HistoryError(
                            f"{path}, line {number}: not a JSON record of a report"
                        ) from None
                    if not isinstance(record, dict):
                        continue
                    if summary is not None:
                        raise HistoryError(another_run(path, number, summary_line))
                    if record.get("record") == "summary":
                        summary, summary_line = record, number
                    else:
                        self.add_record(run_id, record)
        except UnicodeDecodeError:
            self.delete_run(run_id)
            raise HistoryError(f"{path}: not UTF-8 text") from None
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            self.delete_run(run_id)
            raise HistoryError(f"{path}: broken gzip data ({exc})") from None
        except BaseException:
            self.delete_run(run_id)
            raise
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        origin = "unknown"
        started_at = finished_at = mtime
        if summary is not None:
            origin = _text(summary.get("origin")) or "unknown"
            started_at = _text(summary.get("started_at")) or mtime
            finished_at = _text(summary.get("finished_at")) or started_at
        self._db.execute(
            "UPDATE runs SET origin = ?, started_at = ? WHERE id = ?", (origin, started_at, run_id)
        )
        self.finish_run(run_id, finished_at, summary or {})
        return run_id

    def copy_run(self, source: HistoryStore, run_id: int) -> int:
        """Copy a finished or unfinished run of another store into this one; returns its id."""
        info = source.run(run_id)
        if info is None:
            raise HistoryError(f"no run {run_id} in {source.path}")
        new_id = self.begin_run(info.origin, info.started_at)
        for record in source.records(run_id):
            self.add_record(new_id, record)
        self.finish_run(new_id, info.finished_at or info.started_at, source.summary(run_id) or {})
        return new_id

    def query(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> Iterator[tuple[Any, ...]]:
        """Stream the rows of a read-only SQL query over the history tables."""
        self.flush()
        cursor = self._db.execute(sql, params)
        try:
            yield from cursor
        finally:
            cursor.close()


def _use_wal(db: sqlite3.Connection, wait: float = _LOCK_WAIT) -> None:
    """Put the file in WAL mode. Switching a new file needs it to itself, and SQLite reports
    "database is locked" at once instead of waiting when another connection (an audit that
    started at the same moment) has it open: try again for up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def check_history_path(path: str) -> None:
    """Open the history at ``path`` (SITEMAPAUDIT_HISTORY_PATH), creating it and its directory
    if need be, and close it: a :class:`ConfigError` naming the setting when it cannot be used,
    before anything is requested."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if Path(path).is_file() and not os.access(path, os.R_OK | os.W_OK):
            raise HistoryError("the file is not readable and writable")
        HistoryStore(path).close()
    except (OSError, HistoryError, sqlite3.Error) as exc:
        raise ConfigError(f"SITEMAPAUDIT_HISTORY_PATH={path!r} cannot be used: {exc}") from None


def listing_chunks(
    entries: Iterable[tuple[str, str | None, str]], size: int
) -> Iterator[list[tuple[str, str | None, str]]]:
    """``entries`` in lists of ``size`` (the last one shorter)."""
    chunk: list[tuple[str, str | None, str]] = []
    for entry in entries:
        chunk.append(entry)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _strings(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [x for x in value if isinstance(x, str)]
    return []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# The columns of a URL's result read by url_history and url_result (``r``: url_results,
# ``run``: runs), turned into a dict by _url_result.
_URL_RESULT_COLUMNS = (
    "r.run_id, run.started_at, run.finished_at, r.status, r.fetched, "
    "r.final_url, r.noindex, r.robots_blocked, r.lastmod, r.last_modified, "
    "r.checked_at, "
    "(SELECT json_group_array(f.code) FROM findings f WHERE f.run_id = r.run_id "
    f"AND f.kind = {URL_RECORD} AND f.loc_id = r.url_id), "
    "(SELECT json_group_array(s.loc) FROM url_sitemaps us JOIN locs s "
    "ON s.id = us.sitemap_id WHERE us.run_id = r.run_id AND us.url_id = r.url_id), "
)


def _canonical(url: str, stored: str | None) -> str | None:
    """A canonical as the history keeps it ('' for the URL itself)."""
    return url if stored == "" else stored


def _url_result(url: str, row: Sequence[Any]) -> dict[str, Any]:
    return {
        "run_id": int(row[0]),
        "started_at": row[1],
        "finished_at": row[2],
        "url": url,
        "status": row[3],
        "fetched": bool(row[4]),
        "final_url": row[5],
        "noindex": [x for x in str(row[6]).split(",") if x],
        "robots_blocked": bool(row[7]),
        "lastmod": row[8],
        "last_modified": row[9],
        "checked_at": row[10],
        "issues": sorted(json.loads(row[11])),
        "sitemaps": sorted(json.loads(row[12])),
        "canonical": _canonical(url, row[13]),
    }


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))
