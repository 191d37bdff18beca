"""The shared state of a distributed audit, against a real Redis (no crawler)."""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.held import add_cycles
from sitemapaudit.crawl.tree import Decision
from sitemapaudit.distributed import run as shared_run
from sitemapaudit.distributed.inventory import SharedInventory
from sitemapaudit.distributed.ratelimit import HostPace
from sitemapaudit.distributed.run import SharedAuditRun, SharedSitemapTree
from sitemapaudit.distributed.state import SharedAudit, audit_identity, check_joinable, connect
from sitemapaudit.errors import ConfigError
from sitemapaudit.facts import NOT_REQUESTED_JSON, FetchOutcome, SitemapFacts
from sitemapaudit.history.store import HistoryStore
from sitemapaudit.inventory import NewEntry
from sitemapaudit.urls import parse_origin
from tests.distributed.cluster import PROJECT


def origin_url() -> str:
    return f"https://{uuid.uuid4().hex[:10]}.example"


def audit(url: str, origin: str) -> SharedAudit:
    return SharedAudit(connect(url), origin)


def entries(*locs: str, lastmod: str | None = "2024-01-01") -> list[NewEntry]:
    return [NewEntry(loc, lastmod, "w3c", ()) for loc in locs]


def test_workers_join_the_unfinished_audit_and_a_finished_one_is_not_joined(
    redis_url: str,
) -> None:
    origin = origin_url()
    first, second = audit(redis_url, origin), audit(redis_url, origin)
    assert first.created
    assert not second.created
    assert first.prefix == second.prefix
    first.flag("robots_done")
    first.finish()
    assert second.finished()
    assert second.flags() == {}  # the audit's data is gone, only the flag stays
    third = audit(redis_url, origin)
    assert third.created
    assert third.number == first.number + 1


def two_workers(redis_url: str) -> tuple[SharedInventory, SharedInventory]:
    """The inventories of two workers of one new audit, each with its own connection."""
    shared = audit(redis_url, origin_url())
    return (
        SharedInventory(shared.client, shared.prefix),
        SharedInventory(connect(redis_url), shared.prefix),
    )


def test_listings_are_shared_and_a_sitemap_read_again_is_not_counted_twice(
    redis_url: str,
) -> None:
    a, b = two_workers(redis_url)
    a.sitemap_reading("https://s/1.xml")
    a.add_entries("https://s/1.xml", entries("https://x/a", "https://x/b", "https://x/a"))
    # A worker reads half of sitemap 2, then is gone; another reads it again, whole.
    b.sitemap_reading("https://s/2.xml")
    b.add_entries("https://s/2.xml", entries("https://x/b"))
    a.sitemap_reading("https://s/2.xml")
    a.add_entries("https://s/2.xml", entries("https://x/b", "https://x/c", lastmod=None))
    a.sitemap_done("https://s/1.xml", {})
    a.sitemap_done("https://s/2.xml", {})
    assert a.url_count() == 3
    first, second, third = b.listings([1, 2, 3])
    assert (first.url, first.times_listed, first.sitemaps) == (
        "https://x/a",
        2,
        ("https://s/1.xml",),
    )
    assert second.url == "https://x/b"
    assert second.sitemaps == ("https://s/1.xml", "https://s/2.xml")
    assert second.times_listed == 2
    assert (third.lastmod, third.times_listed) == (None, 1)


@pytest.mark.parametrize(
    ("lastmods", "kept"),
    [
        (["2024-06-01", None, "2024-01-01"], "2024-06-01"),
        # Instants, whatever their offsets (04:00Z over 01:00Z).
        (["2024-01-05T20:00:00-08:00", "2024-01-06T01:00:00Z"], "2024-01-05T20:00:00-08:00"),
        # No date over any date (the record says it is lastmod_invalid).
        (["2024-01-05T20:00:00-08:00", "garbage", "2024-01-06T01:00:00Z"], "garbage"),
    ],
)
def test_a_url_listed_again_keeps_the_greatest_lastmod_in_any_order(
    redis_url: str, lastmods: list[str | None], kept: str
) -> None:
    listings = [(f"https://s/{i}.xml", lastmod) for i, lastmod in enumerate(lastmods)]
    seen = set()
    for shuffled in itertools.permutations(listings):
        a, b = two_workers(redis_url)
        for sitemap, lastmod in shuffled:
            a.sitemap_reading(sitemap)
            a.add_entries(sitemap, [NewEntry("https://x/p", lastmod, "w3c", ("out_of_scope",))])
        (listing,) = b.listings([1])
        seen.add((listing.lastmod, listing.rules))
    assert seen == {(kept, ("out_of_scope",))}


