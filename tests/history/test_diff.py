"""The run-over-run diff: every change type on two crafted runs, and its building blocks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.history import CHANGES, HistoryError, HistoryStore, diff_runs, summarize
from sitemapaudit.history.background import BackgroundHistoryStore
from sitemapaudit.history.diff import same_http_date, same_lastmod, unread_note, went_backwards
from tests.history.scenario import (
    EXPECTED,
    NEW_RECORDS,
    NEW_SUMMARY,
    OLD_RECORDS,
    OLD_SUMMARY,
    A,
    E,
    diff,
    sitemap,
    url,
    write_report,
)


def store_run(store: HistoryStore, records: list[dict[str, Any]], summary: dict[str, Any]) -> int:
    run_id = store.begin_run(summary["origin"], summary["started_at"])
    for record in records:
        store.add_record(run_id, record)
    store.add_record(run_id, summary)
    store.finish_run(run_id, summary["finished_at"], summary)
    return run_id


@pytest.fixture(params=[HistoryStore, BackgroundHistoryStore], ids=["in-process", "writer-process"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    with request.param(tmp_path / "history.sqlite3", batch_size=4) as history:
        yield history


def test_every_change_type_from_record_dicts(store: HistoryStore) -> None:
    old = store_run(store, OLD_RECORDS, OLD_SUMMARY)
    new = store_run(store, NEW_RECORDS, NEW_SUMMARY)
    assert list(diff_runs(store, old, new)) == EXPECTED


def test_every_change_type_from_report_files(store: HistoryStore, tmp_path: Path) -> None:
    old = store.import_report(write_report(tmp_path / "old.jsonl", OLD_RECORDS, OLD_SUMMARY))
    new = store.import_report(write_report(tmp_path / "new.jsonl", NEW_RECORDS, NEW_SUMMARY))
    assert [run.origin for run in store.runs()] == [E, E]
    assert list(diff_runs(store, old, new)) == EXPECTED


def test_reports_without_summary_diff_the_same(store: HistoryStore, tmp_path: Path) -> None:
    old = store.import_report(write_report(tmp_path / "old.jsonl", OLD_RECORDS, None))
    new = store.import_report(write_report(tmp_path / "new.jsonl", NEW_RECORDS, None))
    assert list(diff_runs(store, old, new)) == EXPECTED


def test_the_scenario_covers_every_change_type_in_contract_order() -> None:
    changes = [record["change"] for record in EXPECTED]
    assert list(dict.fromkeys(changes)) == list(CHANGES)


def test_records_have_the_contract_keys_in_order(store: HistoryStore) -> None:
    old = store_run(store, OLD_RECORDS, OLD_SUMMARY)
    new = store_run(store, NEW_RECORDS, NEW_SUMMARY)
    keys = {tuple(record) for record in diff_runs(store, old, new)}
    assert keys == {("record", "change", "url", "sitemap", "code", "old", "new")}


def test_reverse_diff_swaps_additions_and_removals(store: HistoryStore) -> None:
    old = store_run(store, OLD_RECORDS, OLD_SUMMARY)
    new = store_run(store, NEW_RECORDS, NEW_SUMMARY)
    backwards = Counter(record["change"] for record in diff_runs(store, new, old))
    forwards = Counter(record["change"] for record in EXPECTED)
    assert backwards["url_added"] == forwards["url_removed"]
    assert backwards["url_removed"] == forwards["url_added"]
    assert backwards["finding_new"] == forwards["finding_fixed"]
    assert backwards["finding_fixed"] == forwards["finding_new"]
    assert backwards["finding_persisting"] == forwards["finding_persisting"]
    assert backwards["indexability_restored"] == forwards["indexability_regression"]


def test_a_run_against_itself_has_only_persisting_findings(store: HistoryStore) -> None:
    run = store_run(store, NEW_RECORDS, NEW_SUMMARY)
    changes = Counter(record["change"] for record in diff_runs(store, run, run))
    assert changes == {"finding_persisting": 12}


def test_unknown_run_is_an_error(store: HistoryStore) -> None:
    run = store_run(store, OLD_RECORDS, OLD_SUMMARY)
    with pytest.raises(HistoryError, match="no run 99"):
        diff_runs(store, run, 99)


def test_diff_is_empty_between_empty_runs(store: HistoryStore) -> None:
    first = store.begin_run(E, "a")
    store.finish_run(first, "b", {})
    second = store.begin_run(E, "c")
    store.finish_run(second, "d", {})
    assert list(diff_runs(store, first, second)) == []


@pytest.mark.parametrize(
    ("old", "new", "backwards"),
    [
        ("2024-05-02T10:00:00Z", "2024-05-02T09:59:59Z", True),
        ("2024-05-02T10:00:00Z", "2024-05-02T10:00:00Z", False),
        ("2024-05-02T12:00:00+02:00", "2024-05-02T10:00:00Z", False),
        ("2024-05-02T10:00:00Z", "2024-05-02T11:00:00+02:00", True),
        ("2024-05-02", "2024-05-01", True),
        ("2024-05-02", "2024-05-02", False),
        ("2024-05", "2024-04-30", True),
        ("2024-05-01", "2024-05", False),
        ("2025", "2024-12-31", True),
        ("2024-05-02T10:00:00Z", "2024-05-01", False),
        ("2024-05-02T10:00:00Z", "2024-04-30", True),
        ("2024-05-02", "2024-05-01T11:00:00Z", False),
        ("2024-05-02", "2024-05-01T09:00:00Z", True),
        ("Thu, 02 May 2024 10:00:00 GMT", "2024-05-01T10:00:00Z", True),
        ("2024-05-02 10:00:00", "2024-05-02T09:00:00Z", True),
        ("version-b", "version-a", True),
        ("version-a", "version-b", False),
        ("2024-05-02T00:00:00Z", "2024-05-01T24:00:00Z", False),
        ("2024-05-02T00:00:01Z", "2024-05-01T24:00:00Z", True),
        ("2024-05-02T10:00:00Z", "2024-05-01T10:00:00+15:00", False),
        ("2024-05-02T15:00:00Z", "2024-05-02-05:00", False),
        ("2024-05-02T15:00:00Z", "2024-05-01+05:00", True),
        ("2024-05-02T15:00:00Z", "2024-05-02+15:00", False),
        ("2024-05-02", "not a date", False),
        ("not a date", "2024-05-01", False),
    ],
)
def test_lastmod_backwards_is_decided_leniently(old: str, new: str, backwards: bool) -> None:
    assert went_backwards(old, new) is backwards


def test_lastmods_and_page_dates_compare_by_instant() -> None:
    assert same_lastmod("2024-03-01T10:00:00Z", " 2024-03-01T12:00:00+02:00")
    assert not same_lastmod("2024-03-01", "2024-03-01T00:00:00Z")
    assert not same_lastmod("2024-03-01", "2024-03-02")
    assert same_lastmod("2024-02-29T24:00:00Z", "2024-03-01T00:00:00Z")
    assert same_lastmod("2024-03-01", "2024-03-01+02:00")
    assert not same_lastmod("2024-03-01T02:00:00Z", "2024-03-01+02:00")
    assert same_lastmod("2024-03-01T10:00:00+14:00", "2024-02-29T20:00:00Z")
    assert not same_lastmod("2024-03-01T10:00:00+15:00", "2024-02-29T19:00:00Z")
    assert same_http_date("Fri, 01 Mar 2024 08:00:00 GMT", "Fri, 01 Mar 2024 09:00:00 +0100")
    assert not same_http_date("Fri, 01 Mar 2024 08:00:00 GMT", "Fri, 01 Mar 2024 08:00:01 GMT")
    assert not same_http_date("garbage", "other garbage")


def test_summary_line() -> None:
    assert summarize({}) == "no changes"
    assert summarize({"url_added": 0}) == "no changes"
    counts = {"status_regression": 2, "url_removed": 1, "url_added": 1200, "finding_new": 3}
    assert summarize(counts) == (
        "1,200 URLs added, 1 URL removed, 3 new findings, 2 status regressions"
    )
    assert summarize({"something_else": 2, "sitemap_added": 1}) == (
        "1 sitemap added, 2 something_else"
    )


def test_summary_of_the_scenario_names_every_change() -> None:
    counts = Counter(record["change"] for record in EXPECTED)
    line = summarize(counts)
    assert line.startswith("1 URL added, 1 URL removed, 1 URL moved between sitemaps, ")
    assert line.count(", ") == len(CHANGES) - 1


def test_every_change_type_has_a_meaning() -> None:
    assert all(meaning.endswith(".") for meaning in CHANGES.values())
    assert len(CHANGES) == 15


def test_findings_of_a_request_are_not_compared_with_a_run_that_made_none(
    store: HistoryStore,
) -> None:
    """A full audit, then an inventory (``fetch_urls=no``), then a full audit again: the
    inventory does not know whether the pages are still noindex or still answer 404, so those
    findings are neither fixed by it nor new after it; listing findings still are."""
    unrequested = {"status": None, "fetched": False, "final_url": None}
    full = [
        sitemap(A),
        url("/a", noindex=["meta:robots"], issues=["noindex"]),
        url("/b", status=404, issues=["http_error", "lastmod_future"]),
        url("/c", issues=["canonical_mismatch"], canonical=E + "/x"),
    ]
    inventory = [
        sitemap(A),
        url("/a", **unrequested),
        url("/b", **unrequested, issues=["lastmod_future"]),
    ]
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    first = store_run(store, full, summary)
    second = store_run(store, inventory, summary)
    third = store_run(store, full, summary)
    forward = [(r["change"], r["url"], r["code"]) for r in diff_runs(store, first, second)]
    assert forward == [
        ("url_removed", E + "/c", None),
        ("finding_fixed", E + "/c", "canonical_mismatch"),  # /c is gone: its finding with it
        ("finding_persisting", E + "/b", "lastmod_future"),
    ]
    back = [(r["change"], r["url"], r["code"]) for r in diff_runs(store, second, third)]
    assert back == [
        ("url_added", E + "/c", None),
        ("finding_new", E + "/c", "canonical_mismatch"),
        ("finding_persisting", E + "/b", "lastmod_future"),
    ]


def test_a_finding_read_from_a_page_is_not_fixed_by_an_error_page(store: HistoryStore) -> None:
    """A noindex page that now answers 500: the 500 is the news, not a fixed noindex (the run
    read no page). A page that answers 200 without it is fixed."""
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    before = [
        sitemap(A),
        url("/a", noindex=["meta:robots"], issues=["noindex"]),
        url("/b", noindex=["meta:robots"], issues=["noindex"]),
    ]
    after = [
        sitemap(A),
        url("/a", status=500, issues=["http_error"]),
        url("/b"),
    ]
    old, new = store_run(store, before, summary), store_run(store, after, summary)
    changes = [(r["change"], r["url"], r["code"]) for r in diff_runs(store, old, new)]
    assert ("finding_fixed", E + "/a", "noindex") not in changes
    assert ("finding_fixed", E + "/b", "noindex") in changes
    assert ("finding_new", E + "/a", "http_error") in changes
    assert ("status_regression", E + "/a", None) in changes


@pytest.mark.parametrize("source", ["records", "report files"])
def test_a_lastmod_finding_is_not_fixed_by_a_lastmod_that_became_invalid(
    store: HistoryStore, tmp_path: Path, source: str
) -> None:
    """A lastmod that no longer parses could not be compared with the page: its mismatch is not
    fixed (lastmod_invalid is the news). One removed, or corrected, is fixed."""
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    page = {"last_modified": "Wed, 01 May 2024 10:00:00 GMT"}
    mismatch = {**page, "lastmod": "2020-01-01", "issues": ["lastmod_mismatch"]}
    before = [
        sitemap(A),
        url("/invalid", **mismatch),
        url("/future", lastmod="2999-01-01", issues=["lastmod_future"]),
        url("/removed", **mismatch),
        url("/corrected", **mismatch),
    ]
    after = [
        sitemap(A),
        url("/invalid", **page, lastmod="-1", issues=["lastmod_invalid"]),
        url("/future", lastmod="2999-99-99", issues=["lastmod_invalid"]),
        url("/removed", **page),
        url("/corrected", **page, lastmod="2024-05-01"),
    ]
    if source == "records":
        old, new = store_run(store, before, summary), store_run(store, after, summary)
    else:
        old = store.import_report(write_report(tmp_path / "old.jsonl", before, summary))
        new = store.import_report(write_report(tmp_path / "new.jsonl", after, summary))
    changes = [
        (r["change"], r["url"].removeprefix(E), r["code"])
        for r in diff_runs(store, old, new)
        if r["change"].startswith("finding_")
    ]
    assert changes == [
        ("finding_new", "/future", "lastmod_invalid"),
        ("finding_new", "/invalid", "lastmod_invalid"),
        ("finding_fixed", "/corrected", "lastmod_mismatch"),
        ("finding_fixed", "/removed", "lastmod_mismatch"),
    ]


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        # A sitemap fetched with If-None-Match answers 304 while it is unchanged: neither
        # that 304 nor the 200 of its next change is a status change.
        ((200, 304), []),
        ((304, 200), []),
        ((304, 304), []),
        # After a 304 it is judged as the success the 304 confirmed.
        ((304, 404), [("status_regression", 304, 404)]),
        ((304, 301), [("status_changed", 304, 301)]),
        ((200, 404), [("status_regression", 200, 404)]),
        ((301, 304), [("status_changed", 301, 304)]),
    ],
)
def test_a_304_of_a_conditional_sitemap_fetch_is_the_success_it_confirms(
    store: HistoryStore, statuses: tuple[int, int], expected: list[tuple[str, int, int]]
) -> None:
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    runs = [
        store_run(store, [sitemap(A, status=status, not_modified=status == 304)], summary)
        for status in statuses
    ]
    got = [
        (r["change"], r["old"], r["new"])
        for r in diff_runs(store, *runs)
        if r["change"] in ("status_changed", "status_regression")
    ]
    assert got == expected


EXPECTED_NOINDEXED = next(
    r for r in EXPECTED if r["change"] == "indexability_regression" and r["new"] == "noindex"
)


def test_a_check_switched_off_in_either_run_is_neither_new_nor_fixed(store: HistoryStore) -> None:
    """Switching ``http_error`` off is not fixing the pages; switching ``redirect`` off in the
    old run is not breaking them in the new one. Nor is a redirect then a reason a URL is not
    indexable, in either run: /failed, which redirected in the old run, counts as indexable
    then, and as no longer indexable once its fetch fails."""
    old_summary = {**OLD_SUMMARY, "settings": {"disabled_checks": ["redirect"]}}
    new_summary = {**NEW_SUMMARY, "settings": {"disabled_checks": ["http_error"]}}
    old = store_run(store, OLD_RECORDS, old_summary)
    new = store_run(store, NEW_RECORDS, new_summary)
    skipped = {"http_error", "redirect"}
    failed = diff("indexability_regression", f"{E}/failed", old="indexable", new="fetch_failed")
    expected = [
        r
        for r in EXPECTED
        if not (r["change"] in {"finding_new", "finding_fixed"} and r["code"] in skipped)
    ]
    expected.insert(expected.index(EXPECTED_NOINDEXED), failed)
    assert expected != EXPECTED
    assert list(diff_runs(store, old, new)) == expected
    plain = store_run(store, NEW_RECORDS, NEW_SUMMARY)  # a run whose summary is not stored yet
    assert [
        r for r in diff_runs(store, old, plain, unchecked=["http_error"]) if r["code"] in skipped
    ] == [r for r in expected if r["code"] in skipped]


def _indexability(store: HistoryStore, old: int, new: int) -> list[tuple[str, str, Any, Any]]:
    return [
        (r["change"], r["url"].removeprefix(E), r["old"], r["new"])
        for r in diff_runs(store, old, new)
        if r["change"].startswith("indexability_")
    ]


_HOP = [{"url": E + "/p", "status": 301}]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        # Redirects to a page that answers 200 on the audited host: redirected, as SEO tools say.
        ({"redirect_chain": _HOP, "final_url": E + "/q", "issues": ["redirect"]}, "redirected"),
        # The status of where it ended comes first: a redirect to an error page is that error.
        (
            {
                "status": 404,
                "redirect_chain": _HOP,
                "final_url": E + "/q",
                "issues": ["redirect", "http_error"],
            },
            "404",
        ),
        # Its canonical names another URL: canonicalised.
        ({"canonical": E + "/other", "issues": ["canonical_mismatch"]}, "canonicalised"),
        # A noindex page is noindex whatever its canonical says; a redirect comes before both.
        (
            {
                "noindex": ["meta:robots"],
                "canonical": E + "/other",
                "issues": ["noindex", "canonical_mismatch"],
            },
            "noindex",
        ),
        (
            {
                "redirect_chain": _HOP,
                "final_url": E + "/q",
                "noindex": ["meta:robots"],
                "canonical": E + "/other",
                "issues": ["redirect", "noindex", "canonical_mismatch"],
            },
            "redirected",
        ),
        # A canonical that is not an http(s) URL is ignored by search engines: indexable.
        ({"canonical": "javascript:alert(1)", "issues": ["canonical_mismatch"]}, None),
        ({"canonical": "mailto:a@ex.com", "issues": ["canonical_mismatch"]}, None),
        # A noindex is a noindex whatever the canonical.
        (
            {
                "noindex": ["meta:robots"],
                "canonical": "javascript:alert(1)",
                "issues": ["noindex", "canonical_mismatch"],
            },
            "noindex",
        ),
        # A canonical naming the page itself (written differently) is no finding: indexable.
        ({"canonical": E + "/p?"}, None),
        (
            {"status": None, "fetched": False, "final_url": None, "issues": ["fetch_failed"]},
            "fetch_failed",
        ),
        ({"robots_blocked": True, "issues": ["robots_blocked"]}, "robots_blocked"),
    ],
)
def test_indexability_reasons_follow_redirects_and_canonicals(
    store: HistoryStore, fields: dict[str, Any], reason: str | None
) -> None:
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    old = store_run(store, [sitemap(A), url("/p")], summary)
    new = store_run(store, [sitemap(A), url("/p", **fields)], summary)
    expected = [] if reason is None else [("indexability_regression", "/p", "indexable", reason)]
    assert _indexability(store, old, new) == expected
    restored = [] if reason is None else [("indexability_restored", "/p", reason, "indexable")]
    assert _indexability(store, new, old) == restored


def test_a_canonical_that_moves_away_and_back(store: HistoryStore) -> None:
    """A page whose canonical moved to another URL is no longer indexable; once its canonical
    names the page itself again, it is indexable again."""
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    itself = url("/p", canonical=E + "/p")
    elsewhere = url("/p", canonical=E + "/q", issues=["canonical_mismatch"])
    first = store_run(store, [sitemap(A), itself], summary)
    second = store_run(store, [sitemap(A), elsewhere], summary)
    third = store_run(store, [sitemap(A), itself], summary)
    assert _indexability(store, first, second) == [
        ("indexability_regression", "/p", "indexable", "canonicalised")
    ]
    assert _indexability(store, second, third) == [
        ("indexability_restored", "/p", "canonicalised", "indexable")
    ]


def test_a_url_that_started_redirecting(store: HistoryStore, tmp_path: Path) -> None:
    """From report files too: the listed URL now redirects (and the page it reaches answers
    200, so the status alone says nothing)."""
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    moved = url("/p", redirect_chain=_HOP, final_url=E + "/p/", issues=["redirect"])
    old = store.import_report(
        write_report(tmp_path / "old.jsonl", [sitemap(A), url("/p")], summary)
    )
    new = store.import_report(write_report(tmp_path / "new.jsonl", [sitemap(A), moved], summary))
    assert _indexability(store, old, new) == [
        ("indexability_regression", "/p", "indexable", "redirected")
    ]


@pytest.mark.parametrize("code", ["redirect", "canonical_mismatch"])
def test_a_check_switched_off_does_not_change_indexability(store: HistoryStore, code: str) -> None:
    """A run that did not look for redirects or canonicals (its check switched off) does not
    make the URLs that redirect or are canonicalised indexable again."""
    fields = {
        "redirect": {"redirect_chain": _HOP, "final_url": E + "/q"},
        "canonical_mismatch": {"canonical": E + "/q"},
    }[code]
    summary = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}
    off = {**summary, "settings": {"disabled_checks": [code]}}
    old = store_run(store, [sitemap(A), url("/p", **fields, issues=[code])], summary)
    new = store_run(store, [sitemap(A), url("/p", **fields)], off)
    assert _indexability(store, old, new) == []
    unsummarised = store_run(store, [sitemap(A), url("/p", **fields)], summary)
    changes = diff_runs(store, old, unsummarised, unchecked=[code])
    assert [r for r in changes if r["change"].startswith("indexability_")] == []


# A sitemap that cannot be read in the new run: an outage is not a removal.
INDEX_B = f"{E}/sitemap-b.xml"
CHILD = f"{E}/child.xml"
_RUN = {"record": "summary", "origin": E, "started_at": "a", "finished_at": "b"}


def _site(b: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A site whose index lists a.xml and sitemap-b.xml (``b``: its record's fields, or
    ``None`` when the index no longer lists it); sitemap-b.xml is itself an index listing
    child.xml when it can be read."""
    records: list[dict[str, Any]] = [
        sitemap(E + "/sitemap.xml", found_via="robots.txt", parent=None, kind="sitemapindex"),
        sitemap(A),
        url("/a"),
    ]
    if b is None:
        return [*records, url("/both")]
    records.append(sitemap(INDEX_B, **b))
    if b.get("status") != 200:
        return [*records, url("/both")]
    records.extend(
        [
            url("/both", sitemaps=[A, INDEX_B]),
            url("/only-b", sitemaps=[INDEX_B], issues=["lastmod_mismatch"]),
            url("/gone-page", sitemaps=[INDEX_B], status=404, issues=["http_error"]),
        ]
    )
    records.extend(
        [
            sitemap(CHILD, parent=INDEX_B, issues=["schema_invalid"]),
            url("/in-child", sitemaps=[CHILD], issues=["lastmod_mismatch"]),
        ]
    )
    return records


