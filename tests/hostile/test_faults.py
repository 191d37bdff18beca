"""Fault injection: an audit of a site that misbehaves in every way a network can.

The site drops connections, resets them mid-body, announces more bytes than it sends, answers
503 with Retry-After (briefly and for too long), 429, 500, stalls before answering, and
trickles one byte per second; some of its sitemaps fail once, some for good. One audit of
that site runs for the whole module; each test checks one part of its report. With
``RETRY_TIMES=1`` every failing request is tried exactly twice.
"""

from __future__ import annotations

import gzip
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_twisted
from scrapy.utils.defer import deferred_from_coro

from tests.hostile.support import XML, bounded, urlset
from tests.support.crawl import by_record, run_audit
from tests.support.server import Page, TestSite

HTML = "<!DOCTYPE html><html><head><title>t</title></head><body>ok</body></html>"
TIMEOUT = 2
SETTINGS = {
    "DOWNLOAD_TIMEOUT": TIMEOUT,
    "RETRY_TIMES": 1,
    "SITEMAPAUDIT_RETRY_AFTER_MAX": 30,
    "LOG_LEVEL": "INFO",
}


def fails_first(times: int, failure: Page, success: Page) -> Any:
    """A route that answers ``failure`` to its first ``times`` requests, then ``success``."""
    calls = Counter[str]()
    lock = threading.Lock()

    def route(site: TestSite, path: str) -> Page:
        with lock:
            calls[path] += 1
            count = calls[path]
        return failure if count <= times else success

    return route


PAGES: dict[str, Any] = {
    "/ok": Page(body=HTML),
    "/drop": Page(drop=True),
    "/reset": Page(body=HTML + "x" * 5000, reset_after=100),
    "/short": Page(body=HTML, content_length=len(HTML) + 500),
    "/stall": Page(body=HTML, delay=TIMEOUT * 2.5),
    "/trickle": Page(body="0123456789" * 3, trickle=(1, 1.0)),
    "/retry-after": fails_first(
        1, Page(status=503, headers=[("Retry-After", "1")]), Page(body=HTML)
    ),
    "/retry-after-too-long": Page(status=503, headers=[("Retry-After", "3600")]),
    "/too-many": Page(status=429, headers=[("Retry-After", "1")]),
    "/error-once": fails_first(1, Page(status=500), Page(body=HTML)),
    "/error-always": Page(status=500),
    # Gzip data cut short, and gzip data that is not deflate: browsers fail to decode both.
    "/cut-gzip": Page(
        body=gzip.compress(b"<html><head><meta name=robots content=noindex>")[:12] + b"\xff" * 30,
        headers=[("Content-Encoding", "gzip")],
    ),
    "/corrupt-gzip": Page(
        body=gzip.compress(b"<html>")[:10] + b"\x07" + b"\x00" * 30,
        headers=[("Content-Encoding", "gzip")],
    ),
}
FROM_FLAKY = ["/ok", "/from-flaky"]


def site_routes() -> dict[str, Any]:
    listing = urlset(f"{{base}}{path}" for path in PAGES)
    sitemaps = {
        "/pages.xml": Page(body=listing, content_type=XML),
        "/flaky.xml": fails_first(
            1,
            Page(status=503, headers=[("Retry-After", "0")]),
            Page(body=urlset(f"{{base}}{path}" for path in FROM_FLAKY), content_type=XML),
        ),
        "/dead.xml": Page(status=500),
        "/dropped.xml": Page(drop=True),
        "/reset.xml": Page(body=listing + b" " * 5000, content_type=XML, reset_after=200),
        "/stalled.xml": Page(body=listing, content_type=XML, delay=TIMEOUT * 2.5),
    }
    robots = "".join(f"Sitemap: {{base}}{path}\n" for path in sitemaps)
    return {
        "/robots.txt": Page(body=robots, content_type="text/plain"),
        **sitemaps,
        **PAGES,
        "/from-flaky": Page(body=HTML),
    }


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Run:
    site: TestSite
    records: list[dict[str, Any]]
    crawler: Any
    logs: list[logging.LogRecord]
    seconds: float
    peak_bytes: int

    def url(self, path: str) -> dict[str, Any]:
        (found,) = [r for r in by_record(self.records, "url") if r["url"] == self.site.base + path]
        return found

    def sitemap(self, path: str) -> dict[str, Any]:
        url = self.site.base + path
        (found,) = [r for r in by_record(self.records, "sitemap") if r["url"] == url]
        return found

    def times(self, path: str) -> list[float]:
        return [moment for moment, hit in self.site.log if hit == path]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    site = TestSite(site_routes())
    collect = _Collect()
    root = logging.getLogger()
    root.addHandler(collect)
    report = tmp_path_factory.mktemp("faults") / "report.jsonl"
    try:
        with site, bounded(seconds=40, megabytes=64, clock=time.perf_counter) as usage:
            started = time.monotonic()
            records, crawler = pytest_twisted.blockon(
                deferred_from_coro(run_audit(site.base, report, settings=SETTINGS))
            )
            seconds = time.monotonic() - started
    finally:
        root.removeHandler(collect)
    return Run(site, records, crawler, collect.records, seconds, usage.peak_bytes)


def test_every_listed_url_has_exactly_one_record(run: Run) -> None:
    urls = [r["url"] for r in by_record(run.records, "url")]
    listed = {run.site.base + path for path in [*PAGES, *FROM_FLAKY]}
    assert len(urls) == len(set(urls))
    assert set(urls) == listed
    summary = run.records[-1]
    assert summary["record"] == "summary"
    assert summary["urls_listed"] == len(listed)
    assert summary["urls_fetched"] == sum(r["fetched"] for r in by_record(run.records, "url"))
    assert summary["sitemaps_found"] == len(by_record(run.records, "sitemap")) == 6
    assert summary["counts"] == dict(Counter(c for r in run.records[:-1] for c in r["issues"]))


