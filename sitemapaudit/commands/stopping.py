"""A stop asked while a crawl is starting waits for its engine, so the audit closes as any
stopped audit does."""

from __future__ import annotations

import asyncio
import time

from scrapy.crawler import Crawler

# How long a stop waits for an engine that does not start (a crawl that fails while starting
# stops crawling at once, which ends the wait sooner).
_START_WAIT_S = 30.0


def stop_when_started(crawler: Crawler) -> None:
    """Make ``crawler``'s graceful stop wait until its engine runs.

    Scrapy's graceful stop (Ctrl-C, SIGTERM) stops only a running engine. Asked between the
    moment the crawl starts (the spider may be open already) and the moment its engine runs,
    it stops nothing, and the reactor is stopped right after: the spider is never closed, so
    the report gets no summary (or no file) and the history keeps the run unfinished. Waiting
    for the engine turns that into the usual stop: the spider closes, and the summary says
    the audit stopped before it was complete.
    """
    graceful = crawler.stop_async

    async def stop_async() -> None:
        deadline = time.monotonic() + _START_WAIT_S
        while (
            crawler.crawling
            and (crawler.engine is None or not crawler.engine.running)
            and time.monotonic() < deadline
        ):
            await asyncio.sleep(0.01)
        await graceful()

    crawler.stop_async = stop_async  # type: ignore[method-assign]