READ_B = {"status": 200, "issues": ["schema_invalid"]}
FAILED_B = {"status": 500, "url_count": 0, "issues": ["http_error"]}


def _changes(store: HistoryStore, old: int, new: int) -> list[tuple[str, str, Any]]:
    return [
        (
            r["change"],
            r["url"].removeprefix(E),
            r["code"] or ((r["old"] or r["new"]) and (r["old"], r["new"])),
        )
        for r in diff_runs(store, old, new)
        if r["change"] != "finding_persisting"
    ]


@pytest.mark.parametrize(
    "failed",
    [
        pytest.param(FAILED_B, id="500"),
        pytest.param({"status": 404, "url_count": 0, "issues": ["http_error"]}, id="404"),
        pytest.param(
            {"status": None, "url_count": 0, "issues": ["fetch_failed"]}, id="fetch-failed"
        ),
    ],
)
def test_a_sitemap_that_cannot_be_read_is_not_removed_nor_fixed(
    store: HistoryStore, failed: dict[str, Any]
) -> None:
    """Its document findings, the URLs only it listed, their findings and the sitemaps it
    listed (at any depth) are unknown in the new run: not removed, not fixed; its fetch
    finding is new. When it can be read again, the same holds the other way round: nothing of
    it is added or new, its fetch finding is fixed."""
    read = store_run(store, _site(READ_B), _RUN)
    down = store_run(store, _site(failed), _RUN)
    back = store_run(store, _site(READ_B), _RUN)
    code = failed["issues"][0]
    status = failed["status"]
    assert _changes(store, read, down) == [
        ("finding_new", "/sitemap-b.xml", code),
        ("status_regression", "/sitemap-b.xml", (200, status)),
    ]
    assert _changes(store, down, back) == [
        ("finding_fixed", "/sitemap-b.xml", code),
        *([] if status is None else [("status_changed", "/sitemap-b.xml", (status, 200))]),
    ]


