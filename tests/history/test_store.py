"""The history store: runs, records, listings and validators, reports, persistence."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.errors import ConfigError
from sitemapaudit.history import HistoryError, HistoryStore, RunInfo
from sitemapaudit.history import store as store_module
from sitemapaudit.history.background import BackgroundHistoryStore
from sitemapaudit.history.store import REJUDGE_UNKNOWN, SCHEMA_VERSION, check_history_path
from tests.history.scenario import (
    NEW_RECORDS,
    NEW_SUMMARY,
    OLD_RECORDS,
    OLD_SUMMARY,
    E,
    url,
    write_report,
)

OTHER = "https://other.example"


@pytest.fixture(params=[HistoryStore, BackgroundHistoryStore], ids=["in-process", "writer-process"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    # Every test of this fixture runs against both stores: the one an audit uses writes
    # from a second process and must read back exactly what the plain store does.
    with request.param(tmp_path / "history.sqlite3") as history:
        yield history


def finished(store: HistoryStore, origin: str, records: list[dict[str, Any]] | None = None) -> int:
    run_id = store.begin_run(origin, f"2024-06-0{len(store.runs()) + 1}T00:00:00Z")
    for record in records or []:
        store.add_record(run_id, record)
    store.finish_run(run_id, "2024-06-30T00:00:00Z", {"record": "summary", "origin": origin})
    return run_id


def test_a_missing_path_is_created_with_wal_and_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "history.sqlite3"
    path.parent.mkdir()
    HistoryStore(path).close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    finally:
        db.close()


def test_runs_persist_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as first:
        run_id = finished(first, E, OLD_RECORDS)
    with HistoryStore(path) as second:
        assert second.runs() == [
            RunInfo(run_id, E, "2024-06-01T00:00:00Z", "2024-06-30T00:00:00Z", 19, 4)
        ]
        assert second.summary(run_id) == {"record": "summary", "origin": E}


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    db.commit()
    db.close()
    with pytest.raises(HistoryError, match="schema version"):
        HistoryStore(path)


def _version_1_file(path: Path) -> tuple[int, list[tuple[str, str | None, str]]]:
    """A history file as version 1 wrote it: one ``listings`` row per entry."""
    entries: list[tuple[str, str | None, str]] = [
        (f"{E}/{i}", "2024-01-02" if i % 2 else None, "w3c") for i in range(2500)
    ]
    with HistoryStore(path) as store:
        run_id = finished(store, E, OLD_RECORDS)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE listing_chunks")
    db.execute("CREATE INDEX url_results_url ON url_results (url_id, run_id)")
    db.execute("CREATE INDEX url_sitemaps_sitemap ON url_sitemaps (run_id, sitemap_id)")
    db.execute("UPDATE schema_version SET version = 1")
    db.execute("INSERT OR IGNORE INTO locs (loc) VALUES (?)", (f"{E}/s.xml",))
    db.executemany("INSERT OR IGNORE INTO locs (loc) VALUES (?)", [(e[0],) for e in entries])
    ids = dict(db.execute("SELECT loc, id FROM locs"))
    db.executemany(
        "INSERT INTO listings (run_id, sitemap_id, seq, loc_id, lastmod, lastmod_format) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(run_id, ids[f"{E}/s.xml"], i, ids[e[0]], e[1], e[2]) for i, e in enumerate(entries)],
    )
    db.commit()
    db.close()
    return run_id, entries


def test_a_version_1_file_is_read_and_then_written_as_version_2(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    run_id, entries = _version_1_file(path)
    with HistoryStore(path, read_only=True) as reader:
        assert list(reader.listings(run_id, f"{E}/s.xml")) == entries
    db = sqlite3.connect(path)
    assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (1,)
    db.close()
    with HistoryStore(path) as store:
        assert list(store.listings(run_id, f"{E}/s.xml")) == entries
        later = store.begin_run(E, "2024-07-01T00:00:00Z")
        store.add_listings(later, f"{E}/s.xml", entries[:10])
        assert list(store.listings(later, f"{E}/s.xml")) == entries[:10]
    db = sqlite3.connect(path)
    try:
        # Once written in the new layout, the file is refused by versions that read only 1.
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        assert SCHEMA_VERSION == 2
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert not indexes & {"url_results_url", "url_sitemaps_sitemap"}
    finally:
        db.close()


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_text('{"record": "summary"}\n' * 100, encoding="utf-8")
    with pytest.raises(HistoryError, match="not a usable history database"):
        HistoryStore(path)


def test_records_are_batched_and_visible_to_reads(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.sqlite3", batch_size=3) as store:
        run_id = store.begin_run(E, "2024-06-01T00:00:00Z")
        for i in range(10):
            store.add_record(run_id, url(f"/{i}"))
        store.add_record(run_id, {"record": "summary", "origin": E})
        store.add_record(run_id, {"record": "other", "url": "x"})
        store.add_record(run_id, {"record": "url"})
        (info,) = store.runs()
        assert (info.finished_at, info.url_count, info.sitemap_count) == (None, 10, 0)


def test_unfinished_runs_are_not_previous_runs(store: HistoryStore) -> None:
    first = finished(store, E)
    other = finished(store, OTHER)
    second = finished(store, E)
    unfinished = store.begin_run(E, "2024-06-09T00:00:00Z")
    latest = store.begin_run(E, "2024-06-10T00:00:00Z")
    assert store.previous_run(E, latest) == second
    assert store.previous_run(E, unfinished) == second
    assert store.previous_run(E, second) == first
    assert store.previous_run(E, first) is None
    assert store.previous_run(OTHER, latest) == other
    assert [run.id for run in store.runs(E)] == [first, second, unfinished, latest]
    assert [run.id for run in store.runs()] == [first, other, second, unfinished, latest]
    assert store.run(999) is None


def test_validators_come_from_the_latest_finished_run_that_stored_them(
    store: HistoryStore,
) -> None:
    sitemap = f"{E}/sitemap.xml"
    assert store.validators(E, sitemap) is None
    first = store.begin_run(E, "a")
    kept(store, first, sitemap, '"v1"', "Mon, 01 Jan 2024 00:00:00 GMT")
    store.finish_run(first, "b", {})
    second = store.begin_run(E, "c")
    kept(store, second, sitemap, '"v2"', None)
    store.finish_run(second, "d", {})
    third = store.begin_run(E, "e")
    kept(store, third, sitemap, None, None)
    store.finish_run(third, "f", {})
    # Validators without the entries a 304 would reuse (as an earlier version kept them when
    # conditional requests were off) are none.
    fourth = store.begin_run(E, "f2")
    store.set_validators(fourth, sitemap, '"v3"', None)
    store.finish_run(fourth, "f3", {})
    running = store.begin_run(E, "g")
    kept(store, running, sitemap, '"v4"', None)
    assert store.validators(E, sitemap) == (second, '"v2"', None)
    assert store.validators(OTHER, sitemap) is None
    assert store.validators(E, f"{E}/other.xml") is None


def kept(
    store: HistoryStore,
    run: int,
    sitemap: str,
    etag: str | None,
    last_modified: str | None,
    *,
    rejudge_after: str | None = REJUDGE_UNKNOWN,
) -> None:
    """A sitemap read by ``run``: its entries and its validators."""
    store.add_listings(run, sitemap, [(f"{E}/page", None, "none")])
    store.set_validators(run, sitemap, etag, last_modified, rejudge_after)


def test_validators_keep_when_the_findings_of_their_body_change_with_the_time(
    store: HistoryStore,
) -> None:
    sitemap = f"{E}/news.xml"
    assert store.rejudge_after(1, sitemap) == REJUDGE_UNKNOWN
    first = store.begin_run(E, "a")
    kept(store, first, sitemap, '"v1"', None, rejudge_after="2024-06-07T08:00:00+00:00")
    store.set_validators(first, f"{E}/plain.xml", '"p1"', None, None)
    store.set_validators(first, f"{E}/old.xml", '"o1"', None)
    store.finish_run(first, "b", {})
    assert store.validators(E, sitemap) == (first, '"v1"', None)
    assert store.rejudge_after(first, sitemap) == "2024-06-07T08:00:00+00:00"
    assert store.rejudge_after(first, f"{E}/plain.xml") is None
    # Stored without saying: not known.
    assert store.rejudge_after(first, f"{E}/old.xml") == REJUDGE_UNKNOWN
    # A run that did not store them knows nothing of them.
    assert store.rejudge_after(first + 1, sitemap) == REJUDGE_UNKNOWN


def _validators_without_rejudge_after(path: Path) -> int:
    """A history file whose validators table is as sitemapaudit kept it before
    ``rejudge_after``, with one sitemap's validators in a finished run."""
    with HistoryStore(path) as store:
        run_id = finished(store, E)
        store.add_listings(run_id, f"{E}/s.xml", [(f"{E}/page", None, "none")])
    db = sqlite3.connect(path)
    try:
        db.execute("DROP TABLE validators")
        db.execute(
            "CREATE TABLE validators (run_id INTEGER NOT NULL, sitemap_id INTEGER NOT NULL, "
            "etag TEXT, last_modified TEXT, PRIMARY KEY (run_id, sitemap_id)) WITHOUT ROWID"
        )
        db.execute("CREATE INDEX validators_sitemap ON validators (sitemap_id, run_id)")
        db.execute(
            "INSERT INTO validators (run_id, sitemap_id, etag, last_modified) "
            "SELECT ?, id, '\"v1\"', NULL FROM locs WHERE loc = ?",
            (run_id, f"{E}/s.xml"),
        )
        db.commit()
    finally:
        db.close()
    return run_id


