"""The summary's totals and the notes it derives from them."""

from __future__ import annotations

import pytest

from sitemapaudit.checks.base import Severity
from sitemapaudit.report.records import SummaryRecord, UrlRecord
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
