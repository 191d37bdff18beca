"""Records sent from start() to the item pipelines count as in progress at once: a close that
comes before their task first runs waits for them, so no record follows the summary."""

from __future__ import annotations

from typing import Any

import pytest

from sitemapaudit.crawl.itemproc import counted_itemproc


class _Slot:
    itemproc_size = 0


class _Scraper:
    def __init__(self) -> None:
        self.slot = _Slot()
        self.sizes: list[int] = []

    async def start_itemproc_async(self, item: Any, *, response: Any) -> None:
        # As Scrapy's scraper counts an item while its pipelines run.
        self.slot.itemproc_size += 1
        self.sizes.append(self.slot.itemproc_size)
        self.slot.itemproc_size -= 1


def test_a_record_counts_as_in_progress_before_its_task_runs() -> None:
    scraper = _Scraper()
    processing = counted_itemproc(scraper, {"record": "url"})
    # Not idle in the gap before the task's first step (where a close looks).
    assert scraper.slot.itemproc_size == 1
    with pytest.raises(StopIteration):  # (run by hand: the fake pipelines never wait)
        processing.send(None)
    assert scraper.sizes == [1]  # counted once while in the pipelines, not twice
    assert scraper.slot.itemproc_size == 0
