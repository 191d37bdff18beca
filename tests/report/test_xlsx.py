"""The XLSX workbook: read back with openpyxl."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from openpyxl.worksheet.worksheet import Worksheet

from sitemapaudit.report.exporters import XlsxItemExporter
from sitemapaudit.report.flat import CHANGE_COLUMNS, SITEMAP_COLUMNS, URL_COLUMNS
from sitemapaudit.report.xlsx import MAX_CELL_CHARS, XlsxReport, write_xlsx
from tests.report.conftest import FORMULA_URL, SCRIPT_URL, UNICODE_URL, by_record


def _rows(ws: Worksheet) -> list[dict[str, Any]]:
    values = list(ws.iter_rows(values_only=True))
    header = [str(v) for v in values[0]]
    return [dict(zip(header, row, strict=True)) for row in values[1:]]


@pytest.fixture
def workbook(tmp_path: Path, records: list[dict[str, Any]]) -> Any:
    path = tmp_path / "report.xlsx"
    write_xlsx(records, path)
    return load_workbook(path)


def test_sheets_in_order(workbook: Any) -> None:
    assert workbook.sheetnames == ["URLs", "Sitemaps", "Changes", "Summary"]


def test_headers_bold_frozen_and_filtered(workbook: Any) -> None:
    for name, columns in (
        ("URLs", URL_COLUMNS),
        ("Sitemaps", SITEMAP_COLUMNS),
        ("Changes", CHANGE_COLUMNS),
        ("Summary", ("key", "value", "severity")),
    ):
        ws = workbook[name]
        header = next(ws.iter_rows(min_row=1, max_row=1))
        assert [c.value for c in header] == list(columns), name
        assert all(c.font.b for c in header), name
        assert ws.freeze_panes == "A2", name
        assert ws.auto_filter.ref == f"A1:{header[-1].column_letter}{ws.max_row}", name
        assert ws.column_dimensions["A"].width >= 12, name


def test_sensible_column_widths(workbook: Any) -> None:
    urls = workbook["URLs"]
    assert urls.column_dimensions["A"].width == 70
    assert urls.column_dimensions["B"].width < 12


def test_url_rows_keep_their_types(workbook: Any, records: list[dict[str, Any]]) -> None:
    rows = _rows(workbook["URLs"])
    assert len(rows) == len(by_record(records, "url"))
    by_url = {r["url"]: r for r in rows}
    redirect = by_url["https://shop.example/redirect"]
    assert redirect["status"] == 200
    assert redirect["fetched"] is True
    assert redirect["robots_blocked"] is False
    assert redirect["redirect_hops"] == 2
    assert redirect["redirect_chain"] == (
        "301 https://shop.example/redirect -> 302 https://shop.example/redirect-hop"
    )
    assert redirect["lastmod"] is None
    mismatch = by_url["https://shop.example/lastmod-mismatch"]
    assert mismatch["lastmod_delta_s"] == 136720800
    assert mismatch["issues"] == "lastmod_mismatch"
    assert by_url[UNICODE_URL]["noindex"] == "meta:robots; header:x-robots-tag"
    assert by_url[SCRIPT_URL]["status"] == 404


def test_text_is_never_a_formula(tmp_path: Path, workbook: Any) -> None:
    urls = workbook["URLs"]
    cell = next(c for c in urls["A"] if c.value == FORMULA_URL)
    assert cell.data_type == "s"


def test_sitemap_and_change_rows(workbook: Any, records: list[dict[str, Any]]) -> None:
    sitemaps = _rows(workbook["Sitemaps"])
    assert [r["url"] for r in sitemaps] == [r["url"] for r in by_record(records, "sitemap")]
    products = next(r for r in sitemaps if r["url"].endswith("sitemap-products.xml"))
    assert (products["gzip"], products["bytes"], products["url_count"]) == (True, 2048, 3)
    changes = _rows(workbook["Changes"])
    assert len(changes) == len(by_record(records, "diff"))
    regression = next(r for r in changes if r["change"] == "status_regression")
    assert (regression["old"], regression["new"]) == (200, 404)


def test_summary_key_values(workbook: Any, records: list[dict[str, Any]]) -> None:
    summary = records[-1]
    rows = _rows(workbook["Summary"])
    values = {r["key"]: r["value"] for r in rows}
    assert values["origin"] == "https://shop.example"
    assert values["finished_at"] == "2024-06-05T12:00:00Z"
    assert values["urls_listed"] == summary["urls_listed"]
    assert values["robots_txt.outcome"] == "rules"
    assert values["severity.error"] == summary["severities"]["error"]
    for code, count in summary["counts"].items():
        assert values[f"count.{code}"] == count
    severities = {r["key"]: r["severity"] for r in rows}
    assert severities["count.noindex"] == "error"
    assert severities["count.duplicate"] == "notice"
    assert values["change.status_regression"] == 2
    assert [r["value"] for r in rows if r["key"] == "note"] == summary["notes"]
    assert values["setting.disabled_checks"] is None
    assert values["setting.lastmod_tolerance"] == 3600


def test_a_report_without_summary_says_so(tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    write_xlsx([{"record": "url", "url": "https://a.example/"}], path)
    rows = _rows(load_workbook(path)["Summary"])
    assert rows[0]["key"] == "summary"
    assert "missing" in rows[0]["value"]


def test_hostile_text_is_made_storable(tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    long_error = "x" * (MAX_CELL_CHARS + 10)
    record = {
        "record": "url",
        "url": "https://a.example/\x00\x07bell",
        "errors": [long_error],
        "issues": ["\ud800"],
    }
    write_xlsx([record], path)
    row = _rows(load_workbook(path)["URLs"])[0]
    assert row["url"] == "https://a.example/\ufffd\ufffdbell"
    assert len(row["errors"]) == MAX_CELL_CHARS
    assert row["errors"].endswith("\u2026")
    assert row["issues"] == "?"


def test_full_sheets_continue_in_numbered_sheets(tmp_path: Path) -> None:
    report = XlsxReport(max_sheet_rows=3)
    for n in range(7):
        report.add({"record": "url", "url": f"https://a.example/{n}"})
    report.add({"record": "sitemap", "url": "https://a.example/s.xml", "found_via": "argument"})
    path = tmp_path / "r.xlsx"
    report.save(path)
    wb = load_workbook(path)
    assert wb.sheetnames == [
        "URLs",
        "URLs (2)",
        "URLs (3)",
        "URLs (4)",
        "Sitemaps",
        "Changes",
        "Summary",
    ]
    urls = [r["url"] for name in wb.sheetnames[:4] for r in _rows(wb[name])]
    assert urls == [f"https://a.example/{n}" for n in range(7)]
    assert wb["URLs (2)"].freeze_panes == "A2"


def test_exporter_writes_the_workbook_at_finish(items: list[Any]) -> None:
    buffer = io.BytesIO()
    exporter = XlsxItemExporter(buffer, encoding="utf-8", fields_to_export=None, indent=None)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    assert buffer.getvalue() == b""
    exporter.finish_exporting()
    buffer.seek(0)
    wb = load_workbook(buffer)
    assert wb.sheetnames == ["URLs", "Sitemaps", "Changes", "Summary"]
    assert wb["URLs"].max_row == 1 + sum(1 for i in items if getattr(i, "record", None) == "url")


def test_the_workbook_is_saved_once(tmp_path: Path) -> None:
    report = XlsxReport()
    report.save(tmp_path / "a.xlsx")
    with pytest.raises(RuntimeError):
        report.save(tmp_path / "b.xlsx")


def test_the_exporter_never_seeks_in_the_feed_file(tmp_path: Path, items: list[Any]) -> None:
    path = tmp_path / "appended.xlsx"
    with open(path, "ab") as file:
        exporter = XlsxItemExporter(file)
        exporter.start_exporting()
        for item in items:
            exporter.export_item(item)
        exporter.finish_exporting()
    assert load_workbook(path).sheetnames == ["URLs", "Sitemaps", "Changes", "Summary"]


def test_other_summary_fields_are_listed(workbook: Any) -> None:
    values = {r["key"]: r["value"] for r in _rows(workbook["Summary"])}
    assert values["fail_on.threshold"] == "error"
    assert values["fail_on.failed"] is True
