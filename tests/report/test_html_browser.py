"""The HTML page in a real browser: headless Chromium renders it, runs its script, filters."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.report.html import write_html
from tests.report import chromium
from tests.report.conftest import SAMPLE, SCRIPT_URL, by_record

pytestmark = pytest.mark.skipif(
    not chromium.available(), reason="chromium not installed: apt-get install chromium"
)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sitemapaudit.report.flat import iter_report

    path = tmp_path_factory.mktemp("html") / "report.html"
    write_html(iter_report(SAMPLE), path)
    return path


@pytest.fixture(scope="module")
def sample() -> list[dict[str, Any]]:
    from sitemapaudit.report.flat import iter_report

    return list(iter_report(SAMPLE))


def test_dump_dom_after_the_script_ran(page_file: Path, tmp_path: Path) -> None:
    dom = chromium.dump_dom(page_file, tmp_path / "profile")
    assert "Sitemap audit" in dom
    form = re.search(r'<form class="filters" id="filters"[^>]*>', dom)
    assert form is not None
    assert "hidden" not in form.group(0)
    assert re.search(r'<output id="filter-status"[^>]*>Showing \d+ of \d+ rows</output>', dom)
    assert dom.count('<rect class="bar ') >= 10
    assert "&lt;script&gt;document.title" in dom
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)  # type: ignore[union-attr]


def test_rendered_charts_summary_and_table(
    browser: chromium.Browser, page_file: Path, sample: list[dict[str, Any]]
) -> None:
    page = browser.page
    page.open(page_file.as_uri())
    assert page.evaluate("document.title") == "Sitemap audit: https://shop.example"

    charts = page.evaluate(
        """Array.from(document.querySelectorAll("svg.chart")).map(svg => ({
            id: svg.closest("figure").id,
            bars: svg.querySelectorAll("rect.bar").length,
            wide: Array.from(svg.querySelectorAll("rect.bar"))
                .filter(r => r.getBBox().width > 0).length,
        }))"""
    )
    by_id = {c["id"]: c for c in charts}
    assert set(by_id) == {
        "chart-status",
        "chart-lastmod-age",
        "chart-lastmod-delta",
        "chart-changes",
    }
    assert all(c["wide"] > 0 for c in charts)
    assert by_id["chart-lastmod-delta"]["bars"] == 7
    assert by_id["chart-lastmod-age"]["bars"] >= 6

    cards = page.evaluate(
        """Object.fromEntries(Array.from(document.querySelectorAll(".card")).map(
            c => [c.querySelector(".label").textContent, c.querySelector(".value").textContent]))"""
    )
    summary = sample[-1]
    assert cards["URLs listed"] == str(summary["urls_listed"])
    assert cards["Sitemaps found"] == str(summary["sitemaps_found"])
    assert cards["Errors"] == str(summary["severities"]["error"])
    facts = page.evaluate("document.querySelector('#summary .facts').innerText")
    assert "https://shop.example" in facts
    assert "rules" in facts

    rows = page.evaluate("document.querySelectorAll('#url-table .body > .row').length")
    assert rows == len(by_record(sample, "url"))
    first = page.evaluate("document.querySelector('#url-table .body > .row').className")
    assert first == "row sev-error"
    assert page.evaluate("document.getElementById('filter-status').textContent") == (
        f"Showing {rows} of {rows} rows"
    )
    pairs = {
        (r["record"], code) for r in sample if r["record"] != "diff" for code in r.get("issues", [])
    }
    assert page.evaluate("document.querySelectorAll('#findings tbody tr').length") == len(pairs)


def test_hostile_url_is_text_and_never_runs(browser: chromium.Browser, page_file: Path) -> None:
    page = browser.page
    page.open(page_file.as_uri())
    assert page.evaluate("document.title") == "Sitemap audit: https://shop.example"
    assert page.evaluate("document.scripts.length") == 1
    texts = page.evaluate(
        "Array.from(document.querySelectorAll('#url-table .cell.url > a')).map(a => a.textContent)"
    )
    assert SCRIPT_URL in texts
    hrefs = page.evaluate(
        "Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
    )
    assert SCRIPT_URL in hrefs
    assert not [h for h in hrefs if h.lower().startswith("javascript:")]


def test_typing_in_the_filter_filters_the_table(
    browser: chromium.Browser, page_file: Path, sample: list[dict[str, Any]]
) -> None:
    page = browser.page
    page.open(page_file.as_uri())
    total = len(by_record(sample, "url"))
    visible = (
        "Array.from(document.querySelectorAll('#url-table .body > .row')).filter(r => !r.hidden)"
    )

    page.type_text("#filter-text", "lastmod-")
    page.wait_for(f"{visible}.length < {total}")
    shown = page.evaluate(f"{visible}.map(r => r.querySelector('.cell.url a').textContent)")
    expected = [r["url"] for r in by_record(sample, "url") if "lastmod-" in r["url"]]
    assert sorted(shown) == sorted(expected)
    assert page.evaluate("document.getElementById('filter-status').textContent") == (
        f"Showing {len(expected)} of {total} rows"
    )

    page.evaluate(
        """(() => { const s = document.getElementById("filter-code");
        s.value = "lastmod_unverifiable"; s.dispatchEvent(new Event("change")); })()"""
    )
    shown = page.evaluate(f"{visible}.map(r => r.querySelector('.cell.url a').textContent)")
    expected = [
        r["url"]
        for r in by_record(sample, "url")
        if "lastmod-" in r["url"] and "lastmod_unverifiable" in r["issues"]
    ]
    assert sorted(shown) == sorted(expected)
    assert len(expected) == 3

    page.type_text("#filter-text", "zzz-nothing")
    page.wait_for(f"{visible}.length === 0")
    assert page.evaluate("document.getElementById('filter-empty').hidden") is False

    page.evaluate(
        """(() => { const t = document.getElementById("filter-text"); t.value = "";
        t.dispatchEvent(new Event("input"));
        const s = document.getElementById("filter-code"); s.value = "*none";
        s.dispatchEvent(new Event("change")); })()"""
    )
    page.wait_for(f"{visible}.every(r => r.getAttribute('data-issues') === '')")
    clean = sum(1 for r in by_record(sample, "url") if not r["issues"])
    assert page.evaluate(f"{visible}.length") == clean


def test_a_finding_code_link_filters_the_table(
    browser: chromium.Browser, page_file: Path, sample: list[dict[str, Any]]
) -> None:
    page = browser.page
    page.open(page_file.as_uri())
    page.evaluate("document.querySelector('#findings a[data-filter-code=\"noindex\"]').click()")
    visible = page.evaluate(
        "Array.from(document.querySelectorAll('#url-table .body > .row')).filter(r => !r.hidden)"
        ".map(r => r.getAttribute('data-issues'))"
    )
    assert len(visible) == sum(1 for r in by_record(sample, "url") if "noindex" in r["issues"])
    assert all("noindex" in v.split() for v in visible)


def test_the_page_makes_no_request(browser: chromium.Browser, page_file: Path) -> None:
    page = browser.page
    page.open(page_file.as_uri())
    entries = page.evaluate(
        "JSON.stringify(performance.getEntriesByType('resource').map(e => e.name))"
    )
    assert json.loads(entries) == []
