"""What an audit's run says about a site it could not reach, or that lives on another host,
and how it treats the other hosts that keep a site's sitemaps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.run import AuditRun
from sitemapaudit.facts import SitemapFacts
from sitemapaudit.urls import parse_origin

TLS_ERROR = "TLS error: wrong version number"


class _Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] += count


@pytest.fixture
def make_run(tmp_path: Path) -> Iterator[Callable[..., AuditRun]]:
    runs: list[AuditRun] = []

    def make(origin: str, sitemap_args: list[str] | None = None, hosts: str = "") -> AuditRun:
        config = AuditConfig.from_settings(
            {
                "SITEMAPAUDIT_HISTORY_PATH": "",
                "SITEMAPAUDIT_WORK_DIR": str(tmp_path / str(len(runs))),
                "SITEMAPAUDIT_SITEMAP_HOSTS": hosts,
            }
        )
        run = AuditRun(parse_origin(origin), config, _Stats(), sitemap_args=sitemap_args)
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.close()


def test_a_run_with_an_answer_is_not_unreachable(make_run: Callable[..., AuditRun]) -> None:
    run = make_run("https://e.com")
    run.robots_received(None, b"", "https://e.com/robots.txt", error=TLS_ERROR)
    assert run.unreachable(1) is None


def test_an_unreachable_site_is_explained_with_every_discovery_error(
    make_run: Callable[..., AuditRun],
) -> None:
    run = make_run("http://e.com:8080")
    run.robots_received(None, b"", "http://e.com:8080/robots.txt", error="DNSLookupError: x")
    run.homepage_received([], error="DNSLookupError: y")
    note = run.unreachable(0)
    assert note == (
        "the site could not be reached: no request to http://e.com:8080 got an HTTP answer "
        "(robots.txt: DNSLookupError: x; the homepage: DNSLookupError: y), so nothing was "
        "audited"
    )
    assert "robots.txt could not be read (DNSLookupError: x)" in run.notes()[0]


@pytest.mark.parametrize(
    "error", [TLS_ERROR, "ConnectionRefusedError: Connection was refused by other side"]
)
def test_an_unreachable_https_origin_suggests_plain_http(
    make_run: Callable[..., AuditRun], error: str
) -> None:
    run = make_run("https://e.com:8443")
    run.robots_received(None, b"", "https://e.com:8443/robots.txt", error=error)
    run.homepage_received([], error=error)
    note = run.unreachable(0)
    assert note is not None
    assert note.endswith(
        "; if the site is served over plain HTTP, run with -a domain=http://e.com:8443"
    )


def test_a_dns_failure_suggests_nothing(make_run: Callable[..., AuditRun]) -> None:
    run = make_run("https://e.invalid")
    run.robots_received(None, b"", "https://e.invalid/robots.txt", error="DNSLookupError: x")
    note = run.unreachable(0)
    assert note is not None
    assert note.endswith("so nothing was audited")


def test_redirects_to_another_host_are_noted_and_counted(
    make_run: Callable[..., AuditRun],
) -> None:
    run = make_run("https://e.com")
    run.robots_received(
        301, b"", "https://e.com/robots.txt", moved_to="https://www.e.com/robots.txt"
    )
    run.homepage_received([], moved_to="https://www.e.com/")
    robots, homepage = run.notes()
    assert robots.startswith(
        "robots.txt of https://e.com redirects to https://www.e.com/robots.txt"
    )
    assert homepage.endswith("-a domain=https://www.e.com")
    assert run.robots is not None
    assert run.robots.outcome == "allow_all"
    stats = run.stats
    assert isinstance(stats, _Stats)
    assert stats.values["sitemapaudit/discovery/robots_other_host"] == 1
    assert stats.values["sitemapaudit/discovery/homepage_other_host"] == 1


def test_urls_listed_on_a_sitemap_host_have_no_directory_scope(
    make_run: Callable[..., AuditRun],
) -> None:
    run = make_run("https://e.com", hosts="cdn.e.com")
    on_cdn = "https://cdn.e.com/sitemaps/s.xml"
    assert run.url_rules.codes("https://e.com/any/where", on_cdn) == ()
    assert run.url_rules.codes("https://cdn.e.com/sitemaps/x", on_cdn) == ("off_host",)
    assert run.url_rules.codes("https://e.com/other/x", "https://e.com/blog/sitemap.xml") == (
        "out_of_scope",
    )


def test_the_hosts_of_sitemap_arguments_are_sitemap_hosts(
    make_run: Callable[..., AuditRun],
) -> None:
    run = make_run(
        "https://e.com",
        sitemap_args=[
            "https://e.com/s.xml",
            "http://cdn.e.com:8080/a.xml",
            "http://cdn.e.com:8080/b.xml",
        ],
        hosts="static.e.com",
    )
    assert [origin.url for origin in run.sitemap_hosts()] == [
        "https://static.e.com",
        "http://cdn.e.com:8080",
    ]


def test_robots_txt_notes_come_first_whichever_answer_came_first(
    make_run: Callable[..., AuditRun],
) -> None:
    """The same site gives the same summary every night."""
    run = make_run("https://e.com")
    run.homepage_received([], moved_to="https://www.e.com/")
    run.robots_received(None, b"", "https://e.com/robots.txt", error="TimeoutError: x")
    robots, homepage = run.notes()
    assert robots.startswith("robots.txt could not be read (TimeoutError: x)")
    assert homepage.startswith("the homepage of https://e.com redirects")


@pytest.mark.parametrize(
    ("status", "why", "basis"),
    [
        (503, "robots.txt answered with status 503", "as RFC 9309 requires"),
        (None, "robots.txt could not be fetched", "as RFC 9309 requires"),
        (429, "robots.txt answered with status 429", "as Google reads a 429"),
    ],
)
def test_a_robots_txt_that_disallows_all_disallows_the_sitemaps_of_the_audited_host_only(
    make_run: Callable[..., AuditRun], status: int | None, why: str, basis: str
) -> None:
    """RFC 9309: the robots.txt of the audited host says nothing of another host's URLs."""
    run = make_run("https://e.com", hosts="cdn.e.com")
    run.robots_received(status, b"", "https://e.com/robots.txt")
    own = run.settle(SitemapFacts("https://e.com/s.xml", "robots.txt", fetched=True, status=200))
    cdn = run.settle(SitemapFacts("https://cdn.e.com/s.xml", "html-link", fetched=True, status=200))
    never = run.settle(SitemapFacts("https://e.com/x", "index", problems=[]))
    unanswered = run.settle(
        SitemapFacts("https://e.com/t.xml", "robots.txt", error="TimeoutError: took too long")
    )
    assert [(p.code, p.message) for p in own.problems] == [
        (
            "robots_blocked",
            f"{why}, so {basis} every URL is disallowed, this sitemap included: "
            "search engines that obey robots.txt do not fetch it",
        )
    ]
    assert cdn.problems == []
    assert never.problems == []  # not requested (skipped): no verdict on it
    assert unanswered.problems == []  # the same outage as robots.txt's: fetch_failed says it


@pytest.mark.parametrize(
    ("status", "note"),
    [
        (503, "robots.txt could not be read (status 503); as RFC 9309 requires, every URL is"),
        (429, "robots.txt could not be read (status 429); as Google reads a 429, every URL is"),
    ],
)
def test_the_note_of_a_robots_txt_that_disallows_all_says_on_what_grounds(
    make_run: Callable[..., AuditRun], status: int, note: str
) -> None:
    """RFC 9309 counts a 429 among the 4xx answers (no rules); Google disallows all on it."""
    run = make_run("https://e.com")
    run.robots_received(status, b"", "https://e.com/robots.txt")
    assert run.notes()[0] == f"{note} treated as disallowed"
