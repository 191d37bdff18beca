"""An audit killed mid-run (SIGKILL) and started again with the same JOBDIR completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.history import HistoryStore
from tests.support.crawl import by_record, run_audit, start_audit_process
from tests.support.golden_site import XML, index, slow_pages, url, urlset
from tests.support.server import Page, TestSite

PER_SITEMAP = 120
# Pages fetched before the kill: enough of the 360 that a restart is far from a resume.
KILL_AFTER = 150
# What a SIGKILL may lose, and the resumed audit request again: the 4 requests in flight, plus
# the pages of the last moments whose outcome was not written yet (read 32 at a time or within
# 0.05 s, their records sent 64 at a time or within 0.1 s, written within 0.1 s): a few tenths
# of a second of pages (23 to 35 seen with six of these tests running at once).
LOST_AT_MOST = 64


def resumable_site() -> TestSite:
    slow_page = slow_pages(0.05)
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
        "/index.xml": Page(body=index(*(f"{{base}}/s{i}.xml" for i in range(3))), content_type=XML),
    }
    for i in range(3):
        locs = [url(f"{{base}}/p/{i}/{j}") for j in range(PER_SITEMAP)]
        routes[f"/s{i}.xml"] = Page(body=urlset(*locs), content_type=XML)
        for j in range(PER_SITEMAP):
            routes[f"/p/{i}/{j}"] = slow_page
    return TestSite(routes)  # type: ignore[arg-type]


def start_audit(base: str, jobdir: Path, report: Path) -> subprocess.Popen[bytes]:
    return start_audit_process(
        base,
        report,
        JOBDIR=jobdir,
        # The history next to the job, not in the checkout's reports/ directory.
        SITEMAPAUDIT_HISTORY_PATH=jobdir.parent / "history.sqlite3",
        CONCURRENT_REQUESTS_PER_DOMAIN=4,
        TELNETCONSOLE_ENABLED=0,
    )


def page_hits(site: TestSite) -> Counter[str]:
    return Counter({p: n for p, n in site.hits.items() if p.startswith("/p/")})


def test_killed_audit_resumes_with_nothing_missing_or_twice(tmp_path: Path) -> None:
    jobdir = tmp_path / "job"
    with resumable_site() as site:
        first = start_audit(site.base, jobdir, tmp_path / "first.jsonl")
        deadline = time.monotonic() + 60
        while sum(page_hits(site).values()) < KILL_AFTER and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        assert first.stderr is not None
        first.stderr.close()
        before = page_hits(site)
        assert KILL_AFTER <= sum(before.values()) < 3 * PER_SITEMAP

        assert first.returncode != 0, "the first audit ended before it was killed"
        second = start_audit(site.base, jobdir, tmp_path / "second.jsonl")
        _, stderr = second.communicate(timeout=120)
        assert second.returncode == 0, stderr.decode()[-3000:]
        after = page_hits(site)

    records = [json.loads(line) for line in (tmp_path / "second.jsonl").read_text().splitlines()]
    urls = Counter(r["url"] for r in records if r["record"] == "url")
    assert len(urls) == 3 * PER_SITEMAP
    assert set(urls.values()) == {1}
    assert all(r["issues"] == [] and r["status"] == 200 for r in records if r["record"] == "url")
    assert sorted(r["url"].rsplit("/", 1)[-1] for r in records if r["record"] == "sitemap") == [
        "index.xml",
        "s0.xml",
        "s1.xml",
        "s2.xml",
    ]
    assert records[-1]["record"] == "summary"
    assert records[-1]["urls_listed"] == 3 * PER_SITEMAP
    # The report says when the audit first started, which no page it holds was checked
    # before, and when it was resumed.
    summary = records[-1]
    checked = sorted(r["checked_at"] for r in records if r["record"] == "url")
    [resumed_at] = summary["resumed_at"]
    assert summary["started_at"] <= checked[0] <= resumed_at <= checked[-1]
    assert resumed_at <= summary["finished_at"]
    # The history keeps the audit as one finished run, without its interrupted part.
    with HistoryStore(tmp_path / "history.sqlite3", read_only=True) as store:
        runs = store.runs()
    assert [(run.started_at, run.finished_at is not None) for run in runs] == [
        (summary["started_at"], True)
    ]
    # Resumed, not restarted: pages done before the kill are not requested again (only those
    # of its last moments may be, LOST_AT_MOST), and no page was requested more than twice.
    requested_again = sum((after - before).values())
    assert requested_again <= 3 * PER_SITEMAP - sum(before.values()) + LOST_AT_MOST, (
        requested_again,
        sum(before.values()),
    )
    assert max(after.values()) <= 2, after.most_common(3)
    assert all(after[f"/p/{i}/{j}"] >= 1 for i in range(3) for j in range(PER_SITEMAP))


@deferred_f_from_coro_f
async def test_a_finished_audit_run_again_with_its_jobdir_is_a_new_audit(tmp_path: Path) -> None:
    """A JOBDIR kept from night to night: the second night audits the site as it is then,
    instead of replaying the first night's results."""
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
        "/a": Page(body="<html><head></head><body>a</body></html>"),
        "/b": Page(status=404, body="missing"),
    }
    settings = {"JOBDIR": str(tmp_path / "job"), "SITEMAPAUDIT_HISTORY_PATH": ""}
    with TestSite(routes) as site:  # type: ignore[arg-type]
        first, _ = await run_audit(site.base, tmp_path / "first.jsonl", settings=settings)
        routes["/b"] = Page(body="<html><head></head><body>b</body></html>")
        routes["/s.xml"] = Page(body=urlset(url("{base}/b"), url("{base}/c")), content_type=XML)
        routes["/c"] = Page(body="<html><head></head><body>c</body></html>")
        second, _ = await run_audit(site.base, tmp_path / "second.jsonl", settings=settings)
        hits = dict(site.hits)
    assert first[-1]["complete"] is True
    assert {r["url"]: r["status"] for r in by_record(second, "url")} == {
        f"{site.base}/b": 200,
        f"{site.base}/c": 200,
    }
    assert second[-1]["complete"] is True
    assert second[-1]["urls_listed"] == 2
    assert hits["/s.xml"] == 2
    assert hits["/b"] == 2