@pytest.mark.parametrize(
    "unread",
    [
        # An HTML error page served with 200, an empty body.
        pytest.param({"status": 200, "url_count": 0, "issues": ["not_a_sitemap"]}, id="html"),
        # Cut short: what came before the fault is read, the rest is not known.
        pytest.param({"status": 200, "url_count": 0, "issues": ["gzip_invalid"]}, id="gzip"),
        pytest.param({"status": 200, "url_count": 0, "issues": ["xml_malformed"]}, id="xml"),
    ],
)
def test_a_sitemap_answered_with_a_body_that_cannot_be_read_is_not_removed_nor_fixed(
    store: HistoryStore, unread: dict[str, Any]
) -> None:
    """A 2xx whose body is no sitemap, or breaks off, lists what the run cannot know: as for a
    sitemap that answered 500, nothing it listed is removed or fixed; its finding is new, and
    fixed once it can be read again."""
    read = store_run(store, _site(READ_B), _RUN)
    down = store_run(store, _site(unread), _RUN)
    back = store_run(store, _site(READ_B), _RUN)
    code = unread["issues"][0]
    assert _changes(store, read, down) == [("finding_new", "/sitemap-b.xml", code)]
    assert _changes(store, down, back) == [("finding_fixed", "/sitemap-b.xml", code)]


