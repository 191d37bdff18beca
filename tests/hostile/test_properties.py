"""Property-based tests: the parsers and URL rules take anything, and lose no listed URL.

Arbitrary bytes (and byte soups made of XML, gzip and robots.txt tokens) never make a parser
raise; every ``<url><loc>`` of a generated, well-formed sitemap comes out of the reader as an
entry with the same location, whatever the escaping, namespaces, comments, extensions, gzip
and chunk boundaries; and an audit of a generated site reports exactly one record per distinct
listed URL.
"""

from __future__ import annotations

import gzip
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import pytest
import pytest_twisted
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.utils.defer import deferred_from_coro

from sitemapaudit.discovery import decode_robots, homepage_sitemaps, robots_policy, sitemap_lines
from sitemapaudit.page import page_facts, parse_head, parse_link_header
from sitemapaudit.page.dates import (
    lastmod_matches,
    parse_http_date,
    parse_rfc822_date,
    parse_w3c_datetime,
)
from sitemapaudit.sitemap.body import BodyStream
from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import ASCII_WHITESPACE, ChildEntry, SitemapKind, UrlEntry
from sitemapaudit.urls import (
    DEFAULT_PORTS,
    in_sitemap_scope,
    loc_problems,
    normalize_url,
    parse_origin,
    request_url,
    resolve,
    same_url,
)
from sitemapaudit.validation import iter_alternates, validate_document
from tests.hostile.support import NS, XML, intake
from tests.support.crawl import by_record, run_audit
from tests.support.server import Page, TestSite

READER_CODES = {
    "not_a_sitemap",
    "xml_malformed",
    "xml_entities",
    "missing_loc",
    "gzip_invalid",
    "too_large",
    "too_many_urls",
    "index_too_many_sitemaps",
    "empty",
    "encoding_invalid",  # a text sitemap that is not UTF-8
}
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- byte soups ---------------------------------------------------------------------------------

