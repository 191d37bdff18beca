"""Tests of sitemapaudit.discovery.robots: decoding, Sitemap lines and the crawl policy."""

from __future__ import annotations

import dataclasses
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.discovery.robots import (
    ROBOTS_MAX_BYTES,
    RobotsPolicy,
    decode_robots,
    robots_policy,
    sitemap_lines,
)

ROBOTS = "https://example.com/robots.txt"


# --- decode_robots ------------------------------------------------------------------------


def test_decode_plain_utf8() -> None:
    assert (
        decode_robots("User-agent: *\nDisallow: /é\n".encode()) == "User-agent: *\nDisallow: /é\n"
    )


def test_decode_strips_utf8_bom() -> None:
    assert decode_robots(b"\xef\xbb\xbfSitemap: /s.xml") == "Sitemap: /s.xml"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_decode_utf16_with_bom(codec: str) -> None:
    text = "User-agent: *\r\nSitemap: https://example.com/ü.xml\r\n"
    bom = b"\xff\xfe" if codec.endswith("le") else b"\xfe\xff"
    assert decode_robots(bom + text.encode(codec)) == text


def test_decode_replaces_invalid_bytes() -> None:
    assert decode_robots(b"Disallow: /caf\xe9\n") == "Disallow: /caf\ufffd\n"


def test_decode_odd_length_utf16() -> None:
    assert decode_robots(b"\xff\xfeS\x00i\x00t") == "Si\ufffd"


@settings(max_examples=300, database=None)
@given(st.binary())
def test_decode_never_raises(body: bytes) -> None:
    assert isinstance(decode_robots(body), str)


# --- sitemap_lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Sitemap: https://example.com/s.xml",
        "sitemap: https://example.com/s.xml",
        "SITEMAP: https://example.com/s.xml",
        "SiteMap: https://example.com/s.xml",
        "Sitemap : https://example.com/s.xml",
        "Sitemap\t:\thttps://example.com/s.xml",
        "Sitemap:https://example.com/s.xml",
        "    Sitemap:   https://example.com/s.xml   ",
        "Sitemap: https://example.com/s.xml # the main one",
        "Sitemap: https://example.com/s.xml#fragment-is-a-comment",
        "\ufeffSitemap: https://example.com/s.xml",
    ],
)
def test_sitemap_line_forms(line: str) -> None:
    assert sitemap_lines(f"User-agent: *\n{line}\nDisallow: /x\n", ROBOTS) == [
        "https://example.com/s.xml"
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings(newline: str) -> None:
    text = newline.join(
        ["User-agent: *", "Sitemap: https://example.com/a.xml", "Disallow: /", "Sitemap: /b.xml"]
    )
    assert sitemap_lines(text, ROBOTS) == ["https://example.com/a.xml", "https://example.com/b.xml"]


def test_mixed_line_endings() -> None:
    text = "Sitemap: /a.xml\rSitemap: /b.xml\r\nSitemap: /c.xml\nSitemap: /d.xml"
    assert sitemap_lines(text, ROBOTS) == [f"https://example.com/{n}.xml" for n in "abcd"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/sitemap.xml", "https://example.com/sitemap.xml"),
        ("sitemap.xml", "https://example.com/sitemap.xml"),
        ("//cdn.example.com/sitemap.xml", "https://cdn.example.com/sitemap.xml"),
        ("https://other.example/sitemap.xml", "https://other.example/sitemap.xml"),
        ("HTTP://example.com/UPPER.xml", "HTTP://example.com/UPPER.xml"),
    ],
)
def test_values_are_resolved_against_the_robots_url(value: str, expected: str) -> None:
    assert sitemap_lines(f"Sitemap: {value}", ROBOTS) == [expected]


def test_relative_value_against_an_http_robots_url() -> None:
    assert sitemap_lines("Sitemap: //cdn.example.com/s.xml", "http://example.com/robots.txt") == [
        "http://cdn.example.com/s.xml"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sitemap https://example.com/no-colon.xml", "https://example.com/no-colon.xml"),
        ("Sitemap /relative.xml # comment", "https://example.com/relative.xml"),
        ("Sitemaps: https://example.com/plural.xml", "https://example.com/plural.xml"),
        ("Site-map: https://example.com/dashed.xml", "https://example.com/dashed.xml"),
    ],
)
def test_the_spellings_google_reads(text: str, expected: str) -> None:
    assert sitemap_lines(text, ROBOTS) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Sitemap:",
        "Sitemap:   ",
        "Sitemap: # nothing here",
        "# Sitemap: https://example.com/commented.xml",
        "Sitemap https://example.com/a.xml https://example.com/b.xml",
        "https://example.com/bare-url.xml",
        "Disallow: /sitemap: /x",
        "X-Sitemap: https://example.com/x.xml",
    ],
)
def test_lines_that_declare_nothing(text: str) -> None:
    assert sitemap_lines(text, ROBOTS) == []


