from __future__ import annotations

import codecs
import gzip
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemapaudit.sitemap import parse
from sitemapaudit.sitemap.lineends import lone_crs_as_lf, lone_crs_as_lf_chunks
from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import (
    PROTOCOL_MAX_ENTRIES,
    ChildEntry,
    SitemapKind,
    UrlEntry,
)

from .support import codes, fixture, gzip_stream, locs, read, urlset

# -- formats ------------------------------------------------------------------------------------


def test_urlset_entries_in_document_order() -> None:
    reader, entries = read(fixture("urlset.xml"))
    assert reader.kind is SitemapKind.URLSET
    assert all(type(entry) is UrlEntry for entry in entries)
    assert entries == [
        UrlEntry("https://www.example.com/", "2024-01-15", 4),
        UrlEntry(
            "https://www.example.com/catalog?item=12&desc=vacation",
            "2024-01-15T10:30:00+00:00",
            10,
        ),
        UrlEntry("https://www.example.com/search?q=a&b=<c>", None, 16),
        UrlEntry("https://www.example.com/caf\u00e9/\u263a", "", 22),
    ]
    assert reader.url_count == 4
    assert reader.child_count == 0
    assert reader.problems == []
    assert not reader.gzip
    assert reader.bytes == len(fixture("urlset.xml"))


def test_sitemapindex_yields_child_entries() -> None:
    reader, entries = read(fixture("sitemapindex.xml"))
    assert reader.kind is SitemapKind.SITEMAPINDEX
    assert entries == [
        ChildEntry("https://www.example.com/sitemap-pages.xml", "2024-02-01T08:00:00Z", 3),
        ChildEntry("https://www.example.com/sitemap-posts.xml.gz", None, 7),
    ]
    assert (reader.url_count, reader.child_count) == (0, 2)
    assert reader.problems == []


def test_urlset_without_namespace() -> None:
    reader, entries = read(fixture("urlset_no_namespace.xml"))
    assert reader.kind is SitemapKind.URLSET
    assert entries == [
        UrlEntry("https://www.example.com/a", "2023-05-06", 3),
        UrlEntry("https://www.example.com/b", None, 4),
    ]
    assert reader.problems == []


def test_any_root_namespace_is_read_as_a_sitemap() -> None:
    body = (
        b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">'
        b"<url><loc>https://e.com/1</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert reader.kind is SitemapKind.URLSET
    assert locs(entries) == ["https://e.com/1"]


def test_bom_and_leading_whitespace_are_skipped_and_lines_kept() -> None:
    reader, entries = read(fixture("bom_leading_whitespace.xml"))
    assert reader.kind is SitemapKind.URLSET
    assert entries == [UrlEntry("https://www.example.com/bom", None, 5)]
    # The whitespace comes before the XML declaration: malformed, but every entry is read.
    assert [(p.code, p.line, p.column) for p in reader.problems] == [("xml_malformed", 3, 1)]
    assert "before the XML declaration" in reader.problems[0].message


@pytest.mark.parametrize(
    "start",
    [b"\xef\xbb\xbf<?xml version='1.0'?>\n", b"\n\n  ", b"<?xml version='1.0'?>\n\n"],
)
def test_whitespace_is_fine_where_xml_allows_it(start: bytes) -> None:
    body = start + b"<urlset><url><loc>https://e.com/a</loc></url></urlset>"
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/a"]
    assert reader.problems == []


def test_a_space_before_the_declaration_is_placed_on_its_line() -> None:
    reader, _ = read(
        b" <?xml version='1.0'?><urlset><url><loc>https://e.com/a</loc></url></urlset>"
    )
    assert [(p.code, p.line, p.column) for p in reader.problems] == [("xml_malformed", 1, 2)]
    assert reader.problems[0].message.startswith("whitespace before the XML declaration")


def test_error_position_counts_the_skipped_preamble() -> None:
    reader, _ = read(b"\n\n   <urlset>\n<url><loc>a</loc></url>\n<url></urlset>")
    (problem,) = reader.problems
    assert problem.code == "xml_malformed"
    assert problem.line == 5
    assert "line 5" in problem.message  # libxml2's "url line N" is mapped too
    reader, _ = read(b"   <urlset><url></urlset>")
    assert (reader.problems[0].line, reader.problems[0].column) == (1, 26)


def test_rss_items_with_rfc822_dates() -> None:
    reader, entries = read(fixture("rss2.xml"))
    assert reader.kind is SitemapKind.RSS
    assert entries == [
        UrlEntry("https://www.example.com/posts/1", "Thu, 05 Jan 2017 12:34:50 GMT", 7, "rfc822"),
        UrlEntry("https://www.example.com/posts/2?a=1&b=2", None, 12, "rfc822"),
    ]
    assert codes(reader) == ["missing_loc"]
    assert reader.problems[0].line == 18
    assert "<item> has no <link>" in reader.problems[0].message


def test_rss_items_of_every_channel_are_read() -> None:
    body = (
        b'<rss version="2.0"><channel><item><link>https://e.com/1</link></item></channel>'
        b"<channel><item><link>https://e.com/2</link></item></channel></rss>"
    )
    assert locs(read(body)[1]) == ["https://e.com/1", "https://e.com/2"]


def test_atom_1_0_alternate_links() -> None:
    reader, entries = read(fixture("atom10.xml"))
    assert reader.kind is SitemapKind.ATOM
    assert entries == [
        UrlEntry("https://www.example.com/entries/1", "2003-12-13T18:30:02Z", 7, "rfc3339"),
        UrlEntry("https://www.example.com/entries/2", "2004-01-01T00:00:00Z", 14, "rfc3339"),
    ]
    assert codes(reader) == ["missing_loc"]
    assert reader.problems[0].line == 19


def test_atom_0_3_uses_modified() -> None:
    reader, entries = read(fixture("atom03.xml"))
    assert reader.kind is SitemapKind.ATOM
    assert entries == [
        UrlEntry("https://www.example.com/2003/12/13/atom03", "2003-12-13T18:30:02Z", 6, "rfc3339")
    ]
    assert reader.problems == []


ATOM = (
    b'<feed xmlns="http://www.w3.org/2005/Atom"%s>'
    b'<entry%s><link rel="alternate" href="%s"%s/></entry></feed>'
)


def atom_locs(
    href: bytes, base_url: str | None, *, feed: bytes = b"", entry: bytes = b"", link: bytes = b""
) -> list[str]:
    body = ATOM % (feed, entry, href, link)
    reader = SitemapReader(body, base_url=base_url)
    entries = list(reader)
    assert reader.problems == []
    return locs(entries)


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        (b"/post/1", "http://host/post/1"),
        (b"post/1", "http://host/blog/post/1"),
        (b"../post/1", "http://host/post/1"),
        (b"?p=1", "http://host/blog/feed.atom?p=1"),
        (b"//cdn.example/post/1", "http://cdn.example/post/1"),
        (b" /post/1 ", "http://host/post/1"),
        (b"https://other.example/post/1", "https://other.example/post/1"),
        (b"mailto:a@b.example", "mailto:a@b.example"),
    ],
)
def test_relative_atom_links_are_resolved_against_the_document_url(
    href: bytes, expected: str
) -> None:
    assert atom_locs(href, "http://host/blog/feed.atom") == [expected]


