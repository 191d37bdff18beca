from __future__ import annotations

from typing import Any

import pytest
from scrapy.http import Response

from sitemapaudit.crawl.redirects import RedirectState, next_hop, sitemap_loop
from sitemapaudit.crawl.run import sitemap_hosts_hint
from sitemapaudit.crawl.tree import ChildProblems, Decision, SitemapTree
from sitemapaudit.spiders.audit import _conflicting_locations, _location, _redirect_problems
from sitemapaudit.urls import SitemapHosts, parse_origin

ORIGIN = parse_origin("https://e.com")


def hop(
    state: RedirectState, url: str, status: int, location: str | None, **robots: Any
) -> str | None:
    return next_hop(
        state, url=url, status=status, location=location, origin=ORIGIN, max_redirects=3, **robots
    )


def test_hops_are_recorded_and_relative_locations_resolved() -> None:
    state = RedirectState()
    assert hop(state, "https://e.com/a", 301, "/b") == "https://e.com/b"
    assert hop(state, "https://e.com/b", 200, None) is None
    assert [h["status"] for h in state.chain] == [301]
    assert not state.loop


def test_a_revisited_url_is_a_loop() -> None:
    state = RedirectState()
    assert hop(state, "https://e.com/a", 302, "/b") == "https://e.com/b"
    assert hop(state, "https://e.com/b", 302, "/a") is None
    assert state.loop


def test_too_many_hops_is_a_loop() -> None:
    state = RedirectState()
    for i in range(3):
        assert hop(state, f"https://e.com/{i}", 301, f"/{i + 1}") is not None
    assert hop(state, "https://e.com/3", 301, "/4") is None
    assert state.loop


def test_a_sitemap_loop_says_whether_it_looped_or_went_past_the_limit() -> None:
    state = RedirectState()
    hop(state, "https://e.com/a", 302, "/b")
    hop(state, "https://e.com/b", 301, "/a")
    assert sitemap_loop(state.chain, 3).message == (
        "a loop: https://e.com/a redirects again after 2 hops: "
        "https://e.com/a (302) -> https://e.com/b (301) -> https://e.com/a"
    )
    state = RedirectState()
    hop(state, "https://e.com/a", 301, "/a")
    assert sitemap_loop(state.chain, 3).message == (
        "a loop: https://e.com/a redirects again after 1 hop: https://e.com/a (301) -> "
        "https://e.com/a"
    )
    state = RedirectState()
    for i in range(4):
        hop(state, f"https://e.com/{i}", 301, f"/{i + 1}")
    assert sitemap_loop(state.chain, 3).message == (
        "more than 3 redirects: https://e.com/4 was not requested: https://e.com/0 (301) -> "
        "https://e.com/1 (301) -> https://e.com/2 (301) -> https://e.com/3 (301) -> https://e.com/4"
    )


def test_other_hosts_and_schemes_are_not_followed() -> None:
    state = RedirectState()
    assert hop(state, "https://e.com/a", 301, "https://evil.example/") is None
    assert state.stopped
    assert "another host" in state.stopped
    assert state.other_host == "https://evil.example/"
    state = RedirectState()
    assert hop(state, "https://e.com/a", 301, "file:///etc/passwd") is None
    assert state.stopped
    assert state.other_host is None


def test_a_redirect_without_location_is_broken() -> None:
    for location in (None, "", "  "):
        state = RedirectState()
        assert hop(state, "https://e.com/a", 301, location) is None
        assert state.broken == "the 301 answer has no Location header"
        assert state.chain == [{"url": "https://e.com/a", "status": 301, "location": None}]
    state = RedirectState()
    assert hop(state, "https://e.com/a", 200, None) is None
    assert state.broken is None
    assert state.chain == []


def test_a_redirect_to_a_url_that_is_not_http_is_broken() -> None:
    state = RedirectState()
    assert hop(state, "https://e.com/a", 302, "mailto:x@e.com") is None
    assert state.broken == "its Location 'mailto:x@e.com' is not a valid http(s) URL"
    state = RedirectState()
    assert hop(state, "https://e.com/a", 302, "https://evil.example/") is None
    assert state.broken is None  # another host: a redirect, only not followed here


def test_a_redirect_to_a_disallowed_url_is_blocked() -> None:
    def allowed(url: str) -> bool:
        return "/private/" not in url

    state = RedirectState()
    assert hop(state, "https://e.com/a", 301, "/private/x", allowed=allowed) is None
    assert state.blocked_target == "https://e.com/private/x"
    assert state.stopped == "not followed: robots.txt disallows https://e.com/private/x"
    state = RedirectState()
    target = hop(state, "https://e.com/a", 301, "/private/x", allowed=allowed, follow_blocked=True)
    assert target == "https://e.com/private/x"
    assert state.blocked_target == target
    assert state.stopped is None
    state = RedirectState()
    assert hop(state, "https://e.com/a", 301, "/b", allowed=allowed) == "https://e.com/b"
    assert state.blocked_target is None


