"""Shared fixtures of the export tests: the sample report, as dicts and as record dataclasses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.report.flat import iter_report
from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord
from tests.report import chromium

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "fixtures" / "reports" / "sample.jsonl"
SCRIPT_URL = 'https://shop.example/search?q=<script>document.title="pwned"</script>'
FORMULA_URL = '=HYPERLINK("https://evil.example","click me")'
UNICODE_URL = 'https://shop.example/café/crème-brûlée?a=1,2&b="q"'


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return list(iter_report(SAMPLE))


def as_dataclass(record: dict[str, Any]) -> Any:
    """A report line as the dataclass the pipeline yields (diff records stay dicts)."""
    fields = {k: v for k, v in record.items() if k != "record"}
    kind = record["record"]
    if kind == "url":
        return UrlRecord(**fields)
    if kind == "sitemap":
        return SitemapRecord(**fields)
    if kind == "summary":
        return SummaryRecord(**fields)
    return dict(record)


@pytest.fixture
def items(records: list[dict[str, Any]]) -> list[Any]:
    return [as_dataclass(r) for r in records]


def by_record(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["record"] == kind]


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chromium.Browser]:
    if not chromium.available():
        pytest.skip("chromium not installed: apt-get install chromium")
    instance = chromium.Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield instance
    finally:
        instance.close()