def test_xml_base_sets_the_base_of_atom_links() -> None:
    """RFC 4287 section 2: xml:base on any element, each resolved against the ones above it,
    and the outermost against the document's URL."""
    url = "http://host/feed.atom"
    assert atom_locs(b"p/1", url, feed=b' xml:base="https://cdn.example/blog/"') == [
        "https://cdn.example/blog/p/1"
    ]
    assert atom_locs(b"p/1", url, entry=b' xml:base="/archive/2024/"') == [
        "http://host/archive/2024/p/1"
    ]
    assert atom_locs(b"1", url, link=b' xml:base="posts/"') == ["http://host/posts/1"]
    chained = atom_locs(
        b"../c", url, feed=b' xml:base="http://a.example/x/"', entry=b' xml:base="y/z/"'
    )
    assert chained == ["http://a.example/x/y/c"]


def test_without_a_document_url_only_an_absolute_xml_base_resolves_atom_links() -> None:
    """A local file has no URL: a relative link stays as written (an invalid location)."""
    assert atom_locs(b"/post/1", None) == ["/post/1"]
    assert atom_locs(b"/post/1", None, entry=b' xml:base="posts/"') == ["/post/1"]
    assert atom_locs(b"/post/1", None, feed=b' xml:base="https://host/blog/"') == [
        "https://host/post/1"
    ]


def test_an_xml_base_that_is_no_url_leaves_atom_links_as_written() -> None:
    assert atom_locs(b"/post/1", None, feed=b' xml:base="urn:isbn:123"') == ["/post/1"]
    assert atom_locs(b"/post/1", "http://host/f", feed=b' xml:base="http://[\xc3\xa9/"') == [
        "/post/1"
    ]


def test_relative_rss_links_stay_as_written() -> None:
    """RSS 2.0 requires absolute links (and has no xml:base of its own)."""
    body = b'<rss version="2.0"><channel><item><link>/post/1</link></item></channel></rss>'
    reader = SitemapReader(body, base_url="http://host/feed.xml")
    assert locs(list(reader)) == ["/post/1"]


def test_text_sitemap_lines() -> None:
    reader, entries = read(fixture("urls.txt"))
    assert reader.kind is SitemapKind.TEXT
    assert entries == [
        UrlEntry("https://www.example.com/one", None, 1),
        UrlEntry("https://www.example.com/two", None, 3),
        UrlEntry("not a url", None, 4),
        UrlEntry("HTTP://WWW.EXAMPLE.COM/THREE", None, 5),
    ]
    assert reader.problems == []


def test_text_sitemap_with_bom_leading_blank_lines_and_cr_line_ends() -> None:
    body = b"\xef\xbb\xbf\n\nhttps://e.com/1\rhttps://e.com/2\r\n"
    reader, entries = read(body)
    assert reader.kind is SitemapKind.TEXT
    assert [(e.loc, e.line) for e in entries] == [("https://e.com/1", 3), ("https://e.com/2", 4)]


def test_text_lines_split_across_chunks_keep_their_numbers() -> None:
    # A CRLF straddling the 64 KiB chunk boundary must count as one line end.
    first = b"https://e.com/" + b"a" * (65536 - len(b"https://e.com/") - 1) + b"\r"
    body = first + b"\nhttps://e.com/b\n\xc3\xa9https://e.com/c"
    reader, entries = read(body)
    assert [e.line for e in entries] == [1, 2, 3]
    assert entries[2].loc == "\u00e9https://e.com/c"
    assert reader.url_count == 3


@pytest.mark.parametrize("blank", [b"\n", b"\r\n", b"\r", b" \t\n", b"\n\x0c \r\n"])
def test_long_runs_of_blank_lines_are_counted_not_read_line_by_line(
    blank: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A megabyte of line ends (a gzip bomb's favourite) costs a scan of its bytes: the lines
    # read one by one are the ones with something in them, and the numbers stay right.
    read_lines: list[int] = []
    text_line = SitemapReader._text_line

    def counting(self: SitemapReader, raw: bytes, line: int) -> str:
        read_lines.append(line)
        return text_line(self, raw, line)

    monkeypatch.setattr(SitemapReader, "_text_line", counting)
    lines = blank.count(b"\n") + blank.count(b"\r") - blank.count(b"\r\n")
    run = (1 << 20) // len(blank)
    body = (
        b"https://e.com/a\n"
        + blank * run
        + b"  https://e.com/b\n\nhttps://e.com/c\n"
        + blank * run
        + b"https://e.com/d"
    )
    reader, entries = read(body)
    second = 2 + run * lines
    assert [(e.loc, e.line) for e in entries] == [
        ("https://e.com/a", 1),
        ("https://e.com/b", second),
        ("https://e.com/c", second + 2),
        ("https://e.com/d", second + 3 + run * lines),
    ]
    assert reader.url_count == 4
    assert len(read_lines) < 200


def test_text_whose_first_lines_hold_no_url_is_not_a_sitemap() -> None:
    reader, entries = read(b"Tralala\nla\nla\nla\nla\nhttps://e.com/1\n")
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes(reader) == ["not_a_sitemap"]


@pytest.mark.parametrize(
    "body",
    [
        fixture("html_page.html"),
        b"<html><body>hello</body></html>",
        b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>',
        b"\n  <!doctype HTML>\n<p>hi",
    ],
)
def test_html_is_not_a_sitemap(body: bytes) -> None:
    reader, entries = read(body)
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes(reader) == ["not_a_sitemap"]
    assert "HTML" in reader.problems[0].message


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"  \r\n\t ",
        b"User-agent: *\nDisallow: /\n",
        b"\x00\x01\x02binary",
        b'<?xml version="1.0"?><some><url><loc>https://e.com/</loc></url></some>',
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>',
    ],
)
def test_anything_else_is_not_a_sitemap(body: bytes) -> None:
    reader, entries = read(body)
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes(reader) == ["not_a_sitemap"]


# -- values ------------------------------------------------------------------------------------