@pytest.mark.parametrize("kind", [HistoryStore, BackgroundHistoryStore])
def test_a_file_without_rejudge_after_gains_it_and_its_validators_are_not_known(
    tmp_path: Path, kind: type[HistoryStore]
) -> None:
    """Validators an earlier version kept say nothing of when the findings of their body
    change with the time: not known (the sitemap is read again once). The column is added
    when the file is opened to write; earlier versions, which leave it to its default, still
    read and write the file."""
    path = tmp_path / "history.sqlite3"
    run_id = _validators_without_rejudge_after(path)
    with HistoryStore(path, read_only=True) as reader:
        assert reader.validators(E, f"{E}/s.xml") == (run_id, '"v1"', None)
        assert reader.rejudge_after(run_id, f"{E}/s.xml") == REJUDGE_UNKNOWN
    with kind(path) as store:
        assert store.rejudge_after(run_id, f"{E}/s.xml") == REJUDGE_UNKNOWN
        later = store.begin_run(E, "2024-07-01T00:00:00Z")
        kept(store, later, f"{E}/s.xml", '"v2"', None, rejudge_after="2024-07-03T00:00:00+00:00")
        store.finish_run(later, "2024-07-01T00:10:00Z", {})
        assert store.rejudge_after(later, f"{E}/s.xml") == "2024-07-03T00:00:00+00:00"
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        # As an earlier version writes validators: the moment is not known.
        db.execute(
            "INSERT OR REPLACE INTO validators (run_id, sitemap_id, etag, last_modified) "
            "SELECT ?, id, NULL, 'Mon, 01 Jul 2024 00:00:00 GMT' FROM locs WHERE loc = ?",
            (later, f"{E}/s.xml"),
        )
        db.commit()
    finally:
        db.close()
    with HistoryStore(path, read_only=True) as reader:
        assert reader.rejudge_after(later, f"{E}/s.xml") == REJUDGE_UNKNOWN


