"""Tests of sitemapaudit.urls: origins, loc rules, scope, normalisation and resolution."""

from __future__ import annotations

import random
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit import urls
from sitemapaudit.errors import ConfigError
from sitemapaudit.urls import (
    Origin,
    in_sitemap_scope,
    invalid_url_reason,
    loc_problems,
    normalize_url,
    origin_of,
    parse_origin,
    request_url,
    resolve,
    resolve_href,
    same_url,
    scope_problem,
    url_origin,
)

# --- parse_origin -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("example.com", Origin("https", "example.com", None)),
        ("sub.example.co.uk", Origin("https", "sub.example.co.uk", None)),
        ("localhost", Origin("https", "localhost", None)),
        ("127.0.0.1", Origin("https", "127.0.0.1", None)),
        ("bücher.de", Origin("https", "xn--bcher-kva.de", None)),
        ("BÜCHER.de", Origin("https", "xn--bcher-kva.de", None)),
        ("Example.COM", Origin("https", "example.com", None)),
        ("example.com:8080", Origin("https", "example.com", 8080)),
        ("localhost:8080", Origin("https", "localhost", 8080)),
        ("intranet:8080", Origin("https", "intranet", 8080)),
        ("127.0.0.1:8080", Origin("https", "127.0.0.1", 8080)),
        ("[::1]", Origin("https", "::1", None)),
        ("[::1]:8080", Origin("https", "::1", 8080)),
        ("https://example.com", Origin("https", "example.com", None)),
        ("https://example.com/", Origin("https", "example.com", None)),
        ("http://example.com", Origin("http", "example.com", None)),
        ("HTTP://Example.com/", Origin("http", "example.com", None)),
        ("http://127.0.0.1:8080", Origin("http", "127.0.0.1", 8080)),
        ("http://127.0.0.1:8080/", Origin("http", "127.0.0.1", 8080)),
        ("https://example.com:443", Origin("https", "example.com", None)),
        ("http://example.com:80/", Origin("http", "example.com", None)),
        ("https://example.com:80", Origin("https", "example.com", 80)),
        ("https://bücher.de", Origin("https", "xn--bcher-kva.de", None)),
        ("example.com.", Origin("https", "example.com", None)),
        ("a_b.example.com", Origin("https", "a_b.example.com", None)),
    ],
)
def test_parse_origin_accepts(value: str, expected: Origin) -> None:
    assert parse_origin(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "example.com/foo",
        "https://example.com/foo",
        "example.com?x=1",
        "https://example.com/?x=1",
        "example.com#top",
        "user@example.com",
        "https://user:pw@example.com",
        "ftp://example.com",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "mailto:someone@example.com",
        "exa mple.com",
        " example.com",
        "example.com ",
        "example.com\n",
        "example.com:99999",
        "example.com:0",
        "example.com:abc",
        "example.com:",
        "http://",
        "https://",
        "http:///",
        "//example.com",
        "-bad.com",
        "exa..mple.com",
        "999.1.1.1",
        "[::1",
        "[not-an-ip]",
        "example.com\\foo",
        "ex<ample.com",
    ],
)
def test_parse_origin_rejects_with_named_argument_and_quoted_value(value: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        parse_origin(value)
    message = str(excinfo.value)
    assert "domain" in message
    assert repr(value) in message


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("http:///x", "no host"),
        ("https://?q", "no host"),
        ("http://#top", "no host"),
        ("http:///", "no host"),
        ("http://e.com/x", "a path is not allowed"),
    ],
)
def test_parse_origin_says_what_is_missing(value: str, reason: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        parse_origin(value)
    assert str(excinfo.value).startswith(f"invalid value for domain: {value!r} ({reason});")


@pytest.mark.parametrize(
    ("loc", "reason"),
    [
        (
            "http://e.com/c d",
            "it contains a space at character 15, which a URL writes percent-encoded (%20)",
        ),
        ("http://e.com/\tx", "it contains the character '\\t' at character 14"),
        ("http://e.com/%zz", "the '%' at character 14 is not followed by two hex digits"),
        ("/a", "it is relative: it has no scheme (http:// or https://)"),
        # Without a scheme, or with another one, encoding its spaces would not make it a URL.
        ("# comment", "it is relative: it has no scheme (http:// or https://)"),
        ("www.e.com/a b", "it is relative: it has no scheme (http:// or https://)"),
        ("e.com/%zz", "it is relative: it has no scheme (http:// or https://)"),
        ("ftp://e.com/x", "its scheme 'ftp' is not http or https"),
        ("mailto:a b", "its scheme 'mailto' is not http or https"),
        # A space in or before the scheme is what keeps it from being one.
        (" https://e.com/", "it contains a space at character 1"),
        ("http ://e.com/", "it contains a space at character 5"),
        ("ht tp://e.com/", "it contains a space at character 3"),
        ("http:/e.com", "'//' and a host do not follow http:"),
        ("https://u@e.com/", "it has user information before its host"),
        ("http://e.com:99999/", "its port '99999' is not a number up to 65535"),
        ("http:///x", "it has no host"),
        ("http://[zz]/", "its host '[zz]' is not a valid host name or IP address"),
    ],
)
def test_invalid_url_reason_names_the_first_broken_rule(loc: str, reason: str) -> None:
    assert loc_problems(loc) == ["invalid_url"]
    assert invalid_url_reason(loc).startswith(reason)


def test_origin_url() -> None:
    assert parse_origin("example.com").url == "https://example.com"
    assert parse_origin("http://127.0.0.1:8080").url == "http://127.0.0.1:8080"
    assert parse_origin("[::1]:8080").url == "https://[::1]:8080"
    assert parse_origin("bücher.de").url == "https://xn--bcher-kva.de"


@pytest.mark.parametrize(
    ("url", "owned"),
    [
        ("https://example.com/", True),
        ("https://example.com", True),
        ("http://example.com/x", True),
        ("https://EXAMPLE.com/x", True),
        ("https://example.com./x", True),
        ("https://example.com:443/x", True),
        ("http://example.com:80/x", True),
        ("https://example.com:8443/x", False),
        ("http://example.com:443/x", False),
        ("https://www.example.com/", False),
        ("https://example.com.evil.test/", False),
        ("https://evil.test/https://example.com/", False),
        ("https://example.com@evil.test/", False),
        ("ftp://example.com/", False),
        ("/relative", False),
        ("", False),
        ("http://[::1/", False),
        ("https://example.com:99999/", False),
    ],
)
def test_origin_owns(url: str, owned: bool) -> None:
    assert parse_origin("example.com").owns(url) is owned


def test_origin_owns_idn_and_ports() -> None:
    idn = parse_origin("bücher.de")
    assert idn.owns("https://bücher.de/a")
    assert idn.owns("https://BÜCHER.DE/a")
    assert idn.owns("http://xn--bcher-kva.de/a")
    local = parse_origin("http://127.0.0.1:8080")
    assert local.owns("http://127.0.0.1:8080/a")
    assert local.owns("https://127.0.0.1:8080/a")
    assert not local.owns("http://127.0.0.1/a")
    assert not local.owns("http://localhost:8080/a")
    ipv6 = parse_origin("[::1]:8080")
    assert ipv6.owns("http://[0:0::1]:8080/")
    assert not ipv6.owns("http://[::2]:8080/")


# --- loc_problems -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "loc",
    [
        "https://example.com/",
        "http://example.com",
        "HTTPS://EXAMPLE.COM/Page",
        "https://example.com/a?b=1&c=2#frag",
        "https://example.com:8080/a",
        "https://example.com:/a",
        "http://[::1]/",
        "http://[2001:db8::1]:8080/x",
        "http://127.0.0.1/",
        "https://bücher.de/straße",
        "https://xn--bcher-kva.de/",
        "https://example.com/%E2%82%AC",
        "https://example.com/caf%c3%a9",
        "https://a_b.example.com/",
        "https://example.com/path;params?q=(x)&y=*",
    ],
)
def test_valid_locs(loc: str) -> None:
    assert loc_problems(loc) == []