def test_loc_whitespace_entities_and_cdata() -> None:
    body = (
        "<urlset>"
        "<url><loc>\n\t  https://e.com/a?x=1&amp;y=2&#38;z=3 \r\n</loc></url>"
        "<url><loc>  <![CDATA[ https://e.com/b?x=1&y=<2> ]]>  </loc></url>"
        "<url><loc>https://e.com/c<![CDATA[?q=a&l=fr]]></loc></url>"
        "<url><loc>\u00a0https://e.com/d\u2000</loc></url>"
        "</urlset>"
    ).encode()
    assert locs(read(body)[1]) == [
        "https://e.com/a?x=1&y=2&z=3",
        "https://e.com/b?x=1&y=<2>",
        "https://e.com/c?q=a&l=fr",
        # Only ASCII whitespace is stripped (see the tests of whitespace around values).
        "\u00a0https://e.com/d\u2000",
    ]


def test_missing_and_empty_loc_are_problems_not_entries() -> None:
    body = (
        b"<urlset>\n"
        b"<url><lastmod>2020-01-01</lastmod></url>\n"
        b"<url><loc>   </loc></url>\n"
        b"<url><loc>https://e.com/ok</loc></url>\n"
        b"</urlset>"
    )
    reader, entries = read(body)
    assert entries == [UrlEntry("https://e.com/ok", None, 4)]
    assert [(p.code, p.line) for p in reader.problems] == [("missing_loc", 2), ("missing_loc", 3)]
    assert "has no <loc>" in reader.problems[0].message
    assert "empty <loc>" in reader.problems[1].message


def test_a_url_with_several_locs_lists_each() -> None:
    body = b"<sitemapindex><sitemap><loc>https://e.com/1</loc><loc>https://e.com/2</loc>"
    body += b"<lastmod>2020-01-01</lastmod></sitemap></sitemapindex>"
    reader, entries = read(body)
    assert entries == [
        ChildEntry("https://e.com/1", "2020-01-01", 1),
        ChildEntry("https://e.com/2", "2020-01-01", 1),
    ]
    assert reader.child_count == 2


def test_only_direct_children_of_a_record_count() -> None:
    body = (
        b'<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        b"<url><image:image><image:loc>https://e.com/i.jpg</image:loc></image:image>"
        b"<loc>https://e.com/page</loc></url>"
        b"<foo><url><loc>https://e.com/nested</loc></url></foo>"
        b"<url><loc><url>https://e.com/inside</url></loc></url>"
        b"</urlset>"
    )
    assert locs(read(body)[1]) == ["https://e.com/page", "https://e.com/inside"]


def test_fields_among_very_many_children_of_a_record_are_all_read() -> None:
    # Records this large lose their finished children to pruning while they are read.
    images = b"<image:image><image:loc>https://e.com/i.jpg</image:loc></image:image>" * 20_000
    body = (
        b'<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        b"<url>"
        + images
        + b"<loc>https://e.com/a</loc>"
        + images
        + b"<lastmod>2024-01-01</lastmod>"
        + images
        + b"<loc>https://e.com/b</loc></url>"
        b"<url><lastmod>2024-02-02</lastmod>" + images + b"<lastmod>x</lastmod></url>"
        b"<url><loc>https://e.com/c</loc>" + images + b"</url>"
        b"</urlset>"
    )
    reader, entries = read(body)
    assert entries == [
        UrlEntry("https://e.com/a", "2024-01-01", 1),
        UrlEntry("https://e.com/b", "2024-01-01", 1),
        UrlEntry("https://e.com/c", None, 1),
    ]
    assert codes(reader) == ["missing_loc"]


def test_records_of_the_other_kind_are_not_read() -> None:
    body = b"<urlset><sitemap><loc>https://e.com/s.xml</loc></sitemap></urlset>"
    reader, entries = read(body)
    assert entries == []
    assert codes(reader) == ["empty"]


def test_lines_past_65535_are_exact() -> None:
    reader, entries = read(urlset(30_000, lines_per_url=3))
    assert reader.problems == []
    assert [e.line for e in entries] == [3 + 3 * i for i in range(30_000)]
    reader, entries = read(urlset(70_000, lines_per_url=1))
    assert entries[-1].line == 70_002
    assert all(e.line == 3 + i for i, e in enumerate(entries))


# -- gzip --------------------------------------------------------------------------------------


def test_gzip_body_with_or_without_a_gz_name() -> None:
    plain = fixture("urlset.xml")
    reader, entries = read(gzip.compress(plain))
    assert reader.gzip
    assert reader.bytes == len(plain)
    assert entries == read(plain)[1]
    assert reader.problems == []


def test_double_gzip_sent_with_content_encoding_gzip() -> None:
    # A .gz file sent with Content-Encoding: gzip: one layer for the header, one for the file.
    body = gzip.compress(gzip.compress(fixture("sitemapindex.xml")))
    reader, entries = read(body, gzip_encoded=True)
    assert reader.gzip
    assert reader.kind is SitemapKind.SITEMAPINDEX
    assert len(entries) == 2
    assert reader.problems == []


def test_double_gzip_without_content_encoding_is_read_as_search_engines_read_it() -> None:
    # Gunzipped once, a file that was gzipped twice is gzip data, not a sitemap.
    body = gzip.compress(gzip.compress(fixture("sitemapindex.xml")))
    reader, entries = read(body)
    assert reader.gzip
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes(reader) == ["gzip_invalid", "not_a_sitemap"]
    gzip_invalid, not_a_sitemap = reader.problems
    assert "gzipped twice" in gzip_invalid.message
    assert "Content-Encoding: gzip" in gzip_invalid.message
    assert "gzip data again" in not_a_sitemap.message


def test_gzip_data_left_inside_a_corrupt_gzip_layer_is_reported_too() -> None:
    inner = gzip.compress(urlset(2000), mtime=0)
    damaged = bytearray(gzip.compress(inner, mtime=0) + gzip.compress(b"more", mtime=0))
    damaged[-30] ^= 0xFF
    reader, entries = read(bytes(damaged))
    assert entries == []
    assert codes(reader) == ["gzip_invalid", "gzip_invalid", "not_a_sitemap"]
    assert "gzipped twice" in reader.problems[0].message
    assert "corrupt gzip data" in reader.problems[1].message


