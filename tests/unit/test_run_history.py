"""The history as a run uses it: a failure is said once, and closes whatever store it held."""

from __future__ import annotations

from typing import Any

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.counts import RunTotals
from sitemapaudit.crawl.run_history import RunHistory
from sitemapaudit.defaults import default_settings


class _Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.get(key, start) + count


class _Store:
    path = "h.sqlite3"
    closed = False

    def close(self) -> None:
        self.closed = True


def _history(**settings: Any) -> tuple[RunHistory, _Stats]:
    stats = _Stats()
    config = AuditConfig.from_settings({**default_settings(), **settings})
    return RunHistory("https://e.com", config, stats, RunTotals()), stats


def test_a_history_without_a_path_is_named_without_one() -> None:
    history, _ = _history(SITEMAPAUDIT_HISTORY_PATH="")
    note = history.failed(OSError("gone"))
    assert note.startswith("the history failed and the audit went on without it (gone)")


def test_a_second_failure_is_not_said_again_but_closes_its_store() -> None:
    history, stats = _history()
    first = _Store()
    history.store = first  # type: ignore[assignment]
    history.failed(OSError("full"))
    second = _Store()
    history.store = second  # type: ignore[assignment]
    history.failed(OSError("full again"))
    assert first.closed
    assert second.closed
    assert history.store is None
    assert history.error == "full"
    assert stats.values == {"sitemapaudit/history/failed": 1}
    assert len(history.totals.notes) == 1