def test_a_url_listed_again_keeps_every_rule_its_listings_broke(redis_url: str) -> None:
    listings = [("https://s/a/s.xml", ()), ("https://s/b/s.xml", ("out_of_scope",))]
    seen = set()
    for shuffled in itertools.permutations(listings):
        a, b = two_workers(redis_url)
        for sitemap, rules in shuffled:
            a.sitemap_reading(sitemap)
            a.add_entries(sitemap, [NewEntry("https://s/a/p", None, "w3c", rules)])
        (listing,) = b.listings([1])
        seen.add(listing.rules)
    assert seen == {("out_of_scope",)}


def test_each_url_is_handed_out_once_and_lost_ones_come_back_marked(redis_url: str) -> None:
    a, b = two_workers(redis_url)
    a.sitemap_reading("https://s/1.xml")
    a.add_entries("https://s/1.xml", entries(*(f"https://x/{i}" for i in range(10))))
    taken = [*a.take_new(4), *b.take_new(4), *a.take_new(4), *b.take_new(4)]
    assert sorted(t[0] for t in taken) == list(range(1, 11))
    for url_id, *_ in taken[:7]:
        a.finish(url_id, {"blocked": False})
    lost = list(b.without_outcome())
    assert lost == sorted(t[0] for t in taken[7:])
    b.requeue(lost)
    again = a.take_new(10)
    assert [t[0] for t in again] == lost
    assert a.retries == set(lost)


def test_outcomes_of_many_urls_are_written_at_once_and_read_back(redis_url: str) -> None:
    a, b = two_workers(redis_url)
    a.sitemap_reading("https://s/1.xml")
    a.add_entries("https://s/1.xml", entries(*(f"https://x/{i}" for i in range(5))))
    taken = [t[0] for t in a.take_new(5)]
    fetched = {"blocked": False, "outcome": {"status": 200, "fetched": True}}
    a.finish_many(
        [
            (taken[0], {"blocked": False, "outcome": NOT_REQUESTED_JSON}),
            (taken[1], {"blocked": True, "outcome": NOT_REQUESTED_JSON}),
            (taken[2], fetched),
        ]
    )
    a.finish_many([])
    assert list(b.without_outcome()) == taken[3:]
    unrequested, blocked, got, missing, _ = b.outcomes(taken)
    assert unrequested == {"blocked": False, "outcome": NOT_REQUESTED_JSON}
    assert blocked == {"blocked": True, "outcome": NOT_REQUESTED_JSON}
    # Read back as the very object the records are built from without decoding it.
    assert unrequested is not None
    assert unrequested["outcome"] is NOT_REQUESTED_JSON
    assert got == fetched
    assert missing is None
    assert b.outcome_count() == 3


def tree(shared: SharedAudit, **limits: int) -> SharedSitemapTree:
    return SharedSitemapTree(
        shared,
        SharedInventory(shared.client, shared.prefix),
        origin=parse_origin("https://e.com"),
        max_depth=limits.get("max_depth", 3),
        max_sitemaps=limits.get("max_sitemaps", 3),
        max_url_length=2048,
    )