def test_empty_sitemap_value_is_not_the_robots_url() -> None:
    text = "Sitemap:\r\nhttps://example.com/value-on-the-next-line.xml\r\n"
    assert sitemap_lines(text, ROBOTS) == []


def test_duplicates_removed_keeping_first_order() -> None:
    text = "\n".join(
        [
            "Sitemap: https://example.com/b.xml",
            "sitemap: https://example.com/a.xml",
            "Sitemap: /b.xml",
            "SITEMAP: https://example.com/a.xml",
            "Sitemap: https://example.com/c.xml",
        ]
    )
    assert sitemap_lines(text, ROBOTS) == [
        "https://example.com/b.xml",
        "https://example.com/a.xml",
        "https://example.com/c.xml",
    ]


def test_spellings_of_one_url_are_one_sitemap() -> None:
    text = "\n".join(
        [
            "Sitemap: https://example.com/a.xml",
            "Sitemap: https://example.com/a.xml?",
            "Sitemap: https://example.com/./a.xml",
            "Sitemap: HTTPS://Example.com:443/a.xml#top",
            "Sitemap: https://example.com/b.xml",
        ]
    )
    assert sitemap_lines(text, ROBOTS) == [
        "https://example.com/a.xml",
        "https://example.com/b.xml",
    ]


def test_values_are_not_validated() -> None:
    text = "Sitemap: file:///etc/passwd\nSitemap: https://example.com/a b.xml"
    assert sitemap_lines(text, ROBOTS) == ["file:///etc/passwd", "https://example.com/a b.xml"]


def test_sitemaps_anywhere_in_the_file() -> None:
    text = (
        "Sitemap: /first.xml\nUser-agent: a\nDisallow: /\nSitemap: /second.xml\n\n"
        "User-agent: *\nAllow: /\nSitemap: /third.xml"
    )
    assert [url.rsplit("/", 1)[1] for url in sitemap_lines(text, ROBOTS)] == [
        "first.xml",
        "second.xml",
        "third.xml",
    ]


@settings(max_examples=500, database=None)
@given(st.text(), st.sampled_from([ROBOTS, "http://[::1/robots.txt", "", "example.com"]))
def test_sitemap_lines_never_raises(text: str, base: str) -> None:
    for url in sitemap_lines(text, base):
        assert url
        assert url.strip() == url


@settings(max_examples=300, database=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Sitemap",
                "sitemap",
                " ",
                ":",
                "\r",
                "\n",
                "#",
                "//",
                "/x",
                "http://[",
                "\ufeff",
                "https://example.com/s.xml",
                "\t",
                "\x00",
            ]
        )
    )
)
def test_sitemap_lines_never_raises_on_robots_like_text(parts: list[str]) -> None:
    sitemap_lines("".join(parts), ROBOTS)


# --- robots_policy ------------------------------------------------------------------------

RULES = b"""\
User-agent: *
Disallow: /private/
Crawl-delay: 5
Sitemap: /sitemap.xml

User-agent: Googlebot
Disallow: /no-google/
Allow: /no-google/but-this/
Crawl-delay: 2
"""


def test_rules_outcome() -> None:
    policy = robots_policy(200, RULES, ROBOTS)
    assert policy.outcome == "rules"
    assert policy.status == 200
    assert policy.sitemaps == ("https://example.com/sitemap.xml",)
    assert policy.crawl_delay == 2.0
    assert policy.can_fetch("https://example.com/private/x")
    assert not policy.can_fetch("https://example.com/no-google/x")
    assert policy.can_fetch("https://example.com/no-google/but-this/x")
    assert policy.can_fetch("https://example.com/")


def test_rules_fall_back_to_the_star_group() -> None:
    policy = robots_policy(200, RULES, ROBOTS, user_agent="SitemapAuditBot")
    assert policy.crawl_delay == 5.0
    assert not policy.can_fetch("https://example.com/private/x")
    assert policy.can_fetch("https://example.com/no-google/x")