@pytest.mark.parametrize(
    "loc",
    [
        "",
        "/relative/path",
        "relative/path",
        "example.com/page",
        "//example.com/protocol-relative",
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "ftp://example.com/file",
        "mailto:someone@example.com",
        "http:example.com",
        "http:/example.com",
        "http://",
        "http:///path",
        "http://:80/",
        "https://example.com/a b",
        " https://example.com/",
        "https://example.com/\n",
        "https://example.com/\t",
        "https://example.com/\x00",
        "https://example.com/\x7f",
        "https://example.com/\u00a0",
        # A zone ID: neither RFC 3986's IP-literal nor browsers take one.
        "http://[fe80::1%25eth0]/zone",
        "https://example.com:99999/",
        "https://example.com:8a/",
        "https://example.com:-1/",
        "https://user@example.com/",
        "https://user:pass@example.com/",
        "https://example.com/%zz",
        "https://example.com/%",
        "https://example.com/%4",
        "https://example.com/?q=%G1",
        "http://[::1/",
        "http://[zz]/",
        "http://[::1]x/",
        "http://::1/",
        "http://999.1.1.1/",
        "http://ex<ample.com/",
        "http://exa\\mple.com/",
        "http://ex<ämple.com/",
        "http://ä..com/",
        "http://./",
    ],
)
def test_invalid_locs(loc: str) -> None:
    assert loc_problems(loc) == ["invalid_url"]