XML_TOKENS = [
    b'<?xml version="1.0" encoding="UTF-8"?>',
    b'<?xml version="1.0" encoding="UTF-16"?>',
    f'<urlset xmlns="{NS}">'.encode(),
    f'<sitemapindex xmlns="{NS}">'.encode(),
    b"<urlset>",
    b"</urlset>",
    b"<sitemapindex>",
    b"</sitemapindex>",
    b"<sitemap>",
    b"</sitemap>",
    b"<url>",
    b"</url>",
    b"<loc>",
    b"</loc>",
    b"<lastmod>",
    b"</lastmod>",
    b"<rss><channel>",
    b"<item>",
    b"</item>",
    b"<link>",
    b"</link>",
    b"<pubDate>",
    b'<feed xmlns="http://www.w3.org/2005/Atom">',
    b"<entry>",
    b'<link href="',
    b'"/>',
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"-->",
    b"<!DOCTYPE urlset [",
    b'<!ENTITY a "x">',
    b'<!ENTITY % p SYSTEM "file:///nonexistent">',
    b"%p;",
    b"]>",
    b"&a;",
    b"&amp;",
    b"&#x41;",
    b"&#0;",
    b"&",
    b"<",
    b">",
    b'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="',
    b'<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">',
    b'<xhtml:link xmlns:xhtml="http://www.w3.org/1999/xhtml" rel="alternate" hreflang="en" href="',
    b"http://example.com/",
    b"https://example.com/a?b=1",
    b"2024-05-01",
    b"2024-05-01T10:00Z",
    b"\n",
    b"\r",
    b"\r\n",
    b" ",
    b"\t",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xfe\xff",
    b"\x1f\x8b",
    b"\x1f\x8b\x08\x00",
    b"\xc3",
    b"\xa9",
    b"\xe2\x80\xa8",
    b"<html>",
    b"<!doctype html>",
]
soup = st.lists(st.one_of(st.sampled_from(XML_TOKENS), st.binary(max_size=8)), max_size=40).map(
    b"".join
)
maybe_gzipped = st.one_of(
    soup,
    st.binary(max_size=300),
    soup.map(gzip.compress),
    soup.map(lambda data: gzip.compress(data)[: max(2, len(data) // 2)]),
)


def read_all(
    body: bytes, *, read_limit: int = 1 << 20, chunk_size: int = 65536
) -> tuple[SitemapReader, list[UrlEntry | ChildEntry]]:
    """Read ``body`` whole, checking what holds for any input; returns the reader and entries."""
    reader = SitemapReader(body, read_limit=read_limit)
    # Small chunks put chunk borders inside every token of a small document.
    reader._stream.chunk_size = chunk_size
    entries = list(reader)
    assert reader.url_count == sum(isinstance(e, UrlEntry) for e in entries)
    assert reader.child_count == sum(isinstance(e, ChildEntry) for e in entries)
    assert {p.code for p in reader.problems} <= READER_CODES
    assert reader.bytes <= read_limit
    assert all(entry.loc and entry.loc == entry.loc.strip(ASCII_WHITESPACE) for entry in entries)
    return reader, entries


@FUZZ
@given(maybe_gzipped, st.integers(1, 64), st.integers(1024, 4096))
def test_the_reader_takes_any_bytes(body: bytes, chunk_size: int, read_limit: int) -> None:
    read_all(body, read_limit=read_limit, chunk_size=chunk_size)


@FUZZ
@given(maybe_gzipped, st.integers(0, 5000))
def test_the_body_stream_takes_any_bytes(body: bytes, limit: int) -> None:
    stream = BodyStream(body, limit=limit, chunk_size=97)
    total = sum(len(chunk) for chunk in stream)
    assert total == stream.bytes_read <= limit
    assert {p.code for p in stream.problems} <= {"gzip_invalid"}


@FUZZ
@given(st.binary(max_size=3000), st.integers(0, 3000))
def test_the_body_stream_gives_back_what_was_gzipped(data: bytes, limit: int) -> None:
    # Data that itself starts with the gzip magic would be taken for one more gzip layer.
    assume(not data.startswith(b"\x1f\x8b"))
    for body in (data, gzip.compress(data), gzip.compress(gzip.compress(data))):
        stream = BodyStream(body, limit=limit, chunk_size=61)
        assert b"".join(stream) == data[:limit]
        assert stream.truncated == (len(data) > limit)
        assert stream.problems == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(maybe_gzipped)
def test_the_sitemap_intake_takes_any_bytes(body: bytes) -> None:
    # An exception here would leave the audit waiting for a sitemap that never finishes.
    with tempfile.TemporaryDirectory() as work:
        result = intake(body, Path(work))
    assert result.facts.fetched
    assert len(result.urls) <= result.facts.url_count


@FUZZ
@given(soup)
def test_validation_takes_any_bytes(body: bytes) -> None:
    for problem in validate_document(body, now=datetime(2024, 6, 1, tzinfo=UTC)):
        assert problem.code
    list(iter_alternates(body))


# -- generated well-formed sitemaps ---------------------------------------------------------------

# XML 1.0 characters, without CR (XML turns CR and CRLF into LF).
xml_text = st.text(
    alphabet=st.characters(
        blacklist_categories=["Cs"],
        blacklist_characters="\r\ufffe\uffff",
        min_codepoint=0x09,
    ).filter(lambda c: c in "\t\n" or c >= " "),
    max_size=40,
)


@st.composite
def loc_element(draw: st.DrawFn, loc: str, prefix: str) -> str:
    style = draw(st.sampled_from(["escape", "cdata", "charref", "comment", "mixed"]))
    if style == "cdata" and "]]>" not in loc:
        body = f"<![CDATA[{loc}]]>"
    elif style == "charref":
        body = "".join(f"&#{ord(c)};" if c.strip() else escape(c) for c in loc)
    elif style == "comment" and len(loc) > 1 and "-" not in loc:
        cut = draw(st.integers(1, len(loc) - 1))
        body = f"{escape(loc[:cut])}<!-- {draw(st.sampled_from(['x', '<loc>y</loc>']))} -->"
        body += escape(loc[cut:])
    elif style == "mixed" and "]]>" not in loc and len(loc) > 1:
        cut = draw(st.integers(1, len(loc) - 1))
        body = f"{escape(loc[:cut])}<![CDATA[{loc[cut:]}]]>"
    else:
        body = escape(loc, {'"': "&quot;"})
    return f"<{prefix}loc>{body}</{prefix}loc>"


@st.composite
def sitemap_document(draw: st.DrawFn) -> tuple[bytes, list[str], bool]:
    """A well-formed urlset or sitemapindex, its locations in order, and whether it is an index."""
    index = draw(st.booleans())
    record, root = ("sitemap", "sitemapindex") if index else ("url", "urlset")
    prefix = draw(st.sampled_from(["", "sm:"]))
    xmlns = f'xmlns:sm="{NS}"' if prefix else f'xmlns="{NS}"'
    space = st.sampled_from(["", "\n", "  ", "\n\t", " \n "])
    locs = draw(
        st.lists(
            st.one_of(xml_text, st.builds(lambda t: f"http://example.com/{t}", xml_text)),
            max_size=12,
        )
    )
    parts = []
    for loc in locs:
        inner = [draw(loc_element(loc, prefix))]
        if draw(st.booleans()):
            inner.insert(draw(st.integers(0, 1)), f"<{prefix}lastmod>2024-05-01</{prefix}lastmod>")
        if not index and draw(st.booleans()):
            inner.append(
                '<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
                "<image:loc>http://example.com/not-a-page.png</image:loc></image:image>"
            )
        if draw(st.booleans()):
            inner.append("<!-- <loc>http://example.com/commented-out</loc> -->")
        parts.append(f"<{prefix}{record}>{draw(space)}{draw(space).join(inner)}</{prefix}{record}>")
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), "<?processing instruction?>")
    declaration = draw(st.sampled_from(["", '<?xml version="1.0" encoding="UTF-8"?>\n']))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    text = f"{bom}{declaration}<{prefix}{root} {xmlns}>{draw(space)}"
    text += draw(space).join(parts) + f"{draw(space)}</{prefix}{root}>{draw(space)}"
    body = text.encode("utf-8")
    if draw(st.booleans()):
        body = gzip.compress(body)
    return body, locs, index


@settings(max_examples=250, deadline=None)
@given(sitemap_document(), st.sampled_from([1, 2, 3, 7, 64, 65536]))
def test_every_loc_of_a_generated_sitemap_comes_out(
    document: tuple[bytes, list[str], bool], chunk_size: int
) -> None:
    body, locs, index = document
    reader, entries = read_all(body, chunk_size=chunk_size)
    expected = [loc.strip(ASCII_WHITESPACE) for loc in locs if loc.strip(ASCII_WHITESPACE)]
    assert [entry.loc for entry in entries] == expected
    kind = ChildEntry if index else UrlEntry
    assert all(isinstance(entry, kind) for entry in entries)
    assert reader.kind is (SitemapKind.SITEMAPINDEX if index else SitemapKind.URLSET)
    codes = [p.code for p in reader.problems]
    assert codes.count("missing_loc") == len(locs) - len(expected)
    assert set(codes) <= {"missing_loc", "empty"}
    assert ("empty" in codes) == (not expected)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="ab/:.é \t", max_size=12), max_size=20),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from([1, 2, 5, 65536]),
)
def test_every_line_of_a_generated_text_sitemap_comes_out(
    lines: list[str], newline: str, chunk_size: int
) -> None:
    all_lines = ["http://example.com/first", *lines]
    body = newline.join(all_lines).encode()
    reader, entries = read_all(body, chunk_size=chunk_size)
    assert reader.kind is SitemapKind.TEXT
    kept = [line.strip(ASCII_WHITESPACE) for line in all_lines]
    assert [e.loc for e in entries] == [line for line in kept if line]
    numbers = [number for number, line in enumerate(kept, 1) if line]
    assert [e.line for e in entries] == numbers