def test_the_sitemap_tree_is_the_clusters(redis_url: str) -> None:
    origin = origin_url()
    one, two = tree(audit(redis_url, origin)), tree(audit(redis_url, origin))
    index = "https://e.com/index.xml"
    assert one.consider(index, depth=0) is Decision.FETCH
    # Discovery done again by another worker: not queued yet, so fetched; once queued, known.
    assert two.consider(index, depth=0) is Decision.FETCH
    one.inventory.sitemap_pending(index, {})
    assert two.consider(index, depth=0) is Decision.KNOWN
    assert one.consider("https://e.com/a.xml", depth=1, parent=index) is Decision.FETCH
    # Listed twice by the index in one read: a repeat, as in a single process.
    assert one.consider("https://e.com/a.xml", depth=1, parent=index) is Decision.SEEN
    # The index read again by another worker (its first reader left): a child that was
    # registered but never queued is fetched; one that is queued is known.
    assert two.consider("https://e.com/a.xml", depth=1, parent=index) is Decision.FETCH
    two.inventory.sitemap_pending("https://e.com/a.xml", {})
    assert two.consider("https://e.com/a.xml", depth=1, parent=index) is Decision.KNOWN
    # Listed by another parent: a repeat.
    assert two.consider("https://e.com/a.xml", depth=1, parent="https://e.com/b.xml") is (
        Decision.SEEN
    )
    assert two.consider("https://other.com/x.xml", depth=1, parent=index) is Decision.OFF_HOST
    assert two.consider("https://e.com/deep.xml", depth=4, parent=index) is Decision.TOO_DEEP
    assert two.consider("https://e.com/b.xml", depth=1, parent=index) is Decision.FETCH
    assert one.consider("https://e.com/c.xml", depth=1, parent=index) is Decision.CAPPED
    assert len(one) == len(two) == 4


def test_an_index_read_where_it_redirects_is_known_there_to_every_worker(
    redis_url: str,
) -> None:
    origin = origin_url()
    one, two = tree(audit(redis_url, origin)), tree(audit(redis_url, origin))
    old, index = "https://e.com/old.xml", "https://e.com/index.xml"
    assert one.consider(old, depth=0) is Decision.FETCH
    assert one.redirect_target(index, source=old) is Decision.FETCH
    assert two.redirect_known(index, source="https://e.com/b.xml")
    assert two.redirect_target(index, source="https://e.com/b.xml") is Decision.SEEN
    assert one.consider("https://e.com/a.xml", depth=1, parent=index) is Decision.FETCH
    # The child, read by another worker, lists the index, or the sitemap that redirects to it.
    assert two.consider(index, depth=2, parent="https://e.com/a.xml") is Decision.SEEN
    assert two.loops("https://e.com/a.xml", index)
    assert two.loops("https://e.com/a.xml", old)
    assert two.parent_of(index) == old


def test_a_sitemap_read_again_by_another_worker_follows_its_redirect_again(
    redis_url: str,
) -> None:
    # The worker that followed /old.xml's redirect left before queueing /index.xml: another
    # worker reads /old.xml again, and must read /index.xml too.
    origin = origin_url()
    one, two = tree(audit(redis_url, origin)), tree(audit(redis_url, origin))
    old, index = "https://e.com/old.xml", "https://e.com/index.xml"
    assert one.consider(old, depth=0) is Decision.FETCH
    assert one.redirect_target(index, source=old) is Decision.FETCH
    assert not two.redirect_known(index, source=old)
    assert two.redirect_target(index, source=old) is Decision.FETCH
    # Once it is queued, the redirect leads to a sitemap read under its own name.
    two.inventory.sitemap_pending(index, {})
    assert two.redirect_known(index, source=old)
    assert one.redirect_known(index, source=old)
    # Another sitemap that redirects there: not read twice.
    assert two.redirect_known(index, source="https://e.com/b.xml")


def test_a_child_redirecting_back_to_its_index_is_kept_for_the_index_record(
    redis_url: str,
) -> None:
    # Found by the worker that fetched the child; the index's record, read by another worker,
    # gets it when the report is written.
    origin = origin_url()
    one, two = audit(redis_url, origin), audit(redis_url, origin)
    one.add_cycle("https://e.com/idx.xml", "https://e.com/toidx.xml")
    two.add_cycle("https://e.com/idx.xml", "https://e.com/back.xml")
    assert two.cycles() == {
        "https://e.com/idx.xml": ["https://e.com/toidx.xml", "https://e.com/back.xml"]
    }
    facts = SitemapFacts(url="https://e.com/idx.xml", found_via="robots.txt")
    add_cycles(facts, one.cycles()["https://e.com/idx.xml"])
    assert [(p.code, p.message) for p in facts.problems] == [
        (
            "index_cycle",
            "lists itself or an index above it (a loop), not read again: "
            "https://e.com/toidx.xml, https://e.com/back.xml",
        )
    ]