def test_a_sitemap_read_up_to_a_broken_markup_knows_what_it_gave(store: HistoryStore) -> None:
    """a.xml breaks off (xml_malformed) after its first URL: the URLs after the break are
    unknown, not removed, and their findings not fixed; the URL it gave is compared as
    usual (its lastmod moved back)."""
    old = [
        sitemap(E + "/sitemap.xml", found_via="robots.txt", parent=None, kind="sitemapindex"),
        sitemap(A),
        url("/first", lastmod="2024-05-01"),
        url("/after", lastmod="2024-05-01", issues=["lastmod_mismatch"]),
    ]
    new = [
        *old[:1],
        sitemap(A, url_count=1, issues=["xml_malformed"]),
        url("/first", lastmod="2024-04-01"),
    ]
    before = store_run(store, old, _RUN)
    after = store_run(store, new, _RUN)
    assert _changes(store, before, after) == [
        ("finding_new", "/a.xml", "xml_malformed"),
        ("lastmod_backwards", "/first", ("2024-05-01", "2024-04-01")),
    ]


def test_a_sitemap_removed_from_an_index_that_was_read_is_removed(store: HistoryStore) -> None:
    """The index was read and no longer lists sitemap-b.xml: its sitemaps, its URLs and
    their findings are removed and fixed, as before."""
    read = store_run(store, _site(READ_B), _RUN)
    gone = store_run(store, _site(None), _RUN)
    assert _changes(store, read, gone) == [
        ("url_removed", "/gone-page", None),
        ("url_removed", "/in-child", None),
        ("url_removed", "/only-b", None),
        ("url_moved", "/both", ([A, INDEX_B], [A])),
        ("sitemap_removed", "/child.xml", None),
        ("sitemap_removed", "/sitemap-b.xml", None),
        ("finding_fixed", "/child.xml", "schema_invalid"),
        ("finding_fixed", "/gone-page", "http_error"),
        ("finding_fixed", "/in-child", "lastmod_mismatch"),
        ("finding_fixed", "/only-b", "lastmod_mismatch"),
        ("finding_fixed", "/sitemap-b.xml", "schema_invalid"),
    ]


