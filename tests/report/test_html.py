"""The HTML page as text: escaping, self-containment, caps, charts' numbers."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.history.diff import CHANGES
from sitemapaudit.report.exporters import HtmlItemExporter
from sitemapaudit.report.html import CHANGE_TONES, HtmlReport, write_html
from sitemapaudit.report.timebins import (
    AGE_BUCKETS,
    TimeHistogram,
    age_bucket,
    delta_bucket,
    human_seconds,
)
from tests.report.conftest import SCRIPT_URL, by_record

DAY = 86_400


def _page(records: list[Any], **options: Any) -> str:
    out = io.StringIO()
    report = HtmlReport(**options)
    for record in records:
        report.add(record)
    report.write(out)
    return out.getvalue()


def _url(n: int, issues: list[str] | None = None) -> dict[str, Any]:
    return {"record": "url", "url": f"https://a.example/{n}", "issues": issues or []}


def test_hostile_values_are_escaped(records: list[dict[str, Any]]) -> None:
    html = _page(records)
    assert "<script>document.title" not in html
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in html
    assert "<b>1</b>" not in html
    assert "&lt;b&gt;1&lt;/b&gt;" in html
    assert html.count("<script>") == 1
    assert 'href="javascript:' not in html
    assert '<span class="raw">javascript:alert(1)</span>' in html


def test_the_page_needs_no_network(records: list[dict[str, Any]]) -> None:
    html = _page(records)
    assert not re.search(r"<(link|img|iframe|object|embed|base)\b", html)
    assert not re.search(r"\ssrc=", html)
    assert "@import" not in html
    assert "url(" not in html
    assert re.search(r"<script>.*</script>", html, re.S)


def test_the_content_security_policy_allows_only_the_page_itself(
    records: list[dict[str, Any]],
) -> None:
    html = _page(records)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    policy = csp.group(1).replace("&#x27;", "'")
    assert policy.startswith("default-src 'none';")
    script = re.search(r"<script>(.*)</script>", html, re.S)
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    assert script is not None
    assert style is not None
    for body, directive in ((script.group(1), "script-src"), (style.group(1), "style-src")):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in policy


def test_summary_values(records: list[dict[str, Any]]) -> None:
    html = _page(records)
    assert "<title>Sitemap audit: https://shop.example</title>" in html
    assert '<time datetime="2024-06-05T11:57:02Z">' in html
    assert "2 min 58 s" in html
    assert 'class="outcome outcome-rules"' in html
    summary = records[-1]
    assert f'<span class="value">{summary["urls_listed"]}</span>' in html


def test_the_url_table_puts_findings_first_and_caps_rows() -> None:
    records = [_url(n) for n in range(10)]
    records[7]["issues"] = ["duplicate"]
    records[8]["issues"] = ["noindex"]
    records[9]["issues"] = ["canonical_mismatch"]
    html = _page(records, max_rows=4)
    table = html.split('id="url-table"')[1]
    shown = re.findall(
        r'<div class="cell url" role="cell"><a href="https://a.example/(\d+)"', table
    )
    assert shown == ["8", "9", "7", "0"]
    assert "6 of 10 URLs are not in this table" in html
    assert "at most 4 rows" in html


def test_no_message_when_every_url_fits() -> None:
    html = _page([_url(n) for n in range(3)], max_rows=3)
    assert "not in this table" not in html


def test_changes_table_regressions_first_and_capped(records: list[dict[str, Any]]) -> None:
    html = _page(records, max_rows=3)
    table = html.split('id="change-table"')[1].split("</section>")[0]
    changes = re.findall(r'<span class="change tone-(\w+)"', table)
    assert changes == ["bad", "bad", "bad"]
    left = len(by_record(records, "diff")) - 3
    assert f"{left} more changes are not in this table" in html


def _changes_said(html: str) -> tuple[str | None, str]:
    """The summary's ``changes`` row and the text of the section of changes."""
    row = re.search(r"<dt>changes</dt><dd>(.*?)</dd>", html)
    section = html.split('<section id="changes">')[1].split("</section>", maxsplit=1)[0]
    return (row.group(1) if row else None), re.sub(r"<[^>]+>", "", section)