def test_the_pace_of_a_host_is_shared_by_every_client(redis_url: str) -> None:
    host = f"{uuid.uuid4().hex}.example"
    paces = [HostPace(connect(redis_url)) for _ in range(3)]
    waits = [pace.reserve(f"https://{host}/p{i}", 0.5) for i, pace in enumerate(paces)]
    # Reserved back to back: each start is half a second after the one before.
    assert waits[0] <= 0.05
    assert 0.4 <= waits[1] <= 0.55
    assert 0.9 <= waits[2] <= 1.05
    assert paces[0].reserve(f"https://other-{host}/", 0.5) <= 0.05


def test_a_longer_delay_learnt_later_spaces_the_next_start_from_the_last(redis_url: str) -> None:
    """robots.txt's Crawl-delay becomes known after its own request reserved the default
    delay: the next start is the longer delay after the last one, not the shorter."""
    host = f"{uuid.uuid4().hex}.example"
    pace = HostPace(connect(redis_url))
    url = f"https://{host}/"
    assert pace.reserve(url, 0.5) <= 0.05
    assert 0.9 <= pace.reserve(url, 1.0) <= 1.05
    # And a shorter one after a longer: the last start plus the delay now in force.
    assert 1.1 <= pace.reserve(url, 0.2) <= 1.25


def test_one_host_however_its_urls_write_it_has_one_pace(redis_url: str) -> None:
    host = f"{uuid.uuid4().hex}.example"
    pace = HostPace(connect(redis_url))
    assert pace.reserve(f"http://{host}/a", 0.5) <= 0.05
    assert 0.45 <= pace.reserve(f"http://{host.upper()}:80/b", 0.5) <= 0.55
    assert 0.95 <= pace.reserve(f"http://{host}./c", 0.5) <= 1.05


def test_a_client_slow_to_reach_redis_reserves_room_for_its_lateness(redis_url: str) -> None:
    """A start is known to a worker only once Redis's answer is back: the next start is kept
    that much later, so a request sent late is still the delay before the next."""
    url = f"https://{uuid.uuid4().hex}.example/"
    slow, fast = HostPace(connect(redis_url)), HostPace(connect(redis_url))
    slow.lag = 0.3
    assert slow.reserve(url, 0.5) <= 0.05
    assert 0.75 <= fast.reserve(url, 0.5) <= 0.85


def test_a_hold_keeps_every_client_from_starting_a_request(redis_url: str) -> None:
    url = f"https://{uuid.uuid4().hex}.example/"
    first, other = HostPace(connect(redis_url)), HostPace(connect(redis_url))
    first.hold(url, 1.0)
    assert 1.15 <= other.reserve(url, 0.2) <= 1.25
    # A shorter hold does not shorten it.
    first.hold(url, 0.1)
    assert 1.35 <= other.reserve(url, 0.2) <= 1.5


def test_bad_distributed_settings_fail_at_start_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="SITEMAPAUDIT_DISTRIBUTED"):
        AuditConfig.from_settings({"SITEMAPAUDIT_DISTRIBUTED": "localhost:6379"})
    with pytest.raises(ConfigError, match="SITEMAPAUDIT_INCREMENTAL"):
        AuditConfig.from_settings(
            {"SITEMAPAUDIT_DISTRIBUTED": "redis://127.0.0.1:1/0", "SITEMAPAUDIT_INCREMENTAL": True}
        )
    with pytest.raises(ConfigError, match="SITEMAPAUDIT_DISTRIBUTED"):
        connect("redis://127.0.0.1:1/0")


class _Stats:
    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        pass


