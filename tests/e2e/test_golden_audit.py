"""A real audit of the golden test site, compared with the findings a correct audit reports."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from scrapy.utils.defer import deferred_from_coro

from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import EXPECTED_SITEMAPS, EXPECTED_URLS, routes
from tests.support.server import TestSite


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Any:
    site = TestSite({})
    site.routes.update(routes(f"127.0.0.1:{site.port}"))  # type: ignore[arg-type]
    with site:
        report = tmp_path_factory.mktemp("golden") / "report.jsonl"
        records, crawler = pytest_twisted.blockon(deferred_from_coro(run_audit(site.base, report)))
        yield site, records, crawler


def _sub(site: TestSite, value: str) -> str:
    return value.replace("{base}", site.base)


def test_every_listed_url_has_exactly_one_record_with_the_expected_findings(golden: Any) -> None:
    site, records, _ = golden
    urls = by_record(records, "url")
    got = {r["url"]: sorted(r["issues"]) for r in urls}
    expected = {_sub(site, u): sorted(codes) for u, codes in EXPECTED_URLS.items()}
    assert len(urls) == len(got), "a URL was reported twice"
    assert got == expected


def test_every_sitemap_is_reported_with_how_it_was_found(golden: Any) -> None:
    site, records, _ = golden
    got = {
        r["url"]: (r["found_via"], r["kind"], sorted(r["issues"]))
        for r in by_record(records, "sitemap")
    }
    expected = {
        _sub(site, u): (via, kind, sorted(codes))
        for u, (via, kind, codes) in EXPECTED_SITEMAPS.items()
    }
    assert got == expected


def test_summary_comes_last_and_adds_up(golden: Any) -> None:
    _, records, _ = golden
    assert [r["record"] for r in records].count("summary") == 1
    summary = records[-1]
    assert summary["record"] == "summary"
    urls = by_record(records, "url")
    assert summary["urls_listed"] == len(urls)
    assert summary["sitemaps_found"] == len(by_record(records, "sitemap"))
    counted: dict[str, int] = {}
    for record in records[:-1]:
        for code in record["issues"]:
            counted[code] = counted.get(code, 0) + 1
    assert summary["counts"] == dict(sorted(counted.items()))
    assert summary["robots_txt"]["outcome"] == "rules"


def test_blocked_and_off_host_urls_are_never_requested(golden: Any) -> None:
    site, records, _ = golden
    assert site.hits["/private/page"] == 0
    assert site.hits["/private/target"] == 0  # the target of /redirect-blocked
    blocked = next(r for r in by_record(records, "url") if r["url"].endswith("/private/page"))
    assert blocked["robots_blocked"] is True
    assert blocked["fetched"] is False


def test_each_listed_url_is_fetched_once_and_sitemaps_once(golden: Any) -> None:
    site, _, _ = golden
    assert site.hits["/dup"] == 1
    assert site.hits["/sitemap_index.xml"] == 1
    assert site.hits["/ok"] == 2  # listed once, and the end of /redirect's chain
    assert site.hits["/caf%C3%A9%20menu"] == 2  # listed once, and where /redirect-utf8 leads


def test_redirect_hops_are_all_in_the_record(golden: Any) -> None:
    site, records, _ = golden
    urls = {r["url"]: r for r in by_record(records, "url")}
    record = urls[f"{site.base}/redirect"]
    assert record["redirect_chain"] == [
        {"url": f"{site.base}/redirect", "status": 301},
        {"url": f"{site.base}/redirect-hop", "status": 302},
    ]
    assert record["final_url"] == f"{site.base}/ok"
    assert record["status"] == 200


def test_url_record_fields(golden: Any) -> None:
    site, records, _ = golden
    urls = {r["url"]: r for r in by_record(records, "url")}
    dup = urls[f"{site.base}/dup"]
    assert dup["sitemaps"] == [f"{site.base}/pages.xml", f"{site.base}/pages.xml.gz"]
    ok = urls[f"{site.base}/ok-tz"]
    assert ok["last_modified"] == "Wed, 01 May 2024 10:00:00 GMT"
    assert ok["lastmod_delta_s"] == 0.0
    noindex = urls[f"{site.base}/noindex-header"]
    assert noindex["noindex"] == ["header:x-robots-tag"]
    expired = urls[f"{site.base}/expired"]
    assert expired["noindex"] == ["meta:robots"]
    assert expired["errors"] == [
        "noindex: noindex from meta:robots (unavailable_after 2010-06-25T23:00:00Z has passed)"
    ]
    assert urls[f"{site.base}/expires-later"]["noindex"] == []
    canonical = urls[f"{site.base}/canonical-other"]
    assert canonical["canonical"] == f"{site.base}/ok"
    dropped = urls[f"{site.base}/dropped"]
    assert dropped["fetched"] is False
    assert any("fetch_failed" in e for e in dropped["errors"])


def test_broken_sitemap_keeps_urls_read_before_the_error(golden: Any) -> None:
    _, records, _ = golden
    broken = next(r for r in by_record(records, "sitemap") if r["url"].endswith("/broken.xml"))
    assert any("line 5" in e for e in broken["errors"]), broken["errors"]
    assert broken["url_count"] == 2


def test_gzip_is_recognised_by_its_bytes(golden: Any) -> None:
    _, records, _ = golden
    sitemaps = {r["url"].rsplit("/", 1)[-1]: r for r in by_record(records, "sitemap")}
    assert sitemaps["pages.xml.gz"]["gzip"] is True
    assert sitemaps["fake.xml.gz"]["gzip"] is False
    assert sitemaps["encoded.xml"]["gzip"] is True
