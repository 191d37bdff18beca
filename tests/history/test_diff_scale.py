"""Diffing two runs of 100,000 URLs each streams from SQLite in small, bounded memory."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sitemapaudit.history import HistoryStore, diff_runs

SIZE = 100_000
SHIFT = 5_000
SITEMAPS = 40


def records(run: int, start: int) -> Iterator[dict[str, Any]]:
    """URL records of one run: ``i`` in ``[start, start + SIZE)``, changing on patterns of i."""
    for i in range(start, start + SIZE):
        sitemap = i % SITEMAPS + (run if i % 1000 == 7 else 0)
        broken = run == 2 and i % 500 == 3
        issues = ["canonical_mismatch"] if i % 10 == 0 else []
        if broken:
            issues.append("http_error")
        yield {
            "record": "url",
            "url": f"https://big.example/products/{i:07d}",
            "sitemaps": [f"https://big.example/sitemap-{sitemap}.xml"],
            "lastmod": "2024-04-01" if run == 2 and i % 250 == 1 else "2024-05-01",
            "status": 404 if broken else 200,
            "fetched": True,
            "final_url": f"https://big.example/products/{i:07d}",
            "last_modified": None,
            "noindex": [],
            "robots_blocked": False,
            "issues": issues,
            "checked_at": "2024-06-01T00:00:00Z",
        }


def test_diff_of_two_large_runs_in_bounded_memory(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        old = store.begin_run("https://big.example", "2024-06-01T00:00:00Z")
        for record in records(1, 0):
            store.add_record(old, record)
        store.finish_run(old, "2024-06-01T02:00:00Z", {})
        new = store.begin_run("https://big.example", "2024-06-02T00:00:00Z")
        for record in records(2, SHIFT):
            store.add_record(new, record)
        store.finish_run(new, "2024-06-02T02:00:00Z", {})

        counts: Counter[str] = Counter()
        order: list[str] = []
        last: tuple[str, str] = ("", "")
        tracemalloc.start()
        try:
            for record in diff_runs(store, old, new):
                key = (record["change"], record["url"])
                if key[0] != last[0]:
                    order.append(key[0])
                else:
                    assert key[1] >= last[1]
                last = key
                counts[record["change"]] += 1
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    both = range(SHIFT, SIZE)
    added = range(SIZE, SIZE + SHIFT)
    moved = sum(1 for i in both if i % 1000 == 7)
    broken = sum(1 for i in both if i % 500 == 3)
    assert counts == {
        "url_added": SHIFT,
        "url_removed": SHIFT,
        "url_moved": moved,
        "finding_new": broken + sum(1 for i in added if i % 10 == 0 or i % 500 == 3),
        "finding_fixed": sum(1 for i in range(SHIFT) if i % 10 == 0),
        "finding_persisting": sum(1 for i in both if i % 10 == 0),
        "status_regression": broken,
        "indexability_regression": broken,
        "lastmod_backwards": sum(1 for i in both if i % 250 == 1),
    }
    assert order == list(dict.fromkeys(order))
    assert peak < 10_000_000
