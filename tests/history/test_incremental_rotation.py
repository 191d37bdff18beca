"""The incremental policy over a history of many runs: whatever the schedule of the runs,
every URL is requested again at least once in every ``SITEMAPAUDIT_RECHECK_NIGHTS``
consecutive finished runs of the origin."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.run import AuditRun
from sitemapaudit.history import HistoryStore
from sitemapaudit.urls import parse_origin

ORIGIN = "https://e.com"
URLS = [f"{ORIGIN}/p{i}" for i in range(120)]
LASTMOD = "2024-01-01"
START = datetime(2026, 11, 2, 2, 30, tzinfo=UTC)  # a Monday


class _Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] += count


class Site:
    """Runs of the audit's bookkeeping over one origin's history, as the spider drives it:
    each listed URL is either carried over or requested (and then found fine)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.history = str(tmp_path / "history.sqlite3")
        self.count = 0

    def run(
        self, when: datetime, nights: int, *, incremental: bool = True, finish: bool = True
    ) -> set[str]:
        """One audit at ``when``; returns the URLs it requested. ``finish=False``: the audit
        is interrupted after deciding about every URL (its run stays unfinished)."""
        self.count += 1
        config = AuditConfig.from_settings(
            {
                "SITEMAPAUDIT_HISTORY_PATH": self.history,
                "SITEMAPAUDIT_WORK_DIR": str(self.tmp_path / f"work{self.count}"),
                "SITEMAPAUDIT_INCREMENTAL": incremental,
                "SITEMAPAUDIT_RECHECK_NIGHTS": nights,
            }
        )
        run = AuditRun(parse_origin(ORIGIN), config, _Stats(), started=when)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        requested: set[str] = set()
        try:
            history = run.history
            assert history is not None
            for url in URLS:
                carried = run.incremental.carried_over(url, LASTMOD)
                if carried is None:
                    requested.add(url)
                checked_at = stamp if carried is None else carried["checked_at"]
                history.add_record(run.history_run, _record(url, checked_at))
            if finish:
                history.finish_run(
                    run.history_run, stamp, {"incremental": run.incremental_summary()}
                )
        finally:
            run.close(finished=finish)
        return requested


def _record(url: str, checked_at: str) -> dict[str, Any]:
    return {
        "record": "url",
        "url": url,
        "sitemaps": [f"{ORIGIN}/s.xml"],
        "issues": [],
        "status": 200,
        "fetched": True,
        "lastmod": LASTMOD,
        "checked_at": checked_at,
    }


def _every_window_requests_every_url(requested: list[set[str]], nights: int) -> None:
    for start in range(len(requested) - nights + 1):
        window = set().union(*requested[start : start + nights])
        missing = set(URLS) - window
        assert not missing, f"runs {start + 1} to {start + nights}: {len(missing)} never requested"


def _weekdays(count: int) -> list[datetime]:
    days = (START + timedelta(days=i) for i in range(count * 2))
    return [day for day in days if day.weekday() < 5][:count]


SCHEDULES = {
    "nightly": [START + timedelta(days=i) for i in range(16)],
    "three_a_day": [START + timedelta(hours=8 * i) for i in range(16)],
    "weekly": [START + timedelta(weeks=i) for i in range(16)],
    "weekdays": _weekdays(16),
}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_every_url_is_requested_in_every_recheck_nights_consecutive_runs(
    tmp_path: Path, schedule: str
) -> None:
    nights = 7
    site = Site(tmp_path)
    requested = [site.run(when, nights) for when in SCHEDULES[schedule]]
    assert requested[0] == set(URLS)  # no previous run: every URL is new
    _every_window_requests_every_url(requested[1:], nights)
    # ... and only a share of the rest is requested each time.
    assert all(len(urls) < len(URLS) / 3 for urls in requested[1:])


def test_the_rotation_goes_on_after_a_full_audit_and_is_in_the_summary(tmp_path: Path) -> None:
    nights = 3
    site = Site(tmp_path)
    site.run(START, nights, incremental=False)
    requested = [site.run(START + timedelta(minutes=i + 1), nights) for i in range(nights)]
    assert set().union(*requested) == set(URLS)
    assert all(not a & b for a, b in pairwise(requested))
    with HistoryStore(site.history) as history:
        shares = [history.summary(run.id) for run in history.runs(ORIGIN)]
    assert [(s or {}).get("incremental", {}).get("share") for s in shares] == [None, 0, 1, 2]


def test_an_interrupted_run_does_not_make_a_url_skip_its_turn(tmp_path: Path) -> None:
    nights = 3
    site = Site(tmp_path)
    site.run(START, nights)
    finished: list[set[str]] = []
    for i in range(1, 10):
        when = START + timedelta(days=i)
        if i in (2, 5, 6):
            site.run(when, nights, finish=False)
        else:
            finished.append(site.run(when, nights))
    _every_window_requests_every_url(finished, nights)


def test_a_result_checked_recheck_nights_runs_ago_is_requested_again(tmp_path: Path) -> None:
    """Runs that kept no share of the rotation (a report imported into the history, or a
    changed SITEMAPAUDIT_RECHECK_NIGHTS): the age of each result, in runs, still holds the
    promise."""
    nights = 3
    site = Site(tmp_path)
    with HistoryStore(site.history) as history:
        for day in range(nights):
            stamp = (START + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")
            run_id = history.begin_run(ORIGIN, stamp)
            for url in URLS:
                # The second half was checked again on the second night.
                fresh = day >= 1 and url in URLS[len(URLS) // 2 :]
                checked = (START + timedelta(days=1 if fresh else 0)).strftime("%Y-%m-%dT%H:%M:%SZ")
                history.add_record(run_id, _record(url, checked))
            history.finish_run(run_id, stamp, {"incremental": {}})
    requested = site.run(START + timedelta(days=nights), nights)
    old = set(URLS[: len(URLS) // 2])
    assert old <= requested
    # The others were checked two runs ago: only the rotation's share of them is requested.
    assert len(requested - old) < len(URLS) / 2 / 2