def test_url_too_long() -> None:
    base = "https://example.com/"
    assert loc_problems(base + "a" * (2048 - len(base))) == []
    assert loc_problems(base + "a" * (2049 - len(base))) == ["url_too_long"]
    assert loc_problems(base + "a" * 3000, max_length=5000) == []
    assert loc_problems("javascript:" + "a" * 3000) == ["invalid_url", "url_too_long"]


@settings(max_examples=300, database=None)
@given(st.text())
def test_loc_problems_never_raises(text: str) -> None:
    problems = loc_problems(text)
    assert set(problems) <= {"invalid_url", "url_too_long"}


@settings(max_examples=300, database=None)
@given(st.from_regex(r"\A(https?|ftp|javascript|data)://[^/]{0,20}(/[^#]{0,20})?(#.{0,5})?\Z"))
def test_loc_problems_never_raises_on_url_like_text(text: str) -> None:
    loc_problems(text)


# --- in_sitemap_scope ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "sitemap", "expected"),
    [
        ("https://ex.com/a/page", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/a/", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/a/b/c", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/a", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/b/page", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/ab/page", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/anything", "https://ex.com/sitemap.xml", True),
        ("https://ex.com", "https://ex.com/sitemap.xml", True),
        ("https://ex.com/x", "https://ex.com/sitemap.php?page=2", True),
        ("http://ex.com/a/page", "https://ex.com/a/sitemap.xml", False),
        ("https://www.ex.com/a/page", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com:8443/a/page", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com:443/a/page", "https://ex.com/a/sitemap.xml", True),
        ("https://EX.com/a/page", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/%7ea/page", "https://ex.com/%7Ea/sitemap.xml", True),
        ("https://ex.com/A/page", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/a/../escape", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/a/%2E%2E/escape", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/a/./page", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/a/b/../page", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/a/..page", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/~a/page", "https://ex.com/%7Ea/sitemap.xml", True),
        # A character a browser percent-encodes is its escape (as UTF-8), either way round.
        ("https://ex.com/café/a", "https://ex.com/caf%C3%A9/sitemap.xml", True),
        ("https://ex.com/café/a", "https://ex.com/caf%c3%a9/sitemap.xml", True),
        ("https://ex.com/caf%C3%A9/a", "https://ex.com/café/sitemap.xml", True),
        ("https://ex.com/a b/x", "https://ex.com/a%20b/sitemap.xml", True),
        ("https://ex.com/cafe/a", "https://ex.com/caf%C3%A9/sitemap.xml", False),
        ("not a url", "https://ex.com/sitemap.xml", False),
        ("https://ex.com/x", "garbage", False),
        ("http://[::1/", "https://ex.com/sitemap.xml", False),
        # A backslash is a slash, as browsers request the URL (and robots.txt reads it).
        ("https://ex.com/a\\page", "https://ex.com/a/sitemap.xml", True),
        ("https://ex.com/a/..\\escape", "https://ex.com/a/sitemap.xml", False),
        ("https://ex.com/a/b\\..\\page", "https://ex.com/a/sitemap.xml", True),
    ],
)
def test_in_sitemap_scope(url: str, sitemap: str, expected: bool) -> None:
    assert in_sitemap_scope(url, sitemap) is expected


