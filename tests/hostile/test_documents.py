"""Hostile documents through the pure readers: entities, compression, size and shape.

Each test feeds one adversarial document to the sitemap reader and, where the audit would,
through the whole sitemap intake (reader, schema validation, hreflang extraction), and asserts
the finding, that nothing was read from disk or the network, and a time and memory budget.
Budgets are about ten times what this takes on an idle 2-core machine.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from sitemapaudit.discovery import robots_policy
from sitemapaudit.page import parse_head
from sitemapaudit.sitemap.body import BodyStream
from sitemapaudit.sitemap.parse import MAX_MISSING_LOC_LISTED, ROOT_SEARCH_LIMIT, SitemapReader
from sitemapaudit.sitemap.records import ChildEntry, SitemapKind, UrlEntry
from sitemapaudit.urls import loc_problems
from sitemapaudit.validation import iter_alternates, validate_document
from tests.hostile.support import (
    MB,
    NS,
    Tripwire,
    bounded,
    bounded_resident,
    codes_of,
    corrupt_gzip,
    fixture,
    gzip_bomb,
    gzip_pieces,
    intake,
    read,
    repeated,
    sitemapindex,
    urlset,
)
from tests.support.server import Page, TestSite

BASE = "http://example.com"


def locs(entries: list[UrlEntry | ChildEntry]) -> list[str]:
    return [entry.loc for entry in entries]


# -- XML entities: XXE, billion laughs, external DTDs, XInclude -------------------------------


def test_xxe_on_etc_passwd_is_reported_and_not_expanded(tmp_path: Path) -> None:
    body = fixture("xxe_passwd.xml", base=BASE)
    with bounded(seconds=2, megabytes=8):
        reader, entries = read(body)
        result = intake(body, tmp_path)
    # The location holding the reference is no entry: invalid_url, naming it, and no request.
    assert locs(entries) == [f"{BASE}/after"]
    assert codes_of(reader.problems) == ["xml_entities", "invalid_url"]
    assert "&x;" in reader.problems[1].message
    assert {"xml_entities", "invalid_url"} <= set(result.codes)
    assert sorted(result.urls) == sorted(locs(entries))
    everything = repr(result.facts) + repr(result.urls) + repr(list(iter_alternates(body)))
    assert "root:" not in everything


@pytest.mark.parametrize(
    "name", ["xxe_entity.xml", "external_dtd.xml", "parameter_entity.xml", "xinclude.xml"]
)
@pytest.mark.parametrize("spelling", ["uri", "path"])
def test_no_referenced_file_is_opened(
    name: str, spelling: str, tripwire: Tripwire, tmp_path: Path
) -> None:
    target = tripwire.uri if spelling == "uri" else str(tripwire.path)
    body = fixture(name, base=BASE, target=target)
    with bounded(seconds=5, megabytes=8):
        reader, entries = read(body)
        result = intake(body, tmp_path / "work")
        alternates = list(iter_alternates(body))
        validated = validate_document(body)
    assert tripwire.opened == 0
    assert "xml_entities" in codes_of(reader.problems)
    assert "xml_entities" in result.codes
    assert locs(entries)[-1] == f"{BASE}/after"
    assert sorted(result.urls) == sorted(locs(entries))
    assert alternates == []
    assert "xml_malformed" not in codes_of(validated)


@pytest.mark.parametrize(
    "name", ["xxe_entity.xml", "external_dtd.xml", "parameter_entity.xml", "xinclude.xml"]
)
def test_no_referenced_url_is_requested(name: str, tmp_path: Path) -> None:
    evil = Page(body='<!ENTITY undeclared "EXPANDED">', content_type="application/xml-dtd")
    with TestSite({"/evil": evil, "/evil.dtd": evil}) as site:
        for target in (f"{site.base}/evil.dtd", f"{site.base}/evil"):
            body = fixture(name, base=BASE, target=target)
            reader, entries = read(body)
            result = intake(body, tmp_path / target.rsplit("/", 1)[1])
            validate_document(body)
            list(iter_alternates(body))
            assert "xml_entities" in codes_of(reader.problems)
            assert "xml_entities" in result.codes
            assert "EXPANDED" not in repr(entries) + repr(result.facts) + repr(result.urls)
        assert site.hits == {}


def test_billion_laughs_is_not_expanded(tmp_path: Path) -> None:
    body = fixture("billion_laughs.xml", base=BASE)
    with bounded(seconds=2, megabytes=8):
        reader, entries = read(body)
        result = intake(body, tmp_path)
        validate_document(body)
        list(iter_alternates(body))
    # libxml2 refuses even to check an entity whose expansion would explode, and stops there;
    # the entry before it is kept.
    assert locs(entries) == [f"{BASE}/before"]
    assert codes_of(reader.problems) == ["xml_entities", "xml_malformed"]
    assert "safety limit" in reader.problems[1].message
    assert result.codes[:2] == ["xml_entities", "xml_malformed"]
    assert result.urls == [f"{BASE}/before"]


def test_one_large_entity_referenced_many_times_is_not_expanded(tmp_path: Path) -> None:
    # Quadratic blowup: a 64 KB entity referenced 16,000 times would make 1 GB of text.
    big = "a" * 65536
    refs = "&big;" * 16000
    body = (
        f'<!DOCTYPE urlset [<!ENTITY big "{big}">]><urlset xmlns="{NS}">'
        f"<url><loc>{BASE}/before</loc></url><url><loc>{BASE}/{refs}</loc></url></urlset>"
    ).encode()
    with bounded(seconds=5, megabytes=16):
        reader, entries = read(body)
        result = intake(body, tmp_path)
    assert locs(entries)[0] == f"{BASE}/before"
    assert codes_of(reader.problems)[0] == "xml_entities"
    assert "xml_entities" in result.codes
    assert all(len(loc) < 200_000 for loc in locs(entries))


def test_xinclude_is_reported_and_not_processed(tripwire: Tripwire, tmp_path: Path) -> None:
    body = fixture("xinclude.xml", base=BASE, target=tripwire.uri)
    reader, entries = read(body)
    assert locs(entries) == [f"{BASE}/page", f"{BASE}/after"]
    assert codes_of(reader.problems) == ["xml_entities"]
    assert "XInclude" in reader.problems[0].message
    assert reader.problems[0].line == 4
    assert tripwire.opened == 0


# -- compression --------------------------------------------------------------------------------


def test_gzip_bomb_is_read_up_to_the_configured_limit_only() -> None:
    bomb = gzip_bomb(1024)  # 1 GiB of XML in about 1 MB
    assert len(bomb) < 2 * MB
    with bounded(seconds=2, megabytes=4):
        reader, entries = read(bomb, read_limit=MB)
    assert reader.gzip
    assert reader.bytes == MB
    assert locs(entries) == ["http://example.com/first"]
    assert codes_of(reader.problems) == ["too_large"]
    assert "1,048,576" in reader.problems[0].message


def test_gzip_bomb_through_the_intake_is_never_held_whole(tmp_path: Path) -> None:
    bomb = gzip_bomb(1024)
    with bounded(seconds=10, megabytes=128):
        result = intake(bomb, tmp_path, read_limit=MB)
    assert result.facts.gzip
    assert result.facts.bytes == MB
    assert result.codes == ["too_large"]
    assert result.urls == ["http://example.com/first"]


def test_intake_memory_follows_the_configured_read_limit(tmp_path: Path) -> None:
    bomb = gzip_bomb(1024)
    with bounded(seconds=10, megabytes=8):
        result = intake(bomb, tmp_path, read_limit=MB)
    assert result.codes == ["too_large"]


def truncated_gzip(count: int) -> bytes:
    packed = gzip.compress(urlset(f"{BASE}/p/{i}" for i in range(count)), mtime=0)
    return packed[: len(packed) // 2]


def test_truncated_gzip_keeps_the_entries_before_the_cut() -> None:
    reader, entries = read(truncated_gzip(2000))
    assert reader.gzip
    assert codes_of(reader.problems) == ["gzip_invalid"]
    assert "truncated" in reader.problems[0].message
    assert 0 < len(entries) < 2000
    assert locs(entries) == [f"{BASE}/p/{i}" for i in range(len(entries))]


def test_truncated_gzip_through_the_intake_keeps_the_entries_before_the_cut(
    tmp_path: Path,
) -> None:
    body = truncated_gzip(2000)
    _reader, entries = read(body)
    result = intake(body, tmp_path)
    assert result.codes[0] == "gzip_invalid"
    assert sorted(result.urls) == sorted(locs(entries))


def test_truncated_gzip_through_the_intake_is_reported_once(tmp_path: Path) -> None:
    assert intake(truncated_gzip(2000), tmp_path).codes == ["gzip_invalid"]


def test_corrupt_gzip_keeps_no_entry_decoded_from_the_damaged_data(tmp_path: Path) -> None:
    # Deflate has no check before the trailer: what was decoded before the decoder noticed the
    # flipped byte may already be wrong (URLs no sitemap lists), so none of it is read.
    body = corrupt_gzip(urlset(f"{BASE}/p/{i}" for i in range(2000)))
    reader, entries = read(body)
    assert reader.gzip
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes_of(reader.problems) == ["gzip_invalid", "not_a_sitemap"]
    assert "none of them are read" in reader.problems[0].message
    result = intake(body, tmp_path)
    assert result.codes == ["gzip_invalid", "not_a_sitemap"]
    assert result.urls == []


def test_corrupt_gzip_keeps_the_members_that_checked_out_before_the_damaged_one(
    tmp_path: Path,
) -> None:
    whole = urlset(f"{BASE}/p/{i}" for i in range(2000))
    cut = whole.index(b"<url>", len(whole) // 3)
    first = gzip.compress(whole[:cut], mtime=0)
    body = first + corrupt_gzip(whole[cut:])
    reader, entries = read(body)
    kept = whole[:cut].count(b"<url>")
    assert locs(entries) == [f"{BASE}/p/{i}" for i in range(kept)]
    assert reader.kind is SitemapKind.URLSET
    assert codes_of(reader.problems) == ["gzip_invalid"]
    assert f"only the {cut:,} bytes of the complete gzip members" in reader.problems[0].message
    assert sorted(intake(body, tmp_path).urls) == sorted(locs(entries))


def test_bad_gzip_checksum_keeps_no_entry() -> None:
    # A trailer that does not match says the decoded data is not what was compressed (or the
    # trailer is damaged, which cannot be told apart).
    whole = urlset(f"{BASE}/p/{i}" for i in range(100))
    packed = bytearray(gzip.compress(whole))
    packed[-8] ^= 0xFF  # the CRC32 of the trailer
    reader, entries = read(bytes(packed))
    assert codes_of(reader.problems) == ["gzip_invalid", "not_a_sitemap"]
    assert "incorrect data check" in reader.problems[0].message
    assert entries == []


@pytest.mark.parametrize("garbage", [b"\x1f\x8b", b"\x1f\x8b\x08", b"\x1f\x8b" + b"\x00" * 64])
def test_gzip_magic_without_gzip_data(garbage: bytes) -> None:
    reader, entries = read(garbage)
    assert entries == []
    assert reader.gzip
    assert "gzip_invalid" in codes_of(reader.problems) or reader.kind is SitemapKind.UNKNOWN


def test_gzip_without_header_and_plain_with_header_are_told_apart_by_their_bytes() -> None:
    plain = urlset([f"{BASE}/a"])
    # The reader never sees headers: a plain body (whatever Content-Encoding said) is read as
    # plain, a gzip body (whatever was or was not said) is unpacked.
    for body, is_gzip in ((plain, False), (gzip.compress(plain), True)):
        reader, entries = read(body)
        assert reader.gzip is is_gzip
        assert locs(entries) == [f"{BASE}/a"]
        assert reader.problems == []


def test_three_gzip_layers_are_not_unwrapped_further_than_two() -> None:
    body = gzip.compress(gzip.compress(gzip.compress(urlset([f"{BASE}/a"]))))
    with bounded(seconds=1, megabytes=4):
        reader, entries = read(body, gzip_encoded=True)
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert codes_of(reader.problems) == ["gzip_invalid", "not_a_sitemap"]
    assert "gzipped three times" in reader.problems[0].message


def test_body_stream_never_yields_past_its_limit() -> None:
    bomb = gzip_bomb(64)
    stream = BodyStream(bomb, limit=3 * MB + 5, chunk_size=65536)
    with bounded(seconds=2, megabytes=2):
        total = 0
        for chunk in stream:
            assert len(chunk) <= 65536
            total += len(chunk)
    assert total == stream.bytes_read == 3 * MB + 5
    assert stream.truncated


# -- size and shape -------------------------------------------------------------------------------


def test_10_mb_single_line_urlset_streams_every_entry() -> None:
    count = 250_000
    body = urlset((f"{BASE}/p/{i}" for i in range(count)), newline=False)
    assert len(body) > 10_000_000
    assert b"\n" not in body
    with bounded_resident(seconds=15, megabytes=48):
        reader = SitemapReader(body)
        seen = 0
        for entry in reader:
            assert entry.line == 1
            seen += 1
    assert seen == count
    assert codes_of(reader.problems) == ["too_many_urls"]


def test_10_mb_single_line_text_sitemap_is_read_in_linear_time() -> None:
    body = b"http://example.com/" + b"x" * 10_000_000
    with bounded(seconds=2, megabytes=48):
        reader, entries = read(body)
    assert reader.kind is SitemapKind.TEXT
    assert len(entries) == 1
    assert len(entries[0].loc) == len(body)
    assert loc_problems(entries[0].loc) == ["url_too_long"]


def test_long_text_lines_across_chunks_keep_their_line_numbers() -> None:
    lines = [f"http://example.com/{'y' * (i * 40_000)}" for i in range(6)]
    body = "\r\n".join(lines).encode() + b"\r"
    _reader, entries = read(body)
    assert locs(entries) == lines
    assert [entry.line for entry in entries] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    "start", [f'<urlset xmlns="{NS}">'.encode(), b"http://example.com/"], ids=["xml", "text"]
)
def test_100_mb_body_stops_at_the_read_limit(start: bytes) -> None:
    body = start + b"x" * 100_000_000
    with bounded(seconds=2, megabytes=6):
        reader, _entries = read(body, read_limit=MB)
    assert reader.bytes == MB
    assert codes_of(reader.problems)[0] == "too_large"


@pytest.mark.parametrize(
    "shape",
    [
        "<a>" * 100_000 + "</a>" * 100_000,
        f"<url><loc>{BASE}/ok</loc></url>" + "<url>" * 100_000 + "</url>" * 100_000,
        f"<url><loc>{BASE}/" + "<b>" * 100_000 + "x" + "</b>" * 100_000 + "</loc></url>",
    ],
    ids=["nested-others", "nested-records", "nested-in-loc"],
)
def test_elements_nested_100000_deep(shape: str, tmp_path: Path) -> None:
    body = f'<urlset xmlns="{NS}">{shape}</urlset>'.encode()
    with bounded_resident(seconds=10, megabytes=48):
        reader, entries = read(body)
        result = intake(body, tmp_path)
        list(iter_alternates(body))
    assert "xml_malformed" in codes_of(reader.problems)
    assert any("nested more than 256 levels deep" in p.message for p in reader.problems)
    assert "xml_malformed" in result.codes
    assert len(entries) <= 1


def test_10_mb_robots_txt_is_read_up_to_its_limit() -> None:
    head = b"User-agent: *\nDisallow: /private\nSitemap: /early.xml\n"
    filler = b"Disallow: /filler\n" * (10 * MB // 18)
    body = head + filler + b"Sitemap: /late.xml\nUser-agent: Googlebot\nDisallow: /\n"
    assert len(body) > 10 * MB
    with bounded(seconds=3, megabytes=48):
        policy = robots_policy(200, body, "http://example.com/robots.txt")
    assert policy.outcome == "rules"
    assert policy.sitemaps == ("http://example.com/early.xml",)
    assert policy.can_fetch("http://example.com/page")
    assert not policy.can_fetch("http://example.com/private/x")


def test_1_mb_loc_is_one_entry_too_long_to_fetch(tmp_path: Path) -> None:
    loc = f"{BASE}/" + "x" * MB
    body = urlset([loc, f"{BASE}/after"])
    with bounded(seconds=3, megabytes=24):
        reader, entries = read(body)
        result = intake(body, tmp_path)
    assert locs(entries) == [loc, f"{BASE}/after"]
    assert reader.problems == []
    assert loc_problems(loc) == ["url_too_long"]
    assert "schema_invalid" in result.codes
    assert sorted(result.urls) == sorted([loc, f"{BASE}/after"])


def test_text_node_over_the_parser_limit_stops_reading_with_a_finding() -> None:
    body = urlset([f"{BASE}/first", f"{BASE}/" + "x" * 11_000_000, f"{BASE}/after"])
    with bounded(seconds=5, megabytes=48):
        reader, entries = read(body)
    assert locs(entries) == [f"{BASE}/first"]
    assert codes_of(reader.problems) == ["xml_malformed"]


def test_1_000_000_entries_in_one_index() -> None:
    count = 1_000_000
    entries = b"".join(b"<sitemap><loc>http://a.co/%d</loc></sitemap>\n" % i for i in range(count))
    body = f'<sitemapindex xmlns="{NS}">\n'.encode() + entries + b"</sitemapindex>\n"
    with bounded_resident(seconds=60, megabytes=48):
        reader = SitemapReader(body)
        seen = 0
        for entry in reader:
            assert isinstance(entry, ChildEntry)
            seen += 1
    assert seen == count == reader.child_count
    assert codes_of(reader.problems) == ["index_too_many_sitemaps"]
    assert "1,000,000 sitemaps" in reader.problems[0].message


def test_millions_of_entries_without_loc_are_counted_not_listed() -> None:
    body = f'<urlset xmlns="{NS}">'.encode() + b"<url/>" * 300_000 + b"</urlset>"
    with bounded_resident(seconds=10, megabytes=32):
        reader, entries = read(body)
    assert entries == []
    missing = [p for p in reader.problems if p.code == "missing_loc"]
    assert len(missing) == MAX_MISSING_LOC_LISTED + 1
    assert missing[-1].message.startswith("299,000 more <url> entries")


def test_intake_of_a_large_index_stays_within_a_memory_budget(tmp_path: Path) -> None:
    body = sitemapindex(f"http://a.co/{i}" for i in range(100_000))
    with bounded_resident(seconds=30, megabytes=40):
        result = intake(body, tmp_path)
    assert len(result.children) == 100_000


def test_huge_preamble_before_the_root_is_refused_early() -> None:
    body = b"<!--" + b"x" * (4 * ROOT_SEARCH_LIMIT) + b"-->" + urlset([f"{BASE}/a"])
    with bounded(seconds=2, megabytes=16):
        reader, entries = read(body)
    assert entries == []
    assert reader.kind is SitemapKind.UNKNOWN
    assert "not_a_sitemap" in codes_of(reader.problems)


def test_many_gzip_members_of_nothing_are_bounded() -> None:
    empty_member = gzip.compress(b"")
    body = gzip.compress(urlset([f"{BASE}/a"])) + empty_member * 50_000
    with bounded(seconds=5, megabytes=8):
        _reader, entries = read(body)
    assert locs(entries) == [f"{BASE}/a"]


def test_raw_deflate_and_zlib_bodies_are_not_mistaken_for_gzip() -> None:
    plain = urlset([f"{BASE}/a"])
    for body in (zlib.compress(plain), gzip_pieces([plain])[10:]):
        reader, entries = read(body)
        assert not reader.gzip
        assert entries == []
        assert codes_of(reader.problems) == ["not_a_sitemap"]


def test_repeated_block_generator_is_exact() -> None:
    assert sum(len(chunk) for chunk in repeated(b"<x/>", 10 * MB + 3)) == 10 * MB + 3


@pytest.mark.parametrize("opener", ["<script ", "<title/", "<style x=1 "])
def test_a_head_of_unclosed_raw_text_tags_is_read_in_linear_time(opener: str) -> None:
    """Tens of thousands of start tags of script, style or title that never end (the head is
    read by the parser, which first reopens those written self-closing): each is looked at up
    to the next tag only."""
    body = ("<html><head>" + opener * 40_000).encode()
    with bounded(seconds=2, megabytes=64):
        facts = parse_head(body, "http://example.com/")
    assert facts.noindex == ()