def test_truncated_gzip_keeps_entries_before_the_cut() -> None:
    body = gzip.compress(urlset(2000))
    reader, entries = read(body[: len(body) // 2])
    assert 0 < len(entries) < 2000
    assert locs(entries) == [f"https://www.example.com/p/{i}" for i in range(len(entries))]
    assert codes(reader) == ["gzip_invalid"]


def test_corrupt_gzip_that_decodes_nothing() -> None:
    reader, entries = read(b"\x1f\x8b\x08\x00 not really gzip")
    assert entries == []
    assert reader.gzip
    assert codes(reader) == ["gzip_invalid", "not_a_sitemap"]
    assert "nothing readable came out of its gzip data" in reader.problems[1].message


# -- limits ------------------------------------------------------------------------------------


def test_too_many_urls() -> None:
    reader, entries = read(urlset(60_000))
    assert len(entries) == reader.url_count == 60_000
    assert codes(reader) == ["too_many_urls"]
    assert "60,000" in reader.problems[0].message


def test_exactly_the_maximum_is_fine() -> None:
    reader, _ = read(urlset(PROTOCOL_MAX_ENTRIES))
    assert reader.problems == []


def test_index_with_too_many_sitemaps() -> None:
    body = b"<sitemapindex>" + b"<sitemap><loc>https://e.com/s.xml</loc></sitemap>" * 50_001
    reader, _ = read(body + b"</sitemapindex>")
    assert reader.child_count == 50_001
    assert codes(reader) == ["index_too_many_sitemaps"]


def test_elements_of_other_namespaces_list_nothing_in_a_sitemap_namespace_urlset() -> None:
    body = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:o="http://o.example/">'
        b"<url><loc>https://e.com/a</loc><o:loc>https://e.com/b</o:loc></url>"
        b"<url><loc>https://e.com/c</loc><o:lastmod>2099-01-01</o:lastmod>"
        b"<lastmod>2020-01-01</lastmod></url>"
        b"<o:url><o:loc>https://e.com/d</o:loc></o:url></urlset>"
    )
    reader, entries = read(body)
    assert [(e.loc, e.lastmod) for e in entries] == [
        ("https://e.com/a", None),
        ("https://e.com/c", "2020-01-01"),
    ]
    assert reader.url_count == 2
    # A urlset in a wrong namespace (reported by validation) is still read by local names.
    wrong = b'<urlset xmlns="https://www.sitemaps.org/schemas/sitemap/0.9">'
    _, entries = read(wrong + b"<url><loc>https://e.com/a</loc></url></urlset>")
    assert [e.loc for e in entries] == ["https://e.com/a"]


@pytest.mark.parametrize("packed", [False, True])
def test_a_text_sitemap_with_a_stray_first_line_is_still_read(packed: bool) -> None:
    # A comment or a bare host before the URLs: the file is a text sitemap whose first entry
    # is not a URL (as one further down would be), not "not a sitemap".
    body = b"# sitemap of e.com, generated by a plugin\nhttps://e.com/a\nhttps://e.com/b\n"
    reader = SitemapReader(gzip.compress(body) if packed else body)
    entries = list(reader)
    assert reader.kind is SitemapKind.TEXT
    assert [e.loc for e in entries] == [
        "# sitemap of e.com, generated by a plugin",
        "https://e.com/a",
        "https://e.com/b",
    ]
    prose = SitemapReader(b"hello\nworld\nthis is not a sitemap\n")
    assert list(prose) == []
    assert codes(prose) == ["not_a_sitemap"]


def test_text_sitemap_not_utf8_is_encoding_invalid_and_keeps_the_bytes() -> None:
    # A Latin-1 file: each line is read with its stray bytes percent-encoded (the URL such a
    # server serves), never with replacement characters, and the sitemap gets one finding.
    body = b"https://e.com/caf\xe9\nhttps://e.com/ok\nhttps://e.com/\xff\xfe/x\n"
    reader, entries = read(body)
    assert reader.kind is SitemapKind.TEXT
    assert [e.loc for e in entries] == [
        "https://e.com/caf%E9",
        "https://e.com/ok",
        "https://e.com/%FF%FE/x",
    ]
    assert codes(reader) == ["encoding_invalid"]
    problem = reader.problems[0]
    assert (problem.line, problem.column) == (1, 18)
    assert "2 lines" in problem.message
    assert "'https://e.com/caf%E9'" in problem.message


@pytest.mark.parametrize(
    ("codec", "name"),
    [("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32-le", "UTF-32")],
)
@pytest.mark.parametrize("packed", [False, True])
def test_text_sitemap_with_a_wide_byte_order_mark_is_read_and_encoding_invalid(
    codec: str, name: str, packed: bool
) -> None:
    # Windows Notepad's "Unicode": a text sitemap in UTF-16 with a byte order mark is a text
    # sitemap in the wrong encoding, as a Latin-1 one is, not broken XML.
    text = "\r\nhttps://e.com/a\r\nhttps://e.com/caf\u00e9\r\n" + "https://e.com/long" * 5000
    body = ("\ufeff" + text).encode(codec)
    reader, entries = read(gzip.compress(body) if packed else body)
    assert reader.kind is SitemapKind.TEXT
    assert [(e.loc, e.line) for e in entries][:2] == [
        ("https://e.com/a", 2),
        ("https://e.com/caf\u00e9", 3),
    ]
    assert entries[2].loc == "https://e.com/long" * 5000
    assert codes(reader) == ["encoding_invalid"]
    problem = reader.problems[0]
    assert f"encoded as {name}" in problem.message
    assert (problem.line, problem.column) == (1, 1)


def test_utf16_text_bytes_that_do_not_decode_are_percent_escapes() -> None:
    # A lone surrogate and an odd last byte: kept as escapes of their bytes, as in UTF-8.
    body = codecs.BOM_UTF16_LE + "https://e.com/a\n".encode("utf-16-le") + b"\x00\xd8\n\x00x"
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/a", "%00%D8", "%78"]
    assert codes(reader) == ["encoding_invalid"]


def test_utf16_xml_and_utf16_prose_are_not_text_sitemaps() -> None:
    xml = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://e.com/a'
    reader, entries = read((xml + "</loc></url></urlset>").encode("utf-16"))
    assert reader.kind is SitemapKind.URLSET
    assert locs(entries) == ["https://e.com/a"]
    prose, entries = read("hello\nworld\n".encode("utf-16"))
    assert entries == []
    assert prose.kind is SitemapKind.UNKNOWN


def test_text_sitemap_multibyte_character_across_chunks_is_utf8() -> None:
    body = b"https://e.com/" + b"a" * (65536 - len(b"https://e.com/") - 1) + b"\xc3\xa9\n"
    reader, entries = read(body)
    assert entries[0].loc.endswith("a\u00e9")
    assert reader.problems == []


def test_text_with_too_many_urls() -> None:
    body = b"".join(b"https://e.com/%d\n" % i for i in range(50_001))
    reader, _ = read(body)
    assert reader.kind is SitemapKind.TEXT
    assert codes(reader) == ["too_many_urls"]


def test_read_limit_stops_reading_and_says_so() -> None:
    body = urlset(1000)
    reader, entries = read(body, read_limit=10_000)
    assert 0 < len(entries) < 1000
    assert codes(reader) == ["too_large"]
    message = reader.problems[0].message
    assert "reading stopped" in message
    assert "not read" in message
    assert reader.bytes == 10_000


def test_size_over_the_protocol_maximum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "PROTOCOL_MAX_BYTES", 1000)
    body = urlset(100)
    reader, entries = read(body)
    assert len(entries) == 100
    assert codes(reader) == ["too_large"]
    assert f"{len(body):,} bytes" in reader.problems[0].message


