"""The history store whose writes a second process carries out: what happens around it.

(That it reads back exactly what the plain store does is tested by running the store and
diff tests against both stores.)
"""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sitemapaudit.history import HistoryError, HistoryStore
from sitemapaudit.history.background import BackgroundHistoryStore, serve

ORIGIN = "https://www.example.com"


def add(store: HistoryStore, run_id: int, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        store.add_url(
            run_id,
            f"{ORIGIN}/p{i}",
            [f"{ORIGIN}/sitemap.xml"],
            ["lastmod_invalid"] if i % 2 else [],
            status=None,
            fetched=False,
            final_url=None,
            noindex=[],
            robots_blocked=False,
            lastmod="2024-01-01",
            last_modified=None,
            checked_at=None,
        )


def url_rows(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT COUNT(*) FROM url_results").fetchone()[0])
    finally:
        db.close()


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def test_full_batches_are_written_by_the_other_process_while_the_crawl_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    with BackgroundHistoryStore(path, batch_size=10) as store:
        assert store._writer is not None
        assert store._writer.pid != os.getpid()
        run_id = store.begin_run(ORIGIN, "2024-06-01T00:00:00Z")
        add(store, run_id, 25)
        store.sync()
        # The two full batches are committed; the last five wait in this process.
        assert url_rows(path) == 20
        assert store.url_result(run_id, f"{ORIGIN}/p24") is not None  # a read flushes
        assert url_rows(path) == 25
    assert url_rows(path) == 25


def test_the_writer_exits_with_the_store(tmp_path: Path) -> None:
    store = BackgroundHistoryStore(tmp_path / "history.sqlite3")
    assert store._writer is not None
    writer = store._writer
    store.close()
    assert writer.returncode == 0


def test_a_writer_that_died_fails_the_next_call_with_a_history_error(tmp_path: Path) -> None:
    store = BackgroundHistoryStore(tmp_path / "history.sqlite3", batch_size=10)
    assert store._writer is not None
    run_id = store.begin_run(ORIGIN, "2024-06-01T00:00:00Z")
    store._writer.kill()
    store._writer.wait()
    with pytest.raises(HistoryError, match="history writer process exited"):
        add(store, run_id, 10)  # a full batch: sent
    with pytest.raises(HistoryError, match="history writer process exited"):
        store.flush()  # and every later call
    store.close()


def test_an_error_in_the_writer_is_reported_with_its_message(tmp_path: Path) -> None:
    store = BackgroundHistoryStore(tmp_path / "history.sqlite3")
    store._send(("no such message",))
    with pytest.raises(HistoryError, match="writer failed: HistoryError: unknown message"):
        store.sync()
    store.close()


def test_signals_do_not_stop_the_writer(tmp_path: Path) -> None:
    # The crawl shuts down gracefully on SIGINT or SIGTERM and still finishes its run through
    # the writer.
    with BackgroundHistoryStore(tmp_path / "history.sqlite3", batch_size=10) as store:
        assert store._writer is not None
        run_id = store.begin_run(ORIGIN, "2024-06-01T00:00:00Z")
        add(store, run_id, 5)
        store.flush()  # a round trip: the writer is up and has installed its handlers
        assert os.getsid(store._writer.pid) != os.getsid(0)  # a terminal's Ctrl-C misses it
        os.kill(store._writer.pid, signal.SIGINT)
        os.kill(store._writer.pid, signal.SIGTERM)
        add(store, run_id, 15, start=5)
        store.finish_run(run_id, "2024-06-01T01:00:00Z", {"record": "summary"})
        assert store.runs()[0].url_count == 20


def test_when_the_crawl_dies_the_writer_commits_what_it_was_sent_and_exits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).parents[2])!r})
        from sitemapaudit.history.background import BackgroundHistoryStore
        from tests.history.test_background import add
        store = BackgroundHistoryStore({str(path)!r}, batch_size=10)
        run_id = store.begin_run("{ORIGIN}", "2024-06-01T00:00:00Z")
        add(store, run_id, 25)
        print(store._writer.pid, flush=True)
        os._exit(0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    writer_pid = int(done.stdout.split()[0])
    assert gone(writer_pid)
    assert url_rows(path) == 20  # two batches sent; five rows were still buffered


def test_the_writer_process_imports_no_crawling_machinery() -> None:
    """The writer is a second process beside every audit: what it imports is memory the audit
    pays for (Scrapy, Twisted, itemadapter and lxml would add tens of MB to its peak)."""
    code = (
        "import sys, sitemapaudit.history.background; "
        "print(sorted(m for m in ('scrapy', 'twisted', 'itemadapter', 'lxml') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_a_writer_that_cannot_open_the_history_says_why_and_exits(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_text("plain text, not SQLite\n" * 100)
    replies = io.BytesIO()
    assert serve(str(path), io.BytesIO(), replies) == 1
    assert replies.getvalue().startswith(b"error ")
    assert b"not a usable history database" in replies.getvalue()
