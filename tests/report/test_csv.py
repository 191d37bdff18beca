"""CSV files for spreadsheets: read back with the csv module."""

from __future__ import annotations

import codecs
import csv
import io
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.report.exporters import (
    ChangesCsvItemExporter,
    FlatCsvItemExporter,
    SitemapCsvItemExporter,
    UrlCsvItemExporter,
    write_csv,
)
from sitemapaudit.report.flat import CHANGE_COLUMNS, SITEMAP_COLUMNS, URL_COLUMNS
from tests.report.conftest import FORMULA_URL, SCRIPT_URL, UNICODE_URL, by_record


def _read(path: Path, encoding: str = "utf-8") -> list[dict[str, str]]:
    with open(path, encoding=encoding, newline="") as f:
        return list(csv.DictReader(f))


def _header(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return next(csv.reader(f))


def test_urls_and_sitemaps_go_to_separate_files_with_stable_columns(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    urls, sitemaps = tmp_path / "urls.csv", tmp_path / "sitemaps.csv"
    write_csv(records, urls, sitemaps)
    assert _header(urls) == list(URL_COLUMNS)
    assert _header(sitemaps) == list(SITEMAP_COLUMNS)
    url_rows, sitemap_rows = _read(urls), _read(sitemaps)
    assert [r["url"] for r in url_rows] == [
        "'" + r["url"] if r["url"].startswith("=") else r["url"] for r in by_record(records, "url")
    ]
    assert [r["url"] for r in sitemap_rows] == [r["url"] for r in by_record(records, "sitemap")]
    assert not urls.read_bytes().startswith(codecs.BOM_UTF8)


def test_url_row_values(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    urls, sitemaps = tmp_path / "urls.csv", tmp_path / "sitemaps.csv"
    write_csv(records, urls, sitemaps)
    rows = {r["url"]: r for r in _read(urls)}
    redirect = rows["https://shop.example/redirect"]
    assert redirect["status"] == "200"
    assert redirect["fetched"] == "true"
    assert redirect["redirect_hops"] == "2"
    assert redirect["redirect_chain"] == (
        "301 https://shop.example/redirect -> 302 https://shop.example/redirect-hop"
    )
    assert redirect["issues"] == "redirect"
    assert redirect["robots_blocked"] == "false"
    assert redirect["lastmod"] == ""
    assert redirect["lastmod_delta_s"] == ""

    dup = rows["https://shop.example/dup"]
    assert dup["sitemaps"] == "https://shop.example/pages.xml; https://shop.example/pages.xml.gz"

    blocked = rows["https://shop.example/private/page"]
    assert (blocked["status"], blocked["fetched"], blocked["robots_blocked"]) == (
        "",
        "false",
        "true",
    )
    assert blocked["checked_at"] == ""

    odd = rows[UNICODE_URL]
    assert odd["noindex"] == "meta:robots; header:x-robots-tag"
    assert odd["issues"] == "noindex"
    assert odd["errors"] == (
        'noindex: <meta name="robots" content="noindex">; noindex: X-Robots-Tag: noindex'
    )
    assert odd["lastmod_delta_s"] == "1200"

    future = rows["https://shop.example/lastmod-future"]
    assert future["issues"] == "lastmod_future; lastmod_unverifiable"
    assert rows[SCRIPT_URL]["status"] == "404"


def test_text_a_spreadsheet_would_run_as_a_formula_is_quoted(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    urls = tmp_path / "urls.csv"
    write_csv(records, urls, tmp_path / "sitemaps.csv")
    cells = [r["url"] for r in _read(urls)]
    assert FORMULA_URL not in cells
    assert "'" + FORMULA_URL in cells


def test_sitemap_row_values(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    sitemaps = tmp_path / "sitemaps.csv"
    write_csv(records, tmp_path / "urls.csv", sitemaps)
    rows = {r["url"]: r for r in _read(sitemaps)}
    empty = rows["https://shop.example/empty.xml"]
    assert empty["found_via"] == "index"
    assert empty["parent"] == "https://shop.example/sitemap_index.xml"
    assert empty["kind"] == "urlset"
    assert empty["gzip"] == "false"
    assert empty["issues"] == "empty; schema_invalid"
    assert empty["errors"].startswith("empty: the urlset lists no entries; schema_invalid: ")
    off = rows["http://other.example/sitemap.xml"]
    assert (off["status"], off["parent"] != "", off["bytes"]) == ("", True, "0")
    assert rows["https://shop.example/sitemap-products.xml"]["gzip"] == "true"


def test_bom_option_for_excel(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    urls, sitemaps, changes = tmp_path / "u.csv", tmp_path / "s.csv", tmp_path / "c.csv"
    write_csv(records, urls, sitemaps, bom=True, changes_path=changes)
    for path in (urls, sitemaps, changes):
        data = path.read_bytes()
        assert data.startswith(codecs.BOM_UTF8)
        assert data.count(codecs.BOM_UTF8) == 1
    rows = _read(urls, encoding="utf-8-sig")
    assert list(rows[0]) == list(URL_COLUMNS)
    assert UNICODE_URL in [r["url"] for r in rows]


def test_rows_end_with_crlf_and_quote_what_needs_quoting(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    urls = tmp_path / "urls.csv"
    write_csv(records, urls, tmp_path / "sitemaps.csv")
    data = urls.read_bytes().decode("utf-8")
    assert data.endswith("\r\n")
    assert data.count("\r\n") == len(by_record(records, "url")) + 1
    assert '"https://shop.example/café/crème-brûlée?a=1,2&b=""q"""' in data


def test_changes_csv(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    changes = tmp_path / "changes.csv"
    write_csv(records, tmp_path / "u.csv", tmp_path / "s.csv", changes_path=changes)
    assert _header(changes) == list(CHANGE_COLUMNS)
    rows = _read(changes)
    assert len(rows) == len(by_record(records, "diff"))
    regression = next(r for r in rows if r["change"] == "status_regression")
    assert (regression["old"], regression["new"]) == ("200", "404")
    moved = next(r for r in rows if r["change"] == "url_moved")
    assert moved["new"] == "https://shop.example/a.xml; https://shop.example/b.xml"
    new = [r for r in rows if r["change"] == "finding_new"]
    assert [(r["code"], r["old"], r["sitemap"]) for r in new] == [
        ("empty", "", "https://shop.example/empty.xml"),
        ("noindex", "", ""),
    ]


def test_dataclass_items_give_the_same_files(
    tmp_path: Path, records: list[dict[str, Any]], items: list[Any]
) -> None:
    write_csv(records, tmp_path / "u1.csv", tmp_path / "s1.csv")
    write_csv(items, tmp_path / "u2.csv", tmp_path / "s2.csv")
    assert (tmp_path / "u1.csv").read_bytes() == (tmp_path / "u2.csv").read_bytes()
    assert (tmp_path / "s1.csv").read_bytes() == (tmp_path / "s2.csv").read_bytes()


def _export(exporter_class: type[FlatCsvItemExporter], items: list[Any], **options: Any) -> bytes:
    """Drives an exporter the way Scrapy's feed slot does."""
    buffer = io.BytesIO()
    exporter = exporter_class(buffer, **options)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return buffer.getvalue()


def test_exporters_skip_other_record_types(items: list[Any]) -> None:
    for exporter_class, kind in (
        (UrlCsvItemExporter, "url"),
        (SitemapCsvItemExporter, "sitemap"),
        (ChangesCsvItemExporter, "diff"),
    ):
        data = _export(exporter_class, items, encoding="utf-8")
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        expected = [i for i in items if (i["record"] if isinstance(i, dict) else i.record) == kind]
        assert len(rows) == len(expected) + 1, exporter_class.__name__


def test_exporter_honours_the_feed_encoding(items: list[Any]) -> None:
    bom = _export(UrlCsvItemExporter, items, encoding="utf-8-sig")
    assert bom.startswith(codecs.BOM_UTF8)
    plain = _export(UrlCsvItemExporter, items, encoding=None)
    assert plain.startswith(b"url,status,")
    latin = _export(UrlCsvItemExporter, items[:3], encoding="latin-1")
    assert latin.startswith(b"url,status,")


def test_exporter_writes_the_header_when_no_record_matches() -> None:
    data = _export(SitemapCsvItemExporter, [{"record": "summary", "origin": "x"}], encoding="utf-8")
    assert data == (",".join(SITEMAP_COLUMNS) + "\r\n").encode()


def test_exporter_fields_select_and_rename_columns(items: list[Any]) -> None:
    data = _export(UrlCsvItemExporter, items, fields_to_export=["url", "issues"])
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert rows[0] == ["url", "issues"]
    assert all(len(row) == 2 for row in rows)
    renamed = _export(UrlCsvItemExporter, items, fields_to_export={"url": "URL", "status": "HTTP"})
    assert renamed.startswith(b"URL,HTTP\r\n")
    with pytest.raises(ValueError, match="unknown column"):
        _export(UrlCsvItemExporter, items, fields_to_export=["url", "nope"])


def test_exporter_passes_csv_options(items: list[Any]) -> None:
    data = _export(UrlCsvItemExporter, items, delimiter=";")
    assert data.startswith(b"url;status;fetched;")


def test_exporter_without_header_line(items: list[Any]) -> None:
    data = _export(UrlCsvItemExporter, items, include_headers_line=False)
    assert not data.startswith(b"url,")
