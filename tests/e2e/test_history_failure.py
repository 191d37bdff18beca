"""A history that fails during an audit (its writer process killed, a read that errors) costs
the report nothing: every record is written, the summary says what happened, the stat is set."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.commands.crawl import audit_failed
from sitemapaudit.errors import ConfigError
from sitemapaudit.history import HistoryError, HistoryStore
from sitemapaudit.history.background import BackgroundHistoryStore
from sitemapaudit.history.store import check_history_path
from tests.support.crawl import by_record, run_audit, start_audit_process
from tests.support.golden_site import XML, conditional, page, url, urlset
from tests.support.server import Page, TestSite

NOTE = "failed and the audit went on without it"


class KilledWriter(BackgroundHistoryStore):
    """A store whose writer process is killed (SIGKILL) as soon as the run has begun."""

    def begin_run(self, origin: str, started_at: str) -> int:
        run_id = super().begin_run(origin, started_at)
        writer = self._writer
        assert writer is not None
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        return run_id


class FullDisk(BackgroundHistoryStore):
    """A store that cannot finish its run: SQLite finds the disk full."""

    def finish_run(self, run_id: int, finished_at: str, summary: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")


class BrokenPrune(BackgroundHistoryStore):
    """A store with a bug of its own (not a storage failure) as the finished run is pruned."""

    def prune_runs(self, origin: str, keep: int) -> list[int]:
        raise OverflowError("Python int too large to convert to SQLite INTEGER")


class FullDiskAtStart(BackgroundHistoryStore):
    """A store that opens (the command's check passed) but cannot begin the run: SQLite finds
    the disk full at its first write."""

    def begin_run(self, origin: str, started_at: str) -> int:
        raise sqlite3.OperationalError("database or disk is full")


class NoWriter(BackgroundHistoryStore):
    """A store whose writer process cannot be started."""

    def __init__(self, path: str, *, batch_size: int = 5000) -> None:
        raise HistoryError("cannot start the history writer process: out of memory")


class FailingListings(BackgroundHistoryStore):
    """A store whose reading of a sitemap's kept entries fails after the first entry."""

    def listings(self, run_id: int, sitemap_url: str) -> Iterator[tuple[str, str | None, str]]:
        for index, entry in enumerate(super().listings(run_id, sitemap_url)):
            if index == 1:
                raise HistoryError("disk I/O error")
            yield entry


class FailingValidators(BackgroundHistoryStore):
    """A store that fails (a full disk) when a sitemap's validators are kept: after the
    conditional request was sent, before its 304 is read."""

    def set_validators(self, *args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")


def site_of(count: int) -> TestSite:
    routes: dict[str, Any] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(
            body=urlset(*(url("{base}" + f"/p{i}") for i in range(count))), content_type=XML
        ),
    }
    routes.update({f"/p{i}": page() for i in range(count)})
    return TestSite(routes)


@pytest.mark.parametrize("store", [KilledWriter, FullDisk], ids=["writer-killed", "disk-full"])
@deferred_f_from_coro_f
async def test_a_failing_history_costs_the_report_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    store: type[BackgroundHistoryStore],
) -> None:
    monkeypatch.setattr("sitemapaudit.crawl.run.BackgroundHistoryStore", store)
    path = tmp_path / "history.sqlite3"
    settings = {"SITEMAPAUDIT_HISTORY_PATH": str(path)}
    with site_of(12) as site, caplog.at_level(logging.ERROR):
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl", settings=settings)

    assert len(by_record(records, "url")) == 12
    assert all(r["status"] == 200 for r in by_record(records, "url"))
    assert [r["record"] for r in records][-1] == "summary"
    summary = records[-1]
    assert summary["complete"] is True
    assert [note for note in summary["notes"] if NOTE in note] != []
    assert str(path) in summary["notes"][-1]
    assert crawler.stats.get_value("sitemapaudit/history/failed") == 1
    assert audit_failed(crawler.stats.get_stats())
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "the audit goes on without it" in errors[0].getMessage()
    # The run was begun and never finished: the next audit is compared with an earlier run.
    with HistoryStore(path, read_only=True) as kept:
        runs = kept.runs(site.base)
    assert [run.finished_at for run in runs] == [None]


