"""Pages sent in a Content-Encoding the audit did not ask for (deflate, br, zstd)."""

from __future__ import annotations

import gzip
import random
import zlib
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite

brotli = pytest.importorskip("brotli")
zstd = pytest.importorskip("backports.zstd")

NET = (4096, 0.01)
HEAD = "<head><meta name=robots content=noindex><link rel=canonical href=/other></head>"


def page(coding: str, data: bytes, *, trickle: bool = False) -> Page:
    return Page(body=data, headers=[("Content-Encoding", coding)], trickle=NET if trickle else None)


@deferred_f_from_coro_f
async def test_pages_in_other_codings_are_read_and_a_corrupt_one_is_fetch_failed(
    tmp_path: Path,
) -> None:
    html = f"<!DOCTYPE html><html>{HEAD}<body>x</body></html>".encode()
    # Random text does not compress: the page stays large on the wire.
    big = f"<html>{HEAD}<body>{random.Random(7).randbytes(150_000).hex()}</body></html>".encode()
    pages = {
        "/deflate": page("deflate", zlib.compress(html)),
        "/br": page("br", brotli.compress(html)),
        "/zstd": page("zstd", zstd.compress(html)),
        "/br-big": page("br", brotli.compress(big), trickle=True),
        "/br-corrupt": page("br", b"<html>" + brotli.compress(html)),
        "/compress": page("compress", b"\x1f\x9d\x90" + html),
        "/deflate-gzip": page("deflate, gzip", gzip.compress(zlib.compress(html))),
        # Two header lines are two codings, on a page large enough to stop after its head.
        "/gzip-gzip-big": Page(
            body=gzip.compress(gzip.compress(big)),
            headers=[("Content-Encoding", "gzip"), ("Content-Encoding", "gzip")],
            trickle=NET,
        ),
        "/deflate-as-gzip": page("deflate, gzip", zlib.compress(gzip.compress(html))),
    }
    listed = urlset(*(url("{base}" + path) for path in pages))
    routes: dict[str, Any] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=listed, content_type=XML),
        **pages,
    }
    with TestSite(routes) as site:
        records, crawler = await run_audit(site.base, tmp_path / "out.jsonl")
    got = {r["url"].removeprefix(site.base): r for r in by_record(records, "url")}
    for path in ("/deflate", "/br", "/zstd", "/br-big", "/deflate-gzip", "/gzip-gzip-big"):
        assert got[path]["fetched"], path
        assert got[path]["issues"] == ["noindex", "canonical_mismatch"], path
    for path, coding in (
        ("/br-corrupt", "br"),
        ("/compress", "compress"),
        ("/deflate-as-gzip", "deflate, gzip"),
    ):
        assert not got[path]["fetched"]
        assert got[path]["issues"] == ["fetch_failed"]
        assert got[path]["errors"][0].startswith(
            f"fetch_failed: the page's {coding}-encoded body cannot be decoded: "
        )
    assert crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head") == 2
    assert crawler.stats.get_value("log_count/ERROR") is None


@deferred_f_from_coro_f
async def test_a_page_declared_gzip_whose_body_is_not_gzip_is_fetch_failed(
    tmp_path: Path,
) -> None:
    html = f"<!DOCTYPE html><html>{HEAD}<body>x</body></html>".encode()
    big = f"<html>{HEAD}<body>{random.Random(7).randbytes(150_000).hex()}</body></html>".encode()
    pages = {
        "/gzip-plain": page("gzip", html),
        "/x-gzip-plain": page("x-gzip", html),
        # Large enough that the download is watched for the end of its head.
        "/gzip-plain-big": page("gzip", big, trickle=True),
        "/gzip": page("gzip", gzip.compress(html)),
        "/gzip-big": page("gzip", gzip.compress(big), trickle=True),
        "/gzip-empty": page("gzip", b""),
    }
    listed = urlset(*(url("{base}" + path) for path in pages))
    routes: dict[str, Any] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=listed, content_type=XML),
        **pages,
    }
    with TestSite(routes) as site:
        records, crawler = await run_audit(site.base, tmp_path / "out.jsonl")
    got = {r["url"].removeprefix(site.base): r for r in by_record(records, "url")}
    for path, coding in (
        ("/gzip-plain", "gzip"),
        ("/x-gzip-plain", "x-gzip"),
        ("/gzip-plain-big", "gzip"),
    ):
        assert (got[path]["status"], got[path]["fetched"]) == (200, False), path
        assert got[path]["issues"] == ["fetch_failed"], path
        assert got[path]["noindex"] == [], path
        assert got[path]["errors"] == [
            f"fetch_failed: the page's {coding}-encoded body cannot be decoded: the body is "
            "not gzip data (it does not start with the gzip magic 1f 8b)"
        ], path
    for path in ("/gzip", "/gzip-big"):
        assert got[path]["fetched"], path
        assert got[path]["issues"] == ["noindex", "canonical_mismatch"], path
    assert got["/gzip-empty"]["fetched"]
    assert got["/gzip-empty"]["issues"] == []
    # Both big pages are stopped: one once its head is read, the other at its first bytes.
    assert crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head") == 1
    assert crawler.stats.get_value("sitemapaudit/head_only/stopped_unreadable") == 1
    assert crawler.stats.get_value("log_count/ERROR") is None
