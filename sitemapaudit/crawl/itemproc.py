"""Sending the audit's records straight to Scrapy's item pipelines, past the engine's loop, and
the scraper's bookkeeping that a stop needs (a closing scraper, its last item)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from scrapy.crawler import Crawler

from sitemapaudit.facts import UrlFactsBatch

logger = logging.getLogger(__name__)


class RecordSender:
    """The records of a crawl sent to its scraper's item pipelines as the engine sends the
    items of ``start()``; ``unsent_urls`` counts the URL records not sent because the crawl was
    closing (see :meth:`closing`)."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        self.unsent_urls = 0

    async def process(self, item: Any) -> None:
        """Send a record straight to the item pipelines. Yielding it from start() would cost a
        round of the engine's loop per record, which dominates an inventory of millions."""
        engine = self._crawler.engine
        assert engine is not None
        scraper = engine.scraper
        if self.closing(scraper, item):
            return
        # Shielded: a stop (Ctrl-C) cancels start(), and a cancel that came while Scrapy sends
        # the item signals (from tasks of their own) would take them along: records counted
        # and kept in the history would never reach the report. The item goes on to the
        # feeds, and the close waits for it (the scraper counts it as in progress, from now
        # on: counted only once its task runs, a close that came first would write the
        # summary before it).
        processing = asyncio.ensure_future(counted_itemproc(scraper, item))
        try:
            await asyncio.shield(processing)
        except asyncio.CancelledError:
            processing.add_done_callback(lambda done: _item_finished(scraper, done))
            raise
        finally:
            _closing_check(scraper)

    def send_nowait(self, facts: UrlFactsBatch) -> bool:
        """Send pages' records without waiting for them (counted by the scraper at once), or
        ``False`` when this Scrapy cannot."""
        scraper = getattr(self._crawler.engine, "scraper", None)
        send = getattr(scraper, "_start_itemproc_nowait", None)
        if send is None:
            return False
        if not self.closing(scraper, facts):
            send(facts)
        return True

    def closing(self, scraper: Any, item: Any) -> bool:
        """Whether the crawl is closing and its item pipelines may have closed, the summary
        written: a record sent now would come after it, so it is not sent (it counts among
        the records the stop left unwritten)."""
        slot = getattr(scraper, "slot", None)
        if slot is None or getattr(slot, "closing", None) is None:
            return False
        if isinstance(item, UrlFactsBatch):
            self.unsent_urls += len(item.facts)
        return True

    def scraper_busy(self) -> bool:
        """Whether the scraper still holds items (its counters are updated after the item
        signals, so the signals alone cannot tell). Without that attribute, the engine's own
        heartbeat notices the end a few seconds later."""
        slot = getattr(getattr(self._crawler.engine, "scraper", None), "slot", None)
        return slot is not None and not slot.is_idle()


def counted_itemproc(scraper: Any, item: Any) -> Coroutine[Any, Any, None]:
    """``scraper.start_itemproc_async(item)``, the item counted as in progress at once (as
    Scrapy's own ``_start_itemproc_nowait`` counts it), not once its task first runs."""
    slot = scraper.slot
    slot.itemproc_size += 1

    async def process() -> None:
        slot.itemproc_size -= 1  # (start_itemproc_async counts it from here)
        await scraper.start_itemproc_async(item, response=None)

    return process()


def _closing_check(scraper: Any) -> None:
    """Let a closing engine see its scraper's last item done. The engine is closing (Ctrl-C, a
    stop), which cancels start(): Scrapy looks for its scraper's last item only after the items
    of responses, so without this look the close would wait for ever."""
    slot = scraper.slot
    if slot is not None and slot.closing is not None and not slot.closing.called:
        scraper._check_if_closing()


def _item_finished(scraper: Any, processing: asyncio.Future[None]) -> None:
    """An item that start() stopped waiting for (a stop) is through the pipelines and feeds."""
    if not processing.cancelled() and (exc := processing.exception()) is not None:
        logger.error("an item failed after the audit was stopped", exc_info=exc)
    _closing_check(scraper)
