"""Conformance of the reader on real-world sitemaps from other parsers' test suites.

The files and their ``expected.json`` entries come from the shared corpus (see
``tests/fixtures/corpus/PROVENANCE.md``). Each file must read without an exception. For a
well-formed urlset or sitemapindex the reader must account for every ``<loc>`` the neutral probe
counted (entries plus ``missing_loc`` problems, and ``invalid_url`` ones for a location holding
an unexpanded entity reference), and where the peer project's test pins down the
URLs or their number, the reader must agree, or :data:`DIFFERENCES` says why it deliberately
does not. The RSS pubDates crawler-commons reads must name the same instants.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest

from sitemapaudit.page.dates import parse_rfc822_date
from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import ChildEntry, SitemapKind, UrlEntry

from .support import CORPUS

EXPECTED: dict[str, dict[str, Any]] = json.loads((CORPUS / "expected.json").read_text("utf-8"))
FILES = sorted(EXPECTED)

CC = "crawler-commons/SiteMapParser"

# How far the probe's count of <loc> elements (any namespace, anywhere) is from what the reader
# accounts for, and why.
LOC_COUNT_ADJUSTMENTS: dict[str, tuple[int, str]] = {
    "advertools/news_sitemap.xml": (5, "5 <image:loc> inside <image:image> are not pages"),
    f"{CC}ExtensionTest__testHebdenbridgetimesArticlesSitemap__sitemap-article-2015-18.xml": (
        94,
        "94 <image:loc> inside <image:image> are not pages",
    ),
    f"{CC}ExtensionTest__testImageSitemap__sitemap-images.xml": (
        2,
        "2 <image:loc> inside <image:image> are not pages",
    ),
    "sitemapjs/mock__alltags.xml": (5, "5 <image:loc> inside <image:image> are not pages"),
    "sitemapjs/mock__alltags.cdata.xml": (5, "5 <image:loc> inside <image:image> are not pages"),
    f"{CC}Test__testMissingLocSitemapIndexFile__sitemap.index.xml": (
        -15,
        "15 <sitemap> elements hold their URL as bare text without any <loc>; each is a "
        "missing_loc problem, which a count of <loc> elements cannot see",
    ),
    "trafilatura/sitemap-hreflang.xml": (
        1,
        "the urlset also holds a <sitemap> element (invalid in a urlset); its <loc> is not read",
    ),
}

# Files where the reader deliberately disagrees with the peer's expectation, and why.
DIFFERENCES: dict[str, str] = {
    f"{CC}Test__testStripUnicodeWhiteSpace__sitemapindex.xml": (
        "a location between a no-break space and an en quad: crawler-commons strips Unicode "
        "whitespace, we strip ASCII whitespace only, as XML Schema and the WHATWG URL parser "
        "do, so the location keeps them and is invalid_url (a browser would request another URL)"
    ),
    f"{CC}Test__testMissingLocSitemapIndexFile__sitemap.index.xml": (
        "the <sitemap> elements hold the URL as bare text without <loc>; crawler-commons takes "
        "the text, we report missing_loc for each (the protocol requires <loc>)"
    ),
    f"{CC}Test__testPartialSitemapsAllowed__sitemap.xml": (
        "the document ends inside its only <url>; crawler-commons keeps the URL of the "
        "unfinished record, we yield only records whose end tag was read, plus xml_malformed"
    ),
    f"{CC}Test__testRSS10SyndicationFormat__sitemapindex.xml": (
        "RSS 1.0 (an rdf:RDF root) is not one of the feed formats accepted as a sitemap; we "
        "report not_a_sitemap, crawler-commons reads its item but marks the sitemap unprocessed"
    ),
    f"{CC}Test__testRSSFormat__index.php": (
        'an <item> with only <guid isPermaLink="false"> has no <link>; crawler-commons falls '
        "back to the guid, we report missing_loc"
    ),
    f"{CC}Test__testSitemapParserBrokenXml__sitemapindex.xml": (
        "crawler-commons rejects the document; we keep the one complete <url> before the tag "
        "mismatch and report xml_malformed (and missing_loc for a <url> holding only a comment)"
    ),
    f"{CC}Test__testSitemapTXTfilterUrls__sitemap.txt": (
        "the first line (www.example.com/...) does not start with http(s)://, so this is not a "
        "text sitemap; crawler-commons guesses a scheme (and drops the #anchor we would keep)"
    ),
    f"{CC}Test__testSitemapWithWrongNamespace__sitemap.badns.xml": (
        "crawler-commons rejects a urlset in the Google 0.9 namespace; we read it and leave "
        "namespace validity to the schema validation"
    ),
    f"{CC}Test__testSitemapXXE__sitemap.xxe.xml": (
        "this crawler-commons test forbids any DOCTYPE and rejects the file; we read it without "
        "expanding the external entity and report xml_entities (and the loc holding the "
        "reference as invalid_url)"
    ),
    "scrapy/test_xml_entity_expansion.xml": (
        "the loc ends in a reference to an external entity (file:///etc/passwd); Scrapy's parser "
        "drops the reference; we do not expand it either, and report the "
        "loc as invalid_url (what it stands for is unknown) and xml_entities"
    ),
    "sitemapjs/index-security__filters-data-protocol-urls.xml": (
        "sitemap.js drops the data: loc while parsing; we list every loc and leave URL rules "
        "to the URL checks"
    ),
    "sitemapjs/mock__index-unescaped-lt.xml": (
        "sitemap.js rejects the whole index on the raw '<' in the second <lastmod>; we keep the "
        "complete first <sitemap> and report xml_malformed"
    ),
    "trafilatura/sitemap-hreflang.xml": (
        "the urlset also holds a <sitemap> element (invalid there); trafilatura follows it as a "
        "child sitemap, we read only the <url> records of a urlset"
    ),
    "trafilatura/inline_txt_with_garbage_line.txt": (
        "the first line (Tralala) is not a URL, so this is not a text sitemap; trafilatura "
        "skips non-URL lines wherever they are"
    ),
}

REFUSAL_CODES = {"xml_malformed", "not_a_sitemap"}


@dataclass
class Expectation:
    """What a peer's test pins down about one file."""

    locs: list[str] | None = None
    child_locs: list[str] | None = None
    count: int | None = None
    lastmods: list[str | None] | None = None
    refused: bool = False


