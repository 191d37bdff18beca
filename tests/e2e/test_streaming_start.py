"""Pages are requested while other sitemaps are still being read: the crawl does not wait."""

from __future__ import annotations

import time
from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, page, url, urlset
from tests.support.server import Page, TestSite

SLOW = 1.5


def slow_sitemap(site: TestSite, path: str) -> Page:
    time.sleep(SLOW)
    return Page(body=urlset(url("{base}/late"), url("{base}/early")), content_type=XML)


@deferred_f_from_coro_f
async def test_pages_are_requested_before_every_sitemap_is_read(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/fast.xml\nSitemap: {base}/slow.xml\n",
                content_type="text/plain",
            ),
            "/fast.xml": Page(body=urlset(url("{base}/early")), content_type=XML),
            "/slow.xml": slow_sitemap,
            "/early": page(),
            "/late": page(),
        }
    )
    with site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl")
    seen = {path: t for t, path in reversed(site.log)}
    assert seen["/early"] < seen["/slow.xml"] + SLOW - 0.3
    # ... and the record still lists both sitemaps: records wait for the listings to be final.
    early = next(r for r in by_record(records, "url") if r["url"].endswith("/early"))
    assert early["sitemaps"] == [f"{site.base}/fast.xml", f"{site.base}/slow.xml"]
    assert early["issues"] == ["duplicate"]
    assert site.hits["/early"] == 1
