"""XHTML pages are read as browsers read them, with an XML parser, in full and head-only
downloads alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite

NET = (4096, 0.01)
XHTML = "application/xhtml+xml; charset=utf-8"
PROLOG = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"'
    ' "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
)
NOINDEX = '<meta name="robots" content="noindex"/>'
FILLER = "<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>\n"
# A script whose text holds what the HTML tokenizer would take for the end of the head.
CDATA_SCRIPT = '<script>//<![CDATA[\nvar s = "</script></head><body>";\n//]]></script>'


def xhtml_page(head: str, size: int = 200_000) -> str:
    padding = '<meta name="x" content="y"/>' * 120
    return (
        f'{PROLOG}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title>{padding}'
        f"{head}</head><body>{FILLER * (size // len(FILLER))}</body></html>"
    )


def site_routes() -> dict[str, Any]:
    pages = {
        "/self-closing-script": Page(
            body=xhtml_page(f'<script src="/a.js"/>{NOINDEX}'), content_type=XHTML, trickle=NET
        ),
        "/self-closing-title": Page(
            body=xhtml_page('<title/><link rel="canonical" href="/other"/>'),
            content_type=XHTML,
            trickle=NET,
        ),
        "/cdata": Page(body=xhtml_page(CDATA_SCRIPT + NOINDEX), content_type=XHTML, trickle=NET),
        "/malformed": Page(
            body=xhtml_page(f'<link rel="canonical" href="/p?a=1&b=2"/>{NOINDEX}'),
            content_type=XHTML,
            trickle=NET,
        ),
        "/xml-typed": Page(
            body=xhtml_page(CDATA_SCRIPT + NOINDEX), content_type="application/xml", trickle=NET
        ),
        "/small": Page(body=xhtml_page(f"<title/>{NOINDEX}", size=100), content_type=XHTML),
        "/data.xml": Page(
            body='<?xml version="1.0"?><data>' + "<row>x</row>" * 20_000 + "</data>",
            content_type="text/xml",
            headers=[("X-Robots-Tag", "noindex")],
            trickle=NET,
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
        r["url"].rsplit("/", 1)[1]: (r["issues"], r["noindex"], r["canonical"], r["errors"])
        for r in by_record(records, "url")
    }


@deferred_f_from_coro_f
async def test_xhtml_pages_are_read_as_xml(tmp_path: Path) -> None:
    with TestSite(site_routes()) as site:
        full, _ = await run_audit(
            site.base, tmp_path / "full.jsonl", settings={"SITEMAPAUDIT_HEAD_ONLY": False}
        )
        head, crawler = await run_audit(site.base, tmp_path / "head.jsonl")
    assert findings(head) == findings(full)
    got = findings(head)
    for name in ("self-closing-script", "cdata", "xml-typed", "small"):
        assert got[name][:2] == (["noindex"], ["meta:robots"]), name
    assert got["self-closing-title"][2] == f"{site.base}/other"
    assert got["malformed"][:3] == (["head_broken"], [], None)
    (detail,) = got["malformed"][3]
    assert detail.startswith("head_broken: the head ends early at an XML error at line 3, ")
    assert detail.endswith(
        ": EntityRef: expecting ';'; ignored after it: a canonical link, a robots meta"
    )
    assert got["data.xml"][:2] == (["noindex"], ["header:x-robots-tag"])
    # Every large page stopped at the end of its head (the XML document at its root).
    assert crawler.stats.get_value("sitemapaudit/head_only/stopped_after_head") == 6
    assert crawler.stats.get_value("downloader/response_bytes") < 200_000
    assert crawler.stats.get_value("log_count/ERROR") is None
