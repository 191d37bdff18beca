"""Several ``scrapy crawl audit`` processes on one Redis audit one site together.

The site has 2,000 pages that take 40 ms each to answer. The reference is a single-process
audit of the same site; the cluster's merged report must equal it record for record.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from sitemapaudit.history.store import HistoryStore
from tests.distributed.cluster import logs, normalized, run_workers, start_worker, stat
from tests.distributed.conftest import free_port, start_redis
from tests.distributed.site import routes
from tests.support.server import TestSite

PAGES = 2000
DELAY = 0.04
PER_WORKER = 2  # concurrent requests per worker in the cluster runs


def page_paths(site: TestSite) -> list[str]:
    return [p for p in site.hits if p.startswith(("/p/", "/moved/"))]


def allowed_pages(site: TestSite) -> set[str]:
    """Pages robots.txt allows (it disallows /p/7...; /moved/7... are only reached from there)."""
    return {
        path
        for path in site.routes
        if path.startswith(("/p/", "/moved/")) and not path.split("/")[2].startswith("7")
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A single-process audit of the site (no Redis), the yardstick of the cluster runs."""
    directory = tmp_path_factory.mktemp("single")
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        reports = run_workers(
            site.base, directory, 1, {"CONCURRENT_REQUESTS_PER_DOMAIN": "16"}, timeout=120
        )
        assert max(site.hits.values()) == 1
    assert len(reports) == 1
    return normalized(reports[0], site.base)


def cluster_settings(redis_url: str, **extra: str) -> dict[str, str]:
    return {
        "SITEMAPAUDIT_DISTRIBUTED": redis_url,
        "CONCURRENT_REQUESTS_PER_DOMAIN": str(PER_WORKER),
        **extra,
    }


