"""Real audits of hostile local sites, one row of hostile input each.

Every audit must finish with a finding for each hostile document, one url record per distinct
listed URL, a summary whose counts add up, no error logged, no file or foreign host touched,
and within a time and memory budget (tracemalloc over the whole in-process crawl).
"""

from __future__ import annotations

import gzip
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit import settings as project_settings
from tests.hostile.support import (
    MB,
    XML,
    Tripwire,
    assert_no_errors,
    bounded,
    bounded_resident,
    corrupt_gzip,
    fixture,
    gzip_bomb,
    sitemapindex,
    urlset,
)
from tests.support.crawl import by_record, run_audit
from tests.support.server import Page, TestSite

HTML = "<!DOCTYPE html><html><head><title>t</title></head><body>ok</body></html>"
NOINDEX = '<html><head><meta name="robots" content="noindex"></head><body>x</body></html>'
QUICK = {"DOWNLOAD_TIMEOUT": 2, "RETRY_TIMES": 1, "LOG_LEVEL": "INFO"}


def robots(*sitemaps: str) -> Page:
    lines = "".join(f"Sitemap: {{base}}{path}\n" for path in sitemaps)
    return Page(body=f"User-agent: *\nAllow: /\n{lines}", content_type="text/plain")


def sitemaps_by_url(records: list[dict[str, Any]], site: TestSite) -> dict[str, dict[str, Any]]:
    return {r["url"].replace(site.base, ""): r for r in by_record(records, "sitemap")}


def urls_by_url(records: list[dict[str, Any]], site: TestSite) -> dict[str, dict[str, Any]]:
    return {r["url"].replace(site.base, ""): r for r in by_record(records, "url")}


def assert_accounted(records: list[dict[str, Any]], listed: set[str]) -> None:
    """One url record per distinct listed URL, and a summary that adds up."""
    urls = [r["url"] for r in by_record(records, "url")]
    assert len(urls) == len(set(urls)), "a URL has more than one record"
    assert set(urls) == listed
    summary = records[-1]
    assert summary["record"] == "summary"
    assert [r["record"] for r in records].count("summary") == 1
    assert summary["urls_listed"] == len(urls)
    assert summary["urls_fetched"] == sum(r["fetched"] for r in by_record(records, "url"))
    assert summary["sitemaps_found"] == len(by_record(records, "sitemap"))
    counts = Counter(code for r in records[:-1] for code in r["issues"])
    assert summary["counts"] == dict(counts)


async def audit(
    site: TestSite,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    *,
    seconds: float = 20,
    megabytes: float = 64,
    resident: bool = False,
    settings: dict[str, Any] | None = None,
    **spider_args: str,
) -> tuple[list[dict[str, Any]], Any]:
    """Audit ``site`` within a budget; ``resident`` measures the resident set, not tracemalloc.

    tracemalloc slows a parse of tens of thousands of entries tenfold, so the largest audits
    are measured by their resident memory instead.
    """
    caplog.set_level(logging.INFO)
    budget = bounded_resident if resident else bounded
    # Wall-clock seconds: what a hostile server tries is to hold the audit up, not to make it
    # compute.
    with budget(seconds=seconds, megabytes=megabytes, clock=time.perf_counter):
        records, crawler = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={**QUICK, **(settings or {})},
            **spider_args,
        )
    assert_no_errors(caplog, crawler)
    return records, crawler


