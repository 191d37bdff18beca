"""Dot segments of a listed URL's path are removed as browsers remove them (WHATWG URL
Standard): for the request, for robots.txt and for comparison; the record keeps the URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy.statscollectors import StatsCollector
from scrapy.utils.test import get_crawler

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.run import AuditRun
from sitemapaudit.discovery.robots import robots_policy
from sitemapaudit.urls import normalize_url, parse_origin, remove_dot_segments, request_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h/a/b/../c", "http://h/a/c"),
        ("http://h/a/./b", "http://h/a/b"),
        ("http://h/..", "http://h/"),
        ("http://h/../..", "http://h/"),
        ("http://h/a/..", "http://h/"),
        ("http://h/a/../", "http://h/"),
        ("http://h/a/%2E%2e/b", "http://h/b"),
        ("http://h/a/%2e%2E/b", "http://h/b"),
        ("http://h/a/.%2e/b", "http://h/b"),
        ("http://h/a/%2e./b", "http://h/b"),
        ("http://h/a/%2e/b", "http://h/a/b"),
        ("http://h/a/%2E/b", "http://h/a/b"),
        ("http://h/a/.", "http://h/a/"),
        ("http://h/a/b/.", "http://h/a/b/"),
        ("http://h/a/b/..", "http://h/a/"),
        ("http://h/./dotpage", "http://h/dotpage"),
        ("http://h/a/../dotpage2", "http://h/dotpage2"),
        ("http://h/ok/./", "http://h/ok/"),
        ("http://h/blocked/../ok", "http://h/ok"),
        (
            "https://h:8080/a/./b/../c?x=/../y&z=/./#/../frag",
            "https://h:8080/a/c?x=/../y&z=/./#/../frag",
        ),
        ("http://h/a/..?q", "http://h/?q"),
        ("http://h/a/.#f", "http://h/a/#f"),
        ("http://h/a//../b", "http://h/a/b"),
    ],
)
def test_dot_segments_are_removed_as_the_url_standard_removes_them(url: str, expected: str) -> None:
    assert remove_dot_segments(url) == expected
    assert request_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://h/",
        "http://h/a/b",
        "http://h/.well-known/x",
        "http://h/a/...",
        "http://h/a/.b/..c/c..",
        "http://h/a/%2e%2e%2e/b",
        "http://h/a/%2ex",
        "http://h/a?q=/./../",
        "http://h/a#/./../",
        "http://h./a",
        "http://h.example.com./a/b",
    ],
)
def test_urls_without_dot_segments_are_kept_as_written(url: str) -> None:
    assert remove_dot_segments(url) is url
    assert request_url(url) == url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h", "http://h/"),
        ("https://h:8080", "https://h:8080/"),
        ("HTTP://h?q=1", "HTTP://h/?q=1"),
        ("http://h#f", "http://h/#f"),
        ("http://127.1", "http://127.0.0.1/"),
        ("http://h/", "http://h/"),
    ],
)
def test_a_url_without_a_path_is_requested_with_the_slash_browsers_send(
    url: str, expected: str
) -> None:
    """As the URL Standard serializes it: ``final_url`` and the redirect chain show the URL
    that was requested, the same whether the sitemap or a Location wrote the slash or not."""
    assert remove_dot_segments("http://h") == "http://h"
    assert request_url(url) == expected


def test_the_host_and_the_path_are_both_resolved() -> None:
    assert request_url("http://127.1:8080/a/./b/../c?q#f") == "http://127.0.0.1:8080/a/c?q#f"


@given(st.text(alphabet="ab./%2eE?#", max_size=20))
def test_resolution_is_stable(path: str) -> None:
    once = remove_dot_segments(f"http://h/{path}")
    assert remove_dot_segments(once) == once


def test_robots_txt_rules_are_matched_against_the_resolved_path() -> None:
    policy = robots_policy(200, b"User-agent: *\nDisallow: /blocked\n", "http://h/robots.txt")
    assert policy.can_fetch("http://h/blocked/../ok")
    assert policy.can_fetch("http://h/blocked/%2e%2e/ok")
    assert not policy.can_fetch("http://h/ok/../blocked/x")
    assert not policy.can_fetch("http://h/./blocked")
    assert not policy.can_fetch("http://h/a/%2E%2E/blocked")
    assert not policy.can_fetch("http://h/blocked")


def test_escaped_dot_segments_compare_as_the_url_they_resolve_to() -> None:
    assert normalize_url("http://h/a/%2e%2e/b") == "http://h/b"
    assert normalize_url("http://h/a/%2E/b") == "http://h/a/b"
    assert normalize_url("http://h/a/./b/../c") == "http://h/a/c"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h/a\\..\\b", "http://h/b"),
        ("http://h/a\\b", "http://h/a/b"),
        ("http://h/a\\.\\b?x\\..\\y#f\\g", "http://h/a/b?x\\..\\y#f\\g"),
    ],
)
def test_a_backslash_in_the_path_is_a_slash_as_browsers_read_it(url: str, expected: str) -> None:
    # The URL Standard reads "\" as "/" in the path of an http(s) URL, before dot segments;
    # the query and fragment keep theirs.
    assert remove_dot_segments(url) == expected
    assert request_url(url) == expected


def test_robots_txt_rules_see_the_path_a_backslash_leads_to() -> None:
    policy = robots_policy(200, b"User-agent: *\nDisallow: /blocked\n", "http://h/robots.txt")
    assert not policy.can_fetch("http://h/ok\\..\\blocked\\page")


@pytest.mark.parametrize(
    ("loc", "rules"),
    [
        ("https://e.com/catalog/page", ()),
        ("https://e.com/catalog\\page", ()),
        # Starts with the sitemap's directory, written with backslashes that lead out of it.
        ("https://e.com/catalog/x\\..\\..\\other", ("out_of_scope",)),
        ("https://e.com/catalog/..\\other", ("out_of_scope",)),
    ],
)
def test_the_scope_rule_reads_backslashes_as_slashes(
    tmp_path: Path, loc: str, rules: tuple[str, ...]
) -> None:
    """As browsers request the URL and robots.txt reads it, also on the crawl's fast path for
    locs that start with their sitemap's directory."""
    config = AuditConfig.from_settings(
        {
            "SITEMAPAUDIT_WORK_DIR": str(tmp_path / "work"),
            "SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3"),
        }
    )
    run = AuditRun(parse_origin("https://e.com"), config, StatsCollector(get_crawler()))
    try:
        assert run.url_rules.codes(loc, "https://e.com/catalog/sitemap.xml") == rules
    finally:
        run.close()
