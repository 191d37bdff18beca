"""Conditional sitemap requests: the validators a sitemap is requested with, whether the body
a ``304 Not Modified`` stands for can be reused or must be read and judged again, the entries
of the sitemaps read kept for a later 304, and the findings a 304 carries over."""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.counts import Stats
from sitemapaudit.crawl.run_history import RunHistory
from sitemapaudit.history.store import REJUDGE_UNKNOWN, STORE_FAILURES
from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation.freshness import CODES as INDEX_LASTMOD_CODES

logger = logging.getLogger(__name__)

# Findings of a sitemap that a 304 does not carry over from the previous run: those of its
# fetch, what the index listing it says of it, what this run's robots.txt says of it, and
# what the children of an index (read again from the kept entries) give.
NOT_CARRIED = frozenset(
    {"http_error", "fetch_failed", "redirect", "robots_blocked", *INDEX_LASTMOD_CODES}
)
INDEX_CHILD_CODES = frozenset({"index_cycle", "index_too_deep", "sitemap_limit", "invalid_url"})
# What a 304 adds to each error line it carries over (the run that read the body), and the
# same at the end of a line carried over before, which a later 304 replaces.
CARRIED_NOTE = "(carried over: the sitemap is unchanged (304) since run {run}, where it was read)"
_CARRIED_NOTE = re.compile(
    r" \(carried over: the sitemap is unchanged \(304\) since run \d+, where it was read\)\Z"
)


class _History(enum.Enum):
    """What :meth:`ConditionalRequests._kept_rejudge_after` gives when the history failed."""

    FAILED = enum.auto()


_HISTORY_FAILED = _History.FAILED


class ConditionalRequests:
    """Whether a sitemap is requested with the validators of the previous run, and what a
    304 to them leaves to reuse."""

    # The settings a sitemap's document findings depend on (what a 304 carries over).
    _DOCUMENT_SETTINGS = ("sitemap_read_limit", "near_limit_fraction", "disabled_checks")

    def __init__(
        self, history: RunHistory, config: AuditConfig, stats: Stats, audit_time: datetime
    ) -> None:
        self.history = history
        self.config = config
        self.stats = stats
        # When the audit started (a finding that changes with the time is judged at it).
        self.audit_time = audit_time

    def headers(self, url: str) -> tuple[dict[str, str], int | None]:
        """Request headers that let the server answer 304 if the sitemap has not changed since
        the previous run, and that run's id."""
        history = self.history.store
        if history is None or not self.config.conditional_sitemaps:
            return {}, None
        try:
            found = history.validators(self.history.origin_url, url)
        except STORE_FAILURES as exc:
            self.history.failed(exc)
            return {}, None
        if found is None:
            return {}, None
        run_id, etag, last_modified = found
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        if not headers:
            return {}, None
        due = self.rejudge_due(url, run_id)
        if due is None or due:
            if due:
                self.stats.inc_value("sitemapaudit/sitemaps/rejudged")
            return {}, None
        if self._read_run_lost(url, run_id) or self._read_under_other_settings(url, run_id):
            return {}, None
        return headers, run_id

    def _read_under_other_settings(self, url: str, run_id: int) -> bool:
        """Whether the run that read the body a 304 would stand for (``run_id``, or the run it
        carried the sitemap over from) judged it under other settings of its document's
        findings than tonight's (a read limit, the near-limit fraction, a check switched on or
        off): then the sitemap is requested without validators, to be read and judged again
        (logged). A run whose summary does not say is taken as this one's."""
        history = self.history.store
        if history is None:
            return False
        ours = self.config.shaping_settings()
        try:
            before = history.sitemap_record(run_id, url)
            runs = {run_id, (before or {}).get("read_run") or run_id}
            summaries = [history.summary(run) for run in runs]
        except STORE_FAILURES as exc:
            self.history.failed(exc)
            return True
        for summary in summaries:
            settings = (summary or {}).get("settings")
            if not isinstance(settings, dict):
                continue
            changed = [
                name
                for name in self._DOCUMENT_SETTINGS
                if name in settings and settings[name] != ours[name]
            ]
            if changed:
                logger.info(
                    "sitemap %s: requested without validators, to be read again: %s changed "
                    "since the run that read it",
                    url,
                    ", ".join(changed),
                )
                self.stats.inc_value("sitemapaudit/sitemaps/settings_changed")
                return True
        return False

    def _read_run_lost(self, url: str, run_id: int) -> bool:
        """Whether run ``run_id`` answered 304 for a sitemap without keeping which run read
        its body, or the details of its findings (an earlier version of sitemapaudit kept it):
        a 304 tonight could only point at a run that did not read it either, so the sitemap is
        requested without validators, to be read and its details kept (logged)."""
        history = self.history.store
        if history is None:
            return False
        try:
            before = history.sitemap_record(run_id, url)
        except STORE_FAILURES as exc:
            self.history.failed(exc)
            return True
        if before is None or before["status"] != 304 or before["read_run"] is not None:
            return False
        logger.info(
            "sitemap %s: requested without validators, to be read again: run %d carried it "
            "over from an unchanged body without keeping which run read it",
            url,
            run_id,
        )
        return True

    def rejudge_due(self, url: str, run_id: int, *, log: bool = True) -> bool | None:
        """Whether the body of a sitemap that run ``run_id`` read (or carried over) may have
        findings that depend on the time (``news_too_old``, ``video_expired``) other than the
        ones it kept: an article has turned two days old or a video has expired since, or the
        run did not keep when that would be. Then a 304 would carry over findings its body no
        longer has, and the sitemap is requested without its validators, to be read and judged
        again (logged, unless ``log`` is false). ``None`` without a history (it failed)."""
        kept = self._kept_rejudge_after(url, run_id)
        if kept is _HISTORY_FAILED:
            return None
        return self._due(url, run_id, kept, log=log)

    def _kept_rejudge_after(self, url: str, run_id: int) -> str | _History | None:
        """The ``rejudge_after`` run ``run_id`` kept for a sitemap (see
        :meth:`HistoryStore.rejudge_after`), or ``_HISTORY_FAILED``."""
        history = self.history.store
        if history is None:
            return _HISTORY_FAILED
        try:
            return history.rejudge_after(run_id, url)
        except STORE_FAILURES as exc:
            self.history.failed(exc)
            return _HISTORY_FAILED

    def _due(self, url: str, run_id: int, kept: str | None, *, log: bool) -> bool:
        """:meth:`rejudge_due` of the ``rejudge_after`` the history keeps."""
        if kept is None:
            return False
        if kept == REJUDGE_UNKNOWN:
            why = f"run {run_id} did not keep when its findings change with the time"
        else:
            try:
                moment: datetime | None = datetime.fromisoformat(kept)
            except ValueError:
                moment = None
            if moment is None or moment.tzinfo is None:
                logger.warning(
                    "sitemap %s: the history keeps %r as when its findings change with the "
                    "time, which is no date: it is requested without validators, to be judged "
                    "again",
                    url,
                    kept,
                )
                return True
            if self.audit_time <= moment:
                return False
            why = (
                "a news article it lists has turned two days old or a video has expired since "
                f"{kept}"
            )
        if log:
            logger.info(
                "sitemap %s: requested without validators, to be judged again: %s", url, why
            )
        return True

    def keep_not_modified(
        self, url: str, etag: str | None, last_modified: str | None, previous_run: int
    ) -> bool:
        """A sitemap answered 304 to the conditional request made with run ``previous_run``'s
        validators: keep them for this run, with the moment that run kept (the body is the
        same), and say whether that run's entries can stand for the body. They cannot when the
        history failed since the request was sent (they are in it), nor when findings of the
        body have changed with the time since (a request made before a ``JOBDIR`` resume, see
        :meth:`rejudge_due`): then the sitemap is requested again without validators (which
        says so in the log and the stats)."""
        kept = self._kept_rejudge_after(url, previous_run)
        if kept is _HISTORY_FAILED or self._due(url, previous_run, kept, log=False):
            return False
        self.remember_validators(url, etag, last_modified, kept)
        return self.history.store is not None

    def remember_validators(
        self, url: str, etag: str | None, last_modified: str | None, rejudge_after: str | None
    ) -> None:
        """Keep a sitemap's validators, with when the findings of the body they stand for
        change with the time (see :meth:`rejudge_due`). Only when the sitemap's entries are
        kept too (see :meth:`listing_recorder`): a 304 to these validators reuses them."""
        if self._recording() and (etag or last_modified):
            history = self.history.store
            assert history is not None
            try:
                history.set_validators(self.history.run, url, etag, last_modified, rejudge_after)
            except STORE_FAILURES as exc:
                self.history.failed(exc)

    def listing_recorder(self, sitemap_url: str) -> ListingRecorder | None:
        """What keeps the entries of a sitemap read, for a 304 to reuse (``None`` when they
        are not kept)."""
        if not self._recording():
            return None
        return ListingRecorder(self.history, sitemap_url)

    def _recording(self) -> bool:
        """Whether the entries of the sitemaps read are kept in the history, for a 304."""
        return self.history.store is not None and self.config.conditional_sitemaps


