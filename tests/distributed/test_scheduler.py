"""scrapy-redis's scheduler as the audit fits it: in-process, where any deprecation warning of
Scrapy 2.19 is an error (the project's pytest settings), and its duplicate filter."""

from __future__ import annotations

from pathlib import Path

from scrapy import Request
from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.distributed.scheduler import ExactUrlDupeFilter
from sitemapaudit.distributed.state import connect
from tests.distributed.site import routes
from tests.support.crawl import by_record, run_audit
from tests.support.server import TestSite


def test_the_duplicate_filter_tells_urls_apart_exactly(redis_url: str) -> None:
    dupes = ExactUrlDupeFilter(connect(redis_url), key="sitemapaudit:test:dupefilter")
    dupes.clear()
    assert not dupes.request_seen(Request("https://e.com/p?a=1&b=2"))
    assert not dupes.request_seen(Request("https://e.com/p?b=2&a=1"))
    assert not dupes.request_seen(Request("https://e.com/p?a=1&b=2#top"))
    assert dupes.request_seen(Request("https://e.com/p?a=1&b=2"))
    dupes.clear()


@deferred_f_from_coro_f
async def test_an_in_process_worker_audits_the_site_on_the_shared_scheduler(
    redis_url: str, tmp_path: Path
) -> None:
    with TestSite(routes(200, 2, 0.0)) as site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={"SITEMAPAUDIT_DISTRIBUTED": redis_url, "LOG_LEVEL": "INFO"},
        )
        assert max(site.hits.values()) == 1
    stats = crawler.stats.get_stats()
    assert stats["scheduler/enqueued/redis"] == stats["scheduler/dequeued/redis"] > 200
    assert len(by_record(records, "url")) == 201
    assert records[-1]["record"] == "summary"