@dataclass
class Outcome:
    kind: SitemapKind
    entries: list[UrlEntry | ChildEntry]
    codes: list[str]

    @property
    def locs(self) -> list[str]:
        return [entry.loc for entry in self.entries]

    @property
    def url_locs(self) -> list[str]:
        return [entry.loc for entry in self.entries if isinstance(entry, UrlEntry)]

    @property
    def child_locs(self) -> list[str]:
        return [entry.loc for entry in self.entries if isinstance(entry, ChildEntry)]


def run(name: str) -> Outcome:
    reader = SitemapReader((CORPUS / name).read_bytes())
    entries = list(reader)
    return Outcome(reader.kind, entries, [problem.code for problem in reader.problems])


def expectation(name: str) -> Expectation | None:
    """The peer's assertion about the URLs of ``name``, in a common shape."""
    record = EXPECTED[name]
    expected = record["expected"]
    peer = record["peer"]
    if peer == "crawler-commons":
        if "exception" in expected:
            return Expectation(refused=True)
        listed = expected.get("urls", expected.get("sitemaps"))
        return Expectation(locs=[item["loc"] for item in listed])
    if peer == "scrapy":
        if any("Ignoring invalid sitemap" in str(value) for value in expected.values()):
            return Expectation(refused=True)
        for assertion in expected.get("assertions", []):
            if assertion.get("src") == "not results":
                return Expectation(count=0)
            if assertion.get("left") in ("list(s)", "results") and isinstance(
                assertion.get("right"), list
            ):
                right = assertion["right"]
                return Expectation(
                    locs=[item["loc"] for item in right],
                    lastmods=[item.get("lastmod") for item in right],
                )
        return None
    if peer == "advertools":
        if "raises" in expected:
            return Expectation(refused=True)
        if "row_count" in expected:
            return Expectation(count=expected["row_count"])
        return None
    if peer == "sitemapjs":
        return _sitemapjs(expected)
    if peer == "trafilatura":
        return _trafilatura(expected)
    return None


def _sitemapjs(expected: dict[str, Any]) -> Expectation | None:
    if isinstance(expected.get("items_equal"), list):
        items = expected["items_equal"]
        return Expectation(
            locs=[item["url"] for item in items], lastmods=[item.get("lastmod") for item in items]
        )
    if isinstance(expected.get("urls"), list):
        return Expectation(locs=expected["urls"])
    if any("rejects" in str(value) for value in expected.values()):
        return Expectation(refused=True)
    for line in expected.get("jest_expects", []):
        match = re.search(r"expect\((?:result|items)\)\.toHaveLength\((\d+)\)", line)
        if match:
            return Expectation(count=int(match[1]))
    return None