# -- robots.txt, home pages, page heads, headers, dates -----------------------------------------

ROBOTS_TOKENS = [
    b"User-agent: *\n",
    b"User-agent: Googlebot\n",
    b"Disallow: /",
    b"Allow: /a",
    b"Sitemap: ",
    b"sitemap :",
    b"Crawl-delay: ",
    b"1e308",
    b"-1",
    b"nan",
    b"file:///etc/passwd",
    b"//x/y",
    b"http://example.com/s.xml",
    b"\n",
    b"\r",
    b"#",
    b"*",
    b"$",
    b"%",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
]
robots_soup = st.lists(
    st.one_of(st.sampled_from(ROBOTS_TOKENS), st.binary(max_size=6)), max_size=30
).map(b"".join)


@FUZZ
@given(robots_soup, st.one_of(st.none(), st.integers(100, 599)), st.text(max_size=30))
def test_robots_txt_takes_any_bytes(body: bytes, status: int | None, path: str) -> None:
    url = "http://example.com/robots.txt"
    policy = robots_policy(status, body, url, max_bytes=1024)
    assert policy.outcome in {"rules", "allow_all", "disallow_all"}
    assert isinstance(policy.can_fetch("http://example.com/" + path), bool)
    assert all(isinstance(s, str) for s in sitemap_lines(decode_robots(body), url))