def test_a_sitemap_read_where_it_redirects_is_not_read_again_after_a_resume(
    tmp_path: Path,
) -> None:
    """robots.txt names /old.xml, which redirects to /new.xml, read under its own record, and
    an index that lists /new.xml; the audit is killed while that index is being fetched.
    Resumed, the index lists a sitemap read already, as in an audit that ran in one go."""
    release = threading.Event()

    def late_index(site: TestSite, path: str) -> Page:
        release.wait(60)
        return Page(body=index("{base}/new.xml"), content_type=XML)

    routes: dict[str, object] = {
        "/robots.txt": Page(
            body="Sitemap: {base}/old.xml\nSitemap: {base}/late-index.xml\n",
            content_type="text/plain",
        ),
        "/old.xml": Page(status=301, headers=[("Location", "/new.xml")]),
        "/new.xml": Page(body=urlset(url("{base}/p/1"), url("{base}/p/2")), content_type=XML),
        "/late-index.xml": late_index,
        "/p/1": Page(body="<html><head></head><body>1</body></html>"),
        "/p/2": Page(body="<html><head></head><body>2</body></html>"),
    }
    jobdir = tmp_path / "job"
    first_report = tmp_path / "first.jsonl"
    with TestSite(routes) as site:  # type: ignore[arg-type]
        first = start_audit(site.base, jobdir, first_report)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            site.hits["/late-index.xml"] and _reported(first_report, f"{site.base}/new.xml")
        ):
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        assert first.stderr is not None
        first.stderr.close()
        assert first.returncode != 0, "the first audit ended before it was killed"
        release.set()
        second = start_audit(site.base, jobdir, tmp_path / "second.jsonl")
        _, stderr = second.communicate(timeout=120)
        assert second.returncode == 0, stderr.decode()[-3000:]
        hits = dict(site.hits)

    records = [json.loads(line) for line in (tmp_path / "second.jsonl").read_text().splitlines()]
    sitemaps = {r["url"].replace(site.base, ""): r["issues"] for r in by_record(records, "sitemap")}
    assert sitemaps == {"/old.xml": ["redirect"], "/new.xml": [], "/late-index.xml": []}
    assert {r["url"].replace(site.base, ""): r["issues"] for r in by_record(records, "url")} == {
        "/p/1": [],
        "/p/2": [],
    }
    assert records[-1]["sitemaps_found"] == 3
    assert hits["/new.xml"] == 1


def _reported(report: Path, sitemap: str) -> bool:
    """Whether ``report`` has the record of ``sitemap`` (its lines written so far)."""
    if not report.exists():
        return False
    for line in report.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line being written
        if record.get("record") == "sitemap" and record.get("url") == sitemap:
            return True
    return False