def test_tree_decisions() -> None:
    tree = SitemapTree(ORIGIN, max_depth=1, max_sitemaps=2, max_url_length=2048)
    assert tree.consider("https://e.com/s.xml", depth=0) is Decision.FETCH
    assert tree.consider("https://E.com/s.xml", depth=1) is Decision.SEEN
    assert tree.consider("https://other.com/s.xml", depth=1) is Decision.OFF_HOST
    assert tree.consider("https://e.com/deep.xml", depth=2) is Decision.TOO_DEEP
    assert tree.consider("file:///etc/passwd", depth=1) is Decision.INVALID
    assert tree.consider("https://e.com/t.xml", depth=1) is Decision.FETCH
    assert tree.consider("https://e.com/u.xml", depth=1) is Decision.CAPPED


def test_sitemap_hosts_are_fetched_and_other_hosts_are_not() -> None:
    cdn = parse_origin("cdn.e.com")
    tree = SitemapTree(
        ORIGIN, max_depth=1, max_sitemaps=5, max_url_length=2048, sitemap_hosts=(cdn,)
    )
    assert tree.consider("https://cdn.e.com/s.xml", depth=0) is Decision.FETCH
    assert tree.consider("http://CDN.e.com/t.xml", depth=0) is Decision.FETCH
    assert tree.consider("https://cdn.e.com:8443/u.xml", depth=0) is Decision.OFF_HOST
    assert tree.consider("https://other.com/s.xml", depth=0) is Decision.OFF_HOST


def test_a_sitemap_redirect_may_lead_to_a_sitemap_host() -> None:
    hosts = SitemapHosts(ORIGIN, (parse_origin("https://cdn.e.com"),))
    state = RedirectState()
    target = next_hop(
        state,
        url="https://e.com/sitemap.xml",
        status=301,
        location="https://cdn.e.com/s.xml",
        origin=hosts,
        max_redirects=3,
    )
    assert target == "https://cdn.e.com/s.xml"
    assert hop(RedirectState(), "https://e.com/sitemap.xml", 301, "https://cdn.e.com/s.xml") is None


def test_a_loop_is_an_index_listing_itself_or_an_index_above_it() -> None:
    tree = SitemapTree(ORIGIN, max_depth=5, max_sitemaps=100, max_url_length=2048)
    root, child, leaf = (f"{ORIGIN.url}/{name}.xml" for name in ("root", "child", "leaf"))
    other = f"{ORIGIN.url}/other.xml"
    assert tree.consider(root, depth=0) is Decision.FETCH
    assert tree.consider(other, depth=0) is Decision.FETCH
    assert tree.consider(child, depth=1, parent=root) is Decision.FETCH
    assert tree.consider(leaf, depth=2, parent=child) is Decision.FETCH
    assert tree.parent_of(leaf) == child
    assert tree.parent_of(root) is None
    # The index itself, its parent and its grandparent: loops.
    assert tree.loops(leaf, leaf)
    assert tree.loops(leaf, child)
    assert tree.loops(leaf, root.replace("e.com", "E.COM"))  # the same URL
    # A sibling root, or a sitemap below: listed again, no loop.
    assert not tree.loops(leaf, other)
    assert not tree.loops(root, leaf)
    assert not tree.loops(child, other)


def test_the_sitemap_a_redirect_ends_at_sits_below_the_sitemap_that_redirects() -> None:
    tree = SitemapTree(ORIGIN, max_depth=5, max_sitemaps=3, max_url_length=2048)
    old, root, child = (f"{ORIGIN.url}/{name}.xml" for name in ("old", "root", "child"))
    other = f"{ORIGIN.url}/other.xml"
    assert tree.consider(old, depth=0) is Decision.FETCH
    # /old.xml redirects to /root.xml, read under its own name (with no place of its own
    # under the cap).
    assert not tree.redirect_known(root, source=old)
    assert tree.redirect_target(root, source=old) is Decision.FETCH
    assert tree.redirect_known(root, source=old)
    assert tree.parent_of(root) == old
    assert tree.consider(other, depth=0) is Decision.FETCH
    assert tree.consider(child, depth=1, parent=root) is Decision.FETCH
    # The index lists itself, or the sitemap that redirects to it; its child too.
    assert tree.loops(root, root)
    assert tree.loops(root, old)
    assert tree.loops(child, old)
    # Another index listing them: listed again.
    assert not tree.loops(other, root)
    assert not tree.loops(other, old)
    # Another sitemap redirecting there: a sitemap known already.
    assert tree.redirect_target(root, source=other) is Decision.SEEN