HTML_TOKENS = [
    b"<html>",
    b"<head>",
    b"</head>",
    b"<body>",
    b"<meta name=robots content=noindex>",
    b'<link rel="sitemap canonical" href="',
    b'">',
    b"<base href=",
    b"//x/",
    b"<template>",
    b"<meta charset=utf-16>",
    b"<?xml version='1.0' encoding='x'?>",
    b"\xff\xfe",
    b"<!--",
]
html_soup = st.lists(
    st.one_of(st.sampled_from(HTML_TOKENS), st.binary(max_size=8)), max_size=30
).map(b"".join)


@FUZZ
@given(html_soup, st.lists(st.text(max_size=40), max_size=3), st.text(max_size=20))
def test_pages_and_headers_take_anything(body: bytes, headers: list[str], charset: str) -> None:
    base = "http://example.com/page"
    for url, via in homepage_sitemaps(body, base, headers):
        assert isinstance(url, str)
        assert via in {"html-link", "link-header"}
    parse_head(body, base, encoding=charset or None)
    page_facts(
        base,
        {
            "content-type": [f"text/html; charset={charset}"],
            "link": headers,
            "x-robots-tag": headers,
        },
        body,
    )
    parse_link_header(headers)


@FUZZ
@given(st.text(max_size=40), st.datetimes(timezones=st.just(UTC)), st.floats(0, 1e9))
def test_date_parsers_take_any_text(text: str, instant: datetime, tolerance: float) -> None:
    lastmod = parse_w3c_datetime(text)
    if lastmod is not None:
        assert lastmod.value.tzinfo is not None
        lastmod_matches(lastmod, instant, tolerance_s=tolerance)
    for parse in (parse_rfc822_date, parse_http_date):
        value = parse(text)
        assert value is None or value.tzinfo is not None


# -- URL rules ------------------------------------------------------------------------------------

ORIGIN = parse_origin("http://127.0.0.1:8080")
URL_TOKENS = [
    "http://",
    "https://",
    "HTTP://",
    "127.0.0.1",
    ":8080",
    ":80",
    ":443",
    ":",
    "@",
    "user",
    "evil.com",
    "/",
    "\\",
    "#",
    "?",
    "%",
    "%2e",
    "%40",
    "%3a",
    "%zz",
    ".",
    "[",
    "]",
    "::1",
    "\t",
    "\n",
    " ",
    "\u3002",
    "\uff0e",
    "\u00ad",
    "a",
    "0x7f",
    "\x00",
    "\uff45",
    "xn--",
    ";",
    "&",
    "\u200b",
    "\uff11\uff12\uff17",
    "file:",
    "javascript:",
    "data:",
    "ftp://",
    "//",
]
url_soup = st.one_of(
    st.lists(st.sampled_from(URL_TOKENS), min_size=1, max_size=10).map("".join),
    st.text(max_size=60),
)


@settings(max_examples=1000, deadline=None)
@given(url_soup, url_soup)
def test_url_rules_take_any_text(value: str, other: str) -> None:
    problems = loc_problems(value)
    assert set(problems) <= {"invalid_url", "url_too_long"}
    owned = ORIGIN.owns(value)
    normalize_url(value)
    same_url(value, other)
    in_sitemap_scope(value, other)
    joined = resolve("http://127.0.0.1:8080/dir/robots.txt", value)
    assert joined is None or isinstance(joined, str)
    scheme = value.partition(":")[0].lower()
    if scheme not in DEFAULT_PORTS:
        assert "invalid_url" in problems
    if problems or not owned:
        return
    # A URL the audit would request goes nowhere but the audited origin, whatever Scrapy
    # makes of it on the way (percent-encoding, IDNA, whitespace).
    request = Request(request_url(value))
    parts = urlsplit(request.url)
    assert parts.scheme in DEFAULT_PORTS
    assert (parts.hostname or "").rstrip(".") == ORIGIN.host
    assert (parts.port or DEFAULT_PORTS[parts.scheme]) == ORIGIN.port