@pytest.mark.parametrize(
    ("text", "user_agent", "blocked", "allowed"),
    [
        # A line Google does not read as a rule (Crawl-delay, an unknown key, Host) does not
        # end the group of the user-agent lines around it: Googlebot is in the * group here.
        (
            "User-agent: Googlebot\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /\n",
            "Googlebot",
            "/page",
            None,
        ),
        (
            "User-agent: Googlebot\nInvalid-Unknown-Line: x\nUser-agent: *\nDisallow: /private/\n",
            "Googlebot",
            "/private/a",
            "/public",
        ),
        (
            "User-agent: Googlebot\nHost: e.com\nUser-agent: *\nDisallow: /p/\n",
            "Googlebot",
            "/p/a",
            "/",
        ),
        # Google reads a key by its start: "Disallowed" is a disallow line.
        ("User-agent: *\nDisallowed: /private/\n", "Googlebot", "/private/a", "/ok"),
        # Googlebot-Image obeys the Googlebot group when no group names it...
        (
            "User-agent: Googlebot\nDisallow: /private/\n\nUser-agent: *\nDisallow:\n",
            "Googlebot-Image",
            "/private/a",
            "/ok",
        ),
        # ... and its own group when one does.
        (
            "User-agent: Googlebot-Image\nDisallow: /img/\n\nUser-agent: Googlebot\n"
            "Disallow: /private/\n",
            "Googlebot-Image",
            "/img/a",
            "/private/a",
        ),
    ],
)
def test_groups_and_keys_as_google_reads_them(
    text: str, user_agent: str, blocked: str, allowed: str | None
) -> None:
    policy = robots_policy(200, text.encode(), ROBOTS, user_agent=user_agent)
    assert not policy.can_fetch("https://example.com" + blocked)
    if allowed is not None:
        assert policy.can_fetch("https://example.com" + allowed)


def test_a_crawl_delay_still_counts_for_its_group() -> None:
    text = b"User-agent: Googlebot\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /\n"
    assert robots_policy(200, text, ROBOTS).crawl_delay == 10.0


def test_no_crawl_delay() -> None:
    policy = robots_policy(200, b"User-agent: *\nDisallow: /x\n", ROBOTS)
    assert policy.crawl_delay is None


def test_empty_robots_allows_everything() -> None:
    policy = robots_policy(200, b"", ROBOTS)
    assert policy.outcome == "rules"
    assert policy.can_fetch("https://example.com/anything")
    assert policy.sitemaps == ()


def test_disallow_all_rules() -> None:
    policy = robots_policy(200, b"User-agent: *\nDisallow: /\n", ROBOTS)
    assert not policy.can_fetch("https://example.com/")
    assert not policy.can_fetch("https://example.com/page")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 499])
def test_4xx_allows_all(status: int) -> None:
    policy = robots_policy(status, b"User-agent: *\nDisallow: /\nSitemap: /s.xml", ROBOTS)
    assert policy.outcome == "allow_all"
    assert policy.status == status
    assert policy.sitemaps == ()
    assert policy.crawl_delay is None
    assert policy.can_fetch("https://example.com/anything")


@pytest.mark.parametrize("status", [301, 302, 304, 307, 308])
def test_unresolved_redirect_allows_all(status: int) -> None:
    assert robots_policy(status, b"", ROBOTS).outcome == "allow_all"


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 599, None, 100, 600, 0, -1])
def test_server_errors_and_unreachable_disallow_all(status: int | None) -> None:
    policy = robots_policy(status, b"User-agent: *\nAllow: /\nSitemap: /s.xml", ROBOTS)
    assert policy.outcome == "disallow_all"
    assert policy.status == status
    assert policy.sitemaps == ()
    assert not policy.can_fetch("https://example.com/")


@pytest.mark.parametrize("status", [200, 203, 206, 299])
def test_any_2xx_reads_rules(status: int) -> None:
    assert robots_policy(status, b"User-agent: *\nDisallow: /", ROBOTS).outcome == "rules"


def test_utf16_robots_rules_and_sitemaps() -> None:
    text = "User-agent: *\r\nDisallow: /login\r\nSitemap: https://example.com/s.xml\r\n"
    policy = robots_policy(200, b"\xff\xfe" + text.encode("utf-16-le"), ROBOTS)
    assert policy.sitemaps == ("https://example.com/s.xml",)
    assert not policy.can_fetch("https://example.com/login")
    assert policy.can_fetch("https://example.com/logout")


def test_only_the_first_max_bytes_are_read() -> None:
    head = b"User-agent: *\nDisallow: /early/\n"
    filler = b"# " + b"x" * 98 + b"\n"
    body = head + filler * 10_000 + b"Disallow: /late/\nSitemap: https://example.com/late.xml\n"
    limited = robots_policy(200, body, ROBOTS, max_bytes=100_000)
    assert not limited.can_fetch("https://example.com/early/x")
    assert limited.can_fetch("https://example.com/late/x")
    assert limited.sitemaps == ()
    whole = robots_policy(200, body, ROBOTS, max_bytes=len(body))
    assert not whole.can_fetch("https://example.com/late/x")
    assert whole.sitemaps == ("https://example.com/late.xml",)