class ListingRecorder:
    """Keeps a sitemap's entries in the history, in batches, for a later 304 to reuse (none
    once the history has failed)."""

    def __init__(self, history: RunHistory, sitemap_url: str) -> None:
        self.history, self.sitemap_url = history, sitemap_url
        self.batch: list[tuple[str, str | None, str]] = []

    def add(self, loc: str, lastmod: str | None, fmt: str) -> None:
        self.batch.append((loc, lastmod, fmt))
        if len(self.batch) >= 5000:
            self.close()

    def close(self) -> None:
        batch, self.batch = self.batch, []
        history = self.history.store
        if batch and history is not None:
            try:
                history.add_listings(self.history.run, self.sitemap_url, batch)
            except STORE_FAILURES as exc:
                self.history.failed(exc)


def carried_over(before: Mapping[str, Any], previous_run: int) -> tuple[list[Problem], int | None]:
    """The findings a sitemap that answered 304 carries over from ``before``, its result in
    ``previous_run`` (:meth:`HistoryStore.sitemap_record`), and the run that read its body.

    Each error line of the run that read the body comes back in full, noting that run (a line
    a 304 carried over before gets that note again, not a second one), but for the findings
    judged again on every 304 (:data:`NOT_CARRIED`, and the children of an index). A result
    kept without its error lines or without that run (by an earlier version of sitemapaudit)
    carries its finding codes over, from ``previous_run``, and that run is not known."""
    rejudged = NOT_CARRIED | (INDEX_CHILD_CODES if before.get("kind") == "sitemapindex" else set())
    codes = [code for code in before.get("issues", []) if code not in rejudged]
    lines, read_run = before.get("errors"), before.get("read_run")
    if lines is None or read_run is None:
        note = f"carried over from run {previous_run}: the sitemap is unchanged (304)"
        return [Problem(code, note) for code in codes], None
    note = CARRIED_NOTE.format(run=read_run)
    problems = []
    for line in lines:
        code, _, detail = line.partition(": ")
        if code in codes:
            problems.append(Problem(code, f"{_CARRIED_NOTE.sub('', detail)} {note}"))
    # (A finding kept without a line of its own, which no check gives, still counts.)
    described = {problem.code for problem in problems}
    problems.extend(Problem(code, note) for code in codes if code not in described)
    return problems, int(read_run)
