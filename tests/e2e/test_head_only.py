"""Head-only downloads: the same findings as full downloads, for a fraction of the bytes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite

# 4 KB every 10 ms (400 KB/s): slow enough that a loaded machine, whose reactor may look at a
# socket only every few tens of milliseconds, has still received little more than the head.
NET = (4096, 0.01)
FILLER = "<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>\n"


def big_page(head: str, size: int = 200_000, *, random_text: bool = False) -> str:
    head_block = f"<head><title>t</title>{head}" + "<meta name='x' content='y'>" * 120 + "</head>"
    # Random text does not compress, so a gzip-encoded page stays large on the wire.
    body = (
        random.Random(7).randbytes(size // 2).hex()
        if random_text
        else FILLER * (size // len(FILLER))
    )
    return f"<!DOCTYPE html><html>{head_block}<body>{body}</body></html>"


def site_routes() -> dict[str, Any]:
    pages = {
        "/plain": Page(body=big_page(""), trickle=NET),
        "/noindex": Page(body=big_page('<meta name="robots" content="noindex">'), trickle=NET),
        "/canonical": Page(body=big_page('<link rel="canonical" href="/plain">'), trickle=NET),
        "/late-noindex": Page(
            body=big_page("").replace("<body>", "<body><meta name=robots content=noindex>"),
            trickle=NET,
        ),
        "/gzipped": Page(
            body=big_page('<meta name="robots" content="none">', random_text=True),
            gzip_encoding=True,
            trickle=NET,
        ),
        "/small": Page(
            body="<html><head><meta name=robots content=noindex></head><body>x</body></html>"
        ),
        # No Content-Length: read as a large page, up to the end of its head.
        "/chunked": Page(
            body=big_page('<meta name="robots" content="noindex">'), trickle=NET, chunked=True
        ),
        "/chunked-small": Page(
            body="<html><head><link rel=canonical href=/plain></head><body>x</body></html>",
            chunked=True,
        ),
        "/pdf": Page(
            body=b"%PDF" + b"0" * 300_000,
            content_type="application/pdf",
            headers=[("X-Robots-Tag", "noindex")],
        ),
    }
    listed = urlset(*(url("{base}" + path) for path in pages))
    return {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=listed, content_type=XML),
        **pages,
    }


def findings(records: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {
        r["url"]: (r["status"], r["issues"], r["noindex"], r["canonical"])
        for r in by_record(records, "url")
    }


@deferred_f_from_coro_f
async def test_head_only_gives_the_same_findings_for_a_tenth_of_the_bytes(tmp_path: Path) -> None:
    with TestSite(site_routes()) as site:
        full, full_crawler = await run_audit(
            site.base, tmp_path / "full.jsonl", settings={"SITEMAPAUDIT_HEAD_ONLY": False}
        )
        head, head_crawler = await run_audit(site.base, tmp_path / "head.jsonl")
    assert findings(head) == findings(full)
    got = findings(head)
    assert got[f"{site.base}/noindex"][1] == ["noindex"]
    assert got[f"{site.base}/gzipped"][1] == ["noindex"]
    assert got[f"{site.base}/pdf"][1] == ["noindex"]
    assert got[f"{site.base}/late-noindex"][1] == []  # a meta in <body> is not in the head
    assert got[f"{site.base}/canonical"][1] == ["canonical_mismatch"]
    assert got[f"{site.base}/chunked"][1] == ["noindex"]
    assert got[f"{site.base}/chunked-small"][1] == ["canonical_mismatch"]

    def page_bytes(crawler: Any) -> int:
        return int(crawler.stats.get_value("downloader/response_bytes"))

    assert page_bytes(head_crawler) < 0.1 * page_bytes(full_crawler)
    stopped = head_crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head")
    assert stopped == 6  # the five large pages and the large chunked one
    for crawler in (head_crawler, full_crawler):
        assert crawler.stats.get_value("log_count/ERROR") is None
    assert head_crawler.stats.get_value("sitemapaudit/head_only/stopped_after_headers") == 1
