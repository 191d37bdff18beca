"""The history as one audit run uses it: the run begun there, the failure the audit goes on
without, the changes since the previous run, and the incremental policy (the URLs whose
previous results are carried over instead of requested again)."""

from __future__ import annotations

import contextlib
import logging
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.counts import RunTotals, Stats
from sitemapaudit.facts import FetchOutcome
from sitemapaudit.history.diff import diff_runs, unread_note
from sitemapaudit.history.store import STORE_FAILURES, HistoryStore

logger = logging.getLogger(__name__)


class RunHistory:
    """The history store of one run (``None`` without one, or once it failed), the run's id
    in it, and why it failed, if it did."""

    def __init__(self, origin_url: str, config: AuditConfig, stats: Stats, totals: RunTotals):
        self.origin_url = origin_url
        self.config = config
        self.stats = stats
        # Where the note of a failure goes (the summary's notes).
        self.totals = totals
        self.store: HistoryStore | None = None
        self.run = 0
        # Why the history failed during the run, if it did (see failed).
        self.error: str | None = None

    def begin(self, store: Callable[[str], HistoryStore], path: str, started: str) -> None:
        """Open the history at ``path`` and begin this run in it. The command checked that the
        file opens, but its first write can still fail (a disk that is nearly full): that
        costs the report nothing either, as a failure later in the run does."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.store = store(path)
        except STORE_FAILURES as exc:
            self.failed(exc, path)
            return
        try:
            self.run = self.store.begin_run(self.origin_url, started)
        except STORE_FAILURES as exc:
            self.failed(exc)

    def previous_run(self) -> int | None:
        """The run the incremental policy compares with: the previous finished run of the
        origin, if the history has one."""
        if self.store is None:
            return None
        try:
            return self.store.previous_run(self.origin_url, self.run)
        except STORE_FAILURES as exc:
            self.failed(exc)
            return None

    def failed(self, exc: Exception, path: str | None = None) -> str:
        """The history cannot be written or read any more (a full disk, a writer process that
        died), or could not be opened as the run began (at ``path``): the audit goes on
        without it, and its report stays complete. The run stays unfinished in the history, if
        it was begun there; the summary's notes, an error in the log and
        ``sitemapaudit/history/failed`` say so, once (and the command exits with 1). Returns
        the note."""
        history, self.store = self.store, None
        if path is None:
            path = history.path if history is not None else self.config.history_path
        named = f"the history {path}" if path else "the history"
        note = (
            f"{named} failed and the audit went on without it ({exc}): this run is "
            "not kept there as finished (the next audit is compared with an earlier run), and "
            "changes since the previous run may be missing from this report"
        )
        if self.error is None:
            self.error = str(exc)
            logger.error("%s failed, the audit goes on without it: %s", named, exc)
            self.stats.inc_value("sitemapaudit/history/failed")
            self.totals.notes.append(note)
        if history is not None:
            with contextlib.suppress(*STORE_FAILURES):
                history.close()
        return note

    def changes(self) -> tuple[int | None, Iterator[dict[str, Any]]]:
        """The previous run of this origin, and the diff records against it."""
        if self.store is None:
            return None, iter(())
        try:
            previous = self.store.previous_run(self.origin_url, self.run)
        except STORE_FAILURES as exc:
            self.failed(exc)
            return None, iter(())
        if previous is None:
            return None, iter(())
        try:
            note = unread_note(self.store, previous, self.run)
        except STORE_FAILURES as exc:
            self.failed(exc)
            return None, iter(())
        if note is not None:
            self.totals.notes.append(note)
        changes = diff_runs(self.store, previous, self.run, unchecked=self.config.disabled_checks)
        return previous, self._unless_failing(changes)

    def _unless_failing(self, records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``records`` read from the history, until it fails."""
        try:
            yield from records
        except STORE_FAILURES as exc:
            self.failed(exc)


class IncrementalPolicy:
    """Under SITEMAPAUDIT_INCREMENTAL, the URLs whose previous results stand for this run's:
    all but a rotating share of them, and those whose results may have changed."""

    def __init__(self, history: RunHistory, config: AuditConfig, totals: RunTotals) -> None:
        self.history = history
        self.config = config
        # Counts the URLs rechecked and carried over.
        self.totals = totals
        # The run compared with: the previous finished run of the origin, if any.
        self.base = history.previous_run() if config.incremental else None
        # The rotating sample of the incremental policy: this run's share of every URL.
        self.share = self._rotation_share() if config.incremental else 0

    def _rotation_share(self) -> int:
        """The share of the URLs the incremental policy requests whatever their last result:
        the one after the previous run's, so that ``recheck_nights`` consecutive finished runs
        of the origin request every URL however far apart they are (several a day, weekdays
        only, weekly). A run that did not finish (interrupted, or its history failed) is no
        previous run, so the next one takes its share again; after a run that took none (a
        full audit, or the origin's first), the rotation starts with the first share."""
        base = self.base
        store = self.history.store
        if base is None or store is None:
            return 0
        try:
            summary = store.summary(base) or {}
        except STORE_FAILURES as exc:
            self.history.failed(exc)
            return 0
        incremental = summary.get("incremental")
        share = incremental.get("share") if isinstance(incremental, dict) else None
        if type(share) is not int or share < 0:
            return 0
        return (share + 1) % self.config.recheck_nights

    def summary(self) -> dict[str, Any]:
        """The summary's ``incremental`` field: ``{}`` unless the incremental policy is on."""
        if not self.config.incremental:
            return {}
        return {
            "recheck_nights": self.config.recheck_nights,
            "share": self.share,
            "rechecked": self.totals.rechecked,
            "carried_over": self.totals.carried_over,
        }

    def carried_over(self, url: str, lastmod: str | None) -> dict[str, Any] | None:
        """The previous result of a URL that need not be checked again in this run; ``None``
        when it must be requested."""
        history = self.history.store
        if not self.config.incremental or history is None:
            return None
        nights = self.config.recheck_nights
        if zlib.crc32(url.encode()) % nights == self.share:
            self.totals.rechecked += 1
            return None
        base = self.base
        try:
            before = None if base is None else history.url_result(base, url)
            # The rotation alone misses a URL when the runs before took no share or another
            # recheck_nights: a result checked that many runs ago is not carried again.
            stale = (
                before is None
                or before["issues"]
                or not before["fetched"]
                or before["lastmod"] != lastmod
                or history.check_age(self.history.origin_url, url, before["run_id"], nights)
                >= nights
            )
        except STORE_FAILURES as exc:
            self.history.failed(exc)
            stale = True
        if stale:
            self.totals.rechecked += 1
            return None
        assert before is not None
        self.totals.carried_over += 1
        return FetchOutcome(
            fetched=True,
            status=before["status"],
            final_url=before["final_url"],
            last_modified=before["last_modified"],
            noindex=list(before["noindex"]),
            canonical=before["canonical"],
            checked_at=before["checked_at"],
            carried_over=True,
        ).to_json()
