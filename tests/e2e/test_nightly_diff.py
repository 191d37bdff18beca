"""Two audits of a site that changed in between: the second report says what changed."""

from __future__ import annotations

import gzip
import sqlite3
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.commands.crawl import audit_failed
from sitemapaudit.history import HistoryStore
from sitemapaudit.spiders import audit as audit_spider
from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, conditional, index, page, url, urlset
from tests.support.server import Page, TestSite


def changes(records: list[dict[str, Any]]) -> set[tuple[str, str | None, str | None]]:
    return {
        (r["change"], (r["url"] or "").rsplit("/", 1)[-1] or None, r["code"])
        for r in by_record(records, "diff")
    }


@deferred_f_from_coro_f
async def test_the_second_run_reports_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Diff records travel as batches of Scrapy items: batches of 2, so that several do here.
    monkeypatch.setattr(audit_spider, "_DIFF_BATCH", 2)
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
    assert sum(summary["changes"]["counts"].values()) == len(by_record(second, "diff")) > 4


@deferred_f_from_coro_f
async def test_redirects_and_canonicals_make_a_page_no_longer_indexable(tmp_path: Path) -> None:
    """A listed page that now redirects (to a page answering 200) is redirected; one whose
    canonical now names another page is canonicalised; one whose canonical names it again is
    indexable again; one whose canonical is now not an http(s) URL (ignored) stays indexable."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    itself = '<link rel="canonical" href="{base}/back">'
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(
                    url("{base}/moves"), url("{base}/canon"), url("{base}/back"), url("{base}/js")
                ),
                content_type=XML,
            ),
            "/moves": page(),
            "/moved": page(),
            "/canon": page('<link rel="canonical" href="{base}/canon">'),
            "/other": page(),
            "/back": page('<link rel="canonical" href="{base}/other">'),
            "/js": page(),
        }
    )
    with site:
        await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        site.routes["/moves"] = Page(status=301, headers=[("Location", "/moved")])
        site.routes["/canon"] = page('<link rel="canonical" href="{base}/other">')
        site.routes["/back"] = page(itself)
        site.routes["/js"] = page('<link rel="canonical" href="javascript:alert(1)">')
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)

    got = {
        (r["change"], r["url"].rsplit("/", 1)[-1], r["old"], r["new"])
        for r in by_record(second, "diff")
        if r["change"].startswith("indexability_")
    }
    assert got == {
        ("indexability_regression", "moves", "indexable", "redirected"),
        ("indexability_regression", "canon", "indexable", "canonicalised"),
        ("indexability_restored", "back", "canonicalised", "indexable"),
    }


@deferred_f_from_coro_f
async def test_a_site_whose_sitemaps_are_all_gone_fails_fail_on_error(tmp_path: Path) -> None:
    """No sitemap means no finding (no record carries one), but a nightly run with
    fail_on=error must not pass when the site's sitemaps disappeared."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        first, crawler = await run_audit(
            site.base, tmp_path / "1.jsonl", settings=history, fail_on="error"
        )
        assert not audit_failed(crawler.stats.get_stats())
        site.routes["/robots.txt"] = Page(body="User-agent: *\nDisallow:\n")
        site.routes["/s.xml"] = Page(status=404)
        second, crawler = await run_audit(
            site.base, tmp_path / "2.jsonl", settings=history, fail_on="error"
        )
        codes, _ = await run_audit(
            site.base, tmp_path / "3.jsonl", settings=history, fail_on="noindex"
        )
    summary = second[-1]
    assert first[-1]["fail_on"] == {"policy": "error", "failed": False}
    assert (summary["sitemaps_found"], summary["counts"]) == (0, {})
    assert summary["fail_on"] == {"policy": "error", "failed": True}
    assert crawler.stats.get_value("sitemapaudit/fail_on/failed") is True
    assert audit_failed(crawler.stats.get_stats())
    assert summary["notes"] == [
        "no sitemap was found: robots.txt and the homepage name none, and none of the common "
        "paths holds one; the 1 sitemap of run 1 is gone (sitemap_removed)"
    ]
    assert ("sitemap_removed", "s.xml", None) in changes(second)
    # A policy of finding codes fails on those codes only.
    assert codes[-1]["fail_on"] == {"policy": "noindex", "failed": False}