@pytest.mark.parametrize(
    ("fields", "row", "section"),
    [
        (
            {"changes": {"previous_run": 1, "counts": {}}, "complete": True},
            "since run 1: no changes",
            "Compared with run 1: no changes.",
        ),
        (
            {"changes": {"previous_run": None, "counts": {}}, "complete": True},
            "not compared: no earlier finished run of this origin was in the history, or no "
            "history was kept",
            "Not compared with a previous run: no earlier finished run of this origin was in "
            "the history, or no history was kept.",
        ),
        (
            {"changes": {"previous_run": None, "counts": {}}, "complete": False},
            "not compared: the audit stopped before it was complete",
            "Not compared with a previous run: the audit stopped before it was complete, and "
            "only a complete audit is compared.",
        ),
        (
            {"complete": True},
            None,
            "The summary does not say whether this audit was compared with a previous run.",
        ),
    ],
    ids=["compared-no-changes", "no-previous-run", "stopped-early", "summary-without-changes"],
)
def test_the_summary_and_the_changes_say_whether_the_run_was_compared(
    fields: dict[str, Any], row: str | None, section: str
) -> None:
    said_row, said_section = _changes_said(_page([_url(1), _summary(**fields)]))
    assert said_row == row
    assert section in said_section
    assert "no comparison" not in said_section


def test_changes_counted_by_the_summary_but_missing_from_the_report_are_not_no_changes() -> None:
    html = _page([_url(1), _summary(changes={"previous_run": 4, "counts": {"url_added": 2}})])
    row, section = _changes_said(html)
    assert row == "since run 4: 2 URLs added"
    assert "Compared with run 4: 2 URLs added, but this report holds none of their" in section


def test_a_report_without_summary_or_changes_does_not_say_whether_it_was_compared() -> None:
    _, section = _changes_said(_page([_url(1)]))
    assert "whether this audit was compared with a previous run is not known" in section


def test_a_report_without_summary_says_so() -> None:
    html = _page([_url(1)])
    assert "The report has no summary record" in html


@pytest.mark.parametrize(
    ("age", "bucket"),
    [
        (-1, "in the future"),
        (0, "< 1 day"),
        (DAY - 1, "< 1 day"),
        (DAY, "< 1 week"),
        (7 * DAY, "< 1 month"),
        (30 * DAY, "< 1 year"),
        (365 * DAY, "older"),
    ],
)
def test_age_buckets(age: float, bucket: str) -> None:
    assert age_bucket(age) == bucket


@pytest.mark.parametrize(
    ("delta", "bucket"),
    [
        (0, "within \u00b11 h"),
        (3600, "within \u00b11 h"),
        (-3600, "within \u00b11 h"),
        (3601, "lastmod behind 1 h\u20131 d"),
        (-3601, "lastmod ahead 1 h\u20131 d"),
        (2 * DAY, "lastmod behind 1\u201330 d"),
        (-31 * DAY, "lastmod ahead > 30 d"),
    ],
)
def test_delta_buckets(delta: float, bucket: str) -> None:
    assert delta_bucket(delta) == bucket


def test_lastmod_ages_are_measured_from_finished_at() -> None:
    finished = datetime(2024, 6, 5, 12, tzinfo=UTC)
    lastmods = [
        "2024-06-05T11:00:00Z",
        "2024-06-04T12:00:01Z",
        "2024-06-04T12:00:00Z",
        "2024-05-20",
        "2023-01-01",
        "2099-01-01",
        "Wed, 05 Jun 2024 10:00:00 GMT",
        "2024-13-45",
        None,
    ]
    report = HtmlReport()
    for n, lastmod in enumerate(lastmods):
        report.add({"record": "url", "url": f"https://a.example/{n}", "lastmod": lastmod})
    report.add({"record": "summary", "origin": "x", "finished_at": "2024-06-05T12:00:00Z"})
    assert report.reference_time()[0] == finished
    assert report.age_counts() == {
        "in the future": 1,
        "< 1 day": 3,
        "< 1 week": 1,
        "< 1 month": 1,
        "< 1 year": 0,
        "older": 1,
        "invalid": 1,
        "none": 1,
    }
    assert list(report.age_counts()) == list(AGE_BUCKETS)


def test_the_time_histogram_widens_its_bins_to_stay_bounded() -> None:
    histogram = TimeHistogram(max_bins=100)
    start = 1_700_000_000
    for n in range(1000):
        histogram.add(start + n * 37)
    assert len(histogram.bins) <= 100
    assert histogram.width == 3600
    assert sum(histogram.bins.values()) == 1000


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (42, "+42 s"), (-180, "-3 min"), (5.5 * 3600, "+5.5 h"), (12 * DAY, "+12.0 d")],
)
def test_human_seconds(seconds: float, text: str) -> None:
    assert human_seconds(seconds) == text


def test_status_chart_counts(records: list[dict[str, Any]]) -> None:
    html = _page(records)
    chart = html.split('id="chart-status"')[1].split("</figure>")[0]
    bars = dict(re.findall(r'data-label="([^"]+)" data-count="(\d+)"', chart))
    urls = by_record(records, "url")
    assert int(bars["200"]) == sum(1 for r in urls if r["status"] == 200)
    assert int(bars["404"]) == 2
    assert bars["robots blocked"] == "1"
    assert bars["failed"] == "1"
    assert sum(map(int, bars.values())) == len(urls)


