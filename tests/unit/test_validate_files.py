"""``validate_files``: local sitemap files judged together, as the sitemaps of one site."""

from __future__ import annotations

import gzip
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemapaudit import localfiles
from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl import intake
from sitemapaudit.inventory import NewEntry
from sitemapaudit.localfiles import FileListings, validate_files
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import SitemapRecord, UrlRecord

AUDIT_TIME = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
MEMORY = localfiles.MEMORY_URLS
NS = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def urlset(*entries: str) -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n'
        + "\n".join(entries)
        + "\n</urlset>\n"
    )


def entry(loc: str, lastmod: str | None = None, alternates: dict[str, str] | None = None) -> str:
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>'
        for lang, href in (alternates or {}).items()
    )
    extra = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return f"<url><loc>{loc}</loc>{extra}{links}</url>"


def run(tmp_path: Path, *bodies: str) -> tuple[list[SitemapRecord], dict[str, UrlRecord]]:
    paths = []
    for i, body in enumerate(bodies):
        path = tmp_path / f"s{i}.xml"
        path.write_text(body, encoding="utf-8")
        paths.append(path)
    config = AuditConfig.from_settings({})
    records = list(validate_files(paths, config, RecordBuilder(config, AUDIT_TIME), []))
    sitemaps = [r for r in records if isinstance(r, SitemapRecord)]
    urls = {r.url: r for r in records if isinstance(r, UrlRecord)}
    assert len(sitemaps) + len(urls) == len(records), "one record per distinct URL"
    return sitemaps, urls


def test_a_url_listed_by_two_files_is_one_duplicate_record_naming_both(tmp_path: Path) -> None:
    sitemaps, urls = run(
        tmp_path,
        urlset(entry("https://e.com/a", "2024-05-01"), entry("https://e.com/b")),
        urlset(entry("https://e.com/a", "2024-05-03"), entry("https://e.com/c")),
    )
    assert [s.url for s in sitemaps] == [str(tmp_path / "s0.xml"), str(tmp_path / "s1.xml")]
    assert list(urls) == ["https://e.com/a", "https://e.com/b", "https://e.com/c"]
    a = urls["https://e.com/a"]
    assert "duplicate" in a.issues
    assert a.sitemaps == [str(tmp_path / "s0.xml"), str(tmp_path / "s1.xml")]
    assert "duplicate: listed 2 times in 2 sitemaps" in a.errors
    assert a.lastmod == "2024-05-03"  # the greatest of its listings, as in an audit
    assert urls["https://e.com/b"].issues == []
    assert urls["https://e.com/c"].issues == []


def test_a_url_on_another_host_than_the_first_listed_is_off_host(tmp_path: Path) -> None:
    """A sitemap lists one host's URLs (sitemaps.org), and the files given are one site's:
    a staging or www-less URL leaked by a generator fails the gate, as in an audit; http and
    https, host case and a default port are the same site, as they are for an audit."""
    _, urls = run(
        tmp_path,
        urlset(
            entry("invalid"),
            entry("https://www.e.com/a"),
            entry("https://staging.e.com/b"),
            entry("http://WWW.e.com:80/c"),
        ),
        urlset(entry("https://e.com/d"), entry("https://www.e.com:8443/f")),
    )
    assert {url: record.issues for url, record in urls.items()} == {
        "invalid": ["invalid_url"],
        "https://www.e.com/a": [],
        "https://staging.e.com/b": ["off_host"],
        "http://WWW.e.com:80/c": [],
        "https://e.com/d": ["off_host"],
        "https://www.e.com:8443/f": ["off_host"],
    }
    assert urls["https://e.com/d"].errors == [
        "off_host: on another host than https://www.e.com, the first URL's: a sitemap lists the "
        "URLs of one host (the site's)"
    ]


