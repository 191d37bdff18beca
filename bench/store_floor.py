"""Time the audit's two SQLite stores alone, without crawling, parsing or checks.

``store_floor.py [--urls N] [--sitemaps K]`` (run with the project on sys.path) writes N URLs
(listed once each, in K sitemaps, with a lastmod, as the inventory site of bench/run.py) into

* the URL inventory (``sitemapaudit.inventory.Inventory``, as an audit without JOBDIR opens it):
  ``add_entries`` per sitemap, then every URL taken back with ``take_listed`` (what the
  inventory of ``-a fetch_urls=no`` does with each URL);
* the history (``sitemapaudit.history.store.HistoryStore``): one ``add_url`` per URL, with the
  values of a URL that was not requested, and the final commit;

each in a fresh file of a temporary directory, and prints the seconds of each part. These are
the stores' own costs per URL: what an inventory of N URLs spends in SQLite and around it
whatever else it does. The last line of output is JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from sitemapaudit.history.store import HistoryStore
from sitemapaudit.inventory import Inventory, NewEntry

ORIGIN = "http://127.0.0.1:8000"
LASTMOD = "2024-03-01T12:00:00+00:00"


def _url(i: int) -> str:
    return f"{ORIGIN}/catalog/{i // 1000:04d}/item-{i:07d}.html"


def _sitemap(k: int) -> str:
    return f"{ORIGIN}/sitemap-{k:03d}.xml.gz"


def inventory_seconds(root: Path, urls: int, sitemaps: int) -> dict[str, float]:
    inventory = Inventory(root / "inventory.sqlite3", resumable=False)
    per = -(-urls // sitemaps)
    started = time.perf_counter()
    for k in range(sitemaps):
        entries = (
            NewEntry(_url(i), LASTMOD, "w3c", ()) for i in range(k * per, min(urls, (k + 1) * per))
        )
        inventory.add_entries(_sitemap(k), entries)
    added = time.perf_counter()
    inventory.listings_complete()
    taken = 0
    while batch := inventory.take_listed(500):
        taken += len(batch)
        inventory.mark_emitted([(listing.url_id, None) for listing in batch])
    inventory.close()
    done = time.perf_counter()
    assert taken == urls, (taken, urls)
    return {"inventory_add_s": added - started, "inventory_take_s": done - added}


def history_seconds(root: Path, urls: int, sitemaps: int) -> dict[str, float]:
    per = -(-urls // sitemaps)
    with HistoryStore(root / "history.sqlite3") as history:
        run = history.begin_run(ORIGIN, "2026-01-01T00:00:00Z")
        started = time.perf_counter()
        for i in range(urls):
            history.add_url(
                run,
                _url(i),
                (_sitemap(i // per),),
                (),
                status=None,
                fetched=False,
                final_url=None,
                noindex=(),
                robots_blocked=False,
                lastmod=LASTMOD,
                last_modified=None,
                checked_at=None,
            )
        history.flush()
        done = time.perf_counter()
    return {"history_add_s": done - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--sitemaps", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sitemapaudit-store-floor-") as work:
        root = Path(work)
        result: dict[str, float | int] = {"urls": args.urls}
        result.update(inventory_seconds(root, args.urls, args.sitemaps))
        result.update(history_seconds(root, args.urls, args.sitemaps))
    stores = sum(v for k, v in result.items() if k.endswith("_s"))
    result["stores_s"] = stores
    for key, value in result.items():
        print(f"{key:20} {value:,.2f}" if isinstance(value, float) else f"{key:20} {value:,}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