def test_real_size_over_50_mib_is_too_large() -> None:
    comment = b"<!--" + b"x" * (1_048_576 - 7) + b"-->\n"
    pieces = [b"<urlset><url><loc>https://e.com/</loc></url>\n", *([comment] * 51), b"</urlset>"]
    reader, entries = read(gzip_stream(iter(pieces)))
    assert locs(entries) == ["https://e.com/"]
    assert codes(reader) == ["too_large"]
    assert reader.bytes > 52_428_800


def test_empty_sitemaps() -> None:
    for body in (b"<urlset/>", b"<sitemapindex>\n</sitemapindex>", b"<rss><channel/></rss>"):
        reader, entries = read(body)
        assert entries == []
        assert codes(reader) == ["empty"]


# -- broken and hostile XML ---------------------------------------------------------------------


def test_malformed_xml_keeps_the_entries_before_the_error() -> None:
    reader, entries = read(fixture("malformed.xml"))
    assert locs(entries) == ["https://www.example.com/1", "https://www.example.com/2"]
    (problem,) = reader.problems
    assert problem.code == "xml_malformed"
    assert (problem.line, problem.column) == (10, 41)
    assert "EntityRef" in problem.message


def test_undefined_entity_is_reported_where_it_is() -> None:
    body = b"<urlset>\n<url><loc>https://e.com/1</loc></url>\n<url><loc>&k;</loc></url></urlset>"
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/1"]
    assert [(p.code, p.line) for p in reader.problems] == [("xml_malformed", 3)]
    assert "Entity 'k' not defined" in reader.problems[0].message


def test_unclosed_document_is_malformed_not_empty() -> None:
    reader, entries = read(b"<urlset><url><loc>https://e.com/1</loc></url><url><loc>https://e")
    assert locs(entries) == ["https://e.com/1"]
    assert codes(reader) == ["xml_malformed"]


def test_broken_xml_before_the_root_element() -> None:
    reader, entries = read(b'<?xml version="1.0"?>\n<!-- unclosed comment')
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes(reader) == ["xml_malformed", "not_a_sitemap"]


def test_undeclared_namespace_prefix_is_reported_and_reading_goes_on() -> None:
    body = (
        b"<urlset><url><loc>https://e.com/1</loc><x:y/></url><url><loc>https://e.com/2</loc></url>"
    )
    reader, entries = read(body + b"</urlset>")
    assert len(entries) == 2
    assert codes(reader) == ["xml_malformed"]


def test_billion_laughs_is_not_expanded() -> None:
    started = time.process_time()
    reader, entries = read(fixture("billion_laughs.xml"))
    assert time.process_time() - started < 2  # CPU seconds: an expansion would take hours
    # libxml2 refuses to even check an entity whose expansion would explode, and stops there.
    assert entries == []
    assert codes(reader) == ["xml_entities", "xml_malformed"]
    assert "lol, lol1" in reader.problems[0].message
    assert reader.problems[1].message == (
        "reading stopped at a parser safety limit: entity references would expand to over "
        "1,000,000 bytes and more than 5 times the size of the document read so far (an entity "
        "bomb; they are not expanded here); entries after that point are not read"
    )
    # libxml2's position is inside the entity's replacement text; the entry being read when
    # reading stopped is where that is in the document.
    assert (reader.problems[1].line, reader.problems[1].column) == (15, None)


_LOL = b"".join(
    b'<!ENTITY lol%d "%s">' % (level, b"&lol%d;" % (level - 1) * 10) for level in range(1, 10)
)


def test_an_entity_bomb_stops_reading_at_the_entry_that_refers_to_it() -> None:
    body = (
        b'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY lol0 "lol">' + _LOL + b"]>\n"
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<url><loc>https://e.com/a</loc></url>\n"
        b"<url>\n<loc>https://e.com/b?&lol9;</loc></url>\n"
        b"<url><loc>https://e.com/c</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/a"]
    assert codes(reader) == ["xml_entities", "xml_malformed"]
    problem = reader.problems[1]
    assert problem.message.startswith(
        "reading stopped at a parser safety limit: entity references would expand to over "
    )
    assert problem.message.endswith("; entries after that point are not read")
    assert "xmlCtxtSetMaxAmplification" not in problem.message
    assert (problem.line, problem.column) == (5, None)


def test_a_large_entity_referenced_too_often_stops_reading_where_it_does() -> None:
    # No entity refers to another: libxml2 stops at a reference in the document itself.
    refs = b"&big;" * 400
    body = (
        b'<!DOCTYPE urlset [<!ENTITY big "' + b"x" * 20_000 + b'">]>\n<urlset>\n'
        b"<url><loc>https://e.com/a</loc></url>\n"
        b"<url><loc>https://e.com/" + refs + b"</loc></url>\n"
        b"<url><loc>https://e.com/c</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/a"]
    assert codes(reader) == ["xml_entities", "xml_malformed"]
    problem = reader.problems[1]
    assert "entity references would expand to over 1,000,000 bytes" in problem.message
    assert problem.line == 4
    assert problem.column is not None
    assert 24 < problem.column <= 24 + len(refs)


def test_entities_nested_too_deep_stop_reading_with_a_plain_message() -> None:
    chain = b"".join(b'<!ENTITY e%d "&e%d;">' % (level, level - 1) for level in range(1, 25))
    body = (
        b'<!DOCTYPE urlset [<!ENTITY e0 "x">' + chain + b"]>\n<urlset>\n"
        b"<url><loc>https://e.com/a</loc></url>\n"
        b"<url><loc>https://e.com/&e24;</loc></url>\n"
        b"<url><loc>https://e.com/c</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/a"]
    assert codes(reader) == ["xml_entities", "xml_malformed"]
    problem = reader.problems[1]
    assert problem.message == (
        "reading stopped at a parser safety limit: entities are nested more than 19 levels deep "
        "(an entity's value refers to another entity, whose value refers to another...); "
        "entries after that point are not read"
    )
    assert (problem.line, problem.column) == (4, None)


def test_entities_nested_19_levels_deep_are_left_unexpanded() -> None:
    chain = b"".join(b'<!ENTITY e%d "&e%d;">' % (level, level - 1) for level in range(1, 19))
    body = (
        b'<!DOCTYPE urlset [<!ENTITY e0 "x">' + chain + b"]>"
        b"<urlset><url><loc>https://e.com/&e18;</loc></url></urlset>"
    )
    reader, entries = read(body)
    # The location is left as written, and being unknown is no entry.
    assert entries == []
    assert codes(reader) == ["xml_entities", "invalid_url", "empty"]
    assert reader.problems[1].message.startswith(
        "<loc> 'https://e.com/&e18;' contains the entity reference &e18;, which is not expanded"
    )


