"""Hostile URLs through the URL rules and the decisions built on them.

A listed URL, a sitemap location (from robots.txt, the home page or an index) and a redirect
target all pass the same rules before anything is requested: only an absolute http(s) URL,
without user information, on the audited origin, is ever fetched.
"""

from __future__ import annotations

import pytest

from sitemapaudit.arguments import parse_arguments
from sitemapaudit.crawl.redirects import RedirectState, next_hop
from sitemapaudit.crawl.tree import Decision, SitemapTree
from sitemapaudit.discovery import homepage_sitemaps, robots_policy
from sitemapaudit.errors import ConfigError
from sitemapaudit.urls import in_sitemap_scope, loc_problems, normalize_url, parse_origin
from tests.hostile.support import bounded, bounded_resident, fixture

ORIGIN = parse_origin("http://127.0.0.1:8080")
BASE = ORIGIN.url

# (loc, codes of the URL rules, on the audited origin)
CASES = [
    ("javascript:alert(1)", ["invalid_url"], False),
    ("JAVASCRIPT:alert(1)", ["invalid_url"], False),
    ("data:text/html;base64,PHNjcmlwdD4=", ["invalid_url"], False),
    ("file:///etc/passwd", ["invalid_url"], False),
    ("file://127.0.0.1:8080/etc/passwd", ["invalid_url"], False),
    ("ftp://127.0.0.1:8080/file", ["invalid_url"], False),
    ("mailto:someone@example.com", ["invalid_url"], False),
    ("relative/page", ["invalid_url"], False),
    ("/absolute/path", ["invalid_url"], False),
    ("//127.0.0.1:8080/protocol-relative", ["invalid_url"], False),
    ("http:/127.0.0.1:8080/one-slash", ["invalid_url"], False),
    ("http:///no-host", ["invalid_url"], False),
    ("http://user:pass@127.0.0.1:8080/", ["invalid_url"], False),
    ("http://user@127.0.0.1:8080/", ["invalid_url"], False),
    ("http://127.0.0.1:8080@evil.example/", ["invalid_url"], False),
    ("http://127.0.0.1:8080\\@evil.example/", ["invalid_url"], False),
    ("http://127.0.0.1:99999/", ["invalid_url"], False),
    ("http://127.0.0.1:8080/a%zz", ["invalid_url"], False),
    ("http://127.0.0.1:8080/a%4", ["invalid_url"], False),
    ("http://127.0.0.1:8080/%", ["invalid_url"], False),
    ("http://127.0.0.1:8080/a b", ["invalid_url"], False),
    ("http://127.0.0.1:8080/a\x00b", ["invalid_url"], False),
    ("http://127.0.0.1:8080/a\nb", ["invalid_url"], False),
    ("http://[::1/", ["invalid_url"], False),
    ("http://[not-an-ip]/", ["invalid_url"], False),
    ("http://999.1.1.1:8080/", ["invalid_url"], False),
    ("http://example.123:8080/", ["invalid_url"], False),
    ("http://[::1]:8080/", [], False),
    ("http://[::ffff:127.0.0.1]:8080/", [], False),
    ("http://0x7f.0.0.2:8080/", [], False),
    ("http://%31%32%37.0.0.1:8080/", [], False),
    ("http://evil.example#@127.0.0.1:8080/", [], False),
    ("http://bücher.example/", [], False),
    ("http://xn--bcher-kva.example/", [], False),
    ("https://127.0.0.1:8080/other-scheme-same-host", [], True),
    ("HTTP://127.0.0.1:8080/upper", [], True),
    ("http://127.0.0.1:8080/ok%41", [], True),
    ("http://127.0.0.1:8080#@evil.example/", [], True),
    ("http://127.0.0.1.:8080/trailing-dot", [], True),
    ("http://2130706433:8080/one-number", [], True),
    ("http://0x7f.0.0.1:8080/hexadecimal", [], True),
    ("http://0177.0.0.1:8080/octal", [], True),
    ("http://127.1:8080/two-parts", [], True),
    ("http://127.0.0.1:08080/leading-zero-port", [], True),
    ("http://127.0.0.1:8080/bücher", [], True),
    ("http://127.0.0.1:8080/" + "x" * 3000, ["url_too_long"], True),
    ("http://127.0.0.1:8080/\u202e", [], True),
]