def test_a_url_still_listed_elsewhere_moves_only_between_sitemaps_that_were_read(
    store: HistoryStore,
) -> None:
    """/both stays listed by a.xml and is newly listed by c.xml while sitemap-b.xml is down:
    moved (c.xml is new), its old set with sitemap-b.xml, which is not counted as gone."""
    c = f"{E}/c.xml"
    read = store_run(store, _site(READ_B), _RUN)
    down_records = [r for r in _site(FAILED_B) if r["url"] != f"{E}/both"] + [
        sitemap(c),
        url("/both", sitemaps=[A, c]),
    ]
    down = store_run(store, down_records, _RUN)
    moved = [r for r in _changes(store, read, down) if r[0] == "url_moved"]
    assert moved == [("url_moved", "/both", ([A, INDEX_B], [A, c]))]


def test_the_sitemaps_under_an_index_that_cannot_be_read_are_not_removed(
    store: HistoryStore,
) -> None:
    """When the index at the top answers 500, every sitemap it listed (at any depth) is
    unknown: not removed, and neither are their URLs; nor are their findings fixed."""
    top = E + "/sitemap.xml"
    read = store_run(store, _site(READ_B), _RUN)
    down = store_run(
        store,
        [
            sitemap(
                top,
                found_via="robots.txt",
                parent=None,
                kind="sitemapindex",
                status=500,
                url_count=0,
                issues=["http_error"],
            )
        ],
        _RUN,
    )
    assert _changes(store, read, down) == [
        ("finding_new", "/sitemap.xml", "http_error"),
        ("status_regression", "/sitemap.xml", (200, 500)),
    ]
    back = store_run(store, _site(READ_B), _RUN)
    assert _changes(store, down, back) == [
        ("finding_fixed", "/sitemap.xml", "http_error"),
        ("status_changed", "/sitemap.xml", (500, 200)),
    ]