@pytest.mark.parametrize("path", ["/drop", "/reset", "/short", "/stall", "/trickle"])
def test_a_url_that_never_answers_whole_is_fetch_failed_with_its_reason(
    run: Run, path: str
) -> None:
    record = run.url(path)
    assert record["issues"] == ["fetch_failed"]
    assert record["fetched"] is False
    assert record["status"] is None
    (error,) = record["errors"]
    assert error.startswith("fetch_failed: ")
    assert len(error) > len("fetch_failed: ") + 3
    assert_tries(run, path)


@pytest.mark.parametrize(
    ("path", "fault"),
    [
        ("/cut-gzip", "the gzip data is cut short (it ends before its trailer)"),
        ("/corrupt-gzip", "corrupt gzip data (Error -3 while decompressing data: invalid block"),
    ],
)
def test_a_page_whose_gzip_cannot_be_decoded_is_fetch_failed(
    run: Run, path: str, fault: str
) -> None:
    record = run.url(path)
    assert (record["status"], record["fetched"], record["issues"]) == (200, False, ["fetch_failed"])
    assert record["errors"][0].startswith(
        f"fetch_failed: the page's gzip-encoded body cannot be decoded: {fault}"
    )


def assert_tries(run: Run, path: str) -> None:
    """One try and one retry (RETRY_TIMES=1).

    A connection closed before any response is retried once more by Twisted's connection pool
    when the connection was a reused keep-alive one (the server may have closed it as idle),
    so a dropped request may be seen up to twice per try.
    """
    hits = run.site.hits[path]
    if run.site.routes[path].drop:  # type: ignore[union-attr]
        assert 2 <= hits <= 4
    else:
        assert hits == 2


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/stall", "Timeout"),
        ("/trickle", "Timeout"),
        ("/short", "ResponseDataLossError: the response ended before its announced"),
    ],
)
def test_timeouts_say_so(run: Run, path: str, reason: str) -> None:
    assert reason in run.url(path)["errors"][0]


def test_retry_after_is_waited_for_then_the_url_succeeds(run: Run) -> None:
    record = run.url("/retry-after")
    assert (record["status"], record["fetched"], record["issues"]) == (200, True, [])
    first, second = run.times("/retry-after")
    assert second - first >= 0.95


def test_429_is_retried_after_its_retry_after_then_reported(run: Run) -> None:
    record = run.url("/too-many")
    assert (record["status"], record["issues"]) == (429, ["http_error"])
    first, second = run.times("/too-many")
    assert second - first >= 0.95


def test_retry_after_beyond_the_cap_is_not_waited_for(run: Run) -> None:
    record = run.url("/retry-after-too-long")
    assert (record["status"], record["issues"]) == (503, ["http_error"])
    assert run.site.hits["/retry-after-too-long"] == 1
    assert run.crawler.stats.get_value("sitemapaudit/retry_after/too_long") >= 1


def test_server_errors_are_retried_as_configured(run: Run) -> None:
    assert run.url("/error-once")["issues"] == []
    assert run.site.hits["/error-once"] == 2
    assert (run.url("/error-always")["status"], run.url("/error-always")["issues"]) == (
        500,
        ["http_error"],
    )
    assert run.site.hits["/error-always"] == 2


def test_a_sitemap_that_fails_once_is_retried_and_read(run: Run) -> None:
    record = run.sitemap("/flaky.xml")
    assert (record["status"], record["issues"], record["url_count"]) == (200, [], 2)
    assert run.site.hits["/flaky.xml"] == 2
    assert run.url("/from-flaky")["issues"] == []
    assert sorted(run.url("/ok")["sitemaps"]) == [
        run.site.base + "/flaky.xml",
        run.site.base + "/pages.xml",
    ]


@pytest.mark.parametrize(
    ("path", "issue"),
    [
        ("/dead.xml", "http_error"),
        ("/dropped.xml", "fetch_failed"),
        ("/reset.xml", "fetch_failed"),
        ("/stalled.xml", "fetch_failed"),
    ],
)
def test_a_sitemap_that_fails_for_good_is_reported(run: Run, path: str, issue: str) -> None:
    record = run.sitemap(path)
    assert record["issues"] == [issue]
    assert record["url_count"] == 0
    assert_tries(run, path)


def test_failed_sitemaps_do_not_affect_the_urls_of_the_others(run: Run) -> None:
    for path in ("/from-flaky", "/retry-after", "/error-once"):
        assert run.url(path)["issues"] == [], path
    assert run.url("/ok")["issues"] == ["duplicate"]
    for path in PAGES:
        assert run.url(path)["sitemaps"][-1] == run.site.base + "/pages.xml"


def test_the_audit_stays_within_its_budget_and_logs_no_error(run: Run) -> None:
    # The slowest URL needs two timeouts; everything else runs alongside.
    assert run.seconds < 4 * TIMEOUT * 2 + 10
    assert run.peak_bytes < 64 * 1024 * 1024
    bad = [r for r in run.logs if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]
    stats = run.crawler.stats.get_stats()
    assert not stats.get("log_count/ERROR")
    assert not [key for key in stats if key.startswith("spider_exceptions")]


def test_the_report_is_valid_json_lines_ending_with_the_summary(run: Run) -> None:
    kinds = [r["record"] for r in run.records]
    assert kinds[-1] == "summary"
    assert set(kinds) == {"sitemap", "url", "summary"}
    assert kinds.index("url") > 0
