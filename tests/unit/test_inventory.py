from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemapaudit import inventory as inventory_module
from sitemapaudit.errors import ConfigError
from sitemapaudit.facts import NOT_REQUESTED_JSON, FetchOutcome
from sitemapaudit.inventory import Inventory, NewEntry, check_resumable


def entry(loc: str, lastmod: str | None = None) -> NewEntry:
    return NewEntry(loc, lastmod, "w3c", ())


def test_listings_are_merged_per_url(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries(
        "https://e.com/b.xml", [entry("https://e.com/1", "2024-01-01"), entry("https://e.com/2")]
    )
    inv.add_entries(
        "https://e.com/a.xml", [entry("https://e.com/1", "2023-01-01"), entry("https://e.com/1")]
    )
    taken = inv.take_new(10)
    assert [t[1] for t in taken] == ["https://e.com/1", "https://e.com/2"]
    inv.listings_complete()
    listing = inv.listing(taken[0][0])
    assert listing.sitemaps == ("https://e.com/a.xml", "https://e.com/b.xml")
    assert listing.times_listed == 3
    assert listing.lastmod == "2024-01-01"
    assert inv.take_new(10) == []
    assert [x.url for x in inv.listings([taken[1][0], taken[0][0]])] == [
        "https://e.com/2",
        "https://e.com/1",
    ]


def test_urls_are_handed_out_once_in_listing_order(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries("https://e.com/a.xml", (entry(f"https://e.com/{i}") for i in range(5000)))
    assert inv.counts()["new"] == 5000
    batch = inv.take_new(3)
    assert [t[1] for t in batch] == ["https://e.com/0", "https://e.com/1", "https://e.com/2"]
    inv.add_entries("https://e.com/b.xml", [entry("https://e.com/1"), entry("https://e.com/new")])
    inv.finish(batch[0][0], {"x": 1})
    inv.finish(batch[1][0], None)
    done = inv.take_done(10)
    assert done == [(batch[0][0], {"x": 1}), (batch[1][0], None)]
    counts = inv.counts()
    assert counts["emitted"] == 2
    assert counts["urls"] == 5001
    assert counts["new"] == 4998
    assert counts["listings"] == 5002
    assert inv.totals() == (5001, 5002)
    assert inv.new_count() == 4998
    assert not inv.has_done()
    assert inv.has_new()


def test_the_cursor_survives_reopening(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries("https://e.com/a.xml", (entry(f"https://e.com/{i}") for i in range(10)))
    inv.take_new(4)
    inv.close()
    again = Inventory(tmp_path / "i.sqlite3")
    assert [t[1] for t in again.take_new(1)] == ["https://e.com/4"]


def test_urls_listed_again_across_chunks_count_every_listing(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    a, b = "https://e.com/a.xml", "https://e.com/b.xml"
    # Repeats within a chunk, across chunks of one sitemap, and across sitemaps.
    inv.add_entries(a, [entry(f"https://e.com/{i % 5}") for i in range(7)], batch=3)
    inv.add_entries(b, [entry("https://e.com/6"), entry("https://e.com/0")], batch=1)
    inv.listings_complete()
    got = {
        x.url.rsplit("/", 1)[1]: (x.sitemaps, x.times_listed)
        for x in inv.listings([url_id for url_id, *_ in inv.take_new(10)])
    }
    assert got == {
        "0": ((a, b), 3),
        "1": ((a,), 2),
        "2": ((a,), 1),
        "3": ((a,), 1),
        "4": ((a,), 1),
        "6": ((b,), 1),
    }
    assert inv.counts()["listings"] == 9
    assert inv.totals() == (6, 9)


def test_a_sitemap_read_again_replaces_its_earlier_listings(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    a, b = "https://e.com/a.xml", "https://e.com/b.xml"
    inv.sitemap_reading(b)
    inv.add_entries(b, [entry("https://e.com/1")])
    inv.sitemap_reading(a)
    inv.add_entries(
        a, [entry("https://e.com/1"), entry("https://e.com/2"), entry("https://e.com/3")]
    )
    inv.close()
    # An interrupted audit reads a.xml again, which now lists fewer URLs.
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.sitemap_reading(a)
    inv.add_entries(a, [entry("https://e.com/2")])
    inv.listings_complete()
    got = {x.url.rsplit("/", 1)[1]: (x.sitemaps, x.times_listed) for x in inv.take_listed(10)}
    assert got == {"1": ((b,), 1), "2": ((a,), 1), "3": ((), 0)}
    assert inv.counts()["listings"] == 2
    assert inv.totals() == (3, 2)


def test_take_listed_hands_out_like_take_new(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries(
        "https://e.com/a.xml",
        [NewEntry(f"https://e.com/{i}", "2024-01-01", "w3c", ("out_of_scope",)) for i in range(5)],
    )
    inv.listings_complete()
    first = inv.take_listed(2)
    assert [x.url for x in first] == ["https://e.com/0", "https://e.com/1"]
    assert first[0].rules == ("out_of_scope",)
    assert first[0].lastmod == "2024-01-01"
    assert first == inv.listings([x.url_id for x in first])
    assert [t[1] for t in inv.take_new(10)] == [f"https://e.com/{i}" for i in range(2, 5)]
    assert inv.take_listed(10) == []


def test_an_inventory_of_an_earlier_layout_is_refused_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "inventory.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT UNIQUE NOT NULL)")
    db.execute("INSERT INTO urls (url) VALUES ('https://e.com/')")
    db.commit()
    db.close()
    with pytest.raises(ConfigError, match="new JOBDIR"):
        Inventory(path)


def test_totals_are_kept_as_listings_are_stored(tmp_path: Path) -> None:
    """``totals()`` is counted once and then kept up to date; it always equals a count."""
    inv = Inventory(tmp_path / "i.sqlite3")
    assert inv.totals() == (0, 0)
    seen: list[tuple[int, int]] = []
    for k, locs in enumerate([[0, 1, 1, 2], [2, 3], [0, 0, 4], [5]]):
        inv.add_entries(f"https://e.com/{k}.xml", [entry(f"https://e.com/{i}") for i in locs], 2)
        counts = inv.counts()
        assert inv.totals() == (counts["urls"], counts["listings"])
        seen.append(inv.totals())
    assert seen == [(3, 4), (4, 6), (5, 9), (6, 10)]
    inv.close()
    # Reopened (a resumed audit), then a sitemap read again: counted afresh.
    inv = Inventory(tmp_path / "i.sqlite3")
    assert inv.totals() == (6, 10)
    inv.sitemap_reading("https://e.com/0.xml")
    inv.sitemap_reading("https://e.com/0.xml")
    inv.add_entries("https://e.com/0.xml", [entry("https://e.com/0")])
    counts = inv.counts()
    assert inv.totals() == (counts["urls"], counts["listings"]) == (6, 7)


def test_done_count_is_the_outcomes_waiting_for_their_records(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries("https://e.com/a.xml", (entry(f"https://e.com/{i}") for i in range(10)))
    batch = inv.take_new(4)
    for url_id, *_ in batch[:3]:
        inv.finish(url_id, {"outcome": {"status": 200}})
    assert inv.done_count() == 3
    inv.take_done(2)
    assert inv.done_count() == 1
    inv.close()
    resumed = Inventory(tmp_path / "i.sqlite3")  # an interrupted audit, run again
    resumed.prepare_resume()
    assert resumed.done_count() == 3  # the records already out are sent again, unrequested


def test_requested_done_count_leaves_out_urls_settled_without_a_request(
    tmp_path: Path,
) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries("https://e.com/a.xml", (entry(f"https://e.com/{i}") for i in range(8)))
    ids = [url_id for url_id, *_ in inv.take_new(8)]
    fetched = FetchOutcome(fetched=True, status=200).to_json()
    failed = FetchOutcome(error="TimeoutError: took longer than 30.0 seconds").to_json()
    carried = FetchOutcome(fetched=True, status=200, carried_over=True).to_json()
    for url_id, stored in zip(
        ids,
        [
            {"blocked": False, "outcome": fetched},
            {"blocked": True, "outcome": fetched},  # requested under fetch_blocked
            {"blocked": False, "outcome": failed},
            {"blocked": True, "outcome": NOT_REQUESTED_JSON},
            {"blocked": False, "outcome": NOT_REQUESTED_JSON},  # off_host, invalid_url...
            {"blocked": False, "outcome": carried},
            None,
        ],
        strict=False,
    ):
        inv.finish(url_id, stored)
    assert inv.done_count() == 7
    assert inv.requested_done_count() == 3
    inv.take_done(1)
    assert inv.requested_done_count() == 2
    inv.close()


def test_a_finished_inventory_says_so(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    assert not inv.finished()
    inv.mark_finished()
    inv.close()
    assert Inventory(tmp_path / "i.sqlite3").finished()


def test_a_resumed_inventory_keeps_its_first_start_and_every_resume(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.record_start("2026-01-01T02:30:00Z")
    inv.close()
    inv = Inventory(tmp_path / "i.sqlite3")
    assert inv.record_resume("2026-01-01T03:00:00Z") == (
        "2026-01-01T02:30:00Z",
        ["2026-01-01T03:00:00Z"],
    )
    inv.close()
    inv = Inventory(tmp_path / "i.sqlite3")
    assert inv.record_resume("2026-01-01T04:00:00Z") == (
        "2026-01-01T02:30:00Z",
        ["2026-01-01T03:00:00Z", "2026-01-01T04:00:00Z"],
    )
    inv.close()
    # An inventory that did not keep its start: the start is unknown, the resume is kept.
    old = Inventory(tmp_path / "old.sqlite3")
    assert old.record_resume("2026-01-01T03:00:00Z") == (None, ["2026-01-01T03:00:00Z"])
    old.close()


@pytest.mark.parametrize(
    ("fmt", "lastmods", "kept"),
    [
        ("w3c", ["2024-06-01", None, "2024-01-01"], "2024-06-01"),
        # RSS pubDates compare as the instants they name, not as text (where Wed > Thu).
        (
            "rfc822",
            [
                "Wed, 04 Jan 2017 12:34:50 GMT",
                "Thu, 05 Jan 2017 12:34:50 GMT",
                "Thu, 05 Jan 2017 10:00:00 GMT",
            ],
            "Thu, 05 Jan 2017 12:34:50 GMT",
        ),
        # W3C Datetimes compare as instants whatever their offsets (04:00Z over 01:00Z).
        (
            "w3c",
            ["2024-01-05T20:00:00-08:00", "2024-01-06T01:00:00+00:00"],
            "2024-01-05T20:00:00-08:00",
        ),
        (
            "rfc3339",
            ["2024-01-06T05:00:00+02:00", "2024-01-06T01:00:00Z"],
            "2024-01-06T05:00:00+02:00",
        ),
        # A time wins over its day alone; a value that is no date over any date, so that the
        # record says it is lastmod_invalid.
        ("w3c", ["2024-05-01T10:00:00Z", "2024-05-01"], "2024-05-01T10:00:00Z"),
        ("w3c", ["garbage", "2024-05-01T10:00:00Z", "2024-05-01"], "garbage"),
        ("w3c", ["2024-05-01", "2024-06-01T10:00:00"], "2024-06-01T10:00:00"),
    ],
)
def test_a_url_listed_again_keeps_the_greatest_lastmod_in_any_order(
    tmp_path: Path, fmt: str, lastmods: list[str | None], kept: str
) -> None:
    listings = [(f"https://e.com/{i}.xml", lastmod) for i, lastmod in enumerate(lastmods)]
    seen = set()
    for order, shuffled in enumerate(itertools.permutations(listings)):
        inv = Inventory(tmp_path / f"i{order}.sqlite3")
        for sitemap, lastmod in shuffled:
            inv.add_entries(sitemap, [NewEntry("https://e.com/p", lastmod, fmt, ())])
        inv.listings_complete()
        (listing,) = inv.listings([url_id for url_id, *_ in inv.take_new(10)])
        seen.add(listing.lastmod)
        inv.close()
    assert seen == {kept}


def test_a_url_listed_again_keeps_every_rule_its_listings_broke(tmp_path: Path) -> None:
    # In scope of one sitemap, out of the other's: out_of_scope whichever is read first.
    listings = [("https://e.com/a/s.xml", ()), ("https://e.com/b/s.xml", ("out_of_scope",))]
    seen = set()
    for order, shuffled in enumerate(itertools.permutations(listings)):
        inv = Inventory(tmp_path / f"i{order}.sqlite3")
        for sitemap, rules in shuffled:
            inv.add_entries(sitemap, [NewEntry("https://e.com/a/p", None, "w3c", rules)])
        inv.listings_complete()
        (listing,) = inv.listings([url_id for url_id, *_ in inv.take_new(10)])
        seen.add(listing.rules)
        inv.close()
    assert seen == {("out_of_scope",)}


def test_a_failed_write_leaves_no_transaction_open_and_keeps_its_error(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "inventory.sqlite3")

    def notes() -> Iterator[tuple[str, str]]:
        yield ("https://e.com/a", "one")
        raise ValueError("the notes could not be read")

    with pytest.raises(ValueError, match="could not be read"):
        inv.add_url_notes(notes())
    assert inv.url_notes("https://e.com/a") == []
    assert inv.add_url_notes([("https://e.com/b", "two")]) == 1
    # A full disk: SQLite has rolled the transaction back itself.
    pages = inv._db.execute("PRAGMA page_count").fetchone()[0]
    inv._db.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        inv.add_entries(
            "https://e.com/s.xml", [entry(f"https://e.com/{i}" * 20) for i in range(500)]
        )
    inv._db.execute("PRAGMA max_page_count=1073741823")
    assert inv.add_entries("https://e.com/s.xml", [entry("https://e.com/c")]) == 1
    inv.close()


def test_an_inventory_that_cannot_be_read_is_not_called_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "inventory.sqlite3"
    Inventory(path).close()

    def io_error(*_args: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(inventory_module, "_check_layout", io_error)
    with pytest.raises(ConfigError) as failed:
        check_resumable(path)
    assert str(failed.value) == (
        f"the inventory {path} (JOBDIR or SITEMAPAUDIT_WORK_DIR) cannot be read: disk I/O error"
    )
