"""Head-only downloads: the same findings as full downloads, for a fraction of the bytes."""

from __future__ import annotations

import gzip
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


def long_head_page() -> bytes:
    """A page whose head does not end before some 100 KB even gzipped (random text)."""
    title = random.Random(8).randbytes(60_000).hex()
    return big_page(f"<meta name=robots content=noindex><title>{title}</title>").encode()


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
        # Bodies that cannot be read as their Content-Encoding says: fetch_failed either way.
        "/gzip-undeclared": Page(body=gzip.compress(long_head_page()), trickle=NET),
        "/gzip-undeclared-chunked": Page(
            body=gzip.compress(long_head_page()), trickle=NET, chunked=True
        ),
        "/html-declared-gzip": Page(
            body=long_head_page(), headers=[("Content-Encoding", "gzip")], trickle=NET
        ),
        "/gzip-declared-deflate": Page(
            body=gzip.compress(long_head_page()),
            headers=[("Content-Encoding", "deflate")],
            trickle=NET,
        ),
        # Two Content-Type lines: browsers read the last valid one (the Fetch standard).
        "/type-twice": Page(
            body=big_page('<meta name="robots" content="noindex">'),
            content_type="text/plain",
            headers=[("Content-Type", "text/html")],
            trickle=NET,
        ),
        "/html-then-pdf": Page(
            body=big_page('<meta name="robots" content="noindex">'),
            headers=[("Content-Type", "application/pdf")],
            trickle=NET,
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
        r["url"]: (
            r["status"],
            r["fetched"],
            r["issues"],
            r["errors"],
            r["noindex"],
            r["canonical"],
        )
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
    got = {url.removeprefix(site.base): found[2] for url, found in findings(head).items()}
    assert got["/noindex"] == ["noindex"]
    assert got["/gzipped"] == ["noindex"]
    assert got["/pdf"] == ["noindex"]
    assert got["/late-noindex"] == []  # a meta in <body> is not in the head
    assert got["/canonical"] == ["canonical_mismatch"]
    assert got["/chunked"] == ["noindex"]
    assert got["/chunked-small"] == ["canonical_mismatch"]
    assert got["/type-twice"] == ["noindex"]
    assert got["/html-then-pdf"] == []
    errors = {url.removeprefix(site.base): found[3] for url, found in findings(head).items()}
    for path in ("/gzip-undeclared", "/gzip-undeclared-chunked"):
        assert got[path] == ["fetch_failed"], path
        assert errors[path] == [
            "fetch_failed: the page cannot be read: the body is gzip data, but the response "
            "does not say Content-Encoding: gzip (browsers and search engines read it as it "
            "is, compressed)"
        ], path
    assert errors["/html-declared-gzip"] == [
        "fetch_failed: the page's gzip-encoded body cannot be decoded: the body is not gzip "
        "data (it does not start with the gzip magic 1f 8b)"
    ]
    assert errors["/gzip-declared-deflate"][0].startswith(
        "fetch_failed: the page's deflate-encoded body cannot be decoded: the deflate data is "
        "corrupt: "
    )

    def page_bytes(crawler: Any) -> int:
        return int(crawler.stats.get_value("downloader/response_bytes"))

    assert page_bytes(head_crawler) < 0.1 * page_bytes(full_crawler)
    stopped = head_crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head")
    assert stopped == 7  # the six large pages and the large chunked one
    # The pages that cannot be read are stopped at their first bytes, not after their heads.
    unreadable = head_crawler.stats.get_value("sitemapaudit/head_only/stopped_unreadable")
    assert unreadable == 4
    for crawler in (head_crawler, full_crawler):
        assert crawler.stats.get_value("log_count/ERROR") is None
    # The PDF, and the page whose last Content-Type says PDF.
    assert head_crawler.stats.get_value("sitemapaudit/head_only/stopped_after_headers") == 2


def broken_head_routes() -> dict[str, Any]:
    pages = {
        # <svg> is no head element: the head ends there, as in browsers, and the robots meta
        # after it is in the body.
        "/svg-head": Page(
            body=big_page("<svg></svg><meta name=robots content=noindex>"), trickle=NET
        ),
        "/widget-head": Page(
            body=big_page("<my-widget></my-widget><link rel=canonical href=/svg-head>"),
            trickle=NET,
        ),
        # A robots meta between </head> and <body> is put back in the head (the HTML
        # Standard's "after head" insertion mode): a head-only read waits for the <body>.
        "/after-head": Page(
            body="<!DOCTYPE html><html><head><title>t</title></head>\n"
            "<meta name=robots content=noindex>\n<body>" + FILLER * (200_000 // len(FILLER)),
            trickle=NET,
        ),
        # A head that does not end within the 2 MiB the audit reads: its robots meta is unseen.
        "/long-head": Page(
            body=big_page(
                "<script>" + "var a = 1;\n" * 220_000 + "</script>"
                "<meta name=robots content=noindex>"
            )
        ),
    }
    listed = urlset(*(url("{base}" + path) for path in pages))
    return {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=listed, content_type=XML),
        **pages,
    }


@deferred_f_from_coro_f
async def test_head_only_and_full_reads_end_a_head_at_the_same_element(tmp_path: Path) -> None:
    with TestSite(broken_head_routes()) as site:
        full, _ = await run_audit(
            site.base, tmp_path / "full.jsonl", settings={"SITEMAPAUDIT_HEAD_ONLY": False}
        )
        head, head_crawler = await run_audit(site.base, tmp_path / "head.jsonl")
    assert findings(head) == findings(full)
    assert head_crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head") == 4
    got = {url.removeprefix(site.base): found for url, found in findings(head).items()}
    assert got["/svg-head"][2] == ["head_broken"]
    assert got["/svg-head"][3] == [
        "head_broken: the head ends early at <svg>; ignored after it: a robots meta"
    ]
    assert got["/svg-head"][4] == []
    assert got["/widget-head"][2] == ["head_broken"]
    assert got["/widget-head"][3] == [
        "head_broken: the head ends early at <my-widget>; ignored after it: a canonical link"
    ]
    assert got["/widget-head"][5] is None
    assert got["/after-head"][2:5] == (["noindex"], [got["/after-head"][3][0]], ["meta:robots"])
    assert got["/long-head"][2:5] == (
        ["head_too_large"],
        [
            "head_too_large: the head does not end within the first 2 MiB the audit reads; a "
            "robots meta or canonical after that is not seen"
        ],
        [],
    )


@deferred_f_from_coro_f
async def test_a_page_is_read_head_only_whatever_its_announced_size_or_location(
    tmp_path: Path,
) -> None:
    """A page that announces more than DOWNLOAD_MAXSIZE (150 MiB here) is still read up to the
    end of its head; so is a 200 page that also sends a Location header (a status the signal
    of the headers does not tell): neither is downloaded whole, nor failed."""
    noindex = big_page('<meta name="robots" content="noindex">')
    pages = {
        "/announced-huge": Page(body=noindex, trickle=NET, content_length=150 * 1024 * 1024),
        "/ok-with-location": Page(
            body=noindex, trickle=NET, headers=[("Location", "/elsewhere")], chunked=True
        ),
    }
    routes = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(*(url("{base}" + path) for path in pages)), content_type=XML),
        **pages,
    }
    with TestSite(routes) as site:
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl")
    got = {r["url"].removeprefix(site.base): r["issues"] for r in by_record(records, "url")}
    assert got == {"/announced-huge": ["noindex"], "/ok-with-location": ["noindex"]}
    assert crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head") == 2
    assert crawler.stats.get_value("log_count/WARNING") is None
