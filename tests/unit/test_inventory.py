from __future__ import annotations

from pathlib import Path

from sitemapaudit.inventory import Inventory, NewEntry


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
    assert not inv.has_done()
    assert inv.has_new()


def test_the_cursor_survives_reopening(tmp_path: Path) -> None:
    inv = Inventory(tmp_path / "i.sqlite3")
    inv.add_entries("https://e.com/a.xml", (entry(f"https://e.com/{i}") for i in range(10)))
    inv.take_new(4)
    inv.close()
    again = Inventory(tmp_path / "i.sqlite3")
    assert [t[1] for t in again.take_new(1)] == ["https://e.com/4"]