# -- an audit of a generated site -----------------------------------------------------------------

path_text = st.text(alphabet="abcxyz019-_.~é", min_size=1, max_size=8)


@st.composite
def generated_site(draw: st.DrawFn) -> tuple[list[list[str]], list[bool]]:
    """Sitemaps (as lists of loc templates with ``{base}``) and which of them are gzipped."""
    pool = draw(st.lists(path_text, min_size=1, max_size=15, unique=True))
    extra = [
        "relative/page",
        "javascript:void(0)",
        "http://other.invalid/x",
        "{base}/a%zz",
        "  {base}/padded  ",
    ]
    choice = st.one_of(st.sampled_from(pool).map(lambda p: "{base}/" + p), st.sampled_from(extra))
    sitemaps = draw(st.lists(st.lists(choice, max_size=25), min_size=1, max_size=3))
    gzipped = draw(st.lists(st.booleans(), min_size=len(sitemaps), max_size=len(sitemaps)))
    return sitemaps, gzipped


def audit_generated(sitemaps: list[list[str]], gzipped: list[bool]) -> list[dict[str, Any]]:
    site = TestSite({})

    def body(locs: list[str], packed: bool) -> bytes:
        listed = [escape(loc.replace("{base}", site.base)) for loc in locs]
        data = (
            f'<urlset xmlns="{NS}">'
            + "".join(f"<url><loc>{loc}</loc></url>" for loc in listed)
            + "</urlset>"
        ).encode()
        return gzip.compress(data) if packed else data

    names = [f"/s{i}.xml" + (".gz" if packed else "") for i, packed in enumerate(gzipped)]
    site.routes.update(
        {
            "/robots.txt": Page(
                body="".join(f"Sitemap: {{base}}{name}\n" for name in names),
                content_type="text/plain",
            ),
            **{
                name: Page(body=body(locs, packed), content_type=XML)
                for name, locs, packed in zip(names, sitemaps, gzipped, strict=True)
            },
        }
    )
    with site, tempfile.TemporaryDirectory() as work:
        records, _ = pytest_twisted.blockon(
            deferred_from_coro(run_audit(site.base, Path(work) / "r.jsonl", fetch_urls="no"))
        )

    def base(loc: str) -> str:
        return loc.replace("{base}", site.base).strip(ASCII_WHITESPACE)

    expected = {base(loc) for locs in sitemaps for loc in locs}
    urls = [r["url"] for r in by_record(records, "url")]
    assert len(urls) == len(set(urls))
    assert set(urls) == expected
    assert records[-1]["urls_listed"] == len(expected)
    assert records[-1]["sitemaps_found"] == len(sitemaps)
    listed_in = {r["url"]: r["sitemaps"] for r in by_record(records, "url")}
    for name, locs in zip(names, sitemaps, strict=True):
        for loc in locs:
            assert site.base + name in listed_in[base(loc)]
    return records


@pytest.fixture(scope="module")
def generated_audits() -> list[tuple[list[list[str]], list[dict[str, Any]]]]:
    """Audits of a handful of generated sites, each already checked by ``audit_generated``.

    Hypothesis drives the audits from a fixture, which runs outside the reactor's greenlet and
    so may wait for a crawl; a failing example is shrunk and raised from here.
    """
    done: list[tuple[list[list[str]], list[dict[str, Any]]]] = []

    @settings(
        max_examples=5,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(generated_site())
    def check(generated: tuple[list[list[str]], list[bool]]) -> None:
        sitemaps, gzipped = generated
        assume(any(sitemaps))
        done.append((sitemaps, audit_generated(sitemaps, gzipped)))

    check()
    return done


def test_an_audit_of_a_generated_site_has_one_record_per_distinct_loc(
    generated_audits: list[tuple[list[list[str]], list[dict[str, Any]]]],
) -> None:
    assert len(generated_audits) >= 3
    for sitemaps, records in generated_audits:
        distinct = {loc.strip(ASCII_WHITESPACE) for locs in sitemaps for loc in locs}
        assert len(by_record(records, "url")) == len(distinct)
