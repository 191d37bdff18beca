"""Whether an audit requests a sitemap conditionally, by when the findings of the body it
read last change with the time (kept with the validators in the history)."""

from __future__ import annotations

import logging
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.run import AuditRun
from sitemapaudit.history.store import REJUDGE_UNKNOWN
from sitemapaudit.urls import parse_origin

ORIGIN = "https://e.com"
SITEMAP = f"{ORIGIN}/news.xml"
NIGHT = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)
MOMENT = "2024-06-07T08:00:00+00:00"


class _Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] += count


def _run(tmp_path: Path, when: datetime, name: str) -> tuple[AuditRun, _Stats]:
    config = AuditConfig.from_settings(
        {
            "SITEMAPAUDIT_HISTORY_PATH": str(tmp_path / "history.sqlite3"),
            "SITEMAPAUDIT_WORK_DIR": str(tmp_path / name),
        }
    )
    stats = _Stats()
    return AuditRun(parse_origin(ORIGIN), config, stats, started=when), stats


def _night_that_kept(tmp_path: Path, rejudge_after: str | None) -> int:
    run, _ = _run(tmp_path, NIGHT, "first")
    try:
        assert run.history is not None
        run.history.add_listings(run.history_run, SITEMAP, [(f"{ORIGIN}/a", None, "none")])
        run.remember_validators(SITEMAP, '"n1"', None, rejudge_after)
        run.history.finish_run(run.history_run, "2024-06-05T12:10:00Z", {})
        return run.history_run
    finally:
        run.close(finished=True)


@pytest.mark.parametrize(
    ("kept", "later", "conditional"),
    [
        (MOMENT, timedelta(days=1), True),
        # The moment itself: an article exactly two days old is not too old yet.
        (MOMENT, timedelta(days=1, hours=20), True),
        (MOMENT, timedelta(days=1, hours=20, seconds=1), False),
        (None, timedelta(days=365), True),
        (REJUDGE_UNKNOWN, timedelta(minutes=1), False),
        ("not a moment", timedelta(minutes=1), False),
        ("2024-06-07T08:00:00", timedelta(minutes=1), False),
    ],
)
def test_a_sitemap_is_requested_without_validators_once_its_findings_may_have_changed(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    kept: str | None,
    later: timedelta,
    conditional: bool,
) -> None:
    previous = _night_that_kept(tmp_path, kept)
    run, stats = _run(tmp_path, NIGHT + later, "second")
    try:
        with caplog.at_level(logging.INFO, logger="sitemapaudit.crawl.conditional"):
            headers, previous_run = run.conditional_headers(SITEMAP)
    finally:
        run.close(finished=True)
    if conditional:
        assert (headers, previous_run) == ({"If-None-Match": '"n1"'}, previous)
        assert stats.values["sitemapaudit/sitemaps/rejudged"] == 0
        assert not caplog.records
    else:
        assert (headers, previous_run) == ({}, None)
        assert stats.values["sitemapaudit/sitemaps/rejudged"] == 1
        (record,) = caplog.records
        assert record.getMessage().startswith(f"sitemap {SITEMAP}: ")
        # A moment the history keeps that is no moment is said louder.
        expected = logging.INFO if kept in (MOMENT, REJUDGE_UNKNOWN) else logging.WARNING
        assert record.levelno == expected


def test_a_304_keeps_the_moment_of_the_body_it_stands_for(tmp_path: Path) -> None:
    previous = _night_that_kept(tmp_path, MOMENT)
    run, _ = _run(tmp_path, NIGHT + timedelta(days=1), "second")
    try:
        assert run.history is not None
        run.keep_not_modified(SITEMAP, '"n1"', None, previous)
        assert run.history.rejudge_after(run.history_run, SITEMAP) == MOMENT
    finally:
        run.close(finished=True)


def test_a_304_to_a_request_made_before_the_moment_is_judged_due(tmp_path: Path) -> None:
    """A request made conditionally before a JOBDIR resume may be answered after the moment:
    the spider asks again (quietly: the new request says so in the log and the stats)."""
    previous = _night_that_kept(tmp_path, MOMENT)
    run, stats = _run(tmp_path, NIGHT + timedelta(days=3), "second")
    try:
        assert run.rejudge_due(SITEMAP, previous, log=False) is True
        assert stats.values["sitemapaudit/sitemaps/rejudged"] == 0
    finally:
        run.close(finished=True)