@pytest.mark.parametrize(
    ("store", "cause"),
    [(FullDiskAtStart, "database or disk is full"), (NoWriter, "out of memory")],
    ids=["begin-run", "open"],
)
@deferred_f_from_coro_f
async def test_a_history_failing_as_the_run_begins_costs_the_report_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    store: type[BackgroundHistoryStore],
    cause: str,
) -> None:
    path = tmp_path / "history.sqlite3"
    settings = {"SITEMAPAUDIT_HISTORY_PATH": str(path), "SITEMAPAUDIT_INCREMENTAL": True}
    with site_of(3) as site:
        await run_audit(site.base, tmp_path / "1.jsonl", settings=settings)
        monkeypatch.setattr("sitemapaudit.crawl.run.BackgroundHistoryStore", store)
        with caplog.at_level(logging.ERROR):
            records, crawler = await run_audit(site.base, tmp_path / "2.jsonl", settings=settings)

    assert [r["status"] for r in by_record(records, "url")] == [200, 200, 200]
    summary = records[-1]
    assert summary["record"] == "summary"
    assert summary["complete"] is True
    assert [n for n in summary["notes"] if NOTE in n and cause in n and str(path) in n] != []
    assert crawler.stats.get_value("sitemapaudit/history/failed") == 1
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert audit_failed(crawler.stats.get_stats())
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "the audit goes on without it" in errors[0]
    assert cause in errors[0]
    with HistoryStore(path, read_only=True) as kept:
        assert len(kept.runs(site.base)) == 1


@deferred_f_from_coro_f
async def test_a_history_failing_while_a_304_reuses_entries_reports_the_sitemap_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/s.xml\nSitemap: {base}/t.xml\n", content_type="text/plain"
            ),
            "/s.xml": conditional(urlset(url("{base}/a"), url("{base}/b"), url("{base}/c")), '"v"'),
            "/t.xml": Page(body=urlset(url("{base}/d")), content_type=XML),
            "/a": page(),
            "/b": page(),
            "/c": page(),
            "/d": page(),
        }
    )
    with site:
        await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        monkeypatch.setattr("sitemapaudit.crawl.run.BackgroundHistoryStore", FailingListings)
        records, crawler = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)

    sitemaps = {r["url"].rsplit("/", 1)[-1]: r for r in by_record(records, "sitemap")}
    reused = sitemaps["s.xml"]
    assert reused["status"] == 304
    assert reused["issues"] == ["fetch_failed"]
    assert "could not be read from the history (disk I/O error)" in reused["errors"][0]
    assert "1 URL and 0 child sitemaps were read before that" in reused["errors"][0]
    assert sitemaps["t.xml"]["issues"] == []
    # The entry read before the failure is audited, and so is the other sitemap.
    assert sorted(r["url"].rsplit("/", 1)[-1] for r in by_record(records, "url")) == ["a", "d"]
    assert any(NOTE in note for note in records[-1]["notes"])
    assert crawler.stats.get_value("sitemapaudit/history/failed") == 1


@deferred_f_from_coro_f
async def test_a_history_failing_before_a_304_is_read_has_the_sitemap_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the history gone, the previous run's entries cannot stand for the body: the
    # sitemap is requested again without its validators and read as it is now.
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": conditional(urlset(url("{base}/a"), url("{base}/b")), '"v"'),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        monkeypatch.setattr("sitemapaudit.crawl.run.BackgroundHistoryStore", FailingValidators)
        records, crawler = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)
        last_request = site.request_headers["/s.xml"]
        requests = site.hits["/s.xml"]

    (sitemap,) = by_record(records, "sitemap")
    assert (sitemap["status"], sitemap["not_modified"], sitemap["issues"]) == (200, False, [])
    assert sorted(r["url"].rsplit("/", 1)[-1] for r in by_record(records, "url")) == ["a", "b"]
    assert any(NOTE in note for note in records[-1]["notes"])
    assert crawler.stats.get_value("sitemapaudit/history/failed") == 1
    assert not crawler.stats.get_value("spider_exceptions/AssertionError")
    # Run 1, then run 2's conditional request and its plain one.
    assert requests == 3
    assert "if-none-match" not in last_request