def test_a_history_without_the_canonical_column_is_read_and_gains_it(tmp_path: Path) -> None:
    """A file written before the history kept whether a canonical is usable: read as it is (a
    canonical_mismatch is canonicalised, as then), and given the column when opened to write."""
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with HistoryStore(path) as store:
        old = store_run(store, [sitemap(A), url("/p")], _RUN)
        moved = url("/p", canonical=E + "/q", issues=["canonical_mismatch"])
        new = store_run(store, [sitemap(A), moved], _RUN)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE url_results DROP COLUMN canonical_ignored")
    db.close()
    expected = [("indexability_regression", "/p", "indexable", "canonicalised")]
    with HistoryStore(path, read_only=True) as reader:
        assert _indexability(reader, old, new) == expected
    with HistoryStore(path) as store:
        assert _indexability(store, old, new) == expected
        ignored = url("/p", canonical="javascript:alert(1)", issues=["canonical_mismatch"])
        newer = store_run(store, [sitemap(A), ignored], _RUN)
        assert _indexability(store, old, newer) == []


def test_a_url_dropped_by_a_sitemap_that_was_read_is_unknown_while_another_is_down(
    store: HistoryStore,
) -> None:
    """/both was listed by a.xml and sitemap-b.xml; a.xml no longer lists it while
    sitemap-b.xml cannot be read: sitemap-b.xml may still list it, so it is not removed, and
    its findings are not fixed."""
    before = [r for r in _site(READ_B) if r["url"] != f"{E}/both"]
    before.append(url("/both", sitemaps=[A, INDEX_B], issues=["lastmod_mismatch"]))
    read = store_run(store, before, _RUN)
    down = store_run(store, [r for r in _site(FAILED_B) if r["url"] != f"{E}/both"], _RUN)
    changes = _changes(store, read, down)
    assert [c for c in changes if c[1] == "/both"] == []