def test_three_workers_write_the_single_process_report_requesting_each_url_once(
    redis_url: str, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    history = tmp_path / "history.sqlite3"
    settings = cluster_settings(redis_url, SITEMAPAUDIT_HISTORY_PATH=str(history))
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        reports = run_workers(site.base, tmp_path, 3, settings)
        # Counted on the server: nothing was requested twice in the whole cluster.
        assert max(site.hits.values()) == 1, [p for p, n in site.hits.items() if n > 1][:10]
        assert set(page_paths(site)) == allowed_pages(site)
        times = [t for t, path in site.log if path.startswith(("/p/", "/moved/"))]
        pages = len(page_paths(site))
    # One worker wrote the report; the others wrote none.
    assert len(reports) == 1, logs(tmp_path)
    assert normalized(reports[0], site.base) == reference
    # The worker that wrote the report kept the whole run in its history store.
    with HistoryStore(history) as store:
        (run,) = store.runs()
        kept = sorted(r["url"].replace(site.base, "BASE") for r in store.records(run.id))
    assert run.finished_at is not None
    assert kept == sorted(r["url"] for r in reference if r["record"] in ("url", "sitemap"))
    # Every worker requested a share of the pages...
    shares = [stat(tmp_path / f"worker{i}.log", "downloader/request_count") for i in range(3)]
    assert sum(shares) == sum(site.hits.values())
    assert min(shares) >= pages // 10, shares
    # ...at once: one process with PER_WORKER concurrent requests needs at least
    # pages * DELAY / PER_WORKER seconds for these pages; the cluster took much less.
    span = max(times) - min(times)
    serial_floor = pages * DELAY / PER_WORKER
    print(f"cluster: {pages} pages in {span:.1f} s; one worker needs >= {serial_floor:.1f} s")
    assert span < 0.75 * serial_floor


def start_and_kill_at_a_quarter(
    site: TestSite, directory: Path, name: str, count: int, settings: dict[str, str], *, kill: int
) -> list[subprocess.Popen[bytes]]:
    """Start ``count`` workers, and SIGKILL the first ``kill`` of them once a quarter of the
    pages have been requested."""
    workers = [
        start_worker(
            site.base, directory / f"{name}{i}.jsonl", settings, directory / f"{name}{i}.log"
        )
        for i in range(count)
    ]
    deadline = time.monotonic() + 60
    while len(page_paths(site)) < PAGES // 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    for worker in workers[:kill]:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    return workers


def test_a_worker_killed_mid_audit_loses_nothing(
    redis_url: str, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    settings = cluster_settings(redis_url, SITEMAPAUDIT_WORKER_TIMEOUT="3")
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        workers = start_and_kill_at_a_quarter(site, tmp_path, "part", 3, settings, kill=1)
        for worker in workers[1:]:
            assert worker.wait(timeout=180) == 0, logs(tmp_path)
        # Every page was requested; the ones the dead worker held, again by the others.
        assert set(page_paths(site)) == allowed_pages(site)
    reports = [p for p in sorted(tmp_path.glob("part[12].jsonl")) if p.stat().st_size]
    assert len(reports) == 1, logs(tmp_path)
    assert normalized(reports[0], site.base) == reference
    assert "queued again" in logs(tmp_path)


def test_a_worker_stopped_mid_audit_hands_back_its_work_and_the_other_goes_on_at_once(
    redis_url: str, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    # A worker timeout far longer than the test may take: the other worker never waits for it.
    settings = cluster_settings(redis_url, SITEMAPAUDIT_WORKER_TIMEOUT="3600")
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        stopped = start_worker(
            site.base,
            tmp_path / "part0.jsonl",
            {**settings, "CLOSESPIDER_PAGECOUNT": str(PAGES // 8)},
            tmp_path / "part0.log",
        )
        other = start_worker(site.base, tmp_path / "part1.jsonl", settings, tmp_path / "part1.log")
        assert stopped.wait(timeout=180) == 1, logs(tmp_path)
        assert other.wait(timeout=180) == 0, logs(tmp_path)
        assert set(page_paths(site)) == allowed_pages(site)
    assert normalized(tmp_path / "part1.jsonl", site.base) == reference
    # Nothing was left for the other worker to find and queue again once it ran out of work.
    assert stat(tmp_path / "part1.log", "sitemapaudit/distributed/sweeps") == 0
    assert "queued again" not in logs(tmp_path)


def test_a_cluster_stopped_completely_resumes_when_workers_start_again(
    redis_url: str, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    settings = cluster_settings(redis_url, SITEMAPAUDIT_WORKER_TIMEOUT="3")
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        start_and_kill_at_a_quarter(site, tmp_path, "first", 2, settings, kill=2)
        done_before = len(page_paths(site))
        reports = run_workers(site.base, tmp_path, 2, settings)
        assert set(page_paths(site)) == allowed_pages(site)
        # The new workers continued the audit rather than starting over.
        assert sum(site.hits.values()) < len(site.hits) + done_before // 2
    assert len(reports) == 1, logs(tmp_path)
    assert normalized(reports[0], site.base) == reference


def test_the_pace_of_a_host_holds_for_the_whole_cluster(redis_url: str, tmp_path: Path) -> None:
    delay = 0.1
    settings = cluster_settings(
        redis_url,
        DOWNLOAD_DELAY=str(delay),
        RANDOMIZE_DOWNLOAD_DELAY="0",
        CONCURRENT_REQUESTS_PER_DOMAIN="4",
    )
    with TestSite(routes(40, 2, 0.0)) as site:
        run_workers(site.base, tmp_path, 3, settings)
        times = sorted(t for t, _path in site.log)
    # Requests of three workers, yet one host's requests start at least `delay` apart
    # (three independent per-process delays would allow three times the rate).
    assert len(times) > 40
    assert times[-1] - times[0] >= 0.9 * delay * (len(times) - 1)


def test_no_two_requests_of_the_cluster_start_closer_than_the_delay(
    redis_url: str, tmp_path: Path
) -> None:
    """Scrapy's own per-worker delay (with its random jitter) and slow answers that hold
    requests back in a worker do not bring two requests of the cluster closer together."""
    delay = 0.15
    settings = cluster_settings(redis_url, DOWNLOAD_DELAY=str(delay))
    with TestSite(routes(30, 2, 0.2)) as site:
        run_workers(site.base, tmp_path, 3, settings)
        times = sorted(t for t, _path in site.log)
    assert len(times) > 30
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # The server notes each request as its thread reads it, which a loaded machine delays by
    # some tens of milliseconds: a third of the delay as leeway. Three workers pacing on their
    # own would bring requests far closer (their gaps would spread down to none).
    assert min(gaps) >= delay - 0.05, sorted(gaps)[:5]


def test_a_stopped_worker_sends_few_more_paced_requests(redis_url: str, tmp_path: Path) -> None:
    """Requests wait for their cluster slot as they are sent, a few per worker at most: a
    stop (SIGTERM, as a scrapyd cancel) does not go on sending a queue of reserved ones."""
    delay = 0.2
    settings = cluster_settings(
        redis_url, DOWNLOAD_DELAY=str(delay), CONCURRENT_REQUESTS_PER_DOMAIN="4"
    )
    with TestSite(routes(200, 2, 0.0)) as site:
        worker = start_worker(site.base, tmp_path / "part.jsonl", settings, tmp_path / "w.log")
        deadline = time.monotonic() + 30
        while len(page_paths(site)) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        stopped_at = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 1, logs(tmp_path)
        after = [path for t, path in site.log if t > stopped_at]
    # At most the requests in flight or waiting for their slot (CONCURRENT_REQUESTS_PER_DOMAIN)
    # and the two waiting in the host's downloader slot.
    assert len(after) <= 6, after


def test_sitemaps_given_as_arguments_are_the_only_ones_read(redis_url: str, tmp_path: Path) -> None:
    def audit(directory: Path, count: int, settings: dict[str, str]) -> list[dict[str, Any]]:
        directory.mkdir()
        with TestSite(routes(400, 4, 0.0)) as site:
            args = f"{site.base}/sitemap-0.xml,{site.base}/sitemap-lang.xml"
            reports = run_workers(site.base, directory, count, settings, sitemap=args)
            assert max(site.hits.values()) == 1
            assert "/sitemap_index.xml" not in site.hits
        assert len(reports) == 1
        return normalized(reports[0], site.base)

    single = audit(tmp_path / "single", 1, {})
    cluster = audit(tmp_path / "cluster", 2, cluster_settings(redis_url))
    assert cluster == single
    assert {r["url"] for r in cluster if r["record"] == "sitemap"} == {
        "BASE/sitemap-0.xml",
        "BASE/sitemap-lang.xml",
    }


def test_two_workers_write_the_single_process_inventory_requesting_no_page(
    redis_url: str, tmp_path: Path
) -> None:
    """``fetch_urls=no``: every URL is settled without a request, a thousand at a time."""
    single, cluster = tmp_path / "single", tmp_path / "cluster"
    single.mkdir()
    cluster.mkdir()
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        (alone,) = run_workers(site.base, single, 1, {}, fetch_urls="no")
        reports = run_workers(site.base, cluster, 2, cluster_settings(redis_url), fetch_urls="no")
        assert page_paths(site) == []
    assert len(reports) == 1, logs(cluster)
    expected = normalized(alone, site.base)
    assert sum(r["record"] == "url" for r in expected) > PAGES
    assert normalized(reports[0], site.base) == expected


def test_workers_stopped_with_ctrl_c_exit_1_and_say_the_audit_is_not_complete(
    redis_url: str, tmp_path: Path
) -> None:
    settings = cluster_settings(redis_url, SITEMAPAUDIT_WORKER_TIMEOUT="3")
    with TestSite(routes(PAGES, 4, DELAY)) as site:
        workers = start_and_kill_at_a_quarter(site, tmp_path, "part", 2, settings, kill=0)
        for worker in workers:
            worker.send_signal(signal.SIGINT)
        codes = [worker.wait(timeout=60) for worker in workers]
    assert codes == [1, 1], logs(tmp_path)
    assert logs(tmp_path).count("before the distributed audit was complete") >= 2
    assert "another worker of this distributed audit writes the report" not in logs(tmp_path)


def test_workers_that_lose_redis_exit_1_saying_so_and_go_on_once_it_is_back(
    reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = start_redis(port, tmp_path / "redis")
    settings = cluster_settings(url, SITEMAPAUDIT_WORKER_TIMEOUT="3")
    try:
        with TestSite(routes(PAGES, 4, DELAY)) as site:
            workers = start_and_kill_at_a_quarter(site, tmp_path, "lost", 2, settings, kill=0)
            redis.Redis.from_url(url).shutdown()  # (its data kept: the append-only file)
            server.wait(timeout=10)
            codes = [worker.wait(timeout=60) for worker in workers]
            # A cron job sees it: exit status 1, the stop line, the reason; one error line
            # each, not a traceback per response.
            assert codes == [1, 1], logs(tmp_path)
            for i in range(2):
                log = (tmp_path / f"lost{i}.log").read_text(errors="replace")
                assert "this worker stopped (redis_lost) before the distributed audit" in log
                assert "'sitemapaudit/distributed/stopped': 'redis_lost'" in log
                assert "Traceback" not in log, log
                assert [line for line in log.splitlines() if " ERROR: " in line] == [
                    next(line for line in log.splitlines() if "Redis cannot be reached" in line)
                ], log
            assert not list(tmp_path.glob("lost*.jsonl"))
            # Redis back with its data: workers started again go on with the audit.
            server = start_redis(port, tmp_path / "redis")
            reports = run_workers(site.base, tmp_path, 2, settings)
            assert set(page_paths(site)) == allowed_pages(site)
        assert len(reports) == 1, logs(tmp_path)
        assert normalized(reports[0], site.base) == reference
    finally:
        server.terminate()
        server.wait(timeout=10)


def records_of(report: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]


def test_workers_started_in_the_same_second_each_reserve_a_report_of_their_own(
    redis_url: str, tmp_path: Path
) -> None:
    """Default reports (no ``-O``) of workers whose audits start in the same second: the
    writer that is stopped keeps its file, ended by an incomplete summary; the worker that
    takes over writes the whole report in a file of its own; a worker that writes no report
    leaves no file."""
    reports = tmp_path / "reports"
    settings = cluster_settings(redis_url, SITEMAPAUDIT_REPORT_DIR=str(reports))
    second = "2026-11-23T19:34:26+00:00"

    def worker(name: str, **extra: str) -> subprocess.Popen[bytes]:
        log = tmp_path / f"{name}.log"
        return start_worker(
            site.base, None, {**settings, **extra}, log, started_at=second, fetch_urls="no"
        )

    with TestSite(routes(40, 2, 0.0)) as site:
        # Alone, it writes the report, and stops after its first record.
        assert worker("stopped", CLOSESPIDER_ITEMCOUNT="1").wait(timeout=120) == 1, logs(tmp_path)
        assert worker("next").wait(timeout=120) == 0, logs(tmp_path)
        # A new audit, by two workers: one writes its report.
        pair = [worker("pair0"), worker("pair1")]
        assert [w.wait(timeout=120) for w in pair] == [0, 0], logs(tmp_path)
    name = f"127.0.0.1_{site.base.rsplit(':', 1)[1]}-20261123T193426Z"
    files = {p.name for p in reports.iterdir()}
    # The worker of the pair that wrote no report left no file.
    (third,) = files - {f"{name}.jsonl", f"{name}-2.jsonl"}
    assert len(files) == 3, files
    assert third in (f"{name}-3.jsonl", f"{name}-4.jsonl"), files
    stopped = records_of(reports / f"{name}.jsonl")
    summary = stopped[-1]
    assert summary["record"] == "summary", stopped
    assert summary["complete"] is False
    assert [r["record"] for r in stopped[:-1]] == ["sitemap"] * (len(stopped) - 1)
    assert any("another worker may finish the audit" in note for note in summary["notes"])
    # The worker that went on after the writer stopped resumed the audit; the pair's ran in one go.
    assert len(records_of(reports / f"{name}-2.jsonl")[-1]["resumed_at"]) == 1
    assert records_of(reports / third)[-1]["resumed_at"] == []
    for report in (f"{name}-2.jsonl", third):
        records = records_of(reports / report)
        sitemaps = [r["url"] for r in records if r["record"] == "sitemap"]
        assert len(sitemaps) == len(set(sitemaps)) == 5, sitemaps
        assert len(stopped) - 1 < len(sitemaps)
        assert records[-1]["record"] == "summary"
        assert records[-1]["complete"] is True
        assert sum(r["record"] == "summary" for r in records) == 1
