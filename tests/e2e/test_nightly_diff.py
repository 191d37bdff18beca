"""Two audits of a site that changed in between: the second report says what changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, page, url, urlset
from tests.support.server import Page, TestSite


def changes(records: list[dict[str, Any]]) -> set[tuple[str, str | None, str | None]]:
    return {
        (r["change"], (r["url"] or "").rsplit("/", 1)[-1] or None, r["code"])
        for r in by_record(records, "diff")
    }


@deferred_f_from_coro_f
async def test_the_second_run_reports_what_changed(tmp_path: Path) -> None:
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(url("{base}/stays"), url("{base}/breaks"), url("{base}/goes")),
                content_type=XML,
            ),
            "/stays": page(),
            "/breaks": page(),
            "/goes": page(),
            "/comes": page('<meta name="robots" content="noindex">'),
        }
    )
    with site:
        first, _ = await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        site.routes["/s.xml"] = Page(
            body=urlset(url("{base}/stays"), url("{base}/breaks"), url("{base}/comes")),
            content_type=XML,
        )
        site.routes["/breaks"] = Page(status=404)
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)

    assert by_record(first, "diff") == []
    assert first[-1]["changes"] == {"previous_run": None, "counts": {}}
    got = changes(second)
    assert ("url_added", "comes", None) in got
    assert ("url_removed", "goes", None) in got
    assert ("status_regression", "breaks", None) in got
    assert ("indexability_regression", "breaks", None) in got
    assert ("finding_new", "breaks", "http_error") in got
    assert ("finding_new", "comes", "noindex") in got
    kinds = [r["record"] for r in second]
    assert kinds.index("diff") > max(i for i, k in enumerate(kinds) if k == "url")
    assert kinds[-1] == "summary"
    summary = second[-1]
    assert summary["changes"]["previous_run"] == 1
    assert summary["changes"]["counts"]["url_added"] == 1