def test_hreflang_alternates_are_judged_across_the_files(tmp_path: Path) -> None:
    pair = {"en": "https://e.com/en", "fr": "https://e.com/fr"}
    _, urls = run(
        tmp_path,
        urlset(
            entry("https://e.com/en", alternates=pair),
            entry(
                "https://e.com/de", alternates={"de": "https://e.com/de", "es": "https://e.com/es"}
            ),
            # On a site none of the files lists pages of: not judged.
            entry(
                "https://e.com/it", alternates={"it": "https://e.com/it", "ja": "https://e.jp/ja"}
            ),
        ),
        urlset(
            entry("https://e.com/fr", alternates=pair),
            entry("https://e.com/es", alternates={"es": "https://e.com/es"}),
        ),
    )
    assert urls["https://e.com/en"].issues == []
    assert urls["https://e.com/fr"].issues == []
    assert urls["https://e.com/it"].issues == []
    de = urls["https://e.com/de"]
    assert de.issues == ["hreflang_not_reciprocal"]
    seen_in = tmp_path / "s0.xml"
    assert de.errors == [
        "hreflang_not_reciprocal: hreflang alternate https://e.com/es (es) of https://e.com/de "
        f"does not list https://e.com/de back among its own alternates (seen in {seen_in})"
    ]


def test_one_file_is_judged_on_its_own_alternates(tmp_path: Path) -> None:
    _, urls = run(
        tmp_path,
        urlset(
            entry(
                "https://e.com/en", alternates={"en": "https://e.com/en", "fr": "https://e.com/fr"}
            ),
            entry("https://e.com/fr", alternates={"fr": "https://e.com/fr"}),
        ),
    )
    assert urls["https://e.com/en"].issues == ["hreflang_not_reciprocal"]
    assert urls["https://e.com/fr"].issues == []


def test_a_second_file_moves_the_listings_to_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    listings = FileListings()
    try:
        first = [
            NewEntry("https://e.com/a", None, "w3c", ()),
            NewEntry("https://e.com/a", None, "w3c", ()),
        ]
        assert listings.add_entries("/s0.xml", iter(first)) == 2
        assert not listings.spilled
        assert (
            listings.add_entries(
                "/s1.xml",
                iter([NewEntry("https://e.com/a", "2024-01-02", "w3c", ("invalid_url",))]),
            )
            == 1
        )
        assert listings.spilled
        assert listings.add_notes([("https://e.com/a", "a note")]) == 1
        (facts,) = list(listings.facts())
    finally:
        listings.close()
    assert (
        facts.url,
        facts.sitemaps,
        facts.times_listed,
        facts.lastmod,
        facts.rules,
        facts.hreflang,
    ) == (
        "https://e.com/a",
        ["/s0.xml", "/s1.xml"],
        3,
        "2024-01-02",
        ["invalid_url"],
        ["a note"],
    )
    assert not any(work.iterdir())


def test_notes_for_one_file_held_in_memory_are_kept(tmp_path: Path) -> None:
    listings = FileListings()
    try:
        listings.add_entries(
            "/s0.xml",
            iter(
                [
                    NewEntry("https://e.com/a", None, "w3c", ()),
                    NewEntry("https://e.com/b", None, "w3c", ()),
                ]
            ),
        )
        assert listings.add_notes(iter([])) == 0
        assert not listings.spilled
        assert listings.add_notes(iter([("https://e.com/b", "b note")])) == 1
        assert [(f.url, f.hreflang) for f in listings.facts()] == [
            ("https://e.com/a", []),
            ("https://e.com/b", ["b note"]),
        ]
    finally:
        listings.close()


def test_files_give_the_same_records_with_listings_in_memory_or_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = (
        urlset(*(entry(f"https://e.com/p{i % 7}", f"2024-01-{1 + i:02d}") for i in range(12))),
        urlset(*(entry(f"https://e.com/p{i}") for i in range(3, 10))),
    )
    in_memory = run(tmp_path, *bodies)
    monkeypatch.setattr(localfiles, "MEMORY_URLS", 2)
    assert run(tmp_path, *bodies) == in_memory
    assert len(in_memory[1]) == 10


def test_an_alternate_on_a_site_the_files_list_without_alternates_is_judged(
    tmp_path: Path,
) -> None:
    """The other site's page is listed (by a text sitemap, without alternates): it does not
    link back."""
    _, urls = run(
        tmp_path,
        urlset(
            entry(
                "https://e.com/en",
                alternates={"en": "https://e.com/en", "de": "https://e.de/de"},
            )
        ),
        "https://e.de/de\n",
    )
    assert urls["https://e.com/en"].issues == ["hreflang_not_reciprocal"]


