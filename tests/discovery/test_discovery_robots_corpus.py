"""robots.txt files from other parsers' test suites, checked against those parsers' results.

The files and their corpus entries are in ``tests/fixtures/robots`` (see PROVENANCE.md).
Where our result differs from a peer's on purpose, the difference is asserted explicitly in
``DELIBERATE`` below with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from sitemapaudit.discovery.robots import decode_robots, robots_policy, sitemap_lines

FIXTURES = Path(__file__).parent.parent / "fixtures" / "robots"
EXPECTED: dict[str, dict[str, Any]] = json.loads((FIXTURES / "expected.json").read_text("utf-8"))

PROTEGO_SITEMAPS = "observed_protego_HEAD_sitemaps(text decoded utf-8 errors=ignore)"
SCRAPY_SITEMAPS = (
    "observed_scrapy_2.19.0_sitemap_urls_from_robots(bytes, base_url=https://host/robots.txt)"
)


def body(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def names(prefix: str) -> list[str]:
    return sorted(name for name in EXPECTED if name.startswith(prefix))


def java_list(value: str) -> list[str]:
    inner = value.strip()[1:-1].strip()
    return [item.strip() for item in inner.split(",")] if inner else []


def protego_robots_url(name: str) -> str:
    host = name.removeprefix("protego/").removesuffix(".robots.txt")
    return f"https://{host}/robots.txt"


def test_every_fixture_has_an_entry_and_a_file() -> None:
    files = {
        str(path.relative_to(FIXTURES))
        for path in FIXTURES.rglob("*")
        if path.is_file()
        and path.name not in ("expected.json", "PROVENANCE.md", "conftest.py")
        and "__pycache__" not in path.parts
    }
    assert files == set(EXPECTED)
    provenance = (FIXTURES / "PROVENANCE.md").read_text("utf-8")
    for name, entry in EXPECTED.items():
        assert f"`{name}`" in provenance
        assert entry["commit"] in provenance
        assert entry["license"] in provenance


# --- crawler-commons ----------------------------------------------------------------------

# crawler-commons reads a line holding only a URL as a sitemap ("a sitemap directive that
# forgot 'sitemap:'"); Google and RFC 9309 do not, and neither do we.
CRAWLER_COMMONS_DELIBERATE = {
    "crawler-commons/SimpleRobotRulesParserTest__testSitemap__domain.com.robots.txt": [
        "http://domain.com/sitemap.xml",
        "http://domain.com/dir/MixedCased-sitemap.xml",
    ],
}


@pytest.mark.parametrize("name", names("crawler-commons/"))
def test_crawler_commons_sitemaps(name: str) -> None:
    entry = EXPECTED[name]
    base = entry["parsed_as"]["url"]
    found = sitemap_lines(decode_robots(body(name)), base)
    expected = java_list(entry["expected"]["sitemaps"])
    if name in CRAWLER_COMMONS_DELIBERATE:
        assert found != expected
        assert found == CRAWLER_COMMONS_DELIBERATE[name]
        assert set(found) < set(expected)
    else:
        assert found == expected
    assert robots_policy(200, body(name), base).sitemaps == tuple(found)


def crawler_commons_parses() -> list[tuple[str, str, float | None]]:
    cases = []
    for name in names("crawler-commons/"):
        entry = EXPECTED[name]
        results = [entry["expected"]] + [
            extra["result"] for extra in entry.get("also_parsed_as", [])
        ]
        for result in results:
            agent = result["robot_names"].strip("[]")
            delay_ms = result["crawl_delay"]
            if agent:
                cases.append((name, agent, None if delay_ms < 0 else delay_ms / 1000))
    return cases


@pytest.mark.parametrize(("name", "agent", "delay"), crawler_commons_parses())
def test_crawler_commons_crawl_delay(name: str, agent: str, delay: float | None) -> None:
    base = EXPECTED[name]["parsed_as"]["url"]
    policy = robots_policy(200, body(name), base, user_agent=agent)
    assert policy.outcome == "rules"
    assert policy.crawl_delay == delay


RFC9309_SIMPLE = (
    "crawler-commons/"
    "SimpleRobotRulesParserTest__testExamplesRobotsTxtRFC9309__domain.com.robots.txt"
)
RFC9309_LONGEST = RFC9309_SIMPLE + ".2"
RFC9309_MERGING = RFC9309_SIMPLE + ".3"


@pytest.mark.parametrize(
    ("name", "agent", "path", "allowed"),
    [
        # RFC 9309, 5.1
        (RFC9309_SIMPLE, "foobot", "/example/page.html", True),
        (RFC9309_SIMPLE, "foobot", "/example/allowed.gif", True),
        (RFC9309_SIMPLE, "foobot", "/example/disallowed.gif", False),
        (RFC9309_SIMPLE, "foobot", "/other", False),
        (RFC9309_SIMPLE, "barbot", "/example/page.html", False),
        (RFC9309_SIMPLE, "barbot", "/example/other.html", True),
        (RFC9309_SIMPLE, "bazbot", "/example/page.html", False),
        (RFC9309_SIMPLE, "quxbot", "/example/page.html", True),
        (RFC9309_SIMPLE, "quxbot", "/image.gif", True),
        (RFC9309_SIMPLE, "anyotherbot", "/example/page.html", False),
        (RFC9309_SIMPLE, "anyotherbot", "/publications/x", True),
        (RFC9309_SIMPLE, "anyotherbot", "/image.gif", False),
        # RFC 9309, 5.2
        (RFC9309_LONGEST, "foobot", "/example/page/", True),
        (RFC9309_LONGEST, "foobot", "/example/page/disallowed.gif", False),
        # RFC 9309, 2.2.1 (groups for the same product token are merged)
        (RFC9309_MERGING, "ExampleBot", "/foo", False),
        (RFC9309_MERGING, "ExampleBot", "/baz", False),
        (RFC9309_MERGING, "BazBot", "/baz", False),
        (RFC9309_MERGING, "BazBot", "/foo", True),
        (RFC9309_MERGING, "otherbot", "/bar", False),
        (RFC9309_MERGING, "otherbot", "/baz", True),
    ],
)
def test_rfc9309_examples(name: str, agent: str, path: str, allowed: bool) -> None:
    policy = robots_policy(200, body(name), "http://domain.com/robots.txt", user_agent=agent)
    assert policy.can_fetch("http://domain.com" + path) is allowed


@pytest.mark.parametrize("name", [n for n in names("crawler-commons/") if "UTF" in n])
def test_crawler_commons_boms_parse_rules(name: str) -> None:
    policy = robots_policy(200, body(name), "http://domain.com/robots.txt")
    assert not policy.can_fetch("http://domain.com/login.aspx")
    assert policy.can_fetch("http://domain.com/about")


# --- protego: real robots.txt files -------------------------------------------------------

# Deliberate differences from Protego (text decoded as UTF-8, values left unresolved):
# we decode UTF-16 files with a BOM, so we find their sitemaps, which Protego and Scrapy miss.
UTF16_FILES = {
    "protego/www.myvue.com.robots.txt": ["https://www.myvue.com/sitemap.xml"],
    "protego/store.usps.com.robots.txt": ["https://store.usps.com/store/siteindex.xml"],
}
# Scrapy turns an empty "Sitemap:" value into the robots.txt URL itself; we ignore it.
EMPTY_VALUE_FILES = ["protego/coolmaterial.com.robots.txt", "protego/www.reebok.com.robots.txt"]


@pytest.mark.parametrize("name", names("protego/"))
def test_protego_corpus_sitemaps(name: str) -> None:
    entry = EXPECTED[name]["expected"]
    robots_url = protego_robots_url(name)
    found = sitemap_lines(decode_robots(body(name)), robots_url)
    if "assertions" in entry:
        for assertion in entry["assertions"]:
            if assertion["op"] == "In":
                assert json.loads(assertion["left"]) in found
            elif assertion["left"] == "len(sitemaps)":
                assert len(found) == assertion["right"]
            else:
                assert found == assertion["right"]
        return
    if name in UTF16_FILES:
        assert entry[PROTEGO_SITEMAPS] == []
        assert found == UTF16_FILES[name]
        return
    protego = [urljoin(robots_url, value) for value in entry[PROTEGO_SITEMAPS]]
    # The corpus keeps the first 20 values of a long list, followed by "...".
    if protego and protego[-1].endswith("/..."):
        assert found[: len(protego) - 1] == protego[:-1]
        assert len(found) == entry["observed_protego_sitemap_count"]
    else:
        assert found == protego
    assert len(found) == entry["raw_sitemap_line_count"] - _empty_lines(entry)


def _empty_lines(entry: dict[str, Any]) -> int:
    raw = entry["raw_sitemap_lines_regex(BOM-aware decode)"]
    values = [line.split(":", 1)[1] for line in raw if ":" in line]
    return sum(1 for value in values if value.split("#")[0].strip() == "")


@pytest.mark.parametrize("name", EMPTY_VALUE_FILES)
def test_empty_sitemap_values_are_ignored_unlike_scrapy(name: str) -> None:
    entry = EXPECTED[name]["expected"]
    robots_url = protego_robots_url(name)
    assert entry[SCRAPY_SITEMAPS]
    assert set(entry[SCRAPY_SITEMAPS]) == {robots_url}
    assert sitemap_lines(decode_robots(body(name)), robots_url) == []


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("protego/cdbaby.com.robots.txt", "CR-only line endings"),
        ("protego/www.analog.com.robots.txt", "CR-only line endings"),
        ("protego/www.bseindia.com.robots.txt", "space before the colon"),
        ("protego/www.meteo.be.robots.txt", "space before the colon"),
        ("protego/www.netvibes.com.robots.txt", "space before the colon"),
    ],
)
def test_sitemaps_scrapy_misses(name: str, why: str) -> None:
    entry = EXPECTED[name]["expected"]
    assert entry[SCRAPY_SITEMAPS] == [], why
    found = sitemap_lines(decode_robots(body(name)), protego_robots_url(name))
    assert found
    assert found == entry[PROTEGO_SITEMAPS]


@pytest.mark.parametrize(
    "name",
    [
        "protego/agendaweb.org.robots.txt",
        "protego/ballotpedia.org.robots.txt",
        "protego/discovermagazine.com.robots.txt",
        "protego/epson.com.robots.txt",
    ],
)
def test_relative_values_resolved_like_scrapy(name: str) -> None:
    entry = EXPECTED[name]["expected"]
    found = sitemap_lines(decode_robots(body(name)), protego_robots_url(name))
    assert found == entry[SCRAPY_SITEMAPS]
    assert all(value.startswith("https://") for value in found)
    assert not entry[PROTEGO_SITEMAPS][0].startswith("https://")


def test_value_with_a_space_is_kept_as_written() -> None:
    found = sitemap_lines(
        decode_robots(body("protego/case.edu.robots.txt")), "https://case.edu/robots.txt"
    )
    assert found[-1] == "https://case.edu/womenintech/sitema: xml"


def test_inline_comments_and_trailing_slashes() -> None:
    found = sitemap_lines(
        decode_robots(body("protego/www.playstation.com.robots.txt")),
        "https://www.playstation.com/robots.txt",
    )
    assert found[:2] == [
        "https://www.playstation.com/es-ar/sitemap.xml",
        "https://www.playstation.com/en-au/sitemap.xml/",
    ]
    assert not any("#" in url or " " in url for url in found)


@pytest.mark.parametrize(
    "name",
    [
        "protego/103.88.218.109.robots.txt",
        "protego/alight.com.robots.txt",
        "protego/calendar.yahoo.com.robots.txt",
        "protego/www.bjtu.edu.cn.robots.txt",
    ],
)
def test_html_served_as_robots(name: str) -> None:
    policy = robots_policy(200, body(name), protego_robots_url(name))
    assert policy.outcome == "rules"
    assert policy.sitemaps == ()
    assert policy.can_fetch(protego_robots_url(name).replace("robots.txt", "some/page"))


@pytest.mark.parametrize(
    "name", ["protego/en.wikipedia.org.robots.txt", "protego/mlb.mlb.com.robots.txt"]
)
def test_utf8_bom_files(name: str) -> None:
    data = body(name)
    assert data.startswith(b"\xef\xbb\xbf")
    assert not decode_robots(data).startswith("\ufeff")


def test_wikipedia_rules() -> None:
    policy = robots_policy(
        200, body("protego/en.wikipedia.org.robots.txt"), "https://en.wikipedia.org/robots.txt"
    )
    assert policy.can_fetch("https://en.wikipedia.org/wiki/Main_Page")
    assert not policy.can_fetch("https://en.wikipedia.org/w/index.php?title=x&action=edit")


def test_latin1_file_decodes_with_replacement() -> None:
    text = decode_robots(body("protego/www.europarl.europa.eu.robots.txt"))
    assert "\ufffd" in text
    assert sitemap_lines(text, "https://www.europarl.europa.eu/robots.txt") == []


# --- advertools, Scrapy, trafilatura ------------------------------------------------------


def test_advertools() -> None:
    name = "advertools/robots.txt"
    policy = robots_policy(200, body(name), "https://advertools.readthedocs.io/robots.txt")
    assert list(policy.sitemaps) == EXPECTED[name]["expected"]["sitemaps"]
    assert not policy.can_fetch("https://advertools.readthedocs.io/dont_crawl")
    assert not policy.can_fetch("https://advertools.readthedocs.io/page.php")
    assert policy.can_fetch("https://advertools.readthedocs.io/page.php?x=1")


@pytest.mark.parametrize(
    "name",
    [
        "scrapy/test_get_sitemap_urls_from_robotstxt.robots.txt",
        "scrapy/test_sitemap_urls_from_robots.robots.txt",
        "scrapy/test_sitemap_urls_from_robots_str_compat.robots.txt",
    ],
)
def test_scrapy(name: str) -> None:
    entry = EXPECTED[name]
    [assertion] = entry["expected"]["assertions"]
    base = (
        "http://example.com"
        if 'base_url="http://example.com"' in assertion["left"]
        else ("http://www.example.com/robots.txt")
    )
    assert sitemap_lines(decode_robots(body(name)), base) == assertion["right"]


def test_scrapy_invalid_utf8_value_is_kept_with_a_replacement_character() -> None:
    # Scrapy skips the line whose value is not UTF-8; we keep it (with U+FFFD), so the audit
    # reports the broken declaration instead of hiding it.
    name = "scrapy/test_get_sitemap_urls_from_robotstxt_skips_invalid_utf8_urls.robots.txt"
    [assertion] = EXPECTED[name]["expected"]["assertions"]
    found = sitemap_lines(decode_robots(body(name)), "http://www.example.com/robots.txt")
    assert assertion["right"] == ["http://example.com/ok.xml"]
    assert found == ["http://example.com/\ufffd.xml", "http://example.com/ok.xml"]


def test_trafilatura() -> None:
    name = "trafilatura/inline_robots_lowercase_sitemap.robots.txt"
    expected = EXPECTED[name]["expected"]["extract_robots_sitemaps(base https://example.org)"]
    assert sitemap_lines(decode_robots(body(name)), "https://example.org/robots.txt") == expected
