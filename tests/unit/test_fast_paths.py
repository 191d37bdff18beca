"""The shortcuts taken for throughput give what the general code gives."""

from __future__ import annotations

import asyncio
import codecs
import dataclasses
import json
import sqlite3
import time
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_tz
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.http import Headers
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.defer import Deferred

from sitemapaudit.crawl.pages import now_iso
from sitemapaudit.crawl.responses import ResponseHeaders
from sitemapaudit.crawl.run import AuditRun
from sitemapaudit.facts import FetchOutcome
from sitemapaudit.inventory import DONE, EMITTED, NEW, Inventory, NewEntry
from sitemapaudit.page.dates import parse_http_date
from sitemapaudit.page.head import _sniff_encoding, decode_html, parse_head


def test_outcome_to_json_is_asdict() -> None:
    outcome = FetchOutcome(
        fetched=True,
        status=301,
        error="x",
        redirect_chain=[{"url": "https://e.com/a", "status": 301}],
        final_url="https://e.com/b",
        noindex=["meta:robots"],
        canonical="https://e.com/c",
        checked_at="2024-01-01T00:00:00Z",
    )
    data = outcome.to_json()
    assert data == dataclasses.asdict(outcome)
    assert list(data) == [f.name for f in dataclasses.fields(FetchOutcome)]
    data["redirect_chain"][0]["status"] = 302
    data["noindex"].append("x")
    assert outcome.redirect_chain[0]["status"] == 301
    assert outcome.noindex == ["meta:robots"]
    assert FetchOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome


def _email_date(text: str) -> datetime | None:
    parsed = parsedate_tz(text.strip())
    if parsed is None:
        return None
    try:
        zone = timezone(timedelta(seconds=parsed[9] or 0))
        return datetime(*parsed[:6], tzinfo=zone).astimezone(UTC)  # type: ignore[misc]
    except ValueError:
        return None


@pytest.mark.parametrize(
    "text",
    [
        "Mon, 04 Mar 2024 01:24:00 GMT",
        "  Fri, 29 Feb 2024 12:00:00 GMT ",
        "Sat, 29 Feb 2025 12:00:00 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 23:59:60 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Mon, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 +0100",
    ],
)
def test_http_date_fast_path_matches_email_utils(text: str) -> None:
    assert parse_http_date(text) == _email_date(text)
    parsed = parse_http_date(text)
    assert parsed is None or parsed.tzinfo is UTC


