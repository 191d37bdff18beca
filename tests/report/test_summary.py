"""The summary's totals and the notes it derives from them."""

from __future__ import annotations

import logging

import pytest
from scrapy import Spider
from scrapy.utils.test import get_crawler

from sitemapaudit.checks.base import Severity
from sitemapaudit.pipelines import SummaryPipeline
from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord
from sitemapaudit.report.summary import SummaryCounter

SEVERITY = {("url", "http_error"): Severity.ERROR}


def summary_of(*records: UrlRecord) -> SummaryRecord:
    counter = SummaryCounter(SEVERITY)
    for record in records:
        counter.add(record)
    return counter.complete(
        SummaryRecord(origin="https://e.com", started_at="2024-01-01T00:00:00Z")
    )


def pages(count: int, status: int, *, carried_over: bool = False) -> list[UrlRecord]:
    issues = ["http_error"] if status >= 400 else []
    return [
        UrlRecord(
            f"https://e.com/{status}/{i}",
            status=status,
            fetched=True,
            issues=issues,
            carried_over=carried_over,
        )
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (403, "may be refusing this crawler"),
        (401, "asks for credentials"),
        (429, "throttles the audit"),
        (503, "unavailable or throttling"),
    ],
)
def test_nearly_every_page_refused_is_explained(status: int, says: str) -> None:
    summary = summary_of(*pages(19, status), *pages(1, 200))
    refusal = summary.notes[-1]
    assert refusal.startswith(f"19 of the 20 pages requested answered {status}: ")
    assert says in refusal
    assert summary.counts == {"http_error": 19}


def test_a_few_refusals_or_other_errors_are_not_explained() -> None:
    assert "answered" not in " ".join(summary_of(*pages(17, 403), *pages(3, 200)).notes)
    assert "answered" not in " ".join(summary_of(*pages(20, 404)).notes)
    assert "answered" not in " ".join(summary_of(*pages(9, 403)).notes)


def test_pages_carried_over_from_an_earlier_run_do_not_count() -> None:
    summary = summary_of(*pages(5, 403), *pages(15, 200, carried_over=True))
    assert "answered" not in " ".join(summary.notes)
    summary = summary_of(*pages(10, 403), *pages(15, 200, carried_over=True))
    assert summary.notes[-1].startswith("10 of the 10 pages requested answered 403")


@pytest.mark.parametrize(
    ("gone", "says"),
    [
        (1, "; the 1 sitemap of run 7 is gone (sitemap_removed)"),
        (3, "; the 3 sitemaps of run 7 are all gone (sitemap_removed)"),
    ],
)
def test_the_sitemaps_of_the_previous_run_that_are_gone_are_counted(gone: int, says: str) -> None:
    counter = SummaryCounter(SEVERITY)
    for _ in range(gone):
        counter.add_change("sitemap_removed")
    summary = SummaryRecord(origin="https://e.com", started_at="2024-01-01T00:00:00Z")
    summary.changes["previous_run"] = 7
    (note,) = counter.complete(summary).notes
    assert note.startswith("no sitemap was found: ")
    assert note.endswith(says)


def test_without_common_paths_the_note_does_not_say_none_holds_one() -> None:
    summary = SummaryRecord(origin="https://e.com", started_at="2024-01-01T00:00:00Z")
    (note,) = SummaryCounter(SEVERITY).complete(summary, common_paths=False).notes
    assert note == (
        "no sitemap was found: robots.txt and the homepage name none, and no common path was "
        "tried (SITEMAPAUDIT_COMMON_PATHS is empty)"
    )


def _summary_log(caplog: pytest.LogCaptureFixture, *records: SitemapRecord | UrlRecord) -> str:
    caplog.clear()
    pipeline = SummaryPipeline(get_crawler(Spider))
    for record in records:
        pipeline.process_item(record)
    caplog.set_level(logging.INFO, logger="sitemapaudit.pipelines")
    pipeline.process_item(SummaryRecord(origin="https://e.com", started_at="2024-01-01T00:00:00Z"))
    (line,) = [
        r.getMessage()
        for r in caplog.records
        if r.name == "sitemapaudit.pipelines" and r.getMessage().startswith("audit of ")
    ]
    return line


def test_the_summary_log_line_counts_one_sitemap_and_one_url(
    caplog: pytest.LogCaptureFixture,
) -> None:
    line = _summary_log(
        caplog,
        SitemapRecord(url="https://e.com/s.xml", found_via="robots.txt"),
        UrlRecord("https://e.com/a", status=200, fetched=True),
    )
    assert line == "audit of https://e.com: 1 sitemap, 1 URL listed, 1 fetched; findings: none"


def test_the_summary_log_line_counts_many_sitemaps_and_urls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    line = _summary_log(
        caplog,
        *(SitemapRecord(url=f"https://e.com/s{i}.xml", found_via="robots.txt") for i in range(2)),
        *pages(1_234, 200),
    )
    assert line == (
        "audit of https://e.com: 2 sitemaps, 1,234 URLs listed, 1,234 fetched; findings: none"
    )
    assert _summary_log(caplog).startswith("audit of https://e.com: 0 sitemaps, 0 URLs listed, ")