def _trafilatura(expected: dict[str, Any]) -> Expectation | None:
    if any(
        key.startswith("is_plausible_sitemap") and value is False for key, value in expected.items()
    ):
        return Expectation(refused=True)
    result = Expectation()
    if isinstance(expected.get("page_urls"), list):
        result.locs = expected["page_urls"]
    if isinstance(expected.get("page_url_count"), int):
        result.count = expected["page_url_count"]
    children = expected.get("child_sitemaps_in_order", expected.get("child_sitemaps"))
    if isinstance(children, list):
        result.child_locs = children
    if result.locs is None and result.count is None and result.child_locs is None:
        return None
    return result


def agrees(name: str, want: Expectation, got: Outcome) -> bool:
    if want.refused:
        return bool(REFUSAL_CODES & set(got.codes)) and not got.entries
    peer = EXPECTED[name]["peer"]
    if want.locs is not None:
        mine = got.url_locs if peer == "trafilatura" else got.locs
        if mine != want.locs:
            return False
    if want.child_locs is not None and got.child_locs != want.child_locs:
        return False
    if want.count is not None:
        counted = len(got.url_locs) if peer == "trafilatura" else len(got.entries)
        if counted != want.count:
            return False
    if want.lastmods is not None:
        return [entry.lastmod for entry in got.entries] == want.lastmods
    return True


@pytest.mark.parametrize("name", FILES, ids=FILES)
def test_reads_without_exception(name: str) -> None:
    outcome = run(name)
    assert (outcome.kind is SitemapKind.UNKNOWN) == ("not_a_sitemap" in outcome.codes)


def _is_well_formed_sitemap(name: str) -> bool:
    probe = EXPECTED[name]["neutral_probe"].get("xml") or {}
    return bool(probe.get("well_formed")) and probe.get("root") in ("urlset", "sitemapindex")


WELL_FORMED_SITEMAPS = [name for name in FILES if _is_well_formed_sitemap(name)]
PINNED = [name for name in FILES if expectation(name) is not None]


@pytest.mark.parametrize("name", WELL_FORMED_SITEMAPS, ids=WELL_FORMED_SITEMAPS)
def test_every_loc_is_accounted_for(name: str) -> None:
    probe = EXPECTED[name]["neutral_probe"]["xml"]
    outcome = run(name)
    adjustment, _reason = LOC_COUNT_ADJUSTMENTS.get(name, (0, ""))
    accounted = (
        len(outcome.entries)
        + outcome.codes.count("missing_loc")
        + outcome.codes.count("invalid_url")
    )
    assert accounted == probe["loc_count_any_ns"] - adjustment


@pytest.mark.parametrize("name", PINNED, ids=PINNED)
def test_agrees_with_the_peer_or_says_why_not(name: str) -> None:
    want = expectation(name)
    assert want is not None
    outcome = run(name)
    if name in DIFFERENCES:
        assert not agrees(name, want, outcome), "documented difference no longer differs"
    else:
        assert agrees(name, want, outcome), (want, outcome.locs, outcome.codes)


def test_adjustments_and_differences_name_checked_files() -> None:
    assert set(LOC_COUNT_ADJUSTMENTS) <= set(WELL_FORMED_SITEMAPS)
    assert set(DIFFERENCES) <= set(PINNED)
    assert len(FILES) >= 40
    assert all(reason for reason in DIFFERENCES.values())
    assert all(reason for _, reason in LOC_COUNT_ADJUSTMENTS.values())


RSS_WITH_DATES = [
    name
    for name in FILES
    if EXPECTED[name]["peer"] == "crawler-commons"
    and (EXPECTED[name]["neutral_probe"].get("xml") or {}).get("root") == "rss"
]


@pytest.mark.parametrize("name", RSS_WITH_DATES, ids=RSS_WITH_DATES)
def test_rss_pubdates_agree_with_crawler_commons(name: str) -> None:
    """The instant of each pubDate, where crawler-commons lists the item: the same, and no
    date where it has none (a pubDate without a time zone among them)."""
    expected = {item["loc"]: item["lastmod"] for item in EXPECTED[name]["expected"]["urls"]}
    compared = 0
    for entry in run(name).entries:
        if entry.loc not in expected:
            continue
        parsed = parse_rfc822_date(entry.lastmod) if entry.lastmod is not None else None
        assert (parsed and f"{parsed:%Y-%m-%dT%H:%M:%SZ}") == expected[entry.loc], entry
        compared += 1
    assert compared >= 3