def test_a_history_file_that_cannot_be_used_is_a_bad_setting(tmp_path: Path) -> None:
    not_a_database = tmp_path / "notes.txt"
    not_a_database.write_text("plain text, not SQLite\n" * 100)
    with pytest.raises(ConfigError, match=r"SITEMAPAUDIT_HISTORY_PATH=.*notes\.txt"):
        check_history_path(str(not_a_database))
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(ConfigError, match="SITEMAPAUDIT_HISTORY_PATH"):
        check_history_path(str(blocked / "history.sqlite3"))
    fresh = tmp_path / "new" / "dir" / "history.sqlite3"
    check_history_path(str(fresh))
    assert fresh.is_file()


def test_the_stats_that_fail_the_command() -> None:
    closed = {"finish_reason": "finished"}
    assert not audit_failed({**closed, "sitemapaudit/records/url": 3})
    assert audit_failed({**closed, "sitemapaudit/history/failed": 1})
    assert audit_failed({**closed, "sitemapaudit/summary/incomplete": 1})
    assert audit_failed({**closed, "sitemapaudit/fail_on/failed": 1})
    assert audit_failed({**closed, "sitemapaudit/report/failed": True})
    assert audit_failed({**closed, "feedexport/failed_count/FileFeedStorage": 1})
    assert audit_failed({**closed, "sitemapaudit/distributed/stopped": "shutdown"})
    # A crawl that never closed (a second Ctrl-C stops it at once) has no finish_reason.
    assert audit_failed({"sitemapaudit/records/url": 3})


def test_a_history_whose_first_write_fails_still_gives_the_report_and_exit_1(
    tmp_path: Path,
) -> None:
    """The command as cron runs it: the history opens, but beginning the run fails (here a
    trigger stands in for a nearly full disk)."""
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TRIGGER full BEFORE INSERT ON runs "
            "BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END"
        )
    report = tmp_path / "r.jsonl"
    with site_of(3) as site:
        audit = start_audit_process(site.base, report, SITEMAPAUDIT_HISTORY_PATH=path)
        _, stderr = audit.communicate(timeout=60)

    log = stderr.decode()
    assert audit.returncode == 1, log
    assert "Traceback" not in log
    assert log.count("the audit goes on without it: database or disk is full") == 1
    records = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(by_record(records, "url")) == 3
    assert records[-1]["complete"] is True
    assert any(NOTE in note for note in records[-1]["notes"])


@deferred_f_from_coro_f
async def test_a_bug_of_the_history_costs_the_report_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An error of the history's own code as it keeps the summary: the summary is still the
    report's last line, says so, and the command exits with 1; the traceback is in the log."""
    monkeypatch.setattr("sitemapaudit.crawl.run.BackgroundHistoryStore", BrokenPrune)
    settings = {
        "SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3"),
        "SITEMAPAUDIT_HISTORY_KEEP_RUNS": 3,
    }
    with site_of(3) as site, caplog.at_level(logging.ERROR):
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl", settings=settings)
    assert [r["record"] for r in records][-1] == "summary"
    assert len(by_record(records, "url")) == 3
    assert [note for note in records[-1]["notes"] if NOTE in note] != []
    assert crawler.stats.get_value("sitemapaudit/history/failed") == 1
    assert audit_failed(crawler.stats.get_stats())
    traced = [r for r in caplog.records if r.exc_info is not None]
    assert [r.getMessage() for r in traced] == ["history: a SummaryRecord record could not be kept"]
