"""A homepage that could not be read: the summary says so, and does not claim that the
homepage names no sitemap; what arrived of it before a timeout is read all the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, index, url, urlset
from tests.support.server import Page, TestSite

HEAD = '<html><head><link rel="sitemap" href="/sm.xml"></head><body>'
SITEMAP = Page(body=urlset(url("{base}/a")), content_type=XML)
PAGE = Page(body="<html><head></head><body>a</body></html>")
NOT_FOUND = "robots.txt and the homepage name none"


async def _audit(tmp_path: Path, routes: dict[str, Any], **settings: Any) -> list[dict[str, Any]]:
    with TestSite(routes) as site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl", settings=settings)
    return records


def _sitemaps(records: list[dict[str, Any]]) -> list[str]:
    return [str(r["url"]).rsplit("/", 1)[1] for r in by_record(records, "sitemap")]


@deferred_f_from_coro_f
async def test_a_homepage_that_answers_500_is_said_to_be_unread(tmp_path: Path) -> None:
    routes = {"/": Page(status=500, body=HEAD + "</body></html>"), "/sm.xml": SITEMAP}
    records = await _audit(tmp_path, routes)
    notes = records[-1]["notes"]
    assert "the homepage could not be read (HTTP 500), so its sitemap links are unknown" in notes
    assert not any(NOT_FOUND in note for note in notes)
    assert any(note.startswith("no sitemap was found: ") for note in notes)
    assert _sitemaps(records) == []


@deferred_f_from_coro_f
async def test_a_homepage_that_redirects_to_itself_is_said_to_be_unread(tmp_path: Path) -> None:
    routes = {"/": Page(status=301, headers=[("Location", "/")])}
    records = await _audit(tmp_path, routes)
    notes = records[-1]["notes"]
    assert any(
        note.startswith("the homepage could not be read (it redirects in a loop")
        and note.endswith("so its sitemap links are unknown")
        for note in notes
    ), notes
    assert not any(NOT_FOUND in note for note in notes)


@deferred_f_from_coro_f
async def test_a_homepage_that_cannot_be_fetched_is_said_to_be_unread(tmp_path: Path) -> None:
    routes = {"/": Page(drop=True), "/robots.txt": Page(status=404)}
    records = await _audit(tmp_path, routes)
    notes = records[-1]["notes"]
    assert any(note.startswith("the homepage could not be read (") for note in notes), notes
    assert not any(NOT_FOUND in note for note in notes)


@deferred_f_from_coro_f
async def test_the_head_of_a_homepage_that_times_out_is_read(tmp_path: Path) -> None:
    """The head arrives at once, then the page trickles until the download times out."""
    head = HEAD.ljust(256)
    routes = {
        "/": Page(body=head + "x" * 256 * 20, trickle=(256, 0.5), chunked=True),
        "/sm.xml": SITEMAP,
        "/a": PAGE,
    }
    records = await _audit(tmp_path, routes, DOWNLOAD_TIMEOUT=1.5, RETRY_TIMES=0)
    assert _sitemaps(records) == ["sm.xml"]
    notes = records[-1]["notes"]
    assert any(
        note.startswith("the homepage was read only in part (") and "TimeoutError" in note
        for note in notes
    ), notes


@deferred_f_from_coro_f
async def test_a_homepage_that_times_out_before_any_byte_is_said_to_be_unread(
    tmp_path: Path,
) -> None:
    routes = {"/": Page(body=HEAD, delay=3)}
    records = await _audit(tmp_path, routes, DOWNLOAD_TIMEOUT=1, RETRY_TIMES=0)
    notes = records[-1]["notes"]
    assert any(
        note.startswith("the homepage could not be read (") and "TimeoutError" in note
        for note in notes
    ), notes
    assert not any(NOT_FOUND in note for note in notes)


DISALLOW_ALL = Page(body="User-agent: *\nDisallow: /\n", content_type="text/plain")
BLOCKED_NOTE = (
    "the homepage was not read because robots.txt disallows it; its sitemap links are unknown"
)


@deferred_f_from_coro_f
async def test_a_homepage_that_robots_txt_disallows_is_not_requested(tmp_path: Path) -> None:
    routes = {
        "/robots.txt": DISALLOW_ALL,
        "/": Page(body=HEAD + "</body></html>"),
        "/sitemap.xml": SITEMAP,
        "/sm.xml": SITEMAP,
    }
    with TestSite(routes) as site:
        records, _ = await run_audit(site.base, tmp_path / "r.jsonl")
        asked = [path for _, path in site.log]
    assert "/" not in asked
    assert "/sm.xml" not in asked
    assert asked[0] == "/robots.txt"
    assert "/sitemap.xml" in asked  # the common paths are read all the same
    notes = records[-1]["notes"]
    assert BLOCKED_NOTE in notes
    assert _sitemaps(records) == ["sitemap.xml"]


@deferred_f_from_coro_f
async def test_no_sitemap_found_does_not_say_a_disallowed_homepage_names_none(
    tmp_path: Path,
) -> None:
    routes = {"/robots.txt": DISALLOW_ALL, "/": Page(body=HEAD + "</body></html>")}
    records = await _audit(tmp_path, routes)
    notes = records[-1]["notes"]
    assert BLOCKED_NOTE in notes
    assert not any(NOT_FOUND in note for note in notes)
    assert any(note.startswith("no sitemap was found: ") for note in notes)


@deferred_f_from_coro_f
async def test_the_homepage_is_requested_once_robots_txt_has_answered(tmp_path: Path) -> None:
    routes = {
        "/robots.txt": Page(body="User-agent: *\nDisallow: /a\n", content_type="text/plain"),
        "/": Page(body=HEAD + "</body></html>"),
        "/sm.xml": SITEMAP,
        "/a": PAGE,
    }
    routes["/robots.txt"].delay = 0.5
    with TestSite(routes) as site:
        records, _ = await run_audit(
            site.base, tmp_path / "r.jsonl", settings={"SITEMAPAUDIT_UNTHROTTLED": True}
        )
        log = list(site.log)
    asked = {path: when for when, path in reversed(log)}
    assert asked["/"] - asked["/robots.txt"] >= 0.45  # after robots.txt's answer
    assert _sitemaps(records) == ["sm.xml"]


@deferred_f_from_coro_f
async def test_a_homepage_that_is_not_there_names_no_sitemap(tmp_path: Path) -> None:
    records = await _audit(tmp_path, {"/": Page(status=404, body="not found")})
    notes = records[-1]["notes"]
    assert notes == [f"no sitemap was found: {NOT_FOUND}, and none of the common paths holds one"]


@deferred_f_from_coro_f
async def test_the_links_of_a_homepage_that_is_not_there_are_not_followed(tmp_path: Path) -> None:
    """The body of a 404 is an error page, not the homepage: its sitemap link names nothing,
    and the common paths are looked at."""
    routes = {
        "/": Page(status=404, body=HEAD + "</body></html>"),
        "/sm.xml": SITEMAP,
        "/sitemap.xml": SITEMAP,
        "/a": PAGE,
    }
    records = await _audit(tmp_path, routes)
    assert {r["url"].rsplit("/", 1)[1]: r["found_via"] for r in by_record(records, "sitemap")} == {
        "sitemap.xml": "common-path"
    }
    assert records[-1]["notes"] == []


@deferred_f_from_coro_f
async def test_no_sitemap_found_does_not_say_an_unread_robots_txt_names_none(
    tmp_path: Path,
) -> None:
    routes = {"/robots.txt": Page(status=500, body="down"), "/": Page(body="<html>home</html>")}
    records = await _audit(tmp_path, routes, RETRY_TIMES=0)
    notes = records[-1]["notes"]
    assert (
        "no sitemap was found: robots.txt could not be read (its Sitemap lines are unknown), "
        "the homepage names none, and none of the common paths holds one"
    ) in notes, notes


@deferred_f_from_coro_f
async def test_no_sitemap_found_does_not_say_a_homepage_on_another_host_names_none(
    tmp_path: Path,
) -> None:
    def moved(site: TestSite, path: str) -> Page:
        return Page(status=301, headers=[("Location", site.base.replace("127.0.0.1", "localhost"))])

    records = await _audit(tmp_path, {"/": moved})
    notes = records[-1]["notes"]
    assert not any(NOT_FOUND in note for note in notes), notes
    assert any(
        note.startswith("no sitemap was found: robots.txt names none, the homepage redirects to")
        and "(its sitemap links are unknown)" in note
        for note in notes
    ), notes


def _found(records: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {
        str(r["url"]).rsplit("/", 1)[1]: (
            r["found_via"],
            r["parent"] and str(r["parent"]).rsplit("/", 1)[1],
            tuple(r["issues"]),
        )
        for r in by_record(records, "sitemap")
    }


@deferred_f_from_coro_f
async def test_how_a_sitemap_was_found_does_not_depend_on_which_answer_came_first(
    tmp_path: Path,
) -> None:
    """robots.txt names an index that lists h.xml, which the homepage links to as well:
    h.xml's record is the same whether the homepage or the index answers first."""

    def site(homepage_delay: float, index_delay: float) -> dict[str, Any]:
        return {
            "/robots.txt": Page(body="Sitemap: {base}/idx.xml\n", content_type="text/plain"),
            "/": Page(body=HEAD.replace("/sm.xml", "/h.xml") + "</html>", delay=homepage_delay),
            "/idx.xml": Page(body=index("{base}/h.xml"), content_type=XML, delay=index_delay),
            "/h.xml": Page(body=index("{base}/leaf.xml"), content_type=XML),
            "/leaf.xml": SITEMAP,
            "/a": PAGE,
        }

    slow_homepage = _found(await _audit(tmp_path, site(1.0, 0.0)))
    slow_index = _found(await _audit(tmp_path, site(0.0, 1.0)))
    assert slow_homepage == slow_index
    assert slow_homepage["idx.xml"][0] == "robots.txt"
    assert slow_homepage["h.xml"][0] == "html-link"
