"""Flattening records into spreadsheet rows, and reading a JSON Lines report back."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.report.flat import (
    CHANGE_COLUMNS,
    SITEMAP_COLUMNS,
    URL_COLUMNS,
    ReportFormatError,
    csv_text,
    flatten_change,
    flatten_sitemap,
    flatten_url,
    iter_report,
    meaning_of,
    record_kind,
    severity_of,
)
from sitemapaudit.report.records import SitemapRecord, UrlRecord
from tests.report.conftest import SAMPLE

REDIRECTED = UrlRecord(
    url="https://a.example/old",
    sitemaps=["https://a.example/s1.xml", "https://a.example/s2.xml"],
    lastmod="2024-05-01",
    status=200,
    fetched=True,
    redirect_chain=[
        {"url": "https://a.example/old", "status": 301},
        {"url": "https://a.example/mid", "status": 302},
    ],
    final_url="https://a.example/new",
    last_modified="Wed, 01 May 2024 10:00:00 GMT",
    lastmod_delta_s=36000.0,
    noindex=["meta:robots", "header:x-robots-tag"],
    robots_blocked=False,
    canonical="https://a.example/new",
    issues=["redirect", "noindex"],
    errors=["redirect: 2 hops", "noindex: meta robots"],
    checked_at="2024-06-05T12:00:00Z",
)


def test_column_orders_are_the_documented_ones() -> None:
    assert URL_COLUMNS == (
        "url",
        "status",
        "fetched",
        "final_url",
        "redirect_hops",
        "redirect_chain",
        "last_modified",
        "lastmod",
        "lastmod_delta_s",
        "noindex",
        "robots_blocked",
        "canonical",
        "sitemaps",
        "issues",
        "errors",
        "checked_at",
        "carried_over",
    )
    assert SITEMAP_COLUMNS == (
        "url",
        "found_via",
        "parent",
        "kind",
        "status",
        "gzip",
        "bytes",
        "url_count",
        "child_count",
        "issues",
        "errors",
        "not_modified",
    )
    assert CHANGE_COLUMNS == ("change", "url", "sitemap", "code", "old", "new")


def test_every_field_of_a_record_has_a_column() -> None:
    def fields(record: type[Any]) -> set[str]:
        return set(record.__dataclass_fields__) - {"record"}

    assert fields(UrlRecord) <= set(URL_COLUMNS)
    assert fields(SitemapRecord) <= set(SITEMAP_COLUMNS)


def test_carried_over_and_not_modified_reach_their_columns() -> None:
    carried = UrlRecord(url="https://a.example/", status=200, fetched=True, carried_over=True)
    assert flatten_url(carried)["carried_over"] is True
    assert flatten_url(UrlRecord(url="https://a.example/"))["carried_over"] is False
    assert flatten_url({"record": "url", "carried_over": True})["carried_over"] is True
    sitemap = SitemapRecord(url="https://a.example/s.xml", found_via="robots.txt")
    sitemap.not_modified = True
    assert flatten_sitemap(sitemap)["not_modified"] is True
    assert flatten_sitemap({"record": "sitemap", "not_modified": False})["not_modified"] is False
    # A report of an earlier version, without the field, leaves the cell empty.
    assert flatten_sitemap({"record": "sitemap"})["not_modified"] is None
    assert csv_text(flatten_url(carried)["carried_over"]) == "true"


def test_a_url_record_flattens_lists_chain_and_types() -> None:
    row = flatten_url(REDIRECTED)
    assert list(row) == list(URL_COLUMNS)
    assert row["redirect_hops"] == 2
    assert row["redirect_chain"] == "301 https://a.example/old -> 302 https://a.example/mid"
    assert row["sitemaps"] == "https://a.example/s1.xml; https://a.example/s2.xml"
    assert row["noindex"] == "meta:robots; header:x-robots-tag"
    assert row["issues"] == "redirect; noindex"
    assert row["errors"] == "redirect: 2 hops; noindex: meta robots"
    assert row["status"] == 200
    assert row["fetched"] is True
    assert row["robots_blocked"] is False
    assert row["lastmod_delta_s"] == 36000.0


def test_dataclass_and_dict_flatten_alike() -> None:
    as_dict: dict[str, Any] = json.loads(json.dumps({"record": "url", **_fields(REDIRECTED)}))
    assert flatten_url(as_dict) == flatten_url(REDIRECTED)
    sitemap = SitemapRecord(url="https://a.example/s.xml.gz", found_via="robots.txt", gzip=True)
    assert flatten_sitemap({"record": "sitemap", **_fields(sitemap)}) == flatten_sitemap(sitemap)


def _fields(record: Any) -> dict[str, Any]:
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


def test_missing_fields_and_empty_lists() -> None:
    row = flatten_url({"record": "url", "url": "https://a.example/"})
    assert row["url"] == "https://a.example/"
    assert row["status"] is None
    assert row["redirect_hops"] == 0
    assert row["redirect_chain"] is None
    assert row["issues"] is None
    empty = flatten_url(UrlRecord(url="https://a.example/"))
    assert empty["issues"] == ""
    assert empty["redirect_chain"] is None


def test_a_sitemap_record_flattens() -> None:
    record = SitemapRecord(
        url="https://a.example/s.xml",
        found_via="index",
        parent="https://a.example/index.xml",
        kind="urlset",
        status=200,
        gzip=False,
        bytes=1234,
        url_count=3,
        issues=["empty", "nested_index"],
        errors=["empty: none", "nested_index: deep"],
    )
    row = flatten_sitemap(record)
    assert list(row) == list(SITEMAP_COLUMNS)
    assert row["issues"] == "empty; nested_index"
    assert row["gzip"] is False
    assert row["bytes"] == 1234


def test_change_values_scalars_lists_and_objects() -> None:
    row = flatten_change(
        {
            "record": "diff",
            "change": "url_moved",
            "url": "https://a.example/p",
            "sitemap": None,
            "code": None,
            "old": ["https://a.example/a.xml"],
            "new": ["https://a.example/a.xml", "https://a.example/b.xml"],
        }
    )
    assert row["old"] == "https://a.example/a.xml"
    assert row["new"] == "https://a.example/a.xml; https://a.example/b.xml"
    status = flatten_change({"record": "diff", "change": "status_changed", "old": 503, "new": 500})
    assert (status["old"], status["new"], status["url"]) == (503, 500, None)
    nested = flatten_change({"record": "diff", "change": "x", "old": {"a": [1]}, "new": [{"b": 2}]})
    assert (nested["old"], nested["new"]) == ('{"a":[1]}', '[{"b":2}]')


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (200, "200"),
        (3600.0, "3600"),
        (-1.5, "-1.5"),
        ("https://a.example/", "https://a.example/"),
        ('=HYPERLINK("x")', '\'=HYPERLINK("x")'),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
    ],
)
def test_csv_text(cell: Any, text: str) -> None:
    assert csv_text(cell) == text


def test_record_kind() -> None:
    assert record_kind(REDIRECTED) == "url"
    assert record_kind({"record": "diff"}) == "diff"
    assert record_kind({"no": "record"}) is None
    assert record_kind("not an item") is None


def test_code_severity_and_meaning_come_from_the_checks() -> None:
    assert severity_of("noindex") == "error"
    assert severity_of("duplicate", "url") == "notice"
    assert severity_of("empty", "sitemap") == "warning"
    assert severity_of("no_such_code") is None
    assert meaning_of("noindex") == (
        "The page says noindex (meta robots/googlebot or X-Robots-Tag, or an `unavailable_after`"
        " date that has passed) but is listed for indexing."
    )


def test_iter_report_reads_every_line(tmp_path: Path) -> None:
    records = list(iter_report(SAMPLE))
    assert records[-1]["record"] == "summary"
    assert {r["record"] for r in records} == {"sitemap", "url", "diff", "summary"}
    assert len(records) == len(SAMPLE.read_text(encoding="utf-8").splitlines())


def test_iter_report_reads_gzip_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    lines = ['{"record": "url", "url": "https://a.example/é"}', "", '{"record": "summary"}']
    text = "\ufeff" + "\r\n".join(lines) + "\r\n"
    plain = tmp_path / "r.jsonl"
    plain.write_bytes(text.encode("utf-8"))
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    for path in (plain, packed):
        records = list(iter_report(path))
        assert records == [{"record": "url", "url": "https://a.example/é"}, {"record": "summary"}]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"record": "url"}\n{not json\n', "r.jsonl:2: not a JSON line"),
        (b'{"record": "url"}\n[1, 2]\n', "r.jsonl:2: not a JSON object"),
        (b'{"record": "url", "url": "\xff"}\n', "r.jsonl:1: not a JSON line"),
        (b"\x1f\x8bnot really gzip", "unreadable"),
        (
            b'{"record": "url"}\n{"record": "summary"}\n\n{"record": "url"}\n',
            "r.jsonl:4: a record after the summary of line 2: the file holds more than one run",
        ),
    ],
)
def test_iter_report_names_the_bad_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(content)
    with pytest.raises(ReportFormatError, match=message):
        list(iter_report(path))
