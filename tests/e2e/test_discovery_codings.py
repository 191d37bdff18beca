"""robots.txt and the homepage are read as their Content-Encoding says (br, deflate, gzip),
as sitemaps and pages are; one that cannot be decoded is said to be unread, never read as
if it had no rules or links."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, Route, TestSite

brotli = pytest.importorskip("brotli")

ROBOTS = "User-agent: *\nDisallow: /p1\nSitemap: {base}/a.xml\n"
HOMEPAGE = '<html><head><link rel="sitemap" href="/a.xml"></head><body>home</body></html>'
PAGE = Page(body="<html><head></head><body>a</body></html>")
SITEMAP = Page(body=urlset(url("{base}/p1"), url("{base}/p2")), content_type=XML)
CODINGS = {"br": brotli.compress, "deflate": zlib.compress, "gzip": gzip.compress}


def _encoded(text: str, coding: str, content_type: str) -> Route:
    def route(site: TestSite, path: str) -> Page:
        body = CODINGS[coding](text.replace("{base}", site.base).encode())
        return Page(body=body, content_type=content_type, headers=[("Content-Encoding", coding)])

    return route


async def _audit(tmp_path: Path, routes: dict[str, Any]) -> list[dict[str, Any]]:
    with TestSite({"/p1": PAGE, "/p2": PAGE, **routes}) as site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings={"RETRY_TIMES": 0})
    return records


def _name(record: dict[str, Any]) -> str:
    return str(record["url"]).rsplit("/", 1)[1]


@pytest.mark.parametrize("coding", sorted(CODINGS))
@deferred_f_from_coro_f
async def test_robots_txt_in_a_content_coding_is_read_for_its_rules_and_sitemaps(
    tmp_path: Path, coding: str
) -> None:
    records = await _audit(
        tmp_path, {"/robots.txt": _encoded(ROBOTS, coding, "text/plain"), "/a.xml": SITEMAP}
    )
    assert {_name(r): r["found_via"] for r in by_record(records, "sitemap")} == {
        "a.xml": "robots.txt"
    }
    assert {_name(r): r["robots_blocked"] for r in by_record(records, "url")} == {
        "p1": True,
        "p2": False,
    }
    assert records[-1]["robots_txt"]["outcome"] == "rules"
    assert records[-1]["notes"] == []


@pytest.mark.parametrize("coding", sorted(CODINGS))
@deferred_f_from_coro_f
async def test_a_homepage_in_a_content_coding_is_read_for_its_sitemap_links(
    tmp_path: Path, coding: str
) -> None:
    records = await _audit(
        tmp_path,
        {
            "/robots.txt": Page(status=404),
            "/": _encoded(HOMEPAGE, coding, "text/html"),
            "/a.xml": SITEMAP,
        },
    )
    assert {_name(r): r["found_via"] for r in by_record(records, "sitemap")} == {
        "a.xml": "html-link"
    }
    assert records[-1]["notes"] == []


CORRUPT = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03this is not deflate data at all"


@deferred_f_from_coro_f
async def test_a_robots_txt_that_cannot_be_decoded_is_said_to_be_unread(tmp_path: Path) -> None:
    robots = Page(body=CORRUPT, content_type="text/plain", headers=[("Content-Encoding", "gzip")])
    records = await _audit(tmp_path, {"/robots.txt": robots, "/a.xml": SITEMAP})
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "disallow_all"
    assert any(
        note.startswith("robots.txt could not be read (its Content-Encoding: gzip")
        for note in summary["notes"]
    ), summary["notes"]


@deferred_f_from_coro_f
async def test_a_homepage_that_cannot_be_decoded_is_said_to_be_unread(tmp_path: Path) -> None:
    homepage = Page(body=CORRUPT, headers=[("Content-Encoding", "gzip")])
    records = await _audit(tmp_path, {"/robots.txt": Page(status=404), "/": homepage})
    notes = records[-1]["notes"]
    assert any(
        note.startswith("the homepage could not be read (its Content-Encoding: gzip")
        for note in notes
    ), notes
    assert not any("the homepage name none" in note for note in notes), notes
