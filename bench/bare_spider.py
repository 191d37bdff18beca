"""A bare Scrapy spider: requests every URL of a file and does nothing with the responses.

``scrapy runspider bench/bare_spider.py -a urls=FILE``. Requests are fed lazily (as the
downloader has room), so the URL list never sits in memory as Request objects.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy import signals


class BareSpider(scrapy.Spider):
    name = "bare"

    def __init__(self, urls: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls_file = urls

    async def start(self) -> AsyncIterator[scrapy.Request]:
        with open(self.urls_file, encoding="utf-8") as fh:
            for line in fh:
                url = line.strip()
                if not url:
                    continue
                engine = self.crawler.engine
                while engine is not None and engine.needs_backout():
                    await self.crawler.signals.wait_for(signals.scheduler_empty)
                yield scrapy.Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response: scrapy.http.Response) -> None:
        return None
