"""Validating sitemap files on disk, without crawling (the ``validate`` command's core)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.intake import read_sitemap
from sitemapaudit.facts import FetchOutcome, SitemapFacts, UrlFacts
from sitemapaudit.inventory import Inventory
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import SitemapRecord, UrlRecord
from sitemapaudit.urls import loc_problems


def validate_file(
    path: Path, config: AuditConfig, builder: RecordBuilder, children: list[str]
) -> Iterator[SitemapRecord | UrlRecord]:
    """The sitemap record of one file, then one URL record per distinct URL it lists.

    Child sitemap locations of an index are appended to ``children``. At most
    SITEMAPAUDIT_SITEMAP_READ_LIMIT bytes of the file are read.
    """
    with path.open("rb") as handle:
        body = handle.read(config.sitemap_read_limit)
    with tempfile.TemporaryDirectory(prefix="sitemapaudit-validate-") as work:
        inventory = Inventory(Path(work) / "inventory.sqlite3")
        try:
            facts = read_sitemap(
                body,
                SitemapFacts(url=str(path), found_via="argument"),
                inventory=inventory,
                rules=lambda loc: tuple(loc_problems(loc, max_length=config.max_url_length)),
                on_child=children.append,
                read_limit=config.sitemap_read_limit,
                now=datetime.now(UTC),
                near_limit_fraction=config.near_limit_fraction,
            )
            yield builder.sitemap_record(facts)
            inventory.listings_complete()
            while batch := inventory.take_new(1000):
                for listing in inventory.listings([url_id for url_id, *_ in batch]):
                    yield builder.url_record(
                        UrlFacts(
                            url=listing.url,
                            sitemaps=list(listing.sitemaps),
                            lastmod=listing.lastmod,
                            lastmod_format=listing.lastmod_format,
                            times_listed=listing.times_listed,
                            rules=list(listing.rules),
                            robots_blocked=False,
                            outcome=FetchOutcome(),
                        )
                    )
        finally:
            inventory.close()