def test_the_note_counts_only_sitemaps_the_old_run_could_read(store: HistoryStore) -> None:
    """A sitemap that answered 500 in both runs lost nothing since: no note, night after
    night; one that the old run read and the new one could not gets it."""
    read = store_run(store, _site(READ_B), _RUN)
    down = store_run(store, _site(FAILED_B), _RUN)
    still_down = store_run(store, _site(FAILED_B), _RUN)
    assert unread_note(store, down, still_down) is None
    note = unread_note(store, read, down)
    assert note is not None
    assert note.startswith("1 sitemap of run 1 could not be read in this run")
    assert "nor 1 sitemap listed under it in run 1" in note


def test_a_lastmod_a_sitemap_that_cannot_be_read_gave_is_not_taken_for_a_change(
    store: HistoryStore,
) -> None:
    """/both took its lastmod from sitemap-b.xml (the greater of the two listings); with
    sitemap-b.xml down, only a.xml's older lastmod is left: that is not the site's lastmod
    going backwards, nor a lastmod finding that is new, and back again is no change either."""
    page = "Sat, 01 Jun 2024 00:00:00 GMT"

    def both(lastmod: str, sitemaps: list[str], issues: list[str]) -> dict[str, Any]:
        return url("/both", sitemaps=sitemaps, lastmod=lastmod, last_modified=page, issues=issues)

    def night(b: dict[str, Any], record: dict[str, Any]) -> list[dict[str, Any]]:
        return [r if r["url"] != f"{E}/both" else record for r in _site(b)]

    read = store_run(store, night(READ_B, both("2024-06-01", [A, INDEX_B], [])), _RUN)
    down = store_run(store, night(FAILED_B, both("2024-01-10", [A], ["lastmod_mismatch"])), _RUN)
    back = store_run(store, night(READ_B, both("2024-06-01", [A, INDEX_B], [])), _RUN)
    assert [c for c in _changes(store, read, down) if c[1] == "/both"] == []
    assert [c for c in _changes(store, down, back) if c[1] == "/both"] == []