def test_default_limit_is_googles_500_kib() -> None:
    assert ROBOTS_MAX_BYTES == 512_000
    body = b"User-agent: *\n" + b"#" * (ROBOTS_MAX_BYTES + 10) + b"\nDisallow: /\n"
    assert robots_policy(200, body, ROBOTS).can_fetch("https://example.com/x")


def test_a_line_cut_at_the_limit_is_dropped() -> None:
    body = b"User-agent: *\nDisallow: /private-area/\n"
    cut = body.index(b"/private-area/") + 3
    policy = robots_policy(200, body, ROBOTS, max_bytes=cut)
    assert policy.can_fetch("https://example.com/public")
    assert policy.can_fetch("https://example.com/pr")


def test_a_line_the_limit_ends_exactly_is_whole() -> None:
    body = b"User-agent: *\nDisallow: /private-area/\nDisallow: /more/\n"
    cut = body.index(b"\nDisallow: /more/")
    policy = robots_policy(200, body, ROBOTS, max_bytes=cut)
    assert not policy.can_fetch("https://example.com/private-area/x")
    assert policy.can_fetch("https://example.com/more/x")


def test_ten_megabyte_robots_is_fast() -> None:
    rules = b"".join(b"Disallow: /dir%d/\n" % i for i in range(700_000))
    body = b"User-agent: *\n" + rules
    assert len(body) > 10_000_000
    started = time.process_time()
    policy = robots_policy(200, body, ROBOTS)
    assert time.process_time() - started < 3.0  # CPU seconds
    assert not policy.can_fetch("https://example.com/dir1/x")
    assert policy.can_fetch("https://example.com/dir600000/x")


@pytest.mark.parametrize(
    ("robots", "blocked", "allowed"),
    [
        # A group applies when its product token is the crawler's, not when it starts it.
        ("User-agent: Google\nDisallow: /\n\nUser-agent: *\nAllow: /\n", [], ["/a"]),
        ("User-agent: Googleb\nDisallow: /\n", [], ["/a"]),
        # Google reads the product token of the value: a version or suffix is not part of it.
        (
            "User-agent: Googlebot/2.1\nDisallow: /v/\n\nUser-agent: *\nDisallow:\n",
            ["/v/x"],
            ["/a"],
        ),
        ("User-agent: Googlebot;\nDisallow: /v/\n", ["/v/x"], ["/a"]),
        ("User-agent: googlebot mobile\nDisallow: /v/\n", ["/v/x"], ["/a"]),
        ("User-agent: * (all others)\nDisallow: /v/\n", ["/v/x"], ["/a"]),
        ("User-agent: Googlebot-Image\nDisallow: /\nUser-agent: *\nDisallow: /x\n", ["/x"], ["/a"]),
        # Two groups of the crawler merge.
        (
            "User-agent: googlebot\nDisallow: /a\nUser-agent: GOOGLEBOT\nDisallow: /b\n",
            ["/a", "/b"],
            ["/c"],
        ),
        # Lines break at CR and LF only: a form feed inside a comment is part of the comment.
        ("User-agent: *\n# old\x0cDisallow: /x\n", [], ["/x"]),
    ],
)
def test_groups_are_matched_as_google_matches_them(
    robots: str, blocked: list[str], allowed: list[str]
) -> None:
    policy = robots_policy(200, robots.encode(), ROBOTS)
    assert [p for p in blocked + allowed if not policy.can_fetch(f"https://example.com{p}")] == (
        blocked
    )


def test_another_user_agent_and_its_crawl_delay() -> None:
    robots = b"User-agent: bingbot/2.0\nDisallow: /b\nCrawl-delay: 3\nUser-agent: *\nDisallow: /s"
    bing = robots_policy(200, robots, ROBOTS, user_agent="Bingbot")
    assert not bing.can_fetch("https://example.com/b")
    assert bing.can_fetch("https://example.com/s")
    assert bing.crawl_delay == 3.0
    google = robots_policy(200, robots, ROBOTS)
    assert (google.can_fetch("https://example.com/b"), google.crawl_delay) == (True, None)