@pytest.mark.parametrize(("loc", "codes", "owned"), CASES)
def test_url_rules_on_hostile_locations(loc: str, codes: list[str], owned: bool) -> None:
    assert loc_problems(loc) == codes
    if not codes or codes == ["url_too_long"]:
        assert ORIGIN.owns(loc) is owned
    tree = SitemapTree(ORIGIN, max_depth=5, max_sitemaps=100, max_url_length=2048)
    decision = tree.consider(loc, depth=0)
    if codes:
        assert decision is Decision.INVALID
    else:
        assert decision is (Decision.FETCH if owned else Decision.OFF_HOST)


REDIRECT_CASES = CASES


@pytest.mark.parametrize(("target", "codes", "owned"), REDIRECT_CASES)
def test_redirects_go_only_to_valid_urls_on_the_origin(
    target: str, codes: list[str], owned: bool
) -> None:
    state = RedirectState()
    followed = next_hop(
        state, url=f"{BASE}/start", status=302, location=target, origin=ORIGIN, max_redirects=10
    )
    if followed is not None:
        assert loc_problems(followed, max_length=8192) == []
        assert ORIGIN.owns(followed)
    else:
        assert state.stopped is not None or state.loop


def test_file_values_in_robots_txt_and_home_pages_are_refused_before_any_request() -> None:
    robots = fixture("robots_hostile.txt", target="file:///tmp/x", host="127.0.0.1:8080")
    policy = robots_policy(200, robots, f"{BASE}/robots.txt")
    page = b'<link rel="sitemap" href="file:///etc/passwd"><link rel="sitemap" href="ftp://x/">'
    found = [url for url, _via in homepage_sitemaps(page, f"{BASE}/", ["<file:///x>; rel=sitemap"])]
    tree = SitemapTree(ORIGIN, max_depth=5, max_sitemaps=100, max_url_length=2048)
    decisions = {url: tree.consider(url, depth=0) for url in [*policy.sitemaps, *found]}
    fetched = [url for url, decision in decisions.items() if decision is Decision.FETCH]
    assert fetched == [f"{BASE}/sitemap.xml"]
    assert decisions["file:///etc/passwd"] is Decision.INVALID
    assert decisions["file:///tmp/x"] is Decision.INVALID
    assert decisions["file:///x"] is Decision.INVALID
    assert decisions["http://other.invalid/sitemap.xml"] is Decision.OFF_HOST


def test_one_megabyte_urls_are_judged_quickly() -> None:
    huge = f"{BASE}/a%41/" + "x" * 1_048_576
    with bounded(seconds=2, megabytes=24):
        assert loc_problems(huge) == ["url_too_long"]
        assert ORIGIN.owns(huge)
        assert in_sitemap_scope(huge, f"{BASE}/sitemap.xml")
        normalize_url(huge)
        SitemapTree(ORIGIN, max_depth=5, max_sitemaps=10, max_url_length=2048).consider(
            huge, depth=0
        )


def test_sitemap_fan_out_is_capped_without_remembering_the_rest() -> None:
    tree = SitemapTree(ORIGIN, max_depth=1, max_sitemaps=20, max_url_length=2048)
    with bounded_resident(seconds=10, megabytes=16):
        decisions = [tree.consider(f"{BASE}/s/{i}.xml", depth=1) for i in range(50_000)]
    assert decisions.count(Decision.FETCH) == 20
    assert decisions.count(Decision.CAPPED) == 50_000 - 20
    assert len(tree) == 20
    assert tree.consider(f"{BASE}/s/0.xml", depth=1) is Decision.SEEN
    assert tree.consider(f"{BASE}/s/0.xml#again", depth=1) is Decision.SEEN
    assert tree.consider(f"{BASE}/deeper.xml", depth=2) is Decision.TOO_DEEP


@pytest.mark.parametrize(
    "value", ["file:///etc/passwd", "ftp://127.0.0.1/s.xml", "/etc/passwd", "http://u:p@h/s.xml"]
)
def test_a_file_sitemap_argument_stops_the_command_before_any_request(value: str) -> None:
    with pytest.raises(ConfigError, match="sitemap"):
        parse_arguments(BASE, value, None, None)