@pytest.mark.parametrize(
    ("url", "sitemap", "expected"),
    [
        ("https://ex.com/a/page", "https://ex.com/a/sitemap.xml", None),
        (
            "https://ex.com/b/page",
            "https://ex.com/a/sitemap.xml",
            "outside the directory of https://ex.com/a/sitemap.xml",
        ),
        (
            "http://ex.com/a/page",
            "https://ex.com/a/sitemap.xml",
            "uses http: while its sitemap https://ex.com/a/sitemap.xml uses https: "
            "(a sitemap lists URLs of its own protocol)",
        ),
        (
            "https://ex.com:8443/a/page",
            "https://ex.com/a/sitemap.xml",
            "on another port than its sitemap https://ex.com/a/sitemap.xml",
        ),
        ("https://ex.com/page", "https://cdn.ex.net/sitemap.xml", None),
    ],
)
def test_scope_problem_says_why(url: str, sitemap: str, expected: str | None) -> None:
    assert scope_problem(url, sitemap) == expected


# --- normalize_url / same_url -------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM", "http://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com/a#frag", "https://example.com/a"),
        ("https://example.com/a%2fb%c3%a9", "https://example.com/a%2Fb%C3%A9"),
        ("https://example.com/?b=2&a=1", "https://example.com/?b=2&a=1"),
        ("https://example.com/Path/Case", "https://example.com/Path/Case"),
        ("https://bücher.de/x", "https://xn--bcher-kva.de/x"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("  https://example.com/  ", "https://example.com/"),
        ("https://example.com/./sitemap.xml", "https://example.com/sitemap.xml"),
        ("https://example.com/a/../b/./c", "https://example.com/b/c"),
        ("https://example.com/.well-known/x", "https://example.com/.well-known/x"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_same_url() -> None:
    assert same_url("https://Example.com", "https://example.com/")
    assert same_url("https://example.com:443/a#x", "https://example.com/a")
    assert same_url("https://example.com/%7e", "https://example.com/%7E")
    assert not same_url("https://example.com/a?x=1&y=2", "https://example.com/a?y=2&x=1")
    assert not same_url("http://example.com/", "https://example.com/")
    assert not same_url("https://example.com/a", "https://example.com/a/")
    assert not same_url("https://example.com/A", "https://example.com/a")


@settings(max_examples=300, database=None)
@given(st.text())
def test_normalize_url_never_raises(text: str) -> None:
    normalize_url(text)
    same_url(text, text)
    in_sitemap_scope(text, "https://example.com/sitemap.xml")
    resolve("https://example.com/", text)
    parse_origin_never_raises_other_than_config_error(text)


def parse_origin_never_raises_other_than_config_error(text: str) -> None:
    try:
        origin = parse_origin(text)
    except ConfigError:
        return
    assert origin.owns(origin.url + "/")


# --- resolve ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "value", "expected"),
    [
        ("https://ex.com/a/b", "https://other.com/x", "https://other.com/x"),
        ("https://ex.com/a/b", "/x", "https://ex.com/x"),
        ("https://ex.com/a/b", "x", "https://ex.com/a/x"),
        ("https://ex.com/a/b", "../x", "https://ex.com/x"),
        ("https://ex.com/a/b", "//cdn.ex.com/x", "https://cdn.ex.com/x"),
        ("http://ex.com/robots.txt", "//cdn.ex.com/x", "http://cdn.ex.com/x"),
        ("https://ex.com/a/b", "?q=1", "https://ex.com/a/b?q=1"),
        ("https://ex.com/a/b", "  /x  ", "https://ex.com/x"),
        ("https://ex.com/a/b", "/x\n/y", "https://ex.com/x/y"),
        ("https://ex.com/a/b", "", None),
        ("https://ex.com/a/b", "   ", None),
        ("https://ex.com/a/b", "\n\t", None),
        # A backslash before the query is a slash, as browsers read an http(s) URL.
        ("https://ex.com/bs1", "\\bs1", "https://ex.com/bs1"),
        ("https://ex.com/d/bs2", "..\\d\\bs2", "https://ex.com/d/bs2"),
        ("https://ex.com/bs3", "//ex.com\\bs3", "https://ex.com/bs3"),
        ("https://ex.com/a", "HTTPS://ex.com\\x\\y?q=a\\b#c\\d", "https://ex.com/x/y?q=a\\b#c\\d"),
        ("https://ex.com/a", "mailto:a\\b@ex.com", "mailto:a\\b@ex.com"),
    ],
)
def test_resolve(base: str, value: str, expected: str | None) -> None:
    assert resolve(base, value) == expected


def test_resolve_keeps_unjoinable_values() -> None:
    assert resolve("https://ex.com/", "http://[::1/x") == "http://[::1/x"


_JOIN_BASES = [
    "http://h.com/a/b?q#f",
    "https://h.com/",
    "http://[::1]/x",
    "ftp://x/",
    "http://h.com",
    "https://u@h.com:8080/a;p?q",
]
_JOIN_PIECES = [
    *"ab/?#;[]:@.%&=+-_~!$'()*,\\^`{}|\"<>",
    *["//", "..", ".", "é", " ", "\x7f", "A", "0", "?#", "#?", "http://", "HTTP://"],
]


def test_resolve_skips_only_joins_that_change_nothing() -> None:
    rng = random.Random(7)
    starts = ["http://", "https://", "http://a", "https://h.com", "HTTP://x", "http:///"]
    values = [
        rng.choice(starts) + "".join(rng.choices(_JOIN_PIECES, k=rng.randint(0, 12)))
        for _ in range(4_000)
    ]
    pairs = [(base, value) for value in values for base in _JOIN_BASES]
    with mock.patch.object(urls, "_urljoin_keeps", return_value=False):
        joined = [resolve(base, value) for base, value in pairs]
    assert [resolve(base, value) for base, value in pairs] == joined
    assert sum(urls._urljoin_keeps(value) for value in values) > 300


@pytest.mark.parametrize(
    ("value", "joined"),
    [
        ("http://h.com/a?", "http://h.com/a"),
        ("http://h.com/a#", "http://h.com/a"),
        ("http://h.com/a?#f", "http://h.com/a#f"),
        ("http://h.com/a;", "http://h.com/a"),
        ("HTTP://h.com/a", "http://h.com/a"),
        ("http:///a", "http://ex.com/a"),
    ],
)
def test_resolve_joins_urls_that_urljoin_changes(value: str, joined: str) -> None:
    assert resolve("http://ex.com/b", value) == joined


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.example.com/", "https://www.example.com"),
        ("https://WWW.Example.com:443/a?b", "https://www.example.com"),
        ("http://127.0.0.1:8080/robots.txt", "http://127.0.0.1:8080"),
        ("http://user@example.com:80/", "http://example.com"),
        ("https://bücher.de/", "https://xn--bcher-kva.de"),
        ("not a url", "not a url"),
    ],
)
def test_origin_of_gives_what_the_domain_argument_takes(url: str, expected: str) -> None:
    assert origin_of(url) == expected
    if expected != url:
        assert parse_origin(expected).url == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://h/c/caf\u00e9", "http://h/c/caf%C3%A9"),
        ("http://h/c/caf\u00e9", "http://h/c/caf%c3%a9"),
        ("http://h/%7Euser", "http://h/~user"),
        ("http://h/a b?q=\u00e9 x", "http://h/a%20b?q=%C3%A9%20x"),
        ("http://h/%41", "http://h/A"),
    ],
)
def test_urls_a_browser_would_request_alike_are_the_same(a: str, b: str) -> None:
    assert same_url(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("http://h/%2F", "http://h//"), ("http://h/a?x=1&y=2", "http://h/a?y=2&x=1")],
)
def test_reserved_escapes_and_query_order_still_differ(a: str, b: str) -> None:
    assert not same_url(a, b)


