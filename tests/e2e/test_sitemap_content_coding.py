"""Sitemaps sent in a Content-Encoding the audit did not ask for (br, deflate): decoded as
pages are, within the sitemap read limit; an undecodable one is fetch_failed naming the
coding, never not_a_sitemap."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, Route, TestSite

brotli = pytest.importorskip("brotli")

PAGE = Page(body="<html><head></head><body>a</body></html>")


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _sitemap(coding: str, encode: Callable[[bytes], bytes], xml: str) -> Route:
    """A sitemap route whose body is ``xml`` (its ``{base}`` filled in) encoded by ``encode``,
    sent with ``Content-Encoding: coding``."""

    def route(site: TestSite, path: str) -> Page:
        data = encode(xml.replace("{base}", site.base).encode())
        return Page(body=data, content_type=XML, headers=[("Content-Encoding", coding)])

    return route


async def _audit(
    tmp_path: Path, sitemaps: dict[str, Route], **settings: Any
) -> dict[str, dict[str, Any]]:
    names = "".join(f"Sitemap: {{base}}{path}\n" for path in sitemaps)
    routes: dict[str, Route] = {
        "/robots.txt": Page(body=names, content_type="text/plain"),
        **sitemaps,
        "/a": PAGE,
        "/b": PAGE,
    }
    with TestSite(routes) as site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings=settings)
    return {r["url"].removeprefix(site.base): r for r in by_record(records, "sitemap")}


@deferred_f_from_coro_f
async def test_sitemaps_in_br_and_deflate_are_read(tmp_path: Path) -> None:
    xml = urlset(url("{base}/a"), url("{base}/b"))
    sitemaps = {
        "/br.xml": _sitemap("br", brotli.compress, xml),
        "/zlib.xml": _sitemap("deflate", zlib.compress, xml),
        "/raw.xml": _sitemap("deflate", _raw_deflate, xml),
        "/deflate-gzip.xml": _sitemap(
            "deflate, gzip", lambda d: gzip.compress(zlib.compress(d)), xml
        ),
        # A gzip file sent in br: the coding is undone, then the file gunzipped once.
        "/br-file.xml.gz": _sitemap("br", lambda d: brotli.compress(gzip.compress(d)), xml),
    }
    got = await _audit(tmp_path, sitemaps)
    assert sorted(got) == sorted(sitemaps)
    for path, record in got.items():
        assert record["issues"] == [], (path, record["errors"])
        assert record["kind"] == "urlset", path
        assert record["url_count"] == 2, path


@deferred_f_from_coro_f
async def test_an_undecodable_sitemap_is_fetch_failed_naming_its_coding(tmp_path: Path) -> None:
    xml = urlset(url("{base}/a"))
    sitemaps = {
        "/br-corrupt.xml": _sitemap("br", lambda d: b"<x" + brotli.compress(d), xml),
        "/deflate-corrupt.xml": _sitemap("deflate", lambda d: b"\xff\xff\xff\xff" * 8, xml),
        "/br-cut.xml": _sitemap("br", lambda d: brotli.compress(d * 50)[:40], xml),
        "/compress.xml": _sitemap("compress", lambda d: b"\x1f\x9d\x90" + d, xml),
    }
    got = await _audit(tmp_path, sitemaps)
    assert sorted(got) == sorted(sitemaps)
    for path, record in got.items():
        assert record["issues"] == ["fetch_failed"], (path, record["errors"])
        [error] = record["errors"]
        coding = path.strip("/").split("-")[0].removesuffix(".xml")
        assert f"Content-Encoding: {coding}" in error, error
        assert record["status"] == 200


@deferred_f_from_coro_f
async def test_a_br_bomb_is_read_up_to_the_sitemap_read_limit(tmp_path: Path) -> None:
    entries = "".join(f"<url><loc>{{base}}/a?{i}</loc></url>" for i in range(200_000))
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + entries + "</urlset>"
    )
    limit = 1_000_000
    assert len(xml) > 5 * limit
    got = await _audit(
        tmp_path,
        {"/bomb.xml": _sitemap("br", lambda d: brotli.compress(d, quality=5), xml)},
        SITEMAPAUDIT_SITEMAP_READ_LIMIT=limit,
        SITEMAPAUDIT_FETCH_URLS=False,
    )
    record = got["/bomb.xml"]
    assert record["bytes"] <= limit + 1
    assert "too_large" in record["issues"], record["errors"]
    assert "not_a_sitemap" not in record["issues"]