def two_page_site() -> TestSite:
    """A sitemap of two pages, named by robots.txt, that answers 304 to its ETag."""
    return TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": conditional(urlset(url("{base}/a"), url("{base}/b")), '"v1"'),
            "/a": page(),
            "/b": page(),
        }
    )


@deferred_f_from_coro_f
async def test_an_unchanged_sitemap_answers_304_and_its_entries_are_reused(tmp_path: Path) -> None:
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
            "/index.xml": conditional(
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                "<sitemap><loc>{base}/s.xml</loc></sitemap></sitemapindex>",
                '"i1"',
            ),
            "/s.xml": conditional(
                urlset(url("{base}/a", "2024-01-01"), url("{base}/b"), url("{base}/a")), '"v1"'
            ),
            "/a": page(),
            "/b": page(),
        }
    )
    with site:
        first, _ = await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        second, crawler = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)
        assert site.request_headers["/s.xml"].get("if-none-match") == '"v1"'
    assert crawler.stats.get_value("sitemapaudit/sitemaps/not_modified") == 2
    assert crawler.stats.get_value("sitemapaudit/listings") == 3
    sitemaps = {r["url"].rsplit("/", 1)[-1]: r for r in by_record(second, "sitemap")}
    assert sitemaps["s.xml"]["status"] == 304
    assert sitemaps["s.xml"]["not_modified"] is True
    assert sitemaps["s.xml"]["url_count"] == 3
    assert sitemaps["index.xml"]["not_modified"] is True
    assert sitemaps["index.xml"]["child_count"] == 1
    first_urls = {
        r["url"]: (r["lastmod"], r["issues"], r["sitemaps"]) for r in by_record(first, "url")
    }
    second_urls = {
        r["url"]: (r["lastmod"], r["issues"], r["sitemaps"]) for r in by_record(second, "url")
    }
    assert second_urls == first_urls
    assert first_urls[f"{site.base}/a"][1] == ["lastmod_unverifiable", "duplicate"]
    assert {r["change"] for r in by_record(second, "diff")} == {"finding_persisting"}
    # The 304 did not repeat the ETag: the second run keeps the one it sent, with the entries.
    with HistoryStore(tmp_path / "history.sqlite3", read_only=True) as store:
        assert store.validators(site.base, f"{site.base}/s.xml") == (2, '"v1"', None)


@deferred_f_from_coro_f
async def test_a_night_without_conditional_requests_leaves_no_validators_to_the_next(
    tmp_path: Path,
) -> None:
    """A run with SITEMAPAUDIT_CONDITIONAL_SITEMAPS off keeps no entries of its sitemaps, so
    it keeps no validators either: the next night, whose 304 would have nothing to reuse,
    reads the sitemap in full instead of taking the site for empty."""
    path = tmp_path / "history.sqlite3"
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(path)}
    site = two_page_site()
    with site:
        await run_audit(
            site.base,
            tmp_path / "1.jsonl",
            settings={**history, "SITEMAPAUDIT_CONDITIONAL_SITEMAPS": False},
        )
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)
        third, _ = await run_audit(site.base, tmp_path / "3.jsonl", settings=history)
    for night in (second, third):
        assert {r["url"].rsplit("/", 1)[-1] for r in by_record(night, "url")} == {"a", "b"}
        assert not [c for c in changes(night) if c[0] in {"url_removed", "sitemap_removed"}]
    assert [(s["status"], s["url_count"]) for s in by_record(second, "sitemap")] == [(200, 2)]
    # The second night kept entries and validators: the third reuses them.
    assert [(s["status"], s["url_count"]) for s in by_record(third, "sitemap")] == [(304, 2)]


