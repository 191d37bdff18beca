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


@pytest.mark.parametrize("encoding", ["utf-8-sig", "UTF-8-SIG", "latin-1", None])
def test_lines_are_utf8_without_a_bom_whatever_the_feed_encoding(encoding: str | None) -> None:
    records: list[Any] = [
        UrlRecord(url="https://e.com/caf\u00e9", sitemaps=["https://e.com/s.xml"]),
        UrlRecord(url="https://e.com/\u00fc", status=200, fetched=True),
        {"record": "diff", "change": "url_added", "url": "https://e.com/\u00e9"},
        SummaryRecord(origin="https://e.com", started_at="2024-01-01T00:00:00Z"),
    ]
    out = io.BytesIO()
    exporter = ReportJsonLinesItemExporter(out, encoding=encoding)
    exporter.start_exporting()
    for record in records:
        exporter.export_item(record)
    exporter.finish_exporting()
    data = out.getvalue()
    assert b"\xef\xbb\xbf" not in data
    lines = data.decode("utf-8").splitlines()
    assert [json.loads(text).get("url") for text in lines] == [
        "https://e.com/caf\u00e9",
        "https://e.com/\u00fc",
        "https://e.com/\u00e9",
        None,
    ]


def test_selected_fields_are_utf8_without_a_bom_too() -> None:
    out = io.BytesIO()
    exporter = ReportJsonLinesItemExporter(out, encoding="utf-8-sig", fields_to_export=["url"])
    exporter.start_exporting()
    exporter.export_item(UrlRecord(url="https://e.com/caf\u00e9"))
    exporter.export_item(UrlRecord(url="https://e.com/b"))
    assert out.getvalue().decode("utf-8").splitlines() == [
        '{"url": "https://e.com/caf\u00e9"}',
        '{"url": "https://e.com/b"}',
    ]
