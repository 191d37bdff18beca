"""What an audit run counts: the Scrapy stats it increments, and its totals for the summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class Stats(Protocol):
    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None: ...


@dataclass(slots=True)
class RunTotals:
    sitemaps: int = 0
    urls_fetched: int = 0
    urls_emitted: int = 0
    rechecked: int = 0
    carried_over: int = 0
    notes: list[str] = field(default_factory=list)