def test_restored_parents_keep_loops_known_after_a_resume() -> None:
    tree = SitemapTree(ORIGIN, max_depth=5, max_sitemaps=100, max_url_length=2048)
    root, child = f"{ORIGIN.url}/root.xml", f"{ORIGIN.url}/child.xml"
    tree.restore([root, child], {child: root, root: None})
    assert tree.consider(root, depth=2, parent=child) is Decision.SEEN
    assert tree.loops(child, root)


@pytest.mark.parametrize(
    ("url", "value"),
    [
        ("https://cdn.example.com/s.xml", "cdn.example.com"),
        ("http://cdn.example.com:80/s.xml", "cdn.example.com"),
        ("http://localhost:18731/cdn/other.xml", "localhost:18731"),
        ("https://[2001:db8::1]:8443/s.xml", "[2001:db8::1]:8443"),
    ],
)
def test_the_off_host_hint_names_the_sitemap_hosts_value_that_works(url: str, value: str) -> None:
    assert sitemap_hosts_hint(url) == (
        f"(if the site keeps its sitemaps there, add {value} to SITEMAPAUDIT_SITEMAP_HOSTS)"
    )
    # SITEMAPAUDIT_SITEMAP_HOSTS entries are read as the domain argument is.
    assert SitemapHosts(parse_origin("http://127.0.0.1:18731"), (parse_origin(value),)).owns(url)


def test_a_sitemap_redirected_to_another_port_names_that_port_in_the_hint() -> None:
    state = RedirectState()
    assert hop(state, "https://e.com/sitemap.xml", 301, "https://e.com:8443/s.xml") is None
    [problem] = _redirect_problems(state, 3)
    assert problem.code == "off_host"
    assert problem.message.endswith(
        "(if the site keeps its sitemaps there, add e.com:8443 to SITEMAPAUDIT_SITEMAP_HOSTS)"
    )


def test_an_index_says_why_each_child_location_it_lists_is_invalid() -> None:
    problems = ChildProblems()
    problems.add("invalid_url", "ftp://e.com/s.xml")
    problems.add("invalid_url", "https://e.com/" + "a" * 3000)
    problems.add("index_too_deep", "https://e.com/deep.xml")
    by_code = {p.code: p.message for p in problems.problems()}
    assert by_code["invalid_url"].startswith(
        "lists sitemap locations that are not valid http(s) URLs: ftp://e.com/s.xml (its "
        "scheme 'ftp' is not http or https); https://e.com/aaa"
    )
    assert by_code["invalid_url"].endswith("a (3,014 characters: too long to request)")
    assert by_code["index_too_deep"] == (
        "lists sitemaps deeper than the depth cap, not fetched: https://e.com/deep.xml"
    )


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        (b"\\final", "/final"),
        (b"\\a\\b?x=\\y", "/a/b?x=%5Cy"),
        (b"http://e.com\\c", "http://e.com/c"),
        (b"/caf\xc3\xa9", "/caf%C3%A9"),
        (b"/caf\xe9\\x", "/caf%E9/x"),
    ],
)
def test_a_location_is_read_as_browsers_read_it(location: bytes, expected: str) -> None:
    """A backslash before the query is a slash in an http(s) URL (the URL Standard), not a
    character to percent-encode."""
    response = Response("https://e.com/a", status=301, headers={"Location": location})
    assert _location(response) == expected


def test_several_different_locations_are_a_broken_redirect() -> None:
    """Browsers refuse a redirect with two different Location headers; two equal ones are
    one."""
    state = RedirectState()
    assert (
        next_hop(
            state,
            url="https://e.com/a",
            status=301,
            location="/b",
            origin=ORIGIN,
            max_redirects=3,
            conflicting=("/b", "/c"),
        )
        is None
    )
    assert state.broken == (
        "the 301 answer has 2 different Location headers ('/b', '/c'), which browsers refuse "
        "to follow"
    )
    headers = [("Location", b"/b"), ("Location", b"/c")]
    assert _conflicting_locations(Response("https://e.com/a", status=301, headers=headers)) == (
        "/b",
        "/c",
    )
    same = [("Location", b"/b"), ("Location", b" /b")]
    assert _conflicting_locations(Response("https://e.com/a", status=301, headers=same)) == ()