def test_small_internal_entities_are_left_unexpanded() -> None:
    body = (
        b'<!DOCTYPE urlset [<!ENTITY a "x"><!ENTITY b "&a;&a;">]>'
        b"<urlset><url><loc>https://e.com/&b;</loc></url><url><loc>https://e.com/2</loc></url>"
        b"</urlset>"
    )
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/2"]
    assert codes(reader) == ["xml_entities", "invalid_url"]
    assert reader.problems[1].message.startswith("<loc> 'https://e.com/&b;' contains the entity")


_UNEXPANDED = (
    "which is not expanded (entities other than the five predefined ones and character "
    "references are not allowed); not requested"
)


@pytest.mark.parametrize(
    "doctype",
    [
        b'<!DOCTYPE urlset [<!ENTITY foo "https://e.com/x"><!ENTITY custom "y">]>',
        b'<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/x.dtd">',
    ],
)
def test_a_loc_with_an_unexpanded_entity_reference_is_invalid_not_an_entry(
    doctype: bytes,
) -> None:
    body = doctype + (
        b'\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<url><loc>&foo;</loc></url>\n"
        b"<url><loc>https://example.com/&custom;page</loc></url>\n"
        b"<url><loc>https://example.com/&#65;&amp;b</loc></url>\n"
        b"</urlset>"
    )
    reader, entries = read(body)
    assert entries == [UrlEntry("https://example.com/A&b", None, 5)]
    assert [(p.code, p.line) for p in reader.problems] == [
        ("xml_entities", None),
        ("invalid_url", 3),
        ("invalid_url", 4),
    ]
    assert [p.message for p in reader.problems[1:]] == [
        f"<loc> '&foo;' contains the entity reference &foo;, {_UNEXPANDED}",
        f"<loc> 'https://example.com/&custom;page' contains the entity reference &custom;, "
        f"{_UNEXPANDED}",
    ]
    assert reader.url_count == 1


def test_index_and_feed_locations_with_entity_references_are_invalid() -> None:
    index = (
        b'<!DOCTYPE sitemapindex [<!ENTITY a "x"><!ENTITY b "y">]><sitemapindex>'
        b"<sitemap><loc>https://e.com/&a;&b;&a;.xml</loc></sitemap></sitemapindex>"
    )
    reader, entries = read(index)
    assert entries == []
    assert codes(reader) == ["xml_entities", "invalid_url", "empty"]
    assert reader.problems[1].message == (
        "<loc> 'https://e.com/&a;&b;&a;.xml' contains the entity references &a;, &b;, "
        + _UNEXPANDED.replace("which is", "which are")
    )
    rss = (
        b'<!DOCTYPE rss [<!ENTITY p "x">]><rss><channel>'
        b"<item><link>https://e.com/&p;</link></item>"
        b"<item><link>https://e.com/ok</link></item></channel></rss>"
    )
    reader, entries = read(rss)
    assert locs(entries) == ["https://e.com/ok"]
    assert codes(reader) == ["xml_entities", "invalid_url"]
    assert reader.problems[1].message.startswith("<link> 'https://e.com/&p;' contains the entity")


def test_locations_with_entity_references_are_listed_up_to_a_limit() -> None:
    many = parse.MAX_MISSING_LOC_LISTED + 5
    body = (
        b'<!DOCTYPE urlset [<!ENTITY e "x">]><urlset>'
        + b"<url><loc>https://e.com/&e;</loc></url>" * many
        + b"</urlset>"
    )
    reader, entries = read(body)
    assert entries == []
    assert codes(reader).count("invalid_url") == parse.MAX_MISSING_LOC_LISTED + 1
    assert reader.problems[-2].code == "invalid_url"
    assert reader.problems[-2].message == (
        "5 more locations with unexpanded entity references are not listed (only the first 1,000 "
        "are)"
    )
    assert reader.problems[-1].code == "empty"


def test_external_entity_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    body = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>\n'
        "<urlset><url><loc>https://e.com/&xxe;</loc></url></urlset>"
    ).encode()
    reader, entries = read(body)
    assert entries == []
    assert codes(reader) == ["xml_entities", "invalid_url", "empty"]
    assert reader.problems[1].message.startswith("<loc> 'https://e.com/&xxe;' contains the entity")
    assert not any("TOP-SECRET" in problem.message for problem in reader.problems)