def test_the_alternates_of_a_sitemap_past_the_entry_limit_still_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(intake, "PROTOCOL_MAX_ENTRIES", 2)
    pair = {"en": "https://e.com/en", "de": "https://e.com/de"}
    sitemaps, urls = run(
        tmp_path,
        urlset(entry("https://e.com/de", alternates=pair)),
        urlset(
            entry("https://e.com/en", alternates=pair),
            entry(
                "https://e.com/fr", alternates={"fr": "https://e.com/fr", "it": "https://e.com/it"}
            ),
            entry("https://e.com/x"),
        ),
    )
    assert sitemaps[1].url_count == 3
    assert urls["https://e.com/de"].issues == []
    assert urls["https://e.com/en"].issues == []
    assert urls["https://e.com/fr"].issues == ["hreflang_not_reciprocal"]


@pytest.mark.parametrize("fault", ["too_large", "gzip_invalid"])
def test_the_alternates_of_a_sitemap_past_the_size_limit_or_with_broken_gzip_still_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """Its entries before the fault are audited, so their alternates link back too (it is
    read again as it inflates: the document is too large to hold, or has no end)."""
    pair = {"en": "https://e.com/en", "fr": "https://e.com/fr"}
    first = tmp_path / "small.xml"
    first.write_text(urlset(entry("https://e.com/en", alternates=pair)), encoding="utf-8")
    body = urlset(
        entry("https://e.com/fr", alternates=pair),
        *(entry(f"https://e.com/pad/{i}") for i in range(2000)),
    ).encode()
    second = tmp_path / "big.xml.gz"
    if fault == "too_large":
        monkeypatch.setattr(intake, "PROTOCOL_MAX_BYTES", len(body) // 2)
        second.write_bytes(gzip.compress(body))
    else:
        packed = gzip.compress(body)
        second.write_bytes(packed[: len(packed) // 2])
    config = AuditConfig.from_settings({})
    records = list(validate_files([first, second], config, RecordBuilder(config, AUDIT_TIME), []))
    sitemaps = [r for r in records if isinstance(r, SitemapRecord)]
    urls = {r.url: r for r in records if isinstance(r, UrlRecord)}
    assert fault in sitemaps[1].issues
    assert "https://e.com/fr" in urls
    assert urls["https://e.com/en"].issues == []


@pytest.mark.parametrize("memory_urls", [0, MEMORY])
@pytest.mark.parametrize("files", [1, 2])
def test_a_url_listed_again_keeps_the_newest_pubdate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_urls: int, files: int
) -> None:
    monkeypatch.setattr(localfiles, "MEMORY_URLS", memory_urls)
    items = [
        f"<item><link>https://e.com/p</link><pubDate>{date}</pubDate></item>"
        for date in ("Thu, 05 Jan 2017 12:34:50 GMT", "Wed, 04 Jan 2017 12:34:50 GMT")
    ]
    feed = (
        '<rss version="2.0"><channel><title>t</title><link>https://e.com/</link>'
        "<description>d</description>{}</channel></rss>"
    )
    bodies = [feed.format("".join(items))] if files == 1 else [feed.format(i) for i in items]
    _, urls = run(tmp_path, *bodies)
    assert urls["https://e.com/p"].lastmod == "Thu, 05 Jan 2017 12:34:50 GMT"


@pytest.mark.parametrize("limit", [10**14, 1024])
def test_a_file_is_read_up_to_the_read_limit_whatever_the_limit(tmp_path: Path, limit: int) -> None:
    # A limit far above the file's size allocates nothing for it (a buffer of the limit's size
    # would not fit in memory); a limit below it cuts the file there, as a download's would.
    path = tmp_path / "s.xml"
    entries = [entry(f"http://example.com/{i}") for i in range(40)]
    path.write_text(urlset(*entries), encoding="utf-8")
    config = AuditConfig.from_settings({"SITEMAPAUDIT_SITEMAP_READ_LIMIT": limit})
    records = list(validate_files([path], config, RecordBuilder(config, AUDIT_TIME), []))
    (sitemap,) = [r for r in records if isinstance(r, SitemapRecord)]
    if limit > 1024:
        assert sitemap.url_count == 40
        assert sitemap.issues == []
    else:
        assert "too_large" in sitemap.issues
