"""How many gzip layers a sitemap may have depends on its response's Content-Encoding."""

from __future__ import annotations

import gzip
from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite


@deferred_f_from_coro_f
async def test_a_doubly_gzipped_sitemap_is_read_only_with_content_encoding_gzip(
    tmp_path: Path,
) -> None:
    site = TestSite({})

    def doc(name: str) -> bytes:
        return urlset(url(f"{site.base}/{name}")).encode()

    site.routes.update(
        {
            "/robots.txt": Page(
                body="".join(
                    f"Sitemap: {{base}}/{name}.xml.gz\n" for name in ("declared", "undeclared")
                ),
                content_type="text/plain",
            ),
            # A .gz file sent with Content-Encoding: gzip on top: two layers, both declared.
            "/declared.xml.gz": Page(
                body=gzip.compress(doc("declared")), content_type=XML, gzip_encoding=True
            ),
            # The same bytes on the wire without the header: the file itself is gzipped twice.
            "/undeclared.xml.gz": Page(
                body=gzip.compress(gzip.compress(doc("undeclared"))),
                content_type="application/gzip",
            ),
        }
    )
    with site:
        records, _ = await run_audit(site.base, tmp_path / "out.jsonl", fetch_urls="no")
    sitemaps = {r["url"].removeprefix(site.base): r for r in by_record(records, "sitemap")}
    declared, undeclared = sitemaps["/declared.xml.gz"], sitemaps["/undeclared.xml.gz"]
    assert declared["issues"] == []
    assert declared["kind"] == "urlset"
    assert declared["url_count"] == 1
    assert undeclared["issues"] == ["not_a_sitemap", "gzip_invalid"]
    assert undeclared["kind"] == "unknown"
    assert undeclared["url_count"] == 0
    assert undeclared["gzip"] is True
    assert any("gzipped twice" in error for error in undeclared["errors"])
    listed = {r["url"].removeprefix(site.base) for r in by_record(records, "url")}
    assert "/declared" in listed
    assert "/undeclared" not in listed
