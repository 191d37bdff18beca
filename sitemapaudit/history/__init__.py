"""The history of audit runs (SQLite) and what changed from one run to the next."""

from sitemapaudit.history.diff import CHANGES, diff_runs, summarize
from sitemapaudit.history.store import HistoryError, HistoryStore, RunInfo

__all__ = ["CHANGES", "HistoryError", "HistoryStore", "RunInfo", "diff_runs", "summarize"]