# -- XML entities --------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_entity_attacks_are_reported_and_nothing_is_loaded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tripwire: Tripwire
) -> None:
    evil = Page(body='<!ENTITY undeclared "EXPANDED">', content_type="application/xml-dtd")
    documents = {
        "/xxe-passwd.xml": fixture("xxe_passwd.xml"),
        "/xxe-file.xml": fixture("xxe_entity.xml", target=tripwire.uri),
        "/xxe-http.xml": fixture("xxe_entity.xml", target="{base}/evil.dtd"),
        "/external-dtd-file.xml": fixture("external_dtd.xml", target=str(tripwire.path)),
        "/external-dtd-http.xml": fixture("external_dtd.xml", target="{base}/evil.dtd"),
        "/parameter-entity.xml": fixture("parameter_entity.xml", target=tripwire.uri),
        "/laughs.xml": fixture("billion_laughs.xml"),
        "/xinclude.xml": fixture("xinclude.xml", target=tripwire.uri),
    }
    # A location holding an entity reference is invalid_url on its sitemap, and no URL record.
    pages = ["/after", "/before", "/page"]
    served = ["/after", "/before", "/page"]
    site = TestSite(
        {
            "/robots.txt": robots(*documents),
            "/evil.dtd": evil,
            **{path: Page(body=body, content_type=XML) for path, body in documents.items()},
            **{path: Page(body=HTML) for path in served},
        }
    )
    with site:
        records, _ = await audit(site, tmp_path, caplog)
    assert tripwire.opened == 0
    assert site.hits["/evil.dtd"] == 0
    sitemaps = sitemaps_by_url(records, site)
    assert set(sitemaps) == set(documents)
    for path, record in sitemaps.items():
        assert "xml_entities" in record["issues"], path
        assert record["status"] == 200
    assert {"xml_entities", "xml_malformed"} <= set(sitemaps["/laughs.xml"]["issues"])
    for path in documents.keys() - {"/laughs.xml", "/xinclude.xml"}:
        assert "invalid_url" in sitemaps[path]["issues"], path
    assert_accounted(records, {f"{site.base}{path}" for path in pages})
    assert "root:" not in repr(records)
    assert "EXPANDED" not in repr(records)