def test_external_dtd_is_reported_and_not_fetched() -> None:
    body = (
        b'<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/evil.dtd">'
        b"<urlset><url><loc>https://e.com/&ext;</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert entries == []
    assert codes(reader) == ["xml_entities", "invalid_url", "empty"]
    assert "external DTD" in reader.problems[0].message
    assert "&ext;" in reader.problems[1].message


def test_xinclude_is_not_processed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    body = (
        '<urlset xmlns:xi="http://www.w3.org/2001/XInclude">'
        f'<url><loc><xi:include href="{secret.as_uri()}" parse="text"/></loc></url>'
        "<url><loc>https://e.com/ok</loc></url></urlset>"
    ).encode()
    reader, entries = read(body)
    assert locs(entries) == ["https://e.com/ok"]
    assert codes(reader) == ["xml_entities", "missing_loc"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_no_file_is_ever_opened(tmp_path: Path) -> None:
    # Opening a named pipe with no writer blocks; a reader that tried would hang here.
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    documents = [
        f'<!DOCTYPE urlset SYSTEM "{pipe}"><urlset><url><loc>&a;</loc></url></urlset>',
        f'<!DOCTYPE urlset [<!ENTITY % p SYSTEM "{pipe.as_uri()}"> %p;]><urlset/>',
        f'<!DOCTYPE urlset [<!ENTITY e SYSTEM "{pipe.as_uri()}">]>'
        "<urlset><url><loc>&e;</loc></url></urlset>",
    ]
    script = (
        "import sys\n"
        "from sitemapaudit.sitemap.parse import SitemapReader\n"
        "for doc in sys.argv[1:]:\n"
        "    reader = SitemapReader(doc.encode())\n"
        "    list(reader)\n"
        "    print([p.code for p in reader.problems])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *documents],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.stdout.count("xml_entities") == 3


# -- the reader itself -------------------------------------------------------------------------


def test_entries_stream_with_flat_memory() -> None:
    body = gzip.compress(urlset(60_000, lines_per_url=3))
    tracemalloc.start()
    try:
        reader = SitemapReader(body)
        count = sum(1 for _ in reader)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 60_000
    assert reader.bytes > 3_000_000
    assert peak < 3_000_000, f"peak traced memory {peak} bytes"


def test_first_entry_arrives_before_the_document_is_read() -> None:
    reader = SitemapReader(urlset(60_000))
    entries = iter(reader)
    first = next(entries)
    assert first.loc == "https://www.example.com/p/0"
    assert reader._stream.bytes_read < 200_000
    for _ in entries:
        pass
    assert reader.bytes == len(urlset(60_000))


def test_abandoned_iteration_still_finalises() -> None:
    reader = SitemapReader(urlset(100))
    for _ in reader:
        break
    assert reader.kind is SitemapKind.URLSET
    assert reader.url_count == 1
    assert "empty" not in codes(reader)


def test_a_reader_is_iterated_once() -> None:
    reader = SitemapReader(urlset(1))
    list(reader)
    with pytest.raises(RuntimeError, match="once"):
        iter(reader)


def test_other_encodings() -> None:
    utf16 = '<?xml version="1.0" encoding="UTF-16"?><urlset><url><loc>https://e.com/\u00e9</loc></url></urlset>'
    assert locs(read(utf16.encode("utf-16"))[1]) == ["https://e.com/\u00e9"]
    latin1 = b'<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://e.com/\xe9</loc></url></urlset>'
    assert locs(read(latin1)[1]) == ["https://e.com/\u00e9"]


def test_fifty_thousand_urls_are_all_read() -> None:
    body = urlset(50_000, lines_per_url=3)
    _, entries = read(body)
    assert len(entries) == 50_000


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=400),
        st.lists(
            st.sampled_from(
                [
                    b"<urlset>",
                    b"</urlset>",
                    b"<url>",
                    b"</url>",
                    b"<loc>",
                    b"</loc>",
                    b"https://e.com/",
                    b"&amp;",
                    b"&x;",
                    b"<![CDATA[",
                    b"]]>",
                    b"\n",
                    b"\xef\xbb\xbf",
                    b"<sitemapindex>",
                    b"<sitemap>",
                    b"<rss><channel><item><link>",
                    b"\x1f\x8b",
                    b"<!DOCTYPE urlset [<!ENTITY x 'y'>]>",
                    b"<?xml version='1.0'?>",
                    b"<",
                    b">",
                ]
            ),
            max_size=30,
        ).map(b"".join),
    ),
    st.sampled_from([1, 40, 10**8]),
)
def test_any_bytes_are_read_without_raising(body: bytes, limit: int) -> None:
    for candidate in (body, gzip.compress(body), gzip.compress(body)[: len(body) // 2]):
        reader = SitemapReader(candidate, read_limit=limit)
        entries = list(reader)
        found = codes(reader)
        assert reader.url_count + reader.child_count == len(entries)
        assert (reader.kind is SitemapKind.UNKNOWN) == ("not_a_sitemap" in found)


@pytest.mark.parametrize(
    ("rel", "listed"),
    [
        (b"alternate", True),
        (b"http://www.iana.org/assignments/relation/alternate", True),
        (b" ALTERNATE ", True),
        (b"self", False),
        (b"http://www.iana.org/assignments/relation/self", False),
    ],
)
def test_an_atom_rel_may_be_the_registry_name_or_its_iri(rel: bytes, listed: bool) -> None:
    """RFC 4287 (4.2.7.2): ``alternate`` and its IRI under the IANA registry are one rel."""
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        b'<link rel="%s" href="https://e.com/p"/></entry></feed>' % rel
    )
    reader = SitemapReader(body)
    entries = list(reader)
    assert locs(entries) == (["https://e.com/p"] if listed else [])


@pytest.mark.parametrize(
    ("filler", "said"),
    [
        (
            b" " * 10_500_000,
            "a text node (text or white space between tags) is over 10,000,000 bytes",
        ),
        (b"<!--" + b"x" * 10_500_000 + b"-->", "a comment is over 10,000,000 bytes"),
        (b"<x>" * 300 + b"</x>" * 300, "elements are nested more than 256 levels deep"),
    ],
)
def test_a_parser_safety_limit_is_said_plainly(filler: bytes, said: str) -> None:
    # Well-formed, but past a limit of libxml2 that guards against hostile documents: reading
    # stops there, and the message says which limit instead of libxml2's advice to set a flag
    # (or its "Comment too big found", which reads as a syntax error).
    body = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://www.example.com/a</loc></url>"
        + filler
        + b"<url><loc>https://www.example.com/b</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert locs(entries) == ["https://www.example.com/a"]
    [problem] = reader.problems
    assert problem.code == "xml_malformed"
    assert problem.message == (
        f"reading stopped at a parser safety limit: {said}; entries after that point are not read"
    )
    assert "XML_PARSE_HUGE" not in problem.message


@pytest.mark.parametrize("after", [1, 3000])
def test_markup_past_the_safety_limit_stops_reading_at_that_markup(after: int) -> None:
    # libxml2 finds the markup too long only after parsing the rest of the chunk it ends in:
    # the entries there (one, here) are after it all the same, like those of later chunks.
    body = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://www.example.com/before</loc></url>"
        b'<url x="'
        + b"b" * 10_500_000
        + b'"><loc>https://www.example.com/attr</loc></url>'
        + b"".join(
            b"<url><loc>https://www.example.com/after%d</loc></url>" % number
            for number in range(after)
        )
        + b"</urlset>"
    )
    reader, entries = read(body)
    assert locs(entries) == ["https://www.example.com/before"]
    [problem] = reader.problems
    assert problem.code == "xml_malformed"
    assert problem.message == (
        "reading stopped at a parser safety limit: one piece of markup (an attribute value, "
        "say) shortly before this point is over 10,000,000 bytes; entries from that markup on "
        "are not read"
    )
    assert problem.line == 1
    assert problem.column is not None
    assert 10_500_000 < problem.column <= len(body) + 1


# -- line ends (XML 1.0, section 2.11: CRLF and a lone CR are each one line break) -------------

LINE_ENDS = {
    "lf": (b"\n",),
    "crlf": (b"\r\n",),
    "cr": (b"\r",),
    "mixed": (b"\r", b"\r\n", b"\n"),
}


def joined(lines: list[bytes], ends: tuple[bytes, ...]) -> bytes:
    """``lines``, each ended by the next of ``ends`` in turn."""
    return b"".join(line + ends[number % len(ends)] for number, line in enumerate(lines))


BROKEN_LINES = [
    b'<?xml version="1.0" encoding="UTF-8"?>',
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    b"<url>",
    b"<loc>https://e.com/a</loc>",
    b"</url>",
    b"<url>",
    b"<lastmod>2024-01-01</lastmod>",
    b"</url>",
    b"<url><loc>https://e.com/b?x=1&y=2</loc></url>",
    b"</urlset>",
]


def positions(reader: SitemapReader) -> list[tuple[str, int | None, int | None]]:
    return [(p.code, p.line, p.column) for p in reader.problems]


@pytest.mark.parametrize("ends", LINE_ENDS.values(), ids=LINE_ENDS.keys())
def test_lines_are_counted_with_every_kind_of_line_end(ends: tuple[bytes, ...]) -> None:
    reader, entries = read(joined(BROKEN_LINES, ends))
    assert [(e.loc, e.line) for e in entries] == [("https://e.com/a", 3)]
    assert positions(reader) == [("missing_loc", 6, None), ("xml_malformed", 9, 32)]
    lf, _ = read(joined(BROKEN_LINES, LINE_ENDS["lf"]))
    assert [p.message for p in reader.problems] == [p.message for p in lf.problems]


