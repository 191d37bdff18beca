"""The history of audit runs (SQLite) and what changed from one run to the next."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemapaudit.history.store import HistoryError, HistoryStore, RunInfo

if TYPE_CHECKING:
    from sitemapaudit.history.diff import CHANGES, diff_runs, summarize

__all__ = ["CHANGES", "HistoryError", "HistoryStore", "RunInfo", "diff_runs", "summarize"]

_DIFF_NAMES = frozenset({"CHANGES", "diff_runs", "summarize"})


def __getattr__(name: str) -> Any:
    # The diff (and the checks it names) is imported when first asked for: the history's
    # writer process needs the store alone.
    if name in _DIFF_NAMES:
        from sitemapaudit.history import diff  # noqa: PLC0415

        return getattr(diff, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