SCHEMA_LINES = [
    "schema_invalid: line 7, column 41: /urlset/url[5]/lastmod: lastmod '-1' is not a W3C date",
    "schema_invalid: line 9, column 41: /urlset/url[6]/lastmod: lastmod '-2' is not a W3C date",
]


def _read_sitemap(**fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "record": "sitemap",
        "url": f"{E}/s.xml.gz",
        "found_via": "robots",
        "parent": None,
        "kind": "urlset",
        "status": 200,
        "gzip": True,
        "bytes": 266,
        "url_count": 6,
        "child_count": 0,
        "issues": ["schema_invalid"],
        "errors": SCHEMA_LINES,
        "not_modified": False,
    }
    record.update(fields)
    return record


def test_a_sitemap_keeps_its_error_lines_gzip_bytes_and_the_run_that_read_it(
    store: HistoryStore,
) -> None:
    """What a 304 of a later night needs to report the sitemap as the night that read it did:
    every error line in full, the file's gzip and bytes, and the run that read its body."""
    sitemap = f"{E}/s.xml.gz"
    read = finished(store, E, [_read_sitemap()])
    kept = store.sitemap_record(read, sitemap)
    assert kept is not None
    assert (kept["errors"], kept["gzip"], kept["bytes"], kept["read_run"]) == (
        SCHEMA_LINES,
        True,
        266,
        read,
    )
    assert (kept["kind"], kept["url_count"], kept["issues"]) == ("urlset", 6, ["schema_invalid"])
    # A 304 names the run that read the body; it keeps that run, not its own.
    carried = finished(store, E, [_read_sitemap(status=304, not_modified=True, read_run=read)])
    again = store.sitemap_record(carried, sitemap)
    assert again is not None
    assert (again["errors"], again["gzip"], again["bytes"], again["read_run"]) == (
        SCHEMA_LINES,
        True,
        266,
        read,
    )
    # A 304 that does not say which run read the body, and a record without the fields (a run
    # copied from the facts another history keeps): not known.
    unknown = finished(store, E, [_read_sitemap(status=304, not_modified=True)])
    bare = {"record": "sitemap", "url": sitemap, "found_via": "robots", "issues": []}
    copied = finished(store, E, [bare])
    got = store.sitemap_record(unknown, sitemap)
    assert got is not None
    assert (got["errors"], got["read_run"]) == (SCHEMA_LINES, None)
    got = store.sitemap_record(copied, sitemap)
    assert got is not None
    assert (got["errors"], got["gzip"], got["bytes"], got["read_run"]) == (None, None, None, copied)
    assert store.sitemap_record(read, f"{E}/other.xml") is None


def _sitemap_results_without_details(path: Path) -> int:
    """A history file whose sitemap results are as sitemapaudit kept them before the error
    lines, gzip, bytes and reading run of a sitemap, with one sitemap read in a finished run."""
    with HistoryStore(path) as store:
        run_id = finished(store, E)
        store.add_listings(run_id, f"{E}/s.xml", [(f"{E}/page", None, "none")])
    db = sqlite3.connect(path)
    try:
        db.execute("DROP TABLE sitemap_results")
        db.execute(
            "CREATE TABLE sitemap_results (run_id INTEGER NOT NULL, sitemap_id INTEGER NOT NULL, "
            "found_via TEXT, parent_id INTEGER, kind TEXT, status INTEGER, "
            "fetch_failed INTEGER NOT NULL, url_count INTEGER NOT NULL, "
            "PRIMARY KEY (run_id, sitemap_id)) WITHOUT ROWID"
        )
        db.execute("INSERT INTO locs (loc) VALUES (?)", (f"{E}/s.xml.gz",))
        db.execute(
            "INSERT INTO sitemap_results (run_id, sitemap_id, found_via, parent_id, kind, status, "
            "fetch_failed, url_count) SELECT ?, id, 'robots', NULL, 'urlset', 200, 0, 6 "
            "FROM locs WHERE loc = ?",
            (run_id, f"{E}/s.xml.gz"),
        )
        db.execute(
            "INSERT INTO findings (run_id, kind, loc_id, code) "
            "SELECT ?, 1, id, 'schema_invalid' FROM locs WHERE loc = ?",
            (run_id, f"{E}/s.xml.gz"),
        )
        db.commit()
    finally:
        db.close()
    return run_id