@deferred_f_from_coro_f
async def test_a_sitemap_is_read_again_when_the_settings_of_its_findings_changed(
    tmp_path: Path,
) -> None:
    """A 304 would carry over the findings of a body judged under other settings (here the
    near-limit fraction): the sitemap is read in full that night, and asked for
    conditionally again the next."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    near = {**history, "SITEMAPAUDIT_NEAR_LIMIT_FRACTION": 0.00001}
    site = two_page_site()
    nights = []
    with site:
        for number, settings in enumerate((history, near, near, history), 1):
            records, crawler = await run_audit(
                site.base, tmp_path / f"{number}.jsonl", settings=settings
            )
            (sitemap,) = by_record(records, "sitemap")
            changed = crawler.stats.get_value("sitemapaudit/sitemaps/settings_changed")
            nights.append((sitemap["status"], sitemap["issues"], changed))
    assert nights == [
        (200, [], None),
        (200, ["near_limit"], 1),
        (304, ["near_limit"], None),
        (200, [], 1),
    ]


@deferred_f_from_coro_f
async def test_a_history_that_keeps_two_runs_still_diffs_and_reuses_sitemaps(
    tmp_path: Path,
) -> None:
    """SITEMAPAUDIT_HISTORY_KEEP_RUNS=2: the third night deletes the first; the fourth still
    fetches the unchanged sitemap conditionally (the third run holds its entries) and diffs
    against the third."""
    path = tmp_path / "history.sqlite3"
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(path), "SITEMAPAUDIT_HISTORY_KEEP_RUNS": 2}
    site = two_page_site()
    with site:
        reports = []
        for night in range(4):
            if night == 3:
                site.routes["/b"] = Page(status=404)
            records, crawler = await run_audit(
                site.base, tmp_path / f"{night}.jsonl", settings=history
            )
            reports.append((records, crawler.stats.get_value("sitemapaudit/history/runs_deleted")))
    assert [deleted for _, deleted in reports] == [None, None, 1, 1]
    with HistoryStore(path, read_only=True) as store:
        assert [run.id for run in store.runs(site.base)] == [3, 4]
    last = reports[-1][0]
    sitemaps = by_record(last, "sitemap")
    assert [(s["status"], s["url_count"]) for s in sitemaps] == [(304, 2)]
    assert last[-1]["changes"]["previous_run"] == 3
    assert ("status_regression", "b", None) in changes(last)
    assert {r["url"].rsplit("/", 1)[-1] for r in by_record(last, "url")} == {"a", "b"}


@deferred_f_from_coro_f
async def test_what_robots_txt_and_the_audit_s_caps_say_of_a_304_sitemap_is_judged_again(
    tmp_path: Path,
) -> None:
    """A 304 keeps what the sitemap's body gave (its entries, its document findings), not what
    this run's robots.txt and settings say of it and of the children it lists: a robots.txt that
    no longer disallows the sitemap, or a depth cap that is raised, ends robots_blocked and
    index_too_deep at once, and each finding that holds is reported once."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    blocking = "User-agent: *\nDisallow: /index.xml\nSitemap: {base}/index.xml\n"
    site = TestSite(
        {
            "/robots.txt": Page(body=blocking, content_type="text/plain"),
            "/index.xml": conditional(
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                "<sitemap><loc>{base}/s.xml</loc></sitemap>"
                "<sitemap><loc>ftp://example.com/s.xml</loc></sitemap></sitemapindex>",
                '"i1"',
            ),
            "/s.xml": conditional(urlset(url("{base}/a")), '"v1"'),
            "/a": page(),
        }
    )
    capped = {**history, "SITEMAPAUDIT_MAX_INDEX_DEPTH": 0}
    with site:
        first, _ = await run_audit(site.base, tmp_path / "1.jsonl", settings=capped)
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=capped)
        site.routes["/robots.txt"] = Page(
            body="Sitemap: {base}/index.xml\n", content_type="text/plain"
        )
        third, crawler = await run_audit(
            site.base,
            tmp_path / "3.jsonl",
            settings=history,
            fail_on="robots_blocked,index_too_deep",
        )

    def index_record(records: list[dict[str, Any]]) -> dict[str, Any]:
        return next(r for r in by_record(records, "sitemap") if r["url"].endswith("/index.xml"))

    for records in (first, second):
        found = index_record(records)
        assert found["issues"] == ["invalid_url", "index_too_deep", "robots_blocked"]
        assert [e.split(":", 1)[0] for e in found["errors"]] == found["issues"]
    assert index_record(second)["status"] == 304
    assert index_record(third)["status"] == 304
    assert index_record(third)["issues"] == ["invalid_url"]
    assert len(index_record(third)["errors"]) == 1
    assert {r["url"].rsplit("/", 1)[-1] for r in by_record(third, "sitemap")} == {
        "index.xml",
        "s.xml",
    }
    assert ("finding_fixed", "index.xml", "robots_blocked") in changes(third)
    assert ("finding_fixed", "index.xml", "index_too_deep") in changes(third)
    assert not audit_failed(crawler.stats.get_stats())