@pytest.mark.parametrize("ends", LINE_ENDS.values(), ids=LINE_ENDS.keys())
def test_a_skipped_preamble_is_counted_with_every_kind_of_line_end(
    ends: tuple[bytes, ...],
) -> None:
    body = joined([b"", b"", b"   <urlset>", b"<url><loc>a</loc></url>", b"<url></urlset>"], ends)
    (problem,) = read(body)[0].problems
    assert (problem.code, problem.line) == ("xml_malformed", 5)
    assert "line 5" in problem.message
    body = joined(
        [b"", b"", b" <?xml version='1.0'?><urlset><url><loc>a</loc></url></urlset>"], ends
    )
    assert positions(read(body)[0]) == [("xml_malformed", 3, 2)]
    reader, entries = read(joined([b"", b"", b"https://e.com/1", b"https://e.com/2"], ends))
    assert reader.kind is SitemapKind.TEXT
    assert [e.line for e in entries] == [3, 4]


@pytest.mark.parametrize("end", [b"\r", b"\r\n"])
def test_a_line_end_at_a_chunk_boundary_is_one_line_end(end: bytes) -> None:
    start = b"<urlset>" + end + b"<url><loc>https://e.com/"
    first = start + b"a" * (65536 - len(start) - len(b"</loc></url>\r")) + b"</loc></url>\r"
    assert len(first) == 65536
    body = (
        first
        + end[1:]
        + joined([b"<url><loc>https://e.com/b</loc></url>", b"<url/>", b"</urlset>"], (end,))
    )
    reader, entries = read(body)
    assert [e.line for e in entries] == [2, 3]
    assert positions(reader) == [("missing_loc", 4, None)]


def test_lines_past_65535_with_cr_line_ends_are_exact() -> None:
    reader, entries = read(urlset(30_000, lines_per_url=3).replace(b"\n", b"\r"))
    assert reader.problems == []
    assert entries[-1].line == 3 + 3 * 29_999
    assert all(e.line == 3 + 3 * i for i, e in enumerate(entries))


def test_lone_crs_become_lfs_in_one_piece_or_in_chunks() -> None:
    data = b"\r<a>\rb\r\nc\r\r\nd\n\r</a>\r"
    expected = b"\n<a>\nb\r\nc\n\r\nd\n\n</a>\n"
    assert lone_crs_as_lf(data) == expected
    for cut in range(len(data) + 1):
        for second in range(cut, len(data) + 1):
            pieces = [data[:cut], data[cut:second], data[second:]]
            assert b"".join(lone_crs_as_lf_chunks(pieces)) == expected
    for text in (b"<a>\n</a>", b"<a>\r\n</a>"):
        assert lone_crs_as_lf(text) is text
    wide = "<a>\r</a>".encode("utf-16")
    assert lone_crs_as_lf(wide) is wide


# -- a byte order mark against the XML declaration (XML 1.0, appendix F: the mark wins) ---------


@pytest.mark.parametrize("declared", [b"ISO-8859-1", b"windows-1252", b"UTF-16", b"UTF-8"])
def test_a_utf8_byte_order_mark_wins_over_the_declared_encoding(declared: bytes) -> None:
    body = (
        b'\xef\xbb\xbf<?xml version="1.0" encoding="' + declared + b'"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://example.com/caf\xc3\xa9</loc></url></urlset>"
    )
    reader, entries = read(body)
    assert entries == [UrlEntry("https://example.com/caf\u00e9", None, 2)]
    assert reader.problems == []
    # Split anywhere, even inside the byte order mark, the document reads the same.
    for cut in (1, 2, 3, 10):
        pieces = [body[:cut], body[cut:]]
        assert locs(list(SitemapReader(gzip_stream(iter(pieces))))) == [entries[0].loc]


@pytest.mark.parametrize("declared", ["UTF-8", "ISO-8859-1"])
def test_a_utf16_byte_order_mark_wins_over_the_declared_encoding(declared: str) -> None:
    text = (
        f'<?xml version="1.0" encoding="{declared}"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/caf\u00e9</loc></url></urlset>"
    )
    for body in (codecs.BOM_UTF16_LE + text.encode("utf-16-le"), text.encode("utf-16")):
        reader, entries = read(body)
        assert entries == [UrlEntry("https://example.com/caf\u00e9", None, 2)]
        assert reader.problems == []


# -- whitespace around values -------------------------------------------------------------------

_UNICODE_SPACES = ["\u00a0", "\u2003", "\u3000", "\u0085"]


@pytest.mark.parametrize("space", _UNICODE_SPACES)
def test_only_ascii_whitespace_is_stripped_around_a_loc(space: str) -> None:
    # XML Schema's anyURI and the WHATWG URL parser trim ASCII whitespace only: a no-break
    # space from a CMS is part of the URL (a browser requests it percent-encoded).
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"<url><loc> \t\nhttps://e.com/a{space}\r\n </loc>"
        f"<lastmod>2024-05-01{space}</lastmod></url>\n"
        f"<url><loc>{space}https://e.com/b</loc></url>\n"
        "</urlset>\n"
    ).encode()
    _, entries = read(body)
    assert locs(entries) == [f"https://e.com/a{space}", f"{space}https://e.com/b"]
    assert isinstance(entries[0], UrlEntry)
    assert entries[0].lastmod == f"2024-05-01{space}"


@pytest.mark.parametrize("space", _UNICODE_SPACES)
def test_only_ascii_whitespace_is_stripped_around_a_child_and_a_text_line(space: str) -> None:
    index = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"<sitemap><loc>https://e.com/child.xml{space} </loc></sitemap>\n"
        "</sitemapindex>\n"
    ).encode()
    assert locs(read(index)[1]) == [f"https://e.com/child.xml{space}"]
    text = f" https://e.com/t{space}\t\nhttps://e.com/u \n".encode()
    assert locs(read(text)[1]) == [f"https://e.com/t{space}", "https://e.com/u"]


@pytest.mark.parametrize(
    ("space", "named"),
    [("\u00a0", "no-break space (U+00A0)"), ("\u3000", "ideographic space (U+3000)")],
)
def test_a_lastmod_with_a_unicode_space_is_invalid_and_says_why(space: str, named: str) -> None:
    from sitemapaudit.page.dates import parse_w3c_datetime, w3c_refusal

    assert parse_w3c_datetime(f" 2024-05-01{space}") is None
    assert parse_w3c_datetime(" 2024-05-01\t\n") is not None
    assert w3c_refusal(f"2024-05-01{space}") == (
        f": it has a {named} around it, which XML Schema does not strip"
    )