def test_resolve_href_encodes_as_a_browser_and_resolve_keeps_as_written() -> None:
    assert resolve_href("http://h/a/b", "/c/caf\u00e9 x?q=\u00e9#f g") == (
        "http://h/c/caf%C3%A9%20x?q=%C3%A9#f%20g"
    )
    assert resolve_href("http://h/a/b", "/plain") == "http://h/plain"
    assert resolve("http://h/robots.txt", "/sitema: xml") == "http://h/sitema: xml"


def test_resolve_href_keeps_a_value_that_is_no_url_as_written() -> None:
    # A page's <base href="http://[é"> or link: no exception (it would stop the audit).
    assert resolve_href("http://e.com/", "http://[é") == "http://[é"


@given(st.text(max_size=60))
@settings(max_examples=300, database=None)
def test_invalid_url_reason_never_raises(loc: str) -> None:
    assert invalid_url_reason(loc)


# --- hosts written as numbers and with a trailing dot ---------------------------------------

# Spellings of 127.0.0.1 that the WHATWG URL Standard's host parser (browsers, Google) reads as
# that address: fewer parts, hexadecimal, octal, one 32-bit number, a trailing dot, or
# full-width digits that IDNA maps to ASCII ones.
IPV4_SPELLINGS = [
    "127.1",
    "127.0.1",
    "0x7f000001",
    "0X7F.1",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "127.000.000.001",
    "2130706433",
    "127.0.0.1.",
    "127.1.",
    "\uff11\uff12\uff17.0.0.1",
]