def test_findings_by_sitemap_count_url_findings(records: list[dict[str, Any]]) -> None:
    html = _page(records)
    table = html.split('id="sitemap-table"')[1].split("</section>")[0]
    row = next(r for r in table.split('role="row"') if "sitemap-products.xml</a>" in r)
    assert "http_error \u00d71" in row
    assert "invalid_url \u00d71" in row
    assert "noindex \u00d71" in row


def test_write_html_and_the_exporter_give_the_same_page(
    tmp_path: Path, records: list[dict[str, Any]], items: list[Any]
) -> None:
    path = tmp_path / "r.html"
    write_html(records, path, max_rows=50)
    buffer = io.BytesIO()
    exporter = HtmlItemExporter(buffer, max_rows=50, encoding="latin-1")
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    assert buffer.getvalue() == path.read_bytes()
    assert not buffer.closed
    assert SCRIPT_URL not in buffer.getvalue().decode("utf-8")


def test_max_rows_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="max_rows"):
        HtmlReport(max_rows=-1)


def test_other_summary_fields_are_listed(records: list[dict[str, Any]]) -> None:
    html = _page(records)
    assert (
        "<dt>fail_on</dt><dd>error: <strong>matched</strong> (the command exits with status 1)</dd>"
        in html
    )


def _summary(**fields: Any) -> dict[str, Any]:
    return {
        "record": "summary",
        "origin": "https://a.example",
        "started_at": "2024-06-05T11:00:00Z",
        "finished_at": "2024-06-05T12:00:00Z",
        **fields,
    }


def test_fail_on_and_changes_are_in_words() -> None:
    html = _page(
        [
            _url(1),
            _summary(
                fail_on={"policy": "warning", "failed": False},
                changes={"previous_run": 12, "counts": {"url_added": 3, "status_regression": 1}},
                incremental={"recheck_nights": 7, "rechecked": 2, "carried_over": 5},
            ),
        ]
    )
    assert "<dt>fail_on</dt><dd>warning: not matched</dd>" in html
    assert "<dt>changes</dt><dd>since run 12: 3 URLs added, 1 status regression</dd>" in html
    assert "<dt>incremental</dt><dd>recheck_nights: 7; rechecked: 2; carried_over: 5</dd>" in html
    assert "&quot;" not in html.split('id="summary"')[1].split("</section>")[0]


def test_an_incomplete_audit_is_flagged_in_the_header_and_the_summary() -> None:
    incomplete = _page([_url(1), _summary(complete=False, notes=["stopped: SIGTERM"])])
    header = incomplete.split("</header>")[0]
    assert "finished" not in header
    assert (
        '<strong class="incomplete">incomplete: stopped '
        '<time datetime="2024-06-05T12:00:00Z">2024-06-05T12:00:00Z</time></strong>' in header
    )
    assert '<p class="alert">The audit stopped before it was complete' in incomplete
    complete = _page([_url(1), _summary(complete=True)])
    assert "finished <time" in complete.split("</header>")[0]
    assert 'class="alert"' not in complete


def test_control_characters_are_written_as_escapes() -> None:
    """An HTML page may hold no control character but tab, LF, FF and CR (nor DEL, C1
    controls, noncharacters): a text sitemap line can carry any of them."""
    url = "https://a.example/\x01x\x1b[31mred\x7f\x85\ufdd0"
    html = _page(
        [
            {
                "record": "url",
                "url": url,
                "issues": ["invalid_url"],
                "errors": [f"invalid_url: {url!r} \x00"],
                "sitemaps": ["https://a.example/s\x02.txt"],
            },
            {"record": "diff", "change": "url_added", "url": url},
            _summary(notes=["note \x1b"]),
        ]
    )
    assert not re.search("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef]", html)
    assert "https://a.example/\\x01x\\x1b[31mred\\x7f\\x85\\ufdd0" in html
    assert "note \\x1b" in html
    assert "s\\x02.txt" in html


def test_the_change_table_shows_regressions_before_new_findings() -> None:
    changes = [
        {
            "record": "diff",
            "change": "finding_new",
            "url": f"https://a.example/{n}",
            "code": "noindex",
        }
        for n in range(3)
    ] + [
        {
            "record": "diff",
            "change": "finding_fixed",
            "url": "https://a.example/f",
            "code": "noindex",
        },
        {
            "record": "diff",
            "change": "status_regression",
            "url": "https://a.example/s",
            "old": 200,
            "new": 500,
        },
        {"record": "diff", "change": "indexability_regression", "url": "https://a.example/i"},
    ]

    def shown(html: str) -> list[str]:
        table = html.split('id="change-table"')[1].split("</section>", maxsplit=1)[0]
        return re.findall(r'<span class="change tone-\w+" title="[^"]*">(\w+)</span>', table)

    assert shown(_page(changes, max_rows=3)) == [
        "status_regression",
        "indexability_regression",
        "finding_new",
    ]
    assert shown(_page(changes)) == [
        "status_regression",
        "indexability_regression",
        "finding_new",
        "finding_new",
        "finding_new",
        "finding_fixed",
    ]