@deferred_f_from_coro_f
async def test_incremental_runs_recheck_what_changed_and_carry_the_rest(tmp_path: Path) -> None:
    import zlib

    nights = 2
    site = TestSite({})
    # A stable URL outside the second run's share of the rotation (the first run takes the
    # first share, the second the next), so it is carried over.
    stable = next(
        f"/stable{i}"
        for i in range(100)
        if zlib.crc32(f"{site.base}/stable{i}".encode()) % nights != 1
    )
    site.routes.update(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(
                body=urlset(
                    url("{base}" + stable, "2024-01-01"),
                    url("{base}/edited", "2024-01-01"),
                    url("{base}/broken"),
                ),
                content_type=XML,
            ),
            stable: Page(
                body=f'<html><head><link rel="canonical" href="{{base}}{stable}"></head></html>',
                headers=[("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")],
            ),
            "/edited": Page(
                body="<html><head></head></html>",
                headers=[("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")],
            ),
            "/broken": Page(status=404),
            "/new": page(),
        }
    )
    settings = {
        "SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3"),
        "SITEMAPAUDIT_INCREMENTAL": True,
        "SITEMAPAUDIT_RECHECK_NIGHTS": nights,
    }
    with site:
        await run_audit(site.base, tmp_path / "1.jsonl", settings=settings)
        site.routes["/s.xml"] = Page(
            body=urlset(
                url("{base}" + stable, "2024-01-01"),
                url("{base}/edited", "2024-03-01"),
                url("{base}/broken"),
                url("{base}/new"),
            ),
            content_type=XML,
        )
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=settings)
        hits_after_two_nights = dict(site.hits)
        # A night without the stable URL, then a night with it again: "last time" is the
        # previous run, which did not list it, so it is requested although an older run has
        # its result.
        listed = site.routes["/s.xml"]
        site.routes["/s.xml"] = Page(body=urlset(url("{base}/new")), content_type=XML)
        await run_audit(site.base, tmp_path / "3.jsonl", settings=settings)
        site.routes["/s.xml"] = listed
        fourth, _ = await run_audit(site.base, tmp_path / "4.jsonl", settings=settings)
    assert site.hits[stable] == hits_after_two_nights[stable] + 1
    back = next(r for r in by_record(fourth, "url") if r["url"].endswith(stable))
    assert back["carried_over"] is False
    two = hits_after_two_nights
    assert two[stable] == 1
    assert two["/edited"] == two["/broken"] == 2
    assert two["/new"] == 1
    urls = {r["url"].replace(site.base, ""): r for r in by_record(second, "url")}
    assert urls[stable]["carried_over"] is True
    assert urls[stable]["status"] == 200
    assert urls[stable]["canonical"] == site.base + stable
    assert urls[stable]["issues"] == []
    assert urls["/edited"]["carried_over"] is False
    assert urls["/broken"]["issues"] == ["http_error"]
    assert second[-1]["incremental"] == {
        "recheck_nights": 2,
        "share": 1,
        "rechecked": 3,
        "carried_over": 1,
    }