def worker_run(url: str, origin: str, tmp_path: Path) -> SharedAuditRun:
    config = AuditConfig.from_settings(
        {
            "SITEMAPAUDIT_DISTRIBUTED": url,
            "SITEMAPAUDIT_WORKER_TIMEOUT": 2,
            "SITEMAPAUDIT_HISTORY_PATH": "",
            "SITEMAPAUDIT_WORK_DIR": str(tmp_path / uuid.uuid4().hex),
        }
    )
    return SharedAuditRun(parse_origin(origin), config, _Stats(), audit(url, origin))


def test_one_worker_writes_the_report_and_another_takes_over_if_it_dies(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    first, second = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
    assert not first.try_to_write()  # nothing is discovered yet: not complete
    first.shared.flag("robots_done")
    first.shared.flag("homepage_done")
    first.shared.add_found(1)
    assert first.complete()
    assert first.try_to_write()
    assert not second.try_to_write()
    # The first one dies: its claim is not renewed and lapses after the worker timeout.
    time.sleep(2.2)
    assert second.try_to_write()
    assert not second.start_done()
    assert list(iter(second.next_action, None)) == []  # nothing was listed
    assert second.start_done()
    second.finish()
    assert first.shared.finished()
    first.close()
    second.close()


def test_outcomes_of_fetched_pages_go_to_redis_in_batches_and_none_is_left_behind(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # However slow the machine, no outcome goes out for having waited.
    monkeypatch.setattr(shared_run, "_OUTCOME_SECONDS", 3600.0)
    origin = origin_url()
    run = worker_run(redis_url, origin, tmp_path)
    inventory = run.shared_inventory
    inventory.sitemap_reading("https://s/1.xml")
    inventory.add_entries("https://s/1.xml", entries(*(f"https://x/{i}" for i in range(40))))
    ids = [t[0] for t in inventory.take_new(40)]
    fetched = FetchOutcome(status=200, fetched=True)
    for url_id in ids[:31]:
        run.fetch_finished(url_id, fetched, blocked=False)
    assert inventory.outcome_count() == 0  # waiting for the batch
    assert run.has_local_work()  # the worker is busy while they wait
    run.fetch_finished(ids[31], fetched, blocked=False)
    assert inventory.outcome_count() == 32  # a full batch
    run.fetch_finished(ids[32], fetched, blocked=False)
    run.poll()  # the worker's tick
    assert inventory.outcome_count() == 33
    run.fetch_finished(ids[33], fetched, blocked=False)
    assert not run.complete()  # (sends what waits before judging)
    assert inventory.outcome_count() == 34
    monkeypatch.setattr(shared_run, "_OUTCOME_SECONDS", 0.0)
    run.fetch_finished(ids[34], fetched, blocked=False)
    assert inventory.outcome_count() == 35  # it waited long enough
    monkeypatch.setattr(shared_run, "_OUTCOME_SECONDS", 3600.0)
    run.fetch_finished(ids[35], fetched, blocked=False)
    run.close()  # a worker that stops sends what waits
    assert inventory.outcome_count() == 36
    stored = inventory.outcomes([ids[0]])[0]
    assert stored is not None
    assert stored["outcome"]["status"] == 200


def test_a_sitemap_named_by_robots_txt_and_the_homepage_is_found_via_robots_txt_in_both_orders(
    redis_url: str, tmp_path: Path
) -> None:
    robots = b"Sitemap: https://SITE/both.xml\n"
    homepage = [("https://SITE/both.xml", "html-link"), ("https://SITE/home.xml", "html-link")]
    for homepage_first in (True, False):
        origin = origin_url()
        site = origin.removeprefix("https://")
        named = [(url.replace("SITE", site), via) for url, via in homepage]
        one, two = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
        refs = []
        if homepage_first:
            held, _ = two.homepage_received(named)
            assert held == []  # waits for robots.txt (read by the other worker)
        found, _ = one.robots_received(200, robots.replace(b"SITE", site.encode()), origin)
        refs += found
        if not homepage_first:
            later, _ = two.homepage_received(named)
            refs += later
        assert sorted((ref.url.replace(site, "SITE"), ref.found_via) for ref in refs) == [
            ("https://SITE/both.xml", "robots.txt"),
            ("https://SITE/home.xml", "html-link"),
        ]
        assert one.shared.take_held_sitemaps() == []
        one.close()
        two.close()


def test_a_homepage_on_another_host_is_noted_for_the_whole_cluster(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    one, two = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
    one.homepage_received([], moved_to="https://www.example.com/")
    assert len(two.notes()) == 1
    assert "-a domain=https://www.example.com" in two.notes()[0]
    one.close()
    two.close()


def test_the_clusters_tree_fetches_sitemaps_on_the_sitemap_hosts(redis_url: str) -> None:
    shared = audit(redis_url, origin_url())
    cluster_tree = SharedSitemapTree(
        shared,
        SharedInventory(shared.client, shared.prefix),
        origin=parse_origin("https://e.com"),
        max_depth=3,
        max_sitemaps=3,
        max_url_length=2048,
        sitemap_hosts=(parse_origin("cdn.e.com"),),
    )
    assert cluster_tree.consider("https://cdn.e.com/s.xml", depth=0) is Decision.FETCH
    assert cluster_tree.consider("https://other.com/s.xml", depth=0) is Decision.OFF_HOST


def test_a_url_listed_again_keeps_the_newest_pubdate_in_any_order(redis_url: str) -> None:
    listings = [
        ("https://s/a.xml", "Wed, 04 Jan 2017 12:34:50 GMT"),
        ("https://s/b.xml", "Thu, 05 Jan 2017 12:34:50 GMT"),
        ("https://s/c.xml", "Thu, 05 Jan 2017 10:00:00 GMT"),
    ]
    seen = set()
    for shuffled in itertools.permutations(listings):
        a, b = two_workers(redis_url)
        for sitemap, lastmod in shuffled:
            a.sitemap_reading(sitemap)
            a.add_entries(sitemap, [NewEntry("https://x/p", lastmod, "rfc822", ())])
        (listing,) = b.listings([1])
        seen.add(listing.lastmod)
    assert seen == {"Thu, 05 Jan 2017 12:34:50 GMT"}


def test_a_worker_that_joins_later_reports_when_the_audit_first_started(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    first = worker_run(redis_url, origin, tmp_path)
    assert first.first_started_at is None  # the first worker: its own start
    # (as if the first worker had started an hour ago, and the cluster had stopped since)
    first.shared.client.set(first.shared.key("started_at"), "2024-06-01T10:00:00Z")
    second = worker_run(redis_url, origin, tmp_path)
    assert second.first_started_at == "2024-06-01T10:00:00Z"
    assert second.resumed_at == []
    first.close()
    second.close()


def test_a_worker_that_starts_the_audit_again_after_every_worker_stopped_records_a_resume(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    first = worker_run(redis_url, origin, tmp_path)
    joined = worker_run(redis_url, origin, tmp_path)  # while the first runs: no resume
    assert first.resumed_at == joined.resumed_at == []
    first.close()
    joined.close()
    # Every worker stopped: the next one to start resumes the audit.
    again = worker_run(redis_url, origin, tmp_path)
    assert len(again.resumed_at) == 1
    also = worker_run(redis_url, origin, tmp_path)  # joins a running worker
    assert also.resumed_at == again.resumed_at
    again.close()
    also.close()
    last = worker_run(redis_url, origin, tmp_path)
    assert last.resumed_at[:1] == again.resumed_at
    assert len(last.resumed_at) == 2
    last.close()


class _CountingStats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.get(key, start) + count


class _FullDisk(HistoryStore):
    def begin_run(self, origin: str, started_at: str) -> int:
        raise sqlite3.OperationalError("database or disk is full")


def test_a_history_that_cannot_begin_the_run_leaves_the_writer_writing_the_report(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_run, "HistoryStore", _FullDisk)
    origin = origin_url()
    history = tmp_path / "history.sqlite3"
    config = AuditConfig.from_settings(
        {
            "SITEMAPAUDIT_DISTRIBUTED": redis_url,
            "SITEMAPAUDIT_HISTORY_PATH": str(history),
            "SITEMAPAUDIT_WORK_DIR": str(tmp_path / "work"),
        }
    )
    stats = _CountingStats()
    run = SharedAuditRun(parse_origin(origin), config, stats, audit(redis_url, origin))
    run.shared.flag("robots_done")
    run.shared.flag("homepage_done")
    run.shared.add_found(1)
    assert run.try_to_write()
    assert run.history is None
    assert stats.values == {"sitemapaudit/history/failed": 1}
    assert [n for n in run.notes() if "database or disk is full" in n and str(history) in n]
    assert list(iter(run.next_action, None)) == []
    run.finish()
    run.close()


def test_a_worker_of_other_arguments_or_settings_does_not_join_the_unfinished_audit(
    redis_url: str,
) -> None:
    origin = origin_url()
    full = audit_identity(origin, [], True, {"fetch_urls": True, "disabled_checks": []})
    SharedAudit(connect(redis_url), origin, identity=full)
    check_joinable(connect(redis_url), origin, full)  # the same audit: joined
    inventory = audit_identity(
        origin, [], False, {"fetch_urls": False, "disabled_checks": ["lastmod_mismatch"]}
    )
    with pytest.raises(ConfigError) as refused:
        check_joinable(connect(redis_url), origin, inventory)
    assert "fetch_urls yes there, no here" in str(refused.value)
    assert "disabled_checks [] there, ['lastmod_mismatch'] here" in str(refused.value)
    one = audit_identity(origin, [f"{origin}/a.xml"], True, {"disabled_checks": []})
    with pytest.raises(ConfigError, match=r"\(discovered sitemaps\) there, https://.*/a.xml here"):
        check_joinable(connect(redis_url), origin, one)


def test_a_worker_started_with_other_arguments_stops_at_start_with_exit_status_2(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    config = AuditConfig.from_settings({"SITEMAPAUDIT_DISTRIBUTED": redis_url})
    identity = audit_identity(origin, [], True, config.shaping_settings())
    SharedAudit(connect(redis_url), origin, identity=identity)
    command = [sys.executable, "-m", "scrapy", "crawl", "audit", "-a", f"domain={origin}"]
    command += ["-a", "fetch_urls=no", "-s", f"SITEMAPAUDIT_DISTRIBUTED={redis_url}"]
    command += ["-s", "SITEMAPAUDIT_HISTORY_PATH=", "-O", str(tmp_path / "report.jsonl")]
    done = subprocess.run(
        command, check=False, cwd=PROJECT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert "fetch_urls yes there, no here" in done.stderr
    assert not (tmp_path / "report.jsonl").exists()


def listed(run: SharedAuditRun, count: int) -> list[str]:
    """``count`` URLs of the run's origin, listed by one sitemap; robots.txt read (none)."""
    origin = run.origin.url
    urls = [f"{origin}/p/{i}" for i in range(count)]
    run.shared_inventory.sitemap_reading(f"{origin}/s.xml")
    run.shared_inventory.add_entries(f"{origin}/s.xml", entries(*urls))
    run.shared.store_robots(404, b"", f"{origin}/robots.txt")
    return urls


def test_a_worker_that_stops_hands_back_the_urls_it_held_at_once(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    one, two = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
    listed(one, 10)
    first = one.next_action()  # takes every URL, hands out the first...
    second = one.next_action()  # ...and the second
    assert isinstance(first, shared_run.PageAction)
    assert isinstance(second, shared_run.PageAction)
    assert not two.shared_inventory.has_new()
    one.fetch_finished(first.url_id, FetchOutcome(status=200, fetched=True), blocked=False)
    one.close()  # stopped (Ctrl-C, a CLOSESPIDER limit) before the audit is complete
    # The other worker goes on with them at once, with no sweep: the URL whose outcome was
    # sent is done, the others (the second one requested again) are handed out again.
    view = two.shared.view(two.shared.key("requests"))
    assert one.shared.worker not in view.live
    assert one.shared.worker not in view.gone
    assert not view.quiet
    again = two.shared_inventory.take_new(20)
    assert [url_id for url_id, *_ in again] == list(range(2, 11))
    assert two.shared_inventory.retries == set(range(2, 11))
    assert two.shared_inventory.outcome_count() == 1
    two.close()


def test_a_page_request_in_the_shared_queue_is_held_by_the_worker_that_takes_it(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    one, two = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
    listed(one, 3)
    action = one.next_action()
    assert isinstance(action, shared_run.PageAction)
    one.page_queued(action.url_id)  # its request went to the shared queue
    one.close()
    # Whoever takes the request from the queue requests it: it is not handed out again.
    assert [url_id for url_id, *_ in two.shared_inventory.take_new(20)] == [2, 3]
    two.page_taken(action.url_id)
    two.close()
    three = worker_run(redis_url, origin, tmp_path)
    assert [url_id for url_id, *_ in three.shared_inventory.take_new(20)] == [1, 2, 3]
    three.close()


def test_a_worker_that_left_is_not_brought_back_by_a_late_heartbeat(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    one, two = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
    one.shared.heartbeat("busy", 60)
    two.shared.heartbeat("idle", 60)
    one.close()
    # (the heartbeat thread stops after the worker left Redis: one more beat may come)
    one.shared.heartbeat("busy", 60)
    view = two.shared.view(two.shared.key("requests"))
    assert set(view.live) == {two.shared.worker}
    assert view.gone == []
    two.close()


def test_a_worker_that_stops_while_writing_the_report_lets_another_write_it_at_once(
    redis_url: str, tmp_path: Path
) -> None:
    origin = origin_url()
    first, second = worker_run(redis_url, origin, tmp_path), worker_run(redis_url, origin, tmp_path)
    first.shared.flag("robots_done")
    first.shared.flag("homepage_done")
    first.shared.add_found(1)
    assert first.try_to_write()
    assert not second.try_to_write()
    first.close()  # stopped before the report was written
    assert second.try_to_write()
    second.finish()
    second.close()


def test_a_worker_that_lost_redis_sends_nothing_more_to_it(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_run, "_OUTCOME_SECONDS", 3600.0)
    origin = origin_url()
    run = worker_run(redis_url, origin, tmp_path)
    listed(run, 5)
    action = run.next_action()
    assert isinstance(action, shared_run.PageAction)
    run.fetch_finished(action.url_id, FetchOutcome(status=200, fetched=True), blocked=False)
    run.hreflang.add(f"{origin}/p/0", [("de", f"{origin}/p/1")], f"{origin}/s.xml")
    sent: list[bytes] = []

    def unreachable(connection: object, command: object, check_health: bool = True) -> None:
        sent.append(repr(command).encode())
        raise redis.ConnectionError("Connection refused")

    run.lost = "ConnectionError: Connection refused"  # (as the spider's redis_lost sets it)
    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", unreachable)
    run.close()
    assert sent == []


def test_a_redis_restarted_empty_is_not_reconnected_to_as_if_nothing_happened(
    tmp_path: Path,
) -> None:
    """A command on a connection that the server's restart broke fails, however soon the
    server is back: a client that quietly reconnected would carry on in an empty database,
    where the audit is gone."""
    from tests.distributed.conftest import free_port, start_redis

    port = free_port()
    server = start_redis(port, tmp_path / "first")
    try:
        client = connect(f"redis://127.0.0.1:{port}/0")
        client.set("audit", "open")
        server.terminate()
        server.wait(10)
        server = start_redis(port, tmp_path / "second")
        with pytest.raises(redis.ConnectionError):
            client.get("audit")
    finally:
        server.terminate()
        server.wait(10)


def test_a_retry_after_one_worker_honours_holds_the_other_workers_too(redis_url: str) -> None:
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from sitemapaudit.middlewares import RetryAfterMiddleware

    url = f"https://{uuid.uuid4().hex}.example/busy"
    crawler = get_crawler(settings_dict={"SITEMAPAUDIT_DISTRIBUTED": redis_url})
    middleware = RetryAfterMiddleware.from_crawler(crawler)
    middleware._hold_cluster(Request(url), 2.0)
    other = HostPace(connect(redis_url))
    assert 2.0 <= other.reserve(url.replace("/busy", "/other"), 0.1) <= 2.2