@pytest.mark.parametrize("kind", [HistoryStore, BackgroundHistoryStore])
def test_a_file_without_the_details_of_sitemaps_gains_them_and_its_rows_have_none(
    tmp_path: Path, kind: type[HistoryStore]
) -> None:
    """Sitemap results an earlier version kept have no error lines, gzip, bytes or reading
    run: not known. The columns are added when the file is opened to write (the schema
    version stays); earlier versions, which leave them empty, still read and write the file."""
    path = tmp_path / "history.sqlite3"
    sitemap = f"{E}/s.xml.gz"
    run_id = _sitemap_results_without_details(path)
    with HistoryStore(path, read_only=True) as reader:
        old = reader.sitemap_record(run_id, sitemap)
        assert old is not None
        assert (old["kind"], old["issues"], old["url_count"]) == ("urlset", ["schema_invalid"], 6)
        assert (old["errors"], old["gzip"], old["bytes"], old["read_run"]) == (
            None,
            None,
            None,
            None,
        )
    with kind(path) as store:
        old = store.sitemap_record(run_id, sitemap)
        assert old is not None
        assert (old["errors"], old["read_run"]) == (None, None)
        later = finished(store, E, [_read_sitemap()])
        new = store.sitemap_record(later, sitemap)
        assert new is not None
        assert (new["errors"], new["gzip"], new["bytes"], new["read_run"]) == (
            SCHEMA_LINES,
            True,
            266,
            later,
        )
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT MAX(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        # As an earlier version writes a sitemap's result: the new columns stay empty.
        db.execute(
            "INSERT OR REPLACE INTO sitemap_results (run_id, sitemap_id, found_via, parent_id, "
            "kind, status, fetch_failed, url_count) SELECT ?, id, 'robots', NULL, 'urlset', 304, "
            "0, 6 FROM locs WHERE loc = ?",
            (later, sitemap),
        )
        db.commit()
    finally:
        db.close()
    with HistoryStore(path, read_only=True) as reader:
        got = reader.sitemap_record(later, sitemap)
        assert got is not None
        assert (got["status"], got["errors"], got["read_run"]) == (304, None, None)


def test_listings_stream_back_in_order(store: HistoryStore) -> None:
    sitemap = f"{E}/sitemap.xml"
    run_id = store.begin_run(E, "a")
    entries = [(f"{E}/{i}", None if i % 2 else "2024-01-01", "w3c") for i in range(2500)]
    store.add_listings(run_id, sitemap, iter(entries[:2300]), batch=700)
    store.add_listings(run_id, sitemap, iter(entries[2300:]))
    store.add_listings(run_id, f"{E}/feed.xml", [(f"{E}/0", "Mon, 01 Jan 2024", "rfc822")])
    other = store.begin_run(E, "b")
    store.add_listings(other, sitemap, [(f"{E}/only", None, "w3c")])
    assert list(store.listings(run_id, sitemap)) == entries
    assert list(store.listings(run_id, f"{E}/feed.xml")) == [
        (f"{E}/0", "Mon, 01 Jan 2024", "rfc822")
    ]
    assert list(store.listings(other, sitemap)) == [(f"{E}/only", None, "w3c")]
    assert list(store.listings(run_id, f"{E}/none.xml")) == []


def test_url_history_is_newest_first_over_finished_runs(store: HistoryStore) -> None:
    page = f"{E}/page"
    finished(store, E, [url("/page", status=200, lastmod="2024-01-01")])
    middle = finished(store, E, [url("/other")])
    last = finished(
        store,
        E,
        [
            url(
                "/page",
                status=404,
                sitemaps=[f"{E}/b.xml", f"{E}/a.xml"],
                noindex=["header:x-robots-tag"],
                issues=["http_error"],
            )
        ],
    )
    finished(store, OTHER, [url("/page")])
    running = store.begin_run(E, "z")
    store.add_record(running, url("/page", status=500))
    history = store.url_history(E, page)
    assert [(h["run_id"], h["status"]) for h in history] == [(last, 404), (1, 200)]
    assert middle not in [h["run_id"] for h in history]
    latest = history[0]
    assert latest["sitemaps"] == [f"{E}/a.xml", f"{E}/b.xml"]
    assert latest["issues"] == ["http_error"]
    assert latest["noindex"] == ["header:x-robots-tag"]
    assert latest["fetched"] is True
    assert latest["robots_blocked"] is False
    assert history[1]["lastmod"] == "2024-01-01"
    assert store.url_history(E, page, limit=1) == [latest]
    assert store.url_history(E, f"{E}/never") == []
    assert store.url_result(last, page) == latest
    assert store.url_result(middle, page) is None
    assert store.url_result(last, f"{E}/never") is None


def test_check_age_counts_the_finished_runs_that_kept_one_check(store: HistoryStore) -> None:
    page, monday, tuesday = f"{E}/page", "2024-06-03T02:30:00Z", "2024-06-04T02:30:00Z"
    first = finished(store, E, [url("/page", checked_at=monday)])
    carried = finished(store, E, [url("/page", checked_at=monday)])
    store.begin_run(E, "z")  # interrupted: no run of the count
    finished(store, OTHER, [url("/page", checked_at=monday)])
    again = finished(store, E, [url("/page", checked_at=monday)])
    checked = finished(store, E, [url("/page", checked_at=tuesday)])
    without = finished(store, E, [url("/other", checked_at=tuesday)])
    assert store.check_age(E, page, first, 7) == 1
    assert store.check_age(E, page, carried, 7) == 2
    assert store.check_age(E, page, again, 7) == 3
    assert store.check_age(E, page, again, 2) == 2
    assert store.check_age(E, page, checked, 7) == 1
    assert store.check_age(E, page, without, 7) == 0
    assert store.check_age(E, f"{E}/never", checked, 7) == 0


def test_import_report_uses_the_summary(store: HistoryStore, tmp_path: Path) -> None:
    run_id = store.import_report(write_report(tmp_path / "r.jsonl", NEW_RECORDS, NEW_SUMMARY))
    info = store.run(run_id)
    assert info == RunInfo(run_id, E, "2024-06-02T00:00:00Z", "2024-06-02T01:00:00Z", 19, 4)
    assert store.summary(run_id) == NEW_SUMMARY


def test_import_report_without_summary(store: HistoryStore, tmp_path: Path) -> None:
    run_id = store.import_report(write_report(tmp_path / "r.jsonl", OLD_RECORDS, None))
    info = store.run(run_id)
    assert info is not None
    assert info.origin == "unknown"
    assert info.finished_at == info.started_at
    assert (info.url_count, info.sitemap_count) == (19, 4)


def test_a_file_of_two_appended_reports_is_refused(store: HistoryStore, tmp_path: Path) -> None:
    once = write_report(tmp_path / "once.jsonl", OLD_RECORDS, OLD_SUMMARY).read_text("utf-8")
    twice = tmp_path / "twice.jsonl"
    twice.write_text(once + once, encoding="utf-8")
    line = len(once.splitlines()) + 1
    with pytest.raises(HistoryError, match=f"twice.jsonl:{line}: a record after the summary"):
        store.import_report(twice)
    assert store.runs() == []


def test_a_broken_report_stores_nothing(store: HistoryStore, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = [json.dumps(r) for r in OLD_RECORDS[:5]]
    path.write_text("\n".join([*lines, "{truncated", ""]), encoding="utf-8")
    with pytest.raises(HistoryError, match="line 6"):
        store.import_report(path)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"record": "url", "url": "https://ex.com/caf\xe9"}\n')
    with pytest.raises(HistoryError, match="not UTF-8"):
        store.import_report(latin)
    with pytest.raises(HistoryError, match="cannot read report"):
        store.import_report(tmp_path / "missing.jsonl")
    assert store.runs() == []
    assert list(store.query("SELECT COUNT(*) FROM url_results")) == [(0,)]


def test_records_round_trip_through_copy_run(store: HistoryStore, tmp_path: Path) -> None:
    run_id = finished(store, E, NEW_RECORDS)
    with HistoryStore(tmp_path / "copy.sqlite3") as other:
        copy_id = other.copy_run(store, run_id)
        original = sorted(store.records(run_id), key=lambda r: (r["record"], r["url"]))
        copied = sorted(other.records(copy_id), key=lambda r: (r["record"], r["url"]))
        assert copied == original
        assert other.summary(copy_id) == store.summary(run_id)
        source, copy = store.run(run_id), other.run(copy_id)
        assert source is not None
        assert copy == RunInfo(copy_id, E, source.started_at, source.finished_at, 19, 4)
    blocked = next(r for r in original if r["url"] == f"{E}/blocked")
    assert blocked == {
        "record": "url",
        "url": f"{E}/blocked",
        "sitemaps": [f"{E}/a.xml"],
        "lastmod": None,
        "status": None,
        "fetched": False,
        "final_url": None,
        "last_modified": None,
        "noindex": [],
        "robots_blocked": True,
        "issues": ["robots_blocked"],
        "checked_at": None,
        "canonical_ignored": False,
        "canonical": None,
    }


def test_a_url_result_keeps_its_canonical(store: HistoryStore) -> None:
    """A result keeps the page's canonical (for the record the incremental policy carries
    over): the URL itself (kept as ''), another URL, one search engines ignore, or none."""
    records = [
        {"record": "url", "url": f"{E}/self", "sitemaps": [], "canonical": f"{E}/self"},
        {"record": "url", "url": f"{E}/q", "sitemaps": [], "canonical": f"{E}/p"},
        {"record": "url", "url": f"{E}/js", "sitemaps": [], "canonical": "javascript:void(0)"},
        {"record": "url", "url": f"{E}/none", "sitemaps": [], "canonical": None},
    ]
    run_id = finished(store, E, records)
    expected = {
        f"{E}/self": f"{E}/self",
        f"{E}/q": f"{E}/p",
        f"{E}/js": "javascript:void(0)",
        f"{E}/none": None,
    }
    results = {url: store.url_result(run_id, url) for url in expected}
    assert {url: result and result["canonical"] for url, result in results.items()} == expected
    assert {r["url"]: r["canonical"] for r in store.records(run_id)} == expected
    assert [h["canonical"] for h in store.url_history(E, f"{E}/q")] == [f"{E}/p"]
    stored = dict(
        store.query("SELECT l.loc, r.canonical FROM url_results r JOIN locs l ON l.id = r.url_id")
    )
    assert stored[f"{E}/self"] == ""


def test_a_file_without_canonicals_gains_the_column_and_its_rows_have_none(
    tmp_path: Path,
) -> None:
    """URL results an earlier version kept have no canonical: read as none, also from a file
    opened read-only that has no such column; the column is added when the file is opened to
    write."""
    path = tmp_path / "history.sqlite3"
    records = [{"record": "url", "url": f"{E}/p", "sitemaps": [], "canonical": f"{E}/p"}]
    with HistoryStore(path) as store:
        run_id = finished(store, E, records)
    db = sqlite3.connect(path)
    try:
        db.execute("ALTER TABLE url_results DROP COLUMN canonical")
        db.commit()
    finally:
        db.close()
    with HistoryStore(path, read_only=True) as reader:
        result = reader.url_result(run_id, f"{E}/p")
        assert result is not None
        assert result["canonical"] is None
        assert [r["canonical"] for r in reader.records(run_id)] == [None]
    with HistoryStore(path) as store:
        old = store.url_result(run_id, f"{E}/p")
        assert old is not None
        assert old["canonical"] is None
        later = finished(store, E, records)
        new = store.url_result(later, f"{E}/p")
        assert new is not None
        assert new["canonical"] == f"{E}/p"


def test_copy_run_keeps_a_canonical_search_engines_ignore(
    store: HistoryStore, tmp_path: Path
) -> None:
    """What the history keeps of a canonical (whether it is an http(s) URL) survives a copy,
    as ``audit-diff run:N`` makes one."""
    records = [
        {"record": "url", "url": f"{E}/js", "sitemaps": [], "canonical": "javascript:alert(1)"},
        {"record": "url", "url": f"{E}/q", "sitemaps": [], "canonical": f"{E}/p"},
    ]
    run_id = finished(store, E, records)
    with HistoryStore(tmp_path / "copy.sqlite3") as other:
        copy_id = other.copy_run(store, run_id)
        kept = {r["url"]: r["canonical_ignored"] for r in other.records(copy_id)}
    assert kept == {f"{E}/js": True, f"{E}/q": False}


def test_delete_run_removes_everything(store: HistoryStore) -> None:
    keep = finished(store, E, OLD_RECORDS)
    drop = finished(store, E, NEW_RECORDS)
    store.add_listings(drop, f"{E}/a.xml", [(f"{E}/x", None, "w3c")])
    store.set_validators(drop, f"{E}/a.xml", '"e"', None)
    store.delete_run(drop)
    assert [run.id for run in store.runs()] == [keep]
    for table in ("url_results", "url_sitemaps", "sitemap_results", "findings"):
        rows = list(store.query(f"SELECT DISTINCT run_id FROM {table}"))
        assert rows == [(keep,)], table
    for table in ("listings", "validators"):
        assert list(store.query(f"SELECT COUNT(*) FROM {table}")) == [(0,)]


def test_prune_runs_keeps_the_newest_finished_runs_of_one_origin(store: HistoryStore) -> None:
    other = "https://other.example"
    old = [finished(store, E, OLD_RECORDS) for _ in range(3)]
    theirs = finished(store, other, OLD_RECORDS)
    interrupted = store.begin_run(E, "c")  # never finished
    new = finished(store, E, NEW_RECORDS)
    assert store.prune_runs(E, 2) == [old[1], old[0]]
    assert [run.id for run in store.runs(E)] == [old[2], interrupted, new]
    assert [run.id for run in store.runs(other)] == [theirs]
    kept = {row[0] for row in store.query("SELECT DISTINCT run_id FROM url_results")}
    assert kept == {old[2], theirs, new}
    assert store.prune_runs(E, 2) == []
    assert store.prune_runs(E, 1) == [old[2]]
    with pytest.raises(ValueError, match="at least 1"):
        store.prune_runs(E, 0)


def test_drop_parts_deletes_the_interrupted_runs_of_a_resumed_audit(store: HistoryStore) -> None:
    start = "2024-06-01T00:00:00Z"
    parts = [store.begin_run(E, start) for _ in range(2)]  # killed, resumed, killed again
    for part in parts:
        store.add_record(part, OLD_RECORDS[0])
    other_audit = store.begin_run(E, "2024-06-02T00:00:00Z")  # another, never finished
    other_site = store.begin_run("https://other.example", start)
    resumed = store.begin_run(E, start)
    store.finish_run(resumed, "2024-06-01T01:00:00Z", {"record": "summary", "origin": E})
    assert store.drop_parts(resumed) == parts
    assert [run.id for run in store.runs()] == [other_audit, other_site, resumed]
    kept = {row[0] for row in store.query("SELECT DISTINCT run_id FROM url_results")}
    assert kept == set()
    assert store.drop_parts(resumed) == []
    assert store.drop_parts(12345) == []


def test_bad_field_types_are_stored_as_unknown(store: HistoryStore) -> None:
    run_id = store.begin_run(E, "a")
    store.add_record(
        run_id,
        {
            "record": "url",
            "url": f"{E}/odd",
            "status": "abc",
            "sitemaps": "https://ex.com/a.xml",
            "issues": None,
            "noindex": [1, "meta:robots"],
            "lastmod": 20240101,
        },
    )
    store.add_record(run_id, {"record": "sitemap", "url": f"{E}/s.xml", "url_count": "7"})
    (odd,) = (r for r in store.records(run_id) if r["record"] == "url")
    (sitemap,) = (r for r in store.records(run_id) if r["record"] == "sitemap")
    assert (odd["status"], odd["sitemaps"], odd["issues"]) == (None, [f"{E}/a.xml"], [])
    assert (odd["noindex"], odd["lastmod"]) == (["meta:robots"], None)
    assert (sitemap["url_count"], sitemap["parent"], sitemap["issues"]) == (7, None, [])


def test_read_only_opening_reads_and_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as writer:
        run_id = finished(writer, E, OLD_RECORDS)
        with HistoryStore(path, read_only=True) as live:
            assert [run.id for run in live.runs()] == [run_id]
    before = path.read_bytes()
    with HistoryStore(path, read_only=True) as reader:
        assert reader.run(run_id) is not None
        assert len(list(reader.records(run_id))) == 23
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.begin_run(E, "x")
    assert path.read_bytes() == before


def test_read_only_opening_refuses_other_files(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite3"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    before = other.read_bytes()
    with pytest.raises(HistoryError, match="not a history database"):
        HistoryStore(other, read_only=True)
    assert other.read_bytes() == before
    with pytest.raises(HistoryError, match="cannot open"):
        HistoryStore(tmp_path / "missing.sqlite3", read_only=True)
    assert not (tmp_path / "missing.sqlite3").exists()


def _listed(store: HistoryStore, run_id: int, sitemap: str, locs: list[str]) -> None:
    for loc in locs:
        store.add_url(
            run_id,
            loc,
            [sitemap],
            [],
            status=None,
            fetched=False,
            final_url=None,
            noindex=[],
            robots_blocked=False,
            lastmod=None,
            last_modified=None,
            checked_at=None,
        )
    store.flush()


def test_new_and_known_locations_get_their_own_ids(store: HistoryStore) -> None:
    run_id = store.begin_run(E, "a")
    _listed(store, run_id, f"{E}/a.xml", [f"{E}/{i}" for i in range(0, 10, 2)])
    # Half known, half new, out of order, in one batch.
    later = store.begin_run(E, "b")
    _listed(store, later, f"{E}/b.xml", [f"{E}/{i}" for i in range(9, -1, -1)])
    assert sorted(r["url"] for r in store.records(later) if r["record"] == "url") == sorted(
        f"{E}/{i}" for i in range(10)
    )
    ids = dict(store.query("SELECT loc, id FROM locs"))
    assert len(set(ids.values())) == len(ids) == 12


def test_listings_keep_their_order_and_append(store: HistoryStore) -> None:
    run_id = store.begin_run(E, "a")
    sitemap = f"{E}/b.xml"
    entries = [(f"{E}/{i}", f"2024-01-{1 + i % 28:02d}", "w3c") for i in range(9, -1, -1)]
    entries.append((f"{E}/tab\there\n", None, "rfc822"))
    store.add_listings(run_id, sitemap, entries[:4], batch=3)
    store.add_listings(run_id, sitemap, entries[4:], batch=3)
    assert list(store.listings(run_id, sitemap)) == entries
    # Stored as compressed chunks of up to ``batch`` entries, not one row per entry.
    assert list(
        store.query(
            "SELECT seq, count FROM listing_chunks WHERE run_id = ? ORDER BY seq", (run_id,)
        )
    ) == [(0, 3), (3, 1), (4, 3), (7, 3), (10, 1)]
    assert list(store.query("SELECT COUNT(*) FROM listings")) == [(0,)]
    assert list(store.listings(run_id, f"{E}/unknown.xml")) == []
    assert list(store.listings(run_id + 1, sitemap)) == []


def test_add_url_stores_what_add_record_stores(tmp_path: Path) -> None:
    record: dict[str, Any] = {
        "record": "url",
        "url": f"{E}/p",
        "sitemaps": [f"{E}/s.xml"],
        "lastmod": "2024-01-01",
        "status": 503,
        "fetched": True,
        "final_url": f"{E}/q",
        "last_modified": "Mon, 01 Jan 2024 00:00:00 GMT",
        "noindex": ["meta:robots", "x-robots-tag"],
        "robots_blocked": False,
        "issues": ["fetch_failed", "http_error"],
        "checked_at": "2024-01-02T00:00:00Z",
    }
    stored = []
    for name in ("a", "b"):
        with HistoryStore(tmp_path / f"{name}.sqlite3") as history:
            run_id = history.begin_run(E, "a")
            if name == "a":
                history.add_record(run_id, record)
            else:
                history.add_url(
                    run_id,
                    record["url"],
                    record["sitemaps"],
                    record["issues"],
                    status=record["status"],
                    fetched=record["fetched"],
                    final_url=record["final_url"],
                    noindex=record["noindex"],
                    robots_blocked=record["robots_blocked"],
                    lastmod=record["lastmod"],
                    last_modified=record["last_modified"],
                    checked_at=record["checked_at"],
                )
            stored.append(
                (
                    list(history.records(run_id)),
                    list(history.query("SELECT * FROM url_results")),
                )
            )
    assert stored[0] == stored[1]
    assert stored[0][0][0]["noindex"] == ["meta:robots", "x-robots-tag"]


def test_stores_opened_together_on_a_new_file_wait_for_each_other(tmp_path: Path) -> None:
    """Audits started at the same moment (cron, scrapyd) on a history file that does not exist
    yet: each creates or finds the schema, none fails with "database is locked". Without
    waiting, about one round in eight failed."""
    errors: list[Exception] = []
    for round_ in range(40):
        path = tmp_path / f"history-{round_}.sqlite3"
        barrier = threading.Barrier(4)

        def open_it(path: Path = path, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                HistoryStore(path).close()
            except Exception as exc:  # collected for the assertion
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    with HistoryStore(tmp_path / "history-0.sqlite3", read_only=True) as store:
        versions = list(store.query("SELECT version FROM schema_version"))
    assert [row[0] for row in versions] == [SCHEMA_VERSION]


def test_a_history_file_that_cannot_be_written_fails_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    check_history_path(str(path))
    # As for a read-only file (root may write anything, so the permission is simulated).
    monkeypatch.setattr(store_module.os, "access", lambda *_args: False)
    with pytest.raises(ConfigError, match=r"HISTORY_PATH=.*not readable and writable"):
        check_history_path(str(path))


class SmallDisk(HistoryStore):
    """A store whose file may not grow past ``PAGES`` pages: SQLite says the disk is full
    (SQLITE_FULL) and rolls the transaction back by itself, as on a disk that is full."""

    PAGES = 2

    def _setup(self) -> None:
        self._db.execute(f"PRAGMA max_page_count={self.PAGES}")
        super()._setup()


def test_a_full_disk_at_start_says_so_and_does_not_call_the_file_unusable(
    tmp_path: Path,
) -> None:
    with pytest.raises(HistoryError) as failed:
        SmallDisk(tmp_path / "history.sqlite3")
    message = str(failed.value)
    assert "database or disk is full" in message
    assert "bytes free on its file system" in message
    assert "cannot rollback" not in message
    assert "not a usable history database" not in message
    assert message.startswith(f"cannot write to the history database {tmp_path}")


class LargerSmallDisk(SmallDisk):
    PAGES = 64


def test_a_batch_that_meets_a_full_disk_fails_with_that_error_and_the_store_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    with LargerSmallDisk(path, batch_size=100_000) as store:
        run_id = store.begin_run(E, "2024-06-01T00:00:00Z")
        for i in range(2000):
            store.add_record(run_id, url(f"/{i}-" + "x" * 200))
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
            store.flush()
        assert not store._db.in_transaction
        assert [info.url_count for info in store.runs()] == [0]


def test_the_sitemaps_an_interrupted_part_read_stay_reusable_once_it_is_dropped(
    store: HistoryStore,
) -> None:
    """The part of a resumed audit read early.xml (its entries and validators); the finished
    run read late.xml, and early.xml again: the finished run's own win, and early-only.xml,
    which only the part read, is kept for the next night's 304 under the finished run."""
    start = "2024-06-01T00:00:00Z"
    part = store.begin_run(E, start)
    kept(store, part, f"{E}/early-only.xml", '"p1"', None)
    kept(store, part, f"{E}/early.xml", '"old"', None)
    resumed = store.begin_run(E, start)
    kept(store, resumed, f"{E}/late.xml", '"l1"', None)
    store.set_validators(resumed, f"{E}/early.xml", '"new"', None)
    store.add_listings(resumed, f"{E}/early.xml", [(f"{E}/again", None, "none")])
    store.finish_run(resumed, "2024-06-01T01:00:00Z", {"record": "summary", "origin": E})
    assert store.drop_parts(resumed) == [part]
    assert store.validators(E, f"{E}/early-only.xml") == (resumed, '"p1"', None)
    assert list(store.listings(resumed, f"{E}/early-only.xml")) == [(f"{E}/page", None, "none")]
    assert store.validators(E, f"{E}/early.xml") == (resumed, '"new"', None)
    assert list(store.listings(resumed, f"{E}/early.xml")) == [(f"{E}/again", None, "none")]
    assert store.validators(E, f"{E}/late.xml") == (resumed, '"l1"', None)
