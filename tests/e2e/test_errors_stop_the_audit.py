"""An error of the audit's own code (a bug, injected here) stops the audit at once: the report
ends with a summary marked incomplete that names the error, rather than missing records
quietly or waiting forever for a sitemap that will never be finished."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.commands.crawl import audit_failed
from sitemapaudit.crawl import pages, sitemaps
from sitemapaudit.history.store import HistoryStore
from sitemapaudit.report.build import RecordBuilder
from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, page, url, urlset
from tests.support.server import Page, TestSite


def site() -> TestSite:
    routes: dict[str, Any] = {
        "/robots.txt": Page(
            body="Sitemap: {base}/s.xml\nSitemap: {base}/t.xml\n", content_type="text/plain"
        ),
        "/s.xml": Page(
            body=urlset(*(url("{base}" + f"/p{i}") for i in range(5))), content_type=XML
        ),
        "/t.xml": Page(body=urlset(url("{base}/q")), content_type=XML),
        "/q": page(),
    }
    routes.update({f"/p{i}": page() for i in range(5)})
    return TestSite(routes)


def break_page_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    read = pages.outcome_from_response

    def broken(**kwargs: Any) -> Any:
        if kwargs["url"].endswith("/p2"):
            raise RuntimeError("bug in page reading")
        return read(**kwargs)

    monkeypatch.setattr(pages, "outcome_from_response", broken)


def break_sitemap_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    read = sitemaps.read_sitemap

    def broken(body: bytes, facts: Any, **kwargs: Any) -> Any:
        if facts.url.endswith("/s.xml"):
            raise RuntimeError("bug in sitemap reading")
        return read(body, facts, **kwargs)

    monkeypatch.setattr(sitemaps, "read_sitemap", broken)


def break_a_check(monkeypatch: pytest.MonkeyPatch) -> None:
    build = RecordBuilder.url_record

    def broken(self: RecordBuilder, facts: Any) -> Any:
        if facts.url.endswith("/q"):
            raise RuntimeError("bug in a check")
        return build(self, facts)

    monkeypatch.setattr(RecordBuilder, "url_record", broken)


@pytest.mark.parametrize(
    ("breaks", "message", "reason"),
    [
        (break_page_reading, "RuntimeError: bug in page reading while processing", "errorcount"),
        (break_sitemap_reading, "RuntimeError: bug in sitemap reading", "errorcount"),
        (break_a_check, "RuntimeError: bug in a check", "item_error"),
    ],
    ids=["page-callback", "sitemap-callback", "item-pipeline"],
)
@deferred_f_from_coro_f
async def test_an_error_of_the_audit_stops_it_with_an_incomplete_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breaks: Any, message: str, reason: str
) -> None:
    breaks(monkeypatch)
    with site() as test_site:
        records, crawler = await run_audit(test_site.base, tmp_path / "r.jsonl")

    assert crawler.stats.get_value("finish_reason").endswith(reason)
    summary = records[-1]
    assert summary["record"] == "summary"
    assert summary["complete"] is False
    assert any(message in note for note in summary["notes"]), summary["notes"]
    assert audit_failed(crawler.stats.get_stats())
    assert len(by_record(records, "url")) < 6


@deferred_f_from_coro_f
async def test_with_the_error_count_off_the_audit_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-s CLOSESPIDER_ERRORCOUNT=0``: Scrapy's own behaviour, the error is logged and the
    crawl goes on (the broken page has no record)."""
    break_page_reading(monkeypatch)
    with site() as test_site:
        records, crawler = await run_audit(
            test_site.base, tmp_path / "r.jsonl", settings={"CLOSESPIDER_ERRORCOUNT": 0}
        )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert sorted(r["url"].rsplit("/", 1)[-1] for r in by_record(records, "url")) == [
        "p0",
        "p1",
        "p3",
        "p4",
        "q",
    ]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@deferred_f_from_coro_f
async def test_a_site_that_never_answers_stops_the_audit_saying_why(tmp_path: Path) -> None:
    """No request got an HTTP answer: the report is no baseline for the next run, so the
    audit is incomplete (exit status 1) and the summary names the errors."""
    base = f"http://127.0.0.1:{_closed_port()}"
    history = tmp_path / "history.sqlite3"
    records, crawler = await run_audit(
        base, tmp_path / "report.jsonl", settings={"SITEMAPAUDIT_HISTORY_PATH": str(history)}
    )
    [summary] = records
    assert summary["complete"] is False
    assert summary["robots_txt"]["outcome"] == "disallow_all"
    robots, homepage, unreachable = summary["notes"]
    assert robots.startswith("robots.txt could not be read (ConnectionRefusedError")
    assert homepage.startswith("the homepage could not be read (ConnectionRefusedError")
    assert unreachable.startswith(
        f"the site could not be reached: no request to {base} got an HTTP answer "
        "(robots.txt: ConnectionRefusedError"
    )
    assert "; the homepage: ConnectionRefusedError" in unreachable
    assert unreachable.endswith("so nothing was audited; the history keeps this run as unfinished")
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "site_unreachable"
    assert audit_failed(stats)
    with HistoryStore(str(history)) as store:
        [kept] = store.runs()
    assert kept.finished_at is None


@deferred_f_from_coro_f
async def test_a_site_that_answers_only_with_errors_is_audited(tmp_path: Path) -> None:
    """An HTTP answer, even a 503, means the site was reached: the audit ends as usual."""
    site = TestSite({"/robots.txt": Page(status=503, body="down")})
    with site:
        records, crawler = await run_audit(site.base, tmp_path / "report.jsonl")
    summary = by_record(records, "summary")[0]
    assert summary["complete"] is True
    assert summary["robots_txt"]["status"] == 503
    assert any(note.startswith("no sitemap was found") for note in summary["notes"])
    assert crawler.stats.get_value("finish_reason") == "finished"
