"""The exporters as Scrapy feed formats: FEED_EXPORTERS, FEEDS and FEED_EXPORT_ENCODING."""

from __future__ import annotations

import codecs
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

from openpyxl import load_workbook

from sitemapaudit.report.flat import SITEMAP_COLUMNS, URL_COLUMNS
from tests.report.conftest import REPO

SPIDER = """
import scrapy

from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord

EXPORTERS = "sitemapaudit.report.exporters."


class FeedsSpider(scrapy.Spider):
    name = "feeds"
    custom_settings = {
        "FEED_EXPORTERS": {
            "urls_csv": EXPORTERS + "UrlCsvItemExporter",
            "sitemaps_csv": EXPORTERS + "SitemapCsvItemExporter",
            "changes_csv": EXPORTERS + "ChangesCsvItemExporter",
            "xlsx": EXPORTERS + "XlsxItemExporter",
            "html": EXPORTERS + "HtmlItemExporter",
            "jsonlines": "sitemapaudit.report.jsonlines.ReportJsonLinesItemExporter",
        },
        "FEED_EXPORT_ENCODING": "utf-8-sig",
        "FEEDS": {
            "out/urls.csv": {"format": "urls_csv"},
            "out/sitemaps.csv": {"format": "sitemaps_csv", "encoding": "utf-8"},
            "out/changes.csv": {"format": "changes_csv"},
            "out/report.xlsx": {"format": "xlsx"},
            "out/report.html": {"format": "html", "item_export_kwargs": {"max_rows": 1}},
            "out/report.jsonl": {"format": "jsonlines"},
        },
        "LOG_LEVEL": "WARNING",
    }

    async def start(self):
        yield SitemapRecord(
            url="https://a.example/sitemap.xml", found_via="argument", kind="urlset"
        )
        yield UrlRecord(
            url="https://a.example/caf\\u00e9",
            sitemaps=["https://a.example/sitemap.xml"],
            status=200,
            fetched=True,
            noindex=["meta:robots"],
            issues=["noindex"],
            errors=["noindex: meta robots"],
        )
        yield UrlRecord(url="https://a.example/ok", status=200, fetched=True)
        yield {
            "record": "diff", "change": "url_added", "url": "https://a.example/ok",
            "sitemap": "https://a.example/sitemap.xml", "code": None, "old": None, "new": None,
        }
        yield SummaryRecord(
            origin="https://a.example", started_at="2024-06-05T11:00:00Z",
            finished_at="2024-06-05T12:00:00Z", sitemaps_found=1, urls_listed=2, urls_fetched=2,
        )
"""


def test_every_format_through_scrapy_feeds(tmp_path: Path) -> None:
    (tmp_path / "feeds_spider.py").write_text(SPIDER, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", "feeds_spider.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"

    urls = (out / "urls.csv").read_bytes()
    assert urls.startswith(codecs.BOM_UTF8)
    rows = list(csv.DictReader(urls.decode("utf-8-sig").splitlines()))
    assert list(rows[0]) == list(URL_COLUMNS)
    assert [r["url"] for r in rows] == ["https://a.example/caf\u00e9", "https://a.example/ok"]
    assert rows[0]["noindex"] == "meta:robots"
    assert rows[0]["sitemaps"] == "https://a.example/sitemap.xml"

    sitemaps = (out / "sitemaps.csv").read_bytes()
    assert not sitemaps.startswith(codecs.BOM_UTF8)
    assert sitemaps.decode("utf-8").splitlines()[0] == ",".join(SITEMAP_COLUMNS)

    changes = (out / "changes.csv").read_text(encoding="utf-8-sig").splitlines()
    assert changes[1].startswith("url_added,https://a.example/ok,")

    workbook = load_workbook(out / "report.xlsx")
    assert workbook.sheetnames == ["URLs", "Sitemaps", "Changes", "Summary"]
    assert workbook["URLs"].max_row == 3

    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<title>Sitemap audit: https://a.example</title>" in html
    assert "1 of 2 URLs is not in this table" in html

    # FEED_EXPORT_ENCODING=utf-8-sig is for the CSV files: JSON Lines stay plain UTF-8.
    report = (out / "report.jsonl").read_bytes()
    assert codecs.BOM_UTF8 not in report
    lines = report.decode("utf-8").splitlines()
    assert [json.loads(line)["record"] for line in lines] == [
        "sitemap",
        "url",
        "url",
        "diff",
        "summary",
    ]
