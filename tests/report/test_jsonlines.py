"""The report writer's lines are what the JSON encoder writes for every record's fields."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest

from sitemapaudit.report.jsonlines import ReportJsonLinesItemExporter
from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord

U = "https://e.com/p"


def line(item: Any) -> bytes:
    out = io.BytesIO()
    exporter = ReportJsonLinesItemExporter(out)
    exporter.start_exporting()
    exporter.export_item(item)
    return out.getvalue()


def encoded(record: Any) -> bytes:
    fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    return (json.dumps(fields, ensure_ascii=False) + "\n").encode()


@pytest.mark.parametrize(
    "record",
    [
        UrlRecord(url=U, sitemaps=["https://e.com/s.xml"], lastmod="2024-01-01"),
        UrlRecord(
            url='https://e.com/ü"\\\n\u2028\x00',
            sitemaps=[],
            robots_blocked=True,
            issues=["robots_blocked", "duplicate"],
            errors=['robots_blocked: "x"', "duplicate: listed 2 times"],
        ),
        UrlRecord(url=U, status=200, fetched=True, checked_at="2024-01-01T00:00:00Z"),
        UrlRecord(url=U, lastmod_delta_s=0.0),
        UrlRecord(url=U, redirect_chain=[{"url": U, "status": 301}]),
        UrlRecord(url=U, sitemaps=("https://e.com/s.xml",)),  # type: ignore[arg-type]
        SitemapRecord(url="https://e.com/s.xml", found_via="robots.txt"),
        SummaryRecord(origin="https://e.com", started_at="2024-01-01T00:00:00Z"),
    ],
)
def test_each_record_is_one_line_as_the_encoder_writes_it(record: Any) -> None:
    assert line(record) == encoded(record)


def test_diff_records_are_written_as_they_are() -> None:
    diff = {"record": "diff", "change": "url_added", "url": U, "code": None}
    assert line(diff) == (json.dumps(diff, ensure_ascii=False) + "\n").encode()