def test_every_change_type_has_a_tone_and_a_bar(records: list[dict[str, Any]]) -> None:
    assert set(CHANGE_TONES) == set(CHANGES)
    html = _page(records)
    chart = html.split('id="chart-changes"')[1].split("</figure>")[0]
    labels = re.findall(r'data-label="([^"]+)"', chart)
    assert labels == list(CHANGE_TONES)


def test_the_resumes_of_an_audit_have_a_label(records: list[dict[str, Any]]) -> None:
    summary = {**records[-1], "resumed_at": ["2024-06-05T11:58:00Z", "2024-06-05T11:59:00Z"]}
    html = _page([*records[:-1], summary])
    assert '<dt>Resumed</dt><dd><time datetime="2024-06-05T11:58:00Z">' in html
    assert "<dt>resumed_at</dt>" not in html
    assert "<dt>Resumed</dt>" not in _page(records)


def _text(html: str) -> str:
    """The page's text, tags removed (an SVG title included), whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_count_of_one_takes_a_singular_noun() -> None:
    sitemap = {
        "record": "sitemap",
        "url": "https://a.example/s.xml",
        "kind": "urlset",
        "url_count": 1,
        "child_count": 1,
    }
    url = _url(1) | {"status": 200, "lastmod_delta_s": 0, "sitemaps": [sitemap["url"]]}
    change = {"record": "diff", "change": "url_added", "url": "https://a.example/1"}
    text = _text(_page([sitemap, url, change], max_rows=1))
    assert "1 URL compared;" in text
    assert "1 URL in the table." in text
    assert "1 change per type" in text
    assert "200: 1 URL (100%)" in text  # a bar's own title
    assert "url_added: 1 change (100%)" in text
    assert "1 URL, 1 sitemap" in text
    assert "from the report's 3 records." in text
    assert "from the report's 1 record." in _text(_page([_url(1)]))
    assert "1 URL listed" in text  # a card
    assert "1 Change since last run" in text
    assert "0 URLs fetched" in text
    assert not re.search(r"(?<!\S)1 (URLs|changes|sitemaps|records|rows|Sitemaps)\b", text)

    text = _text(_page([_url(1), _url(2), change, change], max_rows=1))
    assert "1 of 2 URLs is not in this table: it holds at most 1 row," in text
    assert "1 more change is not in this table (it holds at most 1 row;" in text
    text = _text(_page([_url(n) for n in range(3)] + [change] * 3, max_rows=1))
    assert "2 of 3 URLs are not in this table: it holds at most 1 row," in text
    assert "2 more changes are not in this table (it holds at most 1 row;" in text
    text = _text(_page([_url(n) for n in range(3)] + [change] * 3, max_rows=2))
    assert "1 of 3 URLs is not in this table: it holds at most 2 rows," in text
    assert "1 more change is not in this table (it holds at most 2 rows;" in text
    assert "3 changes per type" in text
    assert "2 URLs in the table." in text


# A stand-in for the few parts of the DOM the page's script uses, enough to run it in Node.
_FAKE_DOM = """
function element(extra) {
  return Object.assign({
    value: "", hidden: false, textContent: "", options: [],
    addEventListener: function () {}, setAttribute: function () {},
    getAttribute: function () { return ""; },
  }, extra || {});
}
var rows = [];
for (var i = 0; i < ROWS; i++) { rows.push(element({textContent: "https://a.example/" + i})); }
var byId = {
  "url-table": element({querySelectorAll: function () { return rows; }}),
  "filters": element(), "filter-text": element(), "filter-code": element(),
  "filter-status": element(), "filter-empty": element(),
};
var document = {
  getElementById: function (id) { return byId[id]; },
  querySelectorAll: function () { return []; },
};
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
@pytest.mark.parametrize(
    ("rows", "status"), [(1, "Showing 1 of 1 row"), (2, "Showing 2 of 2 rows")]
)
def test_the_filter_status_counts_rows_in_the_right_number(rows: int, status: str) -> None:
    html = _page([_url(n) for n in range(rows)])
    script = re.search(r"<script>(.*)</script>", html, re.S)
    assert script is not None
    program = (
        _FAKE_DOM.replace("ROWS", str(rows))
        + script.group(1)
        + '\nprocess.stdout.write(byId["filter-status"].textContent);\n'
    )
    done = subprocess.run(
        ["node", "-e", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == status