def test_can_fetch_is_cheap_to_call_many_times() -> None:
    policy = robots_policy(200, RULES, ROBOTS)
    urls = [f"https://example.com/page/{i}?q={i}" for i in range(50_000)]
    started = time.process_time()
    assert all(policy.can_fetch(url) for url in urls)
    assert time.process_time() - started < 5.0  # CPU seconds


def test_robots_txt_itself_is_always_fetchable() -> None:
    policy = robots_policy(200, b"User-agent: *\nDisallow: /", ROBOTS)
    assert policy.can_fetch(ROBOTS)


def test_wildcards_and_end_anchor() -> None:
    body = b"User-agent: *\nDisallow: /*.pdf$\nDisallow: /search*q=\nAllow: /search/ok\n"
    policy = robots_policy(200, body, ROBOTS)
    assert not policy.can_fetch("https://example.com/docs/file.pdf")
    assert policy.can_fetch("https://example.com/docs/file.pdf?download=1")
    assert not policy.can_fetch("https://example.com/search?q=x")
    assert policy.can_fetch("https://example.com/search/ok")


def test_longest_match_wins_and_allow_wins_ties() -> None:
    body = b"User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\nAllow: /t\nDisallow: /t\n"
    policy = robots_policy(200, body, ROBOTS)
    assert not policy.can_fetch("https://example.com/a/x")
    assert policy.can_fetch("https://example.com/a/b/x")
    assert not policy.can_fetch("https://example.com/a/b/c/x")
    assert policy.can_fetch("https://example.com/t")


def test_policy_is_frozen_and_compares_by_public_fields() -> None:
    first = robots_policy(200, RULES, ROBOTS)
    second = robots_policy(200, RULES, ROBOTS)
    assert first == second
    assert "_parser" not in repr(first)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.outcome = "allow_all"  # type: ignore[misc]


def test_hand_built_policies() -> None:
    assert RobotsPolicy("allow_all", 404, (), None).can_fetch("https://example.com/")
    assert not RobotsPolicy("disallow_all", None, (), None).can_fetch("https://example.com/")
    assert RobotsPolicy("rules", 200, (), None).can_fetch("https://example.com/")


@settings(max_examples=300, database=None)
@given(st.binary(max_size=3000), st.text(max_size=200))
def test_robots_policy_and_can_fetch_never_raise(body: bytes, url: str) -> None:
    policy = robots_policy(200, body, ROBOTS)
    assert isinstance(policy.can_fetch(url), bool)
    assert isinstance(policy.can_fetch("https://example.com/" + url), bool)


@settings(max_examples=200, database=None)
@given(st.text(max_size=100))
def test_can_fetch_never_raises_on_hostile_urls(url: str) -> None:
    policy = robots_policy(200, b"User-agent: *\nDisallow: /*x$\nDisallow: /p%zz\n", ROBOTS)
    for candidate in (url, f"http://[{url}", f"https://example.com/{url}%", f"//{url}"):
        assert isinstance(policy.can_fetch(candidate), bool)


AUDIT_UA = "Mozilla/5.0 (compatible; sitemapaudit/0.1.0; sitemap auditor)"


@pytest.mark.parametrize(
    ("robots", "delay"),
    [
        # Rules for Googlebot, a Crawl-delay for everyone else: the audit is everyone else.
        (b"User-agent: Googlebot\nDisallow: /x\n\nUser-agent: *\nCrawl-delay: 2\n", 2.0),
        # A group that names the audit's own product token.
        (b"User-agent: Googlebot\nDisallow: /x\n\nUser-agent: sitemapaudit\nCrawl-delay: 5\n", 5.0),
        # The longer of the two when both groups give one.
        (b"User-agent: Googlebot\nCrawl-delay: 7\n\nUser-agent: *\nCrawl-delay: 2\n", 7.0),
        (b"User-agent: Googlebot\nDisallow: /x\n", None),
    ],
)
def test_the_crawl_delay_is_also_that_of_the_group_the_audit_s_requests_fall_under(
    robots: bytes, delay: float | None
) -> None:
    policy = robots_policy(200, robots, ROBOTS, crawler_agent=AUDIT_UA)
    assert policy.crawl_delay == delay
    # The rules are still Googlebot's.
    assert policy.can_fetch("https://example.com/x") is ("Disallow" not in robots.decode())


def test_a_sitemap_value_keeps_a_no_break_space() -> None:
    # Google's parser trims ASCII whitespace only; the no-break space is part of the URL.
    text = "Sitemap: https://example.com/a.xml\u00a0 \t\nSitemap:\t/b.xml \n"
    assert sitemap_lines(text, ROBOTS) == [
        "https://example.com/a.xml\u00a0",
        "https://example.com/b.xml",
    ]