# -- compression ---------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_compression_attacks_are_capped_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = TestSite({})

    def doc(*names: str) -> bytes:
        return urlset(f"{site.base}/{name}" for name in names)

    cut = gzip.compress(doc(*(f"cut-{i}" for i in range(400))), mtime=0)
    corrupt = corrupt_gzip(doc(*(f"corrupt-{i}" for i in range(400))))
    documents = {
        "/bomb.xml.gz": Page(body=gzip_bomb(1024), content_type="application/gzip"),
        "/truncated.xml.gz": Page(body=cut[: len(cut) // 2], content_type="application/gzip"),
        "/corrupt.xml.gz": Page(body=corrupt, content_type="application/gzip"),
        "/plain-says-gzip.xml": Page(
            body=doc("plain-says-gzip"), content_type=XML, headers=[("Content-Encoding", "gzip")]
        ),
        "/gzip-says-nothing.xml": Page(
            body=gzip.compress(doc("gzip-says-nothing")), content_type="application/octet-stream"
        ),
        "/gzip-twice.xml.gz": Page(
            body=gzip.compress(doc("gzip-twice")), content_type=XML, gzip_encoding=True
        ),
    }
    pages = {
        "/plain-says-gzip": Page(body=NOINDEX, headers=[("Content-Encoding", "gzip")]),
        "/gzip-says-nothing": Page(body=gzip.compress(NOINDEX.encode())),
        "/gzip-twice": Page(body=NOINDEX, gzip_encoding=True),
    }
    site.routes.update({"/robots.txt": robots(*documents), **documents, **pages})
    with site:
        records, _ = await audit(
            site,
            tmp_path,
            caplog,
            megabytes=160,
            fetch_urls="no",
            settings={"SITEMAPAUDIT_SITEMAP_READ_LIMIT": 2 * MB},
        )
        (tmp_path / "pages").mkdir()
        listed = ("/plain-says-gzip.xml", "/gzip-says-nothing.xml", "/gzip-twice.xml.gz")
        fetched, _ = await audit(
            site,
            tmp_path / "pages",
            caplog,
            sitemap=",".join(f"{site.base}{path}" for path in listed),
        )
    sitemaps = sitemaps_by_url(records, site)
    assert sitemaps["/bomb.xml.gz"]["issues"] == ["too_large"]
    assert sitemaps["/bomb.xml.gz"]["bytes"] == 2 * MB
    assert sitemaps["/bomb.xml.gz"]["gzip"] is True
    assert "gzip_invalid" in sitemaps["/truncated.xml.gz"]["issues"]
    assert "gzip_invalid" in sitemaps["/corrupt.xml.gz"]["issues"]
    for path in ("/plain-says-gzip.xml", "/gzip-says-nothing.xml", "/gzip-twice.xml.gz"):
        assert sitemaps[path]["issues"] == [], path
        assert sitemaps[path]["url_count"] == 1
    assert sitemaps["/plain-says-gzip.xml"]["gzip"] is False
    assert sitemaps["/gzip-says-nothing.xml"]["gzip"] is True
    assert sitemaps["/gzip-twice.xml.gz"]["gzip"] is True
    urls = urls_by_url(records, site)
    assert "http://example.com/first" in {r["url"] for r in by_record(records, "url")}
    cut_urls = [u for u in urls if u.startswith("/cut-")]
    assert 0 < len(cut_urls) < 400
    assert_accounted(records, {r["url"] for r in by_record(records, "url")})
    assert sitemaps["/truncated.xml.gz"]["url_count"] == len(cut_urls)
    # The pages are read as browsers read them, as their Content-Encoding says: a body declared
    # gzip that is not gzip data, and gzip data declared as nothing, are refused (sitemaps are
    # read either way, as search engines read them).
    assert {r["url"].replace(site.base, ""): r["issues"] for r in by_record(fetched, "url")} == {
        "/plain-says-gzip": ["fetch_failed"],
        "/gzip-says-nothing": ["fetch_failed"],
        "/gzip-twice": ["noindex"],
    }


@deferred_f_from_coro_f
async def test_gzip_robots_txt_and_home_page_are_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The audit asks for gzip (Accept-Encoding), so servers send these compressed.
    site = TestSite(
        {
            "/robots.txt": Page(
                body="User-agent: *\nDisallow: /private\nSitemap: {base}/from-robots.xml\n",
                content_type="text/plain",
                gzip_encoding=True,
            ),
            "/": Page(
                body='<html><head><link rel="sitemap" href="/from-home.xml"></head></html>',
                gzip_encoding=True,
            ),
            "/from-robots.xml": Page(body=urlset(["{base}/private/a"]), content_type=XML),
            "/from-home.xml": Page(body=urlset(["{base}/b"]), content_type=XML),
            "/b": Page(body=HTML),
        }
    )
    with site:
        records, _ = await audit(site, tmp_path, caplog)
    sitemaps = {path: r["found_via"] for path, r in sitemaps_by_url(records, site).items()}
    assert sitemaps == {"/from-robots.xml": "robots.txt", "/from-home.xml": "html-link"}
    urls = urls_by_url(records, site)
    assert urls["/private/a"]["issues"] == ["robots_blocked"]
    assert urls["/b"]["issues"] == []
    assert site.hits["/private/a"] == 0
    assert_accounted(records, {f"{site.base}/private/a", f"{site.base}/b"})


# -- size and shape ------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_size_and_shape_attacks_are_bounded_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    long_loc = "{base}/long-" + "x" * MB
    huge_line = b"{base}/line-" + b"y" * MB
    nested = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>{base}/shallow</loc></url>" + b"<a>" * 10_000 + b"</a>" * 10_000 + b"</urlset>"
    )
    head = "User-agent: *\nDisallow: /private\nSitemap: {base}/loc.xml\n"
    head += "Sitemap: {base}/one-line.txt\nSitemap: {base}/nested.xml\n"
    robots_txt = head.encode() + b"Disallow: /filler\n" * (10 * 1000 * 1000 // 18)
    site = TestSite(
        {
            "/robots.txt": Page(body=robots_txt, content_type="text/plain"),
            "/loc.xml": Page(
                body=urlset(["{base}/ok", long_loc, "{base}/private/x"]), content_type=XML
            ),
            "/one-line.txt": Page(body=huge_line, content_type="text/plain"),
            "/nested.xml": Page(body=nested, content_type=XML),
            "/ok": Page(body=HTML),
            "/shallow": Page(body=HTML),
        }
    )
    with site:
        records, _ = await audit(site, tmp_path, caplog, seconds=30, megabytes=200)
    summary = records[-1]
    assert summary["robots_txt"]["outcome"] == "rules"
    assert summary["robots_txt"]["sitemaps"] == 3
    sitemaps = sitemaps_by_url(records, site)
    assert sitemaps["/nested.xml"]["issues"][0] == "xml_malformed"
    assert sitemaps["/one-line.txt"]["issues"] == []
    urls = urls_by_url(records, site)
    assert urls["/ok"]["issues"] == []
    assert urls["/shallow"]["issues"] == []
    assert urls["/private/x"]["issues"] == ["robots_blocked"]
    assert urls[long_loc.replace("{base}", "")]["issues"] == ["url_too_long"]
    assert urls[huge_line.decode().replace("{base}", "")]["issues"] == ["url_too_long"]
    assert site.hits["/private/x"] == 0
    assert [path for path in site.hits if path.startswith(("/long-", "/line-"))] == []
    assert_accounted(records, {r["url"] for r in by_record(records, "url")})
    assert len(by_record(records, "url")) == 5


@deferred_f_from_coro_f
async def test_robots_txt_of_10_mib_is_read_up_to_its_limit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    body = b"User-agent: *\nAllow: /\nSitemap: {base}/s.xml\n" + b"# filler\n" * (10 * MB // 9)
    site = TestSite(
        {
            "/robots.txt": Page(body=body, content_type="text/plain"),
            "/s.xml": Page(body=urlset(["{base}/a"]), content_type=XML),
            "/a": Page(body=HTML),
        }
    )
    with site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings=QUICK)
    assert records[-1]["robots_txt"]["outcome"] == "rules"
    assert {r["url"]: r["issues"] for r in by_record(records, "url")} == {f"{site.base}/a": []}


@deferred_f_from_coro_f
async def test_sitemap_larger_than_the_download_limit_is_too_large_not_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    body = urlset(f"{{base}}/p{i}" for i in range(100_000))
    site = TestSite(
        {"/robots.txt": robots("/big.xml"), "/big.xml": Page(body=body, content_type=XML)}
    )
    with site:
        records, _ = await run_audit(
            site.base,
            tmp_path / "r.jsonl",
            fetch_urls="no",
            settings={**QUICK, "SITEMAPAUDIT_SITEMAP_READ_LIMIT": MB, "DOWNLOAD_MAXSIZE": 2 * MB},
        )
    (sitemap,) = by_record(records, "sitemap")
    assert sitemap["issues"] == ["too_large"]
    assert sitemap["url_count"] > 10_000


# -- URLs ----------------------------------------------------------------------------------------


HOSTILE_LOCS = {
    "javascript:alert(1)": ["invalid_url"],
    "data:text/html;base64,PHNjcmlwdD4=": ["invalid_url"],
    "file:///etc/passwd": ["invalid_url"],
    "ftp://{host}/file": ["invalid_url"],
    "relative/page": ["invalid_url"],
    "/absolute-path-only": ["invalid_url"],
    "//{host}/protocol-relative": ["invalid_url"],
    "http://user:pass@{host}/userinfo": ["invalid_url"],
    "http://{host}@evil.invalid/userinfo-trick": ["invalid_url"],
    "{base}/bad-escape-%zz": ["invalid_url"],
    "{base}/cut-escape-%4": ["invalid_url"],
    "{base}/space in path": ["invalid_url"],
    "http://[::1/broken-ipv6": ["invalid_url"],
    "http://[::1]:1/ipv6": ["off_host"],
    "http://bücher.invalid/idn": ["off_host"],
    "http://xn--bcher-kva.invalid/punycode": ["off_host"],
    "http://0x7f.0.0.1/hex-ip": ["off_host"],
    "{base}/good-escape-%41%2f": [],
    "{base}/idn-path-bücher": [],
    "HTTP://{host}/upper-scheme": [],
}


@deferred_f_from_coro_f
async def test_hostile_urls_are_reported_and_never_fetched_off_origin(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tripwire: Tripwire
) -> None:
    other = TestSite({})
    site = TestSite({})
    host = f"127.0.0.1:{site.port}"

    def fill(loc: str) -> str:
        return loc.replace("{host}", host).replace("{base}", site.base)

    listed = [fill(loc) for loc in HOSTILE_LOCS] + [tripwire.uri, f"{other.base}/other-port"]
    body = urlset(loc.replace("&", "&amp;") for loc in listed)
    site.routes.update(
        {
            "/robots.txt": robots("/s.xml"),
            "/s.xml": Page(body=body, content_type=XML),
            "/good-escape-%41%2f": Page(body=HTML),
            "/idn-path-b%C3%BCcher": Page(body=HTML),
            "/upper-scheme": Page(body=HTML),
        }
    )
    with site, other:
        records, _ = await audit(site, tmp_path, caplog)
    got = {r["url"]: r["issues"] for r in by_record(records, "url")}
    expected = {fill(loc): codes for loc, codes in HOSTILE_LOCS.items()}
    expected[tripwire.uri] = ["invalid_url"]
    expected[f"{other.base}/other-port"] = ["off_host"]
    assert got == expected
    assert tripwire.opened == 0
    assert other.hits == {}
    requested = set(site.hits) - {"/robots.txt", "/", "/s.xml"}
    assert requested == {"/good-escape-%41%2f", "/idn-path-b%C3%BCcher", "/upper-scheme"}
    assert_accounted(records, set(expected))


@deferred_f_from_coro_f
async def test_file_urls_cannot_be_reached_from_any_sitemap_or_robots_value(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tripwire: Tripwire
) -> None:
    wire = tripwire.uri
    site = TestSite({})
    host = f"127.0.0.1:{site.port}"
    site.routes.update(
        {
            "/robots.txt": Page(
                body=fixture("robots_hostile.txt", target=wire, host=host),
                content_type="text/plain",
            ),
            "/": Page(body=f'<html><head><link rel="sitemap" href="{wire}"></head></html>'),
            "/sitemap.xml": Page(
                body=sitemapindex([wire, "file:///etc/passwd", "{base}/pages.xml"]),
                content_type=XML,
            ),
            "/pages.xml": Page(body=urlset([wire, "{base}/to-file"]), content_type=XML),
            "/to-file": Page(status=302, headers=[("Location", wire)]),
        }
    )
    with site:
        records, _ = await audit(site, tmp_path, caplog)
    assert tripwire.opened == 0
    sitemaps = sitemaps_by_url(records, site)
    for value in ("file:///etc/passwd", wire, "ftp://127.0.0.1/sitemap.xml", "javascript:alert(1)"):
        assert sitemaps[value]["issues"] == ["invalid_url"], value
        assert sitemaps[value]["status"] is None
    assert sitemaps["http://other.invalid/sitemap.xml"]["issues"] == ["off_host"]
    assert sitemaps[f"http://user:secret@{host}/userinfo.xml"]["issues"] == ["invalid_url"]
    assert sitemaps["/sitemap.xml"]["issues"] == ["invalid_url"]
    # Each says which rule its location breaks.
    assert sitemaps["ftp://127.0.0.1/sitemap.xml"]["errors"] == [
        "invalid_url: not a valid http(s) URL: its scheme 'ftp' is not http or https"
    ]
    assert sitemaps[f"http://user:secret@{host}/userinfo.xml"]["errors"] == [
        "invalid_url: not a valid http(s) URL: it has user information before its host"
    ]
    urls = urls_by_url(records, site)
    assert urls[wire]["issues"] == ["invalid_url"]
    assert urls["/to-file"]["issues"] == ["redirect", "redirect_broken"]
    assert urls["/to-file"]["redirect_chain"] == [{"url": f"{site.base}/to-file", "status": 302}]
    assert any("not followed" in error for error in urls["/to-file"]["errors"])
    assert set(site.hits) <= {"/robots.txt", "/", "/sitemap.xml", "/pages.xml", "/to-file"}
    assert_accounted(records, {wire, f"{site.base}/to-file"})


def test_the_project_cannot_download_anything_but_http() -> None:
    handlers = project_settings.DOWNLOAD_HANDLERS
    assert handlers["file"] is None
    assert handlers["ftp"] is None
    assert handlers["s3"] is None


# -- fan-out ---------------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_index_cycles_and_self_references_end_with_a_finding(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = TestSite(
        {
            "/robots.txt": robots("/a.xml", "/self.xml"),
            "/a.xml": Page(
                body=sitemapindex(["{base}/b.xml", "{base}/pages.xml"]), content_type=XML
            ),
            "/b.xml": Page(body=sitemapindex(["{base}/a.xml", "{base}/b.xml"]), content_type=XML),
            "/self.xml": Page(body=sitemapindex(["{base}/self.xml"]), content_type=XML),
            "/pages.xml": Page(body=urlset(["{base}/p"]), content_type=XML),
            "/p": Page(body=HTML),
        }
    )
    with site:
        records, _ = await audit(site, tmp_path, caplog)
    issues = {path: r["issues"] for path, r in sitemaps_by_url(records, site).items()}
    assert issues == {
        "/a.xml": [],
        "/b.xml": ["index_cycle", "nested_index"],
        "/self.xml": ["index_cycle"],
        "/pages.xml": [],
    }
    assert all(site.hits[path] == 1 for path in issues)
    assert_accounted(records, {f"{site.base}/p"})


@deferred_f_from_coro_f
async def test_an_index_that_lists_the_url_it_redirects_to_is_a_cycle(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # robots.txt names the old location of the index (an http URL on an https site, say);
    # the index, and a nested index below it, list its new location.
    site = TestSite(
        {
            "/robots.txt": robots("/old-index.xml"),
            "/old-index.xml": Page(status=301, headers=[("Location", "/index.xml")]),
            "/index.xml": Page(
                body=sitemapindex(["{base}/index.xml", "{base}/nested.xml", "{base}/pages.xml"]),
                content_type=XML,
            ),
            "/nested.xml": Page(body=sitemapindex(["{base}/index.xml"]), content_type=XML),
            "/pages.xml": Page(body=urlset(["{base}/p"]), content_type=XML),
            "/p": Page(body=HTML),
        }
    )
    with site:
        records, crawler = await audit(site, tmp_path, caplog)
    by_path = sitemaps_by_url(records, site)
    assert {path: r["issues"] for path, r in by_path.items()} == {
        "/old-index.xml": ["redirect"],
        "/index.xml": ["index_cycle"],
        "/nested.xml": ["index_cycle", "nested_index"],
        "/pages.xml": [],
    }
    assert by_path["/old-index.xml"]["url_count"] == by_path["/old-index.xml"]["child_count"] == 0
    assert by_path["/index.xml"]["found_via"] == "robots.txt"
    assert by_path["/index.xml"]["errors"][0] == (
        f"index_cycle: lists itself or an index above it (a loop), not read again: "
        f"{site.base}/index.xml"
    )
    assert all(site.hits[path] == 1 for path in ("/old-index.xml", "/index.xml", "/nested.xml"))
    assert_accounted(records, {f"{site.base}/p"})
    assert crawler.stats.get_value("sitemapaudit/sitemaps/listed_again") is None


@deferred_f_from_coro_f
async def test_a_sitemap_listed_again_is_no_loop_and_a_redirect_is_read_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Two indexes share a child, robots.txt names a child of an index too, an index lists a
    # child twice; /sitemap.xml redirects to an index known already, /old.xml to a new one.
    site = TestSite(
        {
            "/robots.txt": robots("/a.xml", "/b.xml", "/shared.xml", "/sitemap.xml", "/old.xml"),
            "/a.xml": Page(
                body=sitemapindex(["{base}/shared.xml", "{base}/shared.xml"]), content_type=XML
            ),
            "/b.xml": Page(body=sitemapindex(["{base}/shared.xml"]), content_type=XML),
            "/shared.xml": Page(body=urlset(["{base}/p"]), content_type=XML),
            "/sitemap.xml": Page(status=301, headers=[("Location", "/a.xml")]),
            "/old.xml": Page(status=301, headers=[("Location", "/new.xml")]),
            "/new.xml": Page(body=urlset(["{base}/q"]), content_type=XML),
            "/p": Page(body=HTML),
            "/q": Page(body=HTML),
        }
    )
    with site:
        records, crawler = await audit(site, tmp_path, caplog)
    by_path = sitemaps_by_url(records, site)
    assert {path: r["issues"] for path, r in by_path.items()} == {
        "/a.xml": [],
        "/b.xml": [],
        "/shared.xml": [],
        "/sitemap.xml": ["redirect"],
        "/old.xml": ["redirect"],
        "/new.xml": [],
    }
    assert by_path["/sitemap.xml"]["url_count"] == 0
    assert "a sitemap this audit reads under its own name" in by_path["/sitemap.xml"]["errors"][0]
    # A redirect to a sitemap nothing else names: read under its own record all the same.
    assert by_path["/old.xml"]["url_count"] == 0
    assert "a sitemap this audit reads under its own name" in by_path["/old.xml"]["errors"][0]
    assert by_path["/new.xml"]["url_count"] == 1
    assert by_path["/new.xml"]["found_via"] == "robots.txt"
    assert all(site.hits[path] == 1 for path in ("/a.xml", "/shared.xml", "/new.xml"))
    # Each URL once, from one sitemap: no duplicate from reading a sitemap twice.
    assert_accounted(records, {f"{site.base}/p", f"{site.base}/q"})
    assert {r["url"]: r["issues"] for r in records if r["record"] == "url"} == {
        f"{site.base}/p": [],
        f"{site.base}/q": [],
    }
    assert crawler.stats.get_value("sitemapaudit/sitemaps/listed_again") == 3


@deferred_f_from_coro_f
async def test_the_url_length_limit_of_pages_does_not_apply_to_sitemaps(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    long_page = "/page-" + "x" * 40
    site = TestSite(
        {
            "/robots.txt": robots("/a-rather-long-sitemap-name.xml"),
            "/a-rather-long-sitemap-name.xml": Page(
                body=urlset(["{base}/p", "{base}" + long_page]), content_type=XML
            ),
            "/p": Page(body=HTML),
        }
    )
    with site:
        records, _ = await audit(
            site, tmp_path, caplog, settings={"SITEMAPAUDIT_MAX_URL_LENGTH": 45}
        )
    assert [r["issues"] for r in sitemaps_by_url(records, site).values()] == [[]]
    issues = {r["url"]: r["issues"] for r in records if r["record"] == "url"}
    assert issues == {f"{site.base}/p": [], f"{site.base}{long_page}": ["url_too_long"]}


@deferred_f_from_coro_f
async def test_index_of_50000_indexes_stops_at_the_sitemap_cap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    count = 50_000

    def child(site: TestSite, path: str) -> Page:
        number = int(path[len("/i/") : -len(".xml")])
        return Page(
            body=sitemapindex([f"{{base}}/i/{number + count + k}.xml" for k in range(100)]),
            content_type=XML,
        )

    routes: dict[str, Any] = {
        "/robots.txt": robots("/root.xml"),
        "/root.xml": Page(
            body=sitemapindex(f"{{base}}/i/{i}.xml" for i in range(count)), content_type=XML
        ),
    }
    site = TestSite(routes)
    site.routes.update({f"/i/{i}.xml": child for i in range(count)})
    with site:
        records, _ = await audit(
            site,
            tmp_path,
            caplog,
            seconds=30,
            megabytes=96,
            resident=True,
            settings={"SITEMAPAUDIT_MAX_SITEMAPS": 20},
        )
    sitemaps = sitemaps_by_url(records, site)
    assert "sitemap_limit" in sitemaps["/root.xml"]["issues"]
    assert sitemaps["/root.xml"]["child_count"] == count
    assert len(sitemaps) == 20
    fetched = [path for path in site.hits if path.startswith("/i/")]
    assert len(fetched) == 19
    assert all(site.hits[path] == 1 for path in fetched)
    assert all("sitemap_limit" in sitemaps[path]["issues"] for path in fetched)
    assert_accounted(records, set())


# -- off-origin ------------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_other_hosts_are_never_requested(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = TestSite(
        {
            "/s.xml": Page(body=urlset(["{base}/x"]), content_type=XML),
            "/x": Page(body=HTML),
        }
    )
    site = TestSite(
        {
            "/robots.txt": Page(
                body=f"Sitemap: {{base}}/index.xml\nSitemap: {other.base}/s.xml\n",
                content_type="text/plain",
            ),
            "/index.xml": Page(
                body=sitemapindex([f"{other.base}/t.xml", "{base}/pages.xml"]), content_type=XML
            ),
            "/pages.xml": Page(body=urlset([f"{other.base}/x", "{base}/away"]), content_type=XML),
            "/away": Page(status=301, headers=[("Location", f"{other.base}/x")]),
        }
    )
    with other, site:
        records, _ = await audit(site, tmp_path, caplog)
    assert other.hits == {}
    sitemaps = {r["url"]: r["issues"] for r in by_record(records, "sitemap")}
    assert sitemaps == {
        f"{other.base}/s.xml": ["off_host"],
        f"{other.base}/t.xml": ["off_host"],
        f"{site.base}/index.xml": [],
        f"{site.base}/pages.xml": [],
    }
    urls = {r["url"]: r for r in by_record(records, "url")}
    assert urls[f"{other.base}/x"]["issues"] == ["off_host"]
    away = urls[f"{site.base}/away"]
    assert away["issues"] == ["redirect"]
    assert away["redirect_chain"] == [{"url": f"{site.base}/away", "status": 301}]
    assert any(f"{other.base}/x is on another host" in error for error in away["errors"])
    assert_accounted(records, set(urls))


@deferred_f_from_coro_f
async def test_sitemap_redirect_to_another_host_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = TestSite({"/s.xml": Page(body=urlset(["{base}/x"]), content_type=XML)})
    site = TestSite(
        {
            "/robots.txt": robots("/moved.xml"),
            "/moved.xml": Page(status=301, headers=[("Location", f"{other.base}/s.xml")]),
        }
    )
    with other, site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings=QUICK)
    assert other.hits == {}
    (sitemap,) = by_record(records, "sitemap")
    assert sitemap["issues"] == ["off_host"]


@deferred_f_from_coro_f
async def test_a_page_redirecting_to_an_unparseable_location_is_accounted_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = TestSite(
        {
            "/robots.txt": robots("/s.xml"),
            "/s.xml": Page(body=urlset(["{base}/bad-location", "{base}/ok"]), content_type=XML),
            "/bad-location": Page(status=302, headers=[("Location", "http://[::1/")]),
            "/ok": Page(body=HTML),
        }
    )
    with site:
        records, crawler = await run_audit(site.base, tmp_path / "r.jsonl", settings=QUICK)
    assert_accounted(records, {f"{site.base}/bad-location", f"{site.base}/ok"})
    assert_no_errors(caplog, crawler)


@deferred_f_from_coro_f
async def test_a_sitemap_redirecting_to_an_unparseable_location_does_not_hang_the_audit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = TestSite(
        {
            "/robots.txt": robots("/moved.xml", "/s.xml"),
            "/moved.xml": Page(status=301, headers=[("Location", "http://[::1/")]),
            "/s.xml": Page(body=urlset(["{base}/ok"]), content_type=XML),
            "/ok": Page(body=HTML),
        }
    )
    with site:
        records, crawler = await run_audit(
            site.base, tmp_path / "r.jsonl", settings={**QUICK, "CLOSESPIDER_TIMEOUT": 2}
        )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert_accounted(records, {f"{site.base}/ok"})