@deferred_f_from_coro_f
async def test_an_index_lastmod_older_than_its_sitemap_is_found_and_judged_again_on_a_304(
    tmp_path: Path,
) -> None:
    """index_lastmod_stale compares the index's lastmod of a child with the newest lastmod the
    child lists; when the child answers 304 its kept entries stand for it, and the index's
    lastmod (which may have changed) is judged again. An index lastmod that is no W3C Datetime,
    or after the audit, is lastmod_invalid or lastmod_future on the child's record."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}

    def index_of(stale_lastmod: str) -> str:
        return (
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<sitemap><loc>{base}/stale.xml</loc>"
            f"<lastmod>{stale_lastmod}</lastmod></sitemap>"
            "<sitemap><loc>{base}/fresh.xml</loc><lastmod>2024-05-01T00:00:00Z</lastmod>"
            "</sitemap>"
            "<sitemap><loc>{base}/future.xml</loc><lastmod>2024-01-01</lastmod></sitemap>"
            "<sitemap><loc>{base}/undated.xml</loc></sitemap>"
            "<sitemap><loc>{base}/zoneless.xml</loc><lastmod>2024-03-01T10:00:00</lastmod>"
            "</sitemap>"
            "<sitemap><loc>{base}/ahead.xml</loc><lastmod>2999-01-01</lastmod></sitemap>"
            "</sitemapindex>"
        )

    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
            "/index.xml": Page(body=index_of("2024-01-01"), content_type=XML),
            "/stale.xml": conditional(
                urlset(
                    url("{base}/a", "2023-12-01"),
                    url("{base}/b", "2024-03-05T10:00:00+02:00"),
                    url("{base}/c"),
                ),
                '"s1"',
            ),
            "/fresh.xml": Page(body=urlset(url("{base}/d", "2024-04-30")), content_type=XML),
            # A lastmod after the audit is lastmod_future, not a newer sitemap.
            "/future.xml": Page(
                body=urlset(url("{base}/e", "2999-01-01"), url("{base}/f", "2023-11-01")),
                content_type=XML,
            ),
            "/undated.xml": Page(body=urlset(url("{base}/g", "2024-04-01")), content_type=XML),
            "/zoneless.xml": Page(body=urlset(url("{base}/h", "2024-04-01")), content_type=XML),
            "/ahead.xml": Page(body=urlset(url("{base}/i", "2024-04-01")), content_type=XML),
        }
    )
    with site:
        first, _ = await run_audit(
            site.base, tmp_path / "1.jsonl", settings=history, fetch_urls="no"
        )
        second, _ = await run_audit(
            site.base, tmp_path / "2.jsonl", settings=history, fetch_urls="no"
        )
        site.routes["/index.xml"] = Page(body=index_of("2024-03-05T08:00:00Z"), content_type=XML)
        third, _ = await run_audit(
            site.base, tmp_path / "3.jsonl", settings=history, fetch_urls="no"
        )

    def findings(records: list[dict[str, Any]]) -> dict[str, tuple[list[str], list[str]]]:
        return {
            r["url"].rsplit("/", 1)[-1]: (r["issues"], r["errors"])
            for r in by_record(records, "sitemap")
            if r["issues"]
        }

    expected = (
        ["index_lastmod_stale"],
        [
            f"index_lastmod_stale: the index {site.base}/index.xml gives lastmod 2024-01-01 "
            "for this sitemap, but it lists a URL with lastmod 2024-03-05T10:00:00+02:00: a "
            "sitemap changes when its lastmods do, so the index tells crawlers it is unchanged "
            "when it is not"
        ],
    )
    others = {
        "zoneless.xml": (
            ["lastmod_invalid"],
            [
                f"lastmod_invalid: the index {site.base}/index.xml gives lastmod "
                "'2024-03-01T10:00:00' for this sitemap: not a "
                "valid date: a time needs a time zone (Z or +hh:mm) in W3C Datetime, or its "
                "instant is unknown (the XSD accepts it without one)"
            ],
        ),
        "ahead.xml": (["lastmod_future"], None),
    }

    def without_future_detail(
        found: dict[str, tuple[list[str], list[str]]],
    ) -> dict[str, tuple[list[str], list[str] | None]]:
        return {
            name: (issues, None if issues == ["lastmod_future"] else errors)
            for name, (issues, errors) in found.items()
        }

    assert without_future_detail(findings(first)) == {"stale.xml": expected, **others}
    stale = next(r for r in by_record(second, "sitemap") if r["url"].endswith("/stale.xml"))
    assert stale["status"] == 304
    assert without_future_detail(findings(second)) == {"stale.xml": expected, **others}
    # The index now gives 08:00Z, the instant of the newest lastmod: no finding, though the
    # sitemap answered 304 again.
    assert without_future_detail(findings(third)) == others
    assert {r["url"].rsplit("/", 1)[-1]: r["issues"] for r in by_record(first, "url")}["e"] == [
        "lastmod_future"
    ]


NEWS_SITEMAP = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
    "<url><loc>{base}/article</loc><news:news><news:publication><news:name>Example</news:name>"
    "<news:language>en</news:language></news:publication>"
    "<news:publication_date>2024-06-05T08:00:00Z</news:publication_date>"
    "<news:title>Headline</news:title></news:news></url></urlset>"
)


class _Clock(datetime):
    """``datetime`` whose ``now`` is the night the test says."""

    night = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _Clock:  # type: ignore[override]
        return cls.fromtimestamp(cls.night.timestamp(), tz)


@deferred_f_from_coro_f
async def test_a_news_sitemap_that_answers_304_is_read_again_once_an_article_is_too_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """news_too_old depends on the night: a news sitemap that never changes is requested
    without its validators once one of its articles turns two days old, then read and judged
    again (its findings are those of its body read that night). A sitemap with no such date
    is requested conditionally every night, and so is the news sitemap again once nothing in
    it can change with the time."""
    for module in ("sitemapaudit.spiders.audit", "sitemapaudit.pipelines"):
        monkeypatch.setattr(f"{module}.datetime", _Clock)
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    site = TestSite(
        {
            "/robots.txt": Page(
                body="Sitemap: {base}/news.xml\nSitemap: {base}/plain.xml\n",
                content_type="text/plain",
            ),
            "/news.xml": conditional(NEWS_SITEMAP, '"n1"'),
            "/plain.xml": conditional(urlset(url("{base}/a", "2024-01-01")), '"p1"'),
        }
    )
    nights: list[tuple[dict[str, dict[str, Any]], dict[str, dict[str, str]], dict[str, Any]]] = []
    with site:
        # The article is 4 hours old on the first night, too old from 2024-06-07T08:00Z on.
        for day in (0, 1, 3, 4):
            _Clock.night = datetime(2024, 6, 5 + day, 12, 0, tzinfo=UTC)
            records, crawler = await run_audit(
                site.base, tmp_path / f"{day}.jsonl", settings=history, fetch_urls="no"
            )
            sitemaps = {r["url"].rsplit("/", 1)[-1]: r for r in by_record(records, "sitemap")}
            nights.append((sitemaps, site.request_headers, crawler.stats.get_stats()))

    def seen(night: int, name: str) -> tuple[int, list[str], str | None]:
        sitemaps, headers, _ = nights[night]
        return (
            sitemaps[name]["status"],
            sitemaps[name]["issues"],
            headers[f"/{name}"].get("if-none-match"),
        )

    assert [seen(night, "plain.xml") for night in range(4)] == [
        (200, [], None),
        (304, [], '"p1"'),
        (304, [], '"p1"'),
        (304, [], '"p1"'),
    ]
    assert [seen(night, "news.xml") for night in range(4)] == [
        (200, [], None),
        (304, [], '"n1"'),
        # Past 2024-06-07T08:00Z: no validators sent, the body is read and judged again.
        (200, ["news_too_old"], None),
        # Nothing in it changes with the time any more: a 304 carries news_too_old over.
        (304, ["news_too_old"], '"n1"'),
    ]
    (message,) = nights[2][0]["news.xml"]["errors"]
    assert message.startswith(
        "news_too_old: line 2: news:publication_date 2024-06-05T08:00:00Z is 3 days old;"
    )
    assert [stats.get("sitemapaudit/sitemaps/rejudged") for _, _, stats in nights] == [
        None,
        None,
        1,
        None,
    ]


def _gzip_conditional(body: str, etag: str) -> object:
    """A gzip sitemap route that answers 304 to ``If-None-Match: etag``, and its gzip file with
    that ETag otherwise."""

    def route(site: TestSite, path: str) -> Page:
        if site.request_headers[path].get("if-none-match") == etag:
            return Page(status=304, content_type=None)
        data = gzip.compress(body.replace("{base}", site.base).encode("utf-8"), mtime=0)
        return Page(body=data, content_type="application/gzip", headers=[("ETag", etag)])

    return route


_INVALID_DATES = urlset(
    url("{base}/a", "2024-01-01"), url("{base}/b", "-1"), url("{base}/c", "-2"), url("{base}/a")
)


def _carried(line: str, run_id: int) -> str:
    return (
        f"{line} (carried over: the sitemap is unchanged (304) since run {run_id}, "
        "where it was read)"
    )


@deferred_f_from_coro_f
async def test_a_sitemap_unchanged_for_nights_keeps_the_details_of_the_night_that_read_it(
    tmp_path: Path,
) -> None:
    """A gzip sitemap with two invalid lastmods answers 304 on nights 2 and 3: both nights
    report it as night 1 read it (kind, gzip, bytes, counts), with each error line in full
    and the run that read it, even once that run is deleted (SITEMAPAUDIT_HISTORY_KEEP_RUNS)."""
    path = tmp_path / "history.sqlite3"
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(path), "SITEMAPAUDIT_HISTORY_KEEP_RUNS": 2}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml.gz\n", content_type="text/plain"),
            "/s.xml.gz": _gzip_conditional(_INVALID_DATES, '"g1"'),
        }
    )
    nights = []
    with site:
        for night in range(3):
            records, _ = await run_audit(
                site.base, tmp_path / f"{night}.jsonl", settings=history, fetch_urls="no"
            )
            (record,) = by_record(records, "sitemap")
            nights.append(record)
            assert site.request_headers["/s.xml.gz"].get("if-none-match") == (
                '"g1"' if night else None
            )
    read, _, third = nights
    schema = [line for line in read["errors"] if line.startswith("schema_invalid: ")]
    assert len(schema) == 2
    assert schema[0].startswith("schema_invalid: line ")
    assert ", column " in schema[0]
    assert (read["status"], read["gzip"], read["kind"]) == (200, True, "urlset")
    assert read["bytes"] > 0
    # The run that read the body, not the night before: the record is night 1's, carried.
    for night in nights[1:]:
        assert night["status"] == 304
        assert night["not_modified"] is True
        assert night["errors"] == [_carried(line, 1) for line in read["errors"]]
        same = ("kind", "gzip", "bytes", "url_count", "child_count", "issues")
        assert {key: night[key] for key in same} == {key: read[key] for key in same}
    assert len([line for line in third["errors"] if line.startswith("schema_invalid: ")]) == 2
    with HistoryStore(path, read_only=True) as store:
        assert [run.id for run in store.runs(site.base)] == [2, 3]
        kept = store.sitemap_record(3, f"{site.base}/s.xml.gz")
    assert kept is not None
    assert (kept["read_run"], kept["gzip"], kept["bytes"]) == (1, True, read["bytes"])


@deferred_f_from_coro_f
async def test_a_304_after_a_run_that_kept_no_details_carries_its_findings_by_code_once(
    tmp_path: Path,
) -> None:
    """The run that read the sitemap kept only its finding codes (a history written by an
    earlier version): that night's 304 carries the codes over, naming that run, as earlier
    versions did. That 304 could not say which run read the body: the next night requests the
    sitemap without validators, reads it and keeps its details again."""
    path = tmp_path / "history.sqlite3"
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(path)}
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml.gz\n", content_type="text/plain"),
            "/s.xml.gz": _gzip_conditional(_INVALID_DATES, '"g1"'),
        }
    )
    nights = []
    sent = []
    with site:
        for night in range(4):
            records, _ = await run_audit(
                site.base, tmp_path / f"{night}.jsonl", settings=history, fetch_urls="no"
            )
            (record,) = by_record(records, "sitemap")
            nights.append(record)
            sent.append(site.request_headers["/s.xml.gz"].get("if-none-match"))
            if night == 0:
                db = sqlite3.connect(path)
                try:
                    db.execute(
                        "UPDATE sitemap_results "
                        "SET errors = NULL, gzip = NULL, bytes = NULL, read_run = NULL"
                    )
                    db.commit()
                finally:
                    db.close()
    read, fallback, again, carried = nights
    assert [night["status"] for night in nights] == [200, 304, 200, 304]
    assert sent == [None, '"g1"', None, '"g1"']
    assert fallback["issues"] == read["issues"]
    assert fallback["errors"] == [
        f"{code}: carried over from run 1: the sitemap is unchanged (304)"
        for code in read["issues"]
    ]
    assert (fallback["gzip"], fallback["bytes"]) == (False, 0)
    assert again["errors"] == read["errors"]
    assert carried["errors"] == [_carried(line, 3) for line in read["errors"]]
    assert (carried["gzip"], carried["bytes"]) == (True, read["bytes"])


@deferred_f_from_coro_f
async def test_a_sitemap_served_as_an_error_page_with_200_or_cut_short_is_not_removed(
    tmp_path: Path,
) -> None:
    """The common ways a CMS's sitemap breaks for a night: an HTML error page served with 200,
    a gzip file cut short. What they list is not known: none of their URLs is removed, and
    the summary says why."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    packed = gzip.compress(urlset(url("{base}/g1"), url("{base}/g2")).encode())
    routes: dict[str, Any] = {
        "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
        "/index.xml": Page(body=index("{base}/posts.xml", "{base}/pages.xml.gz"), content_type=XML),
        "/posts.xml": Page(body=urlset(url("{base}/p1"), url("{base}/p2")), content_type=XML),
        "/pages.xml.gz": Page(body=packed, content_type="application/x-gzip"),
        **{path: page() for path in ("/p1", "/p2", "/g1", "/g2")},
    }
    site = TestSite(dict(routes))
    with site:
        await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        site.routes["/posts.xml"] = page(body="Error establishing a database connection")
        site.routes["/pages.xml.gz"] = Page(body=packed[:40], content_type="application/x-gzip")
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)
    sitemaps = {r["url"].rsplit("/", 1)[-1]: r["issues"] for r in by_record(second, "sitemap")}
    assert "not_a_sitemap" in sitemaps["posts.xml"]
    assert "gzip_invalid" in sitemaps["pages.xml.gz"]
    assert not [c for c in changes(second) if c[0] == "url_removed"]
    assert [n for n in second[-1]["notes"] if "could not be read" in n] == [
        "2 sitemaps of run 1 could not be read in this run (a failed fetch, an error status, "
        "or a body that is no sitemap or breaks off): the changes since run 1 count the URLs "
        "listed there and their findings as unknown, not as removed or fixed"
    ]