@pytest.mark.parametrize("host", IPV4_SPELLINGS)
def test_an_ipv4_address_written_another_way_is_that_address(host: str) -> None:
    url = f"http://{host}:8080/a/page"
    dotted = "http://127.0.0.1:8080/a/page"
    assert loc_problems(url) == []
    assert parse_origin("http://127.0.0.1:8080").owns(url)
    assert url_origin(url) == Origin("http", "127.0.0.1", 8080)
    assert parse_origin(f"http://{host}:8080") == Origin("http", "127.0.0.1", 8080)
    assert in_sitemap_scope(url, "http://127.0.0.1:8080/a/sitemap.xml")
    assert in_sitemap_scope(dotted, f"http://{host}:8080/a/sitemap.xml")
    assert scope_problem(url, "http://127.0.0.1:8080/b/sitemap.xml") == (
        "outside the directory of http://127.0.0.1:8080/b/sitemap.xml"
    )
    assert normalize_url(url) == dotted
    assert same_url(url, dotted)
    assert request_url(url) == dotted
    assert request_url(f"http://{host}:8080/a?q=1#top") == "http://127.0.0.1:8080/a?q=1#top"


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0", "0.0.0.0"),
        ("0x", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("4294967295", "255.255.255.255"),
        ("0xffffffff", "255.255.255.255"),
        ("017700000001", "127.0.0.1"),
        ("1.2.3.4", "1.2.3.4"),
    ],
)
def test_ipv4_numbers_are_read_as_the_url_standard_reads_them(host: str, address: str) -> None:
    assert normalize_url(f"http://{host}/") == f"http://{address}/"
    assert parse_origin(f"http://{host}") == Origin("http", address, None)


@pytest.mark.parametrize(
    "host",
    [
        "999.1.1.1",
        "256.0.0.1",
        "1.2.3.4.5",
        "4294967296",
        "0x100000000",
        "1.2.65536",
        "08.0.0.1",
        "0x7g.0.0.1",
        "example.123",
        "example.0x1",
        "1..1",
        "127.0.0.1..1",
    ],
)
def test_a_host_that_ends_in_a_number_but_is_no_ipv4_address_is_invalid(host: str) -> None:
    url = f"http://{host}/a"
    assert loc_problems(url) == ["invalid_url"]
    assert invalid_url_reason(url) == f"its host {host!r} is not a valid host name or IP address"
    assert not parse_origin("http://127.0.0.1").owns(url)
    assert url_origin(url) is None
    assert normalize_url(url) == url
    assert request_url(url) == url
    with pytest.raises(ConfigError):
        parse_origin(f"http://{host}")


@pytest.mark.parametrize(
    "host", ["example.com", "example.1a", "1.2.3.4a", "0x7f.example", "a1.b2", "[::1]"]
)
def test_a_host_that_does_not_end_in_a_number_is_a_name(host: str) -> None:
    url = f"http://{host}/a"
    assert loc_problems(url) == []
    assert normalize_url(url) == url
    assert request_url(url) == url


def test_a_name_with_a_trailing_dot_is_on_the_host_but_another_url() -> None:
    # The URL Standard keeps the dot of a name ("example.com." is another host string, and
    # browsers request it as written); the audit counts it on the audited host and in scope,
    # but compares it as another URL (a canonical) and requests it as written.
    url = "https://Example.com./a/page"
    assert loc_problems(url) == []
    assert parse_origin("example.com").owns(url)
    assert in_sitemap_scope(url, "https://example.com/a/sitemap.xml")
    assert normalize_url(url) == "https://example.com./a/page"
    assert not same_url(url, "https://example.com/a/page")
    assert request_url(url) == url