def test_now_iso_is_the_current_second() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    value = datetime.strptime(now_iso(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= value <= datetime.now(UTC)


def test_head_with_a_template_ignores_its_content() -> None:
    body = (
        b"<html><head><template><meta name=robots content=noindex>"
        b"<link rel=canonical href=/t></template><link rel=canonical href=/c></head>"
    )
    facts = parse_head(body, "https://e.com/p")
    assert facts.noindex == ()
    assert facts.canonical == "https://e.com/c"


def _decoded_incrementally(body: bytes, encoding: str | None) -> str:
    """decode_html without its shortcut: always through an incremental decoder."""
    codec, skip = _sniff_encoding(body, encoding)
    data = body[skip:]
    if codec is None:
        try:
            return str(codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=False))
        except UnicodeDecodeError:
            codec = "cp1252"
    try:
        return str(codecs.getincrementaldecoder(codec)("replace").decode(data, final=False))
    except (LookupError, UnicodeError, ValueError, TypeError):
        return data.decode("utf-8", "replace")


@settings(max_examples=500, database=None)
@given(
    st.one_of(
        st.binary(max_size=64),
        st.text(max_size=32).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.text(max_size=32).map(lambda t: b"<meta charset=cp1252>" + t.encode("utf-8")[:-1]),
    ),
    st.sampled_from([None, "utf-8", "UTF8", "iso-8859-1", "windows-1252", "utf-16", "koi8-r"]),
)
def test_decode_shortcut_gives_what_incremental_decoding_gives(
    body: bytes, encoding: str | None
) -> None:
    assert decode_html(body, encoding=encoding) == _decoded_incrementally(body, encoding)


def test_lazy_headers_read_like_a_dict() -> None:
    headers = ResponseHeaders(Headers({"Content-Type": "text/html", "X-Robots-Tag": ["a", "b"]}))
    assert headers.get("content-type") == ["text/html"]
    assert headers.get("x-robots-tag") == ["a", "b"]
    assert headers.get("link") is None
    assert "link" not in headers
    with pytest.raises(KeyError):
        headers["link"]
    assert dict(headers) == {"content-type": ["text/html"], "x-robots-tag": ["a", "b"]}
    assert len(headers) == 2


def _inventory(
    tmp_path: Path, count: int, *, resumable: bool = True
) -> tuple[Inventory, list[int]]:
    inv = Inventory(tmp_path / "i.sqlite3", resumable=resumable)
    inv.add_entries(
        "https://e.com/s.xml",
        [NewEntry(f"https://e.com/{i}", None, "w3c", ()) for i in range(count)],
    )
    inv.listings_complete()
    return inv, [url_id for url_id, *_ in inv.take_new(count)]


def _states(path: Path) -> dict[int, tuple[int, str | None]]:
    db = sqlite3.connect(path)
    try:
        return {
            int(i): (int(s), o) for i, s, o in db.execute("SELECT id, state, outcome FROM urls")
        }
    finally:
        db.close()


def test_emitted_urls_are_written_in_batches_and_on_close(tmp_path: Path) -> None:
    inv, ids = _inventory(tmp_path, 3)
    fetched = {"blocked": False, "outcome": FetchOutcome(fetched=True, status=200).to_json()}
    inv.mark_emitted([(ids[0], fetched)])
    inv.mark_emitted([(ids[1], None)])
    assert inv.counts()["emitted"] == 2  # reads see buffered updates
    inv.mark_emitted([(ids[2], None)])
    inv.close()
    states = _states(tmp_path / "i.sqlite3")
    assert {s for s, _ in states.values()} == {EMITTED}
    assert json.loads(states[ids[0]][1] or "null") == fetched
    assert states[ids[1]][1] is None


def test_an_inventory_nothing_resumes_from_writes_no_emitted_urls(tmp_path: Path) -> None:
    """A temporary work directory goes with its run: the states and outcomes of emitted URLs
    would never be read, so they are not written; handing out and settling work as before."""
    inv, ids = _inventory(tmp_path, 4, resumable=False)
    fetched = {"blocked": False, "outcome": FetchOutcome(fetched=True, status=200).to_json()}
    inv.mark_emitted([(ids[0], fetched), (ids[1], None)])
    inv.finish(ids[2], fetched)
    assert inv.has_done()
    assert inv.take_done(10) == [(ids[2], fetched)]
    assert not inv.has_done()
    assert not inv.has_new()
    inv.close()
    assert _states(tmp_path / "i.sqlite3") == {
        ids[0]: (NEW, None),
        ids[1]: (NEW, None),
        ids[2]: (EMITTED, json.dumps(fetched)),
        ids[3]: (NEW, None),
    }


def test_emitted_urls_are_written_within_a_moment(tmp_path: Path) -> None:
    inv, ids = _inventory(tmp_path, 2)
    inv.mark_emitted([(ids[0], None)])
    time.sleep(0.15)
    inv.mark_emitted([(ids[1], None)])
    try:
        assert {s for s, _ in _states(tmp_path / "i.sqlite3").values()} == {EMITTED}
    finally:
        inv.close()


def test_only_finished_urls_awaiting_their_record_are_indexed_by_state(tmp_path: Path) -> None:
    inv, ids = _inventory(tmp_path, 4)
    db = sqlite3.connect(tmp_path / "i.sqlite3")
    try:
        indexed = f"SELECT COUNT(*) FROM urls INDEXED BY urls_done WHERE state = {DONE}"
        assert db.execute(indexed).fetchone() == (0,)
        inv.finish(ids[0], None)
        inv.finish(ids[2], {"outcome": {"status": 200}})
        assert db.execute(indexed).fetchone() == (2,)
        assert inv.has_done()
        assert [url_id for url_id, _ in inv.take_done(10)] == [ids[0], ids[2]]
        assert not inv.has_done()
        assert db.execute(indexed).fetchone() == (0,)
        for query in (
            f"SELECT 1 FROM urls WHERE state = {DONE} LIMIT 1",
            f"SELECT id, outcome FROM urls WHERE state = {DONE} ORDER BY id LIMIT 5",
        ):
            plan = db.execute(f"EXPLAIN QUERY PLAN {query}").fetchall()
            assert "urls_done" in str(plan)
    finally:
        db.close()
        inv.close()


def test_wait_returns_on_wake_and_on_timeout() -> Deferred[None]:
    class Run:
        _waiter = None
        wake = AuditRun.wake
        wait = AuditRun.wait

    async def scenario() -> None:
        run = Run()
        loop = asyncio.get_running_loop()
        start = loop.time()
        loop.call_later(0.01, run.wake)  # type: ignore[arg-type]
        await run.wait(5)  # type: ignore[arg-type]
        assert loop.time() - start < 1
        start = loop.time()
        await run.wait(0.02)  # type: ignore[arg-type]
        run.wake()  # type: ignore[arg-type]  # no waiter: nothing happens
        assert 0.015 <= loop.time() - start < 1

    return deferred_from_coro(scenario())