@deferred_f_from_coro_f
async def test_a_sitemap_that_answers_500_for_a_night_is_not_removed(tmp_path: Path) -> None:
    """sitemap-b.xml (with a schema error) answers 500 for a night: its URLs are not removed,
    its schema error and their findings not fixed, and the summary says why; read again the
    next night, nothing of it is added or new. When the index answers 500, none of the
    sitemaps it lists is removed either."""
    history = {"SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3")}
    invalid = urlset(url("{base}/b1"), url("{base}/both"), "  <url><priority>9</priority></url>")
    routes: dict[str, Any] = {
        "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
        "/index.xml": Page(body=index("{base}/a.xml", "{base}/sitemap-b.xml"), content_type=XML),
        "/a.xml": Page(body=urlset(url("{base}/a1"), url("{base}/both")), content_type=XML),
        "/sitemap-b.xml": Page(body=invalid, content_type=XML),
        "/a1": page(),
        "/b1": Page(status=404),
        "/both": page(),
    }
    site = TestSite(dict(routes))
    with site:
        first, _ = await run_audit(site.base, tmp_path / "1.jsonl", settings=history)
        site.routes["/sitemap-b.xml"] = Page(status=500)
        second, _ = await run_audit(site.base, tmp_path / "2.jsonl", settings=history)
        site.routes["/sitemap-b.xml"] = routes["/sitemap-b.xml"]
        third, _ = await run_audit(site.base, tmp_path / "3.jsonl", settings=history)
        site.routes["/index.xml"] = Page(status=500)
        fourth, _ = await run_audit(site.base, tmp_path / "4.jsonl", settings=history)

    b = {r["url"].rsplit("/", 1)[-1]: r for r in by_record(first, "sitemap")}["sitemap-b.xml"]
    assert "schema_invalid" in b["issues"]
    persisting = {c for c in changes(second) if c[0] == "finding_persisting"}
    assert changes(second) - persisting == {
        ("finding_new", "sitemap-b.xml", "http_error"),
        ("status_regression", "sitemap-b.xml", None),
    }
    assert [n for n in second[-1]["notes"] if "could not be read" in n] == [
        "1 sitemap of run 1 could not be read in this run (a failed fetch, an error status, or "
        "a body that is no sitemap or breaks off): the changes since run 1 count the URLs "
        "listed there and their findings as unknown, not as removed or fixed"
    ]
    persisting = {c for c in changes(third) if c[0] == "finding_persisting"}
    assert changes(third) - persisting == {
        ("finding_fixed", "sitemap-b.xml", "http_error"),
        ("status_changed", "sitemap-b.xml", None),
    }
    assert not [n for n in third[-1]["notes"] if "could not be read" in n]
    persisting = {c for c in changes(fourth) if c[0] == "finding_persisting"}
    assert changes(fourth) - persisting == {
        ("finding_new", "index.xml", "http_error"),
        ("status_regression", "index.xml", None),
    }
    assert [n for n in fourth[-1]["notes"] if "could not be read" in n] == [
        "1 sitemap of run 3 could not be read in this run (a failed fetch, an error status, or "
        "a body that is no sitemap or breaks off), nor 2 sitemaps listed under it in run 3: "
        "the changes since run 3 count the URLs listed there and their findings as unknown, "
        "not as removed or fixed"
    ]
