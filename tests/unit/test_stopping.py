"""A graceful stop asked while the crawl starts waits for the engine instead of stopping
nothing (Scrapy then stops the reactor at once: no closed spider, no summary)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.commands import stopping


def _crawler(*, crawling: bool, engine: Any) -> Any:
    calls: list[bool] = []
    crawler = SimpleNamespace(crawling=crawling, engine=engine, calls=calls)

    async def stop_async() -> None:
        # What Scrapy's stop does: nothing unless the engine runs.
        calls.append(crawler.engine is not None and crawler.engine.running)

    crawler.stop_async = stop_async
    stopping.stop_when_started(crawler)  # type: ignore[arg-type]
    return crawler


@deferred_f_from_coro_f
async def test_a_stop_during_the_start_waits_for_the_engine() -> None:
    crawler = _crawler(crawling=True, engine=None)
    stop = asyncio.ensure_future(crawler.stop_async())
    await asyncio.sleep(0.05)
    assert not stop.done()
    crawler.engine = SimpleNamespace(running=False)
    await asyncio.sleep(0.05)
    assert not stop.done()
    crawler.engine.running = True
    await asyncio.wait_for(stop, 5)
    assert crawler.calls == [True]


@deferred_f_from_coro_f
async def test_a_stop_of_a_running_or_ended_crawl_is_scrapys_own() -> None:
    running = _crawler(crawling=True, engine=SimpleNamespace(running=True))
    await asyncio.wait_for(running.stop_async(), 5)
    assert running.calls == [True]
    ended = _crawler(crawling=False, engine=SimpleNamespace(running=False))
    await asyncio.wait_for(ended.stop_async(), 5)
    assert ended.calls == [False]


@deferred_f_from_coro_f
async def test_a_crawl_that_fails_to_start_ends_the_wait() -> None:
    crawler = _crawler(crawling=True, engine=SimpleNamespace(running=False))
    stop = asyncio.ensure_future(crawler.stop_async())
    await asyncio.sleep(0.05)
    crawler.crawling = False  # Scrapy's crawl sets it when its start raises
    await asyncio.wait_for(stop, 5)
    assert crawler.calls == [False]
