"""scrapy-redis's scheduler as the audit fits it: in-process, where any deprecation warning of
Scrapy 2.19 is an error (the project's pytest settings), and its duplicate filter."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis
from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from scrapy_redis import picklecompat
from scrapy_redis.queue import PriorityQueue

from sitemapaudit.crawl.redirects import RedirectState
from sitemapaudit.distributed.scheduler import EMPTY_RECHECK, AuditScheduler, ExactUrlDupeFilter
from sitemapaudit.distributed.state import connect
from sitemapaudit.spiders.audit import AuditSpider
from tests.distributed.site import routes
from tests.support.crawl import by_record, run_audit
from tests.support.golden_site import XML, page, url, urlset
from tests.support.server import Page, TestSite


def test_the_duplicate_filter_tells_urls_apart_exactly(redis_url: str) -> None:
    dupes = ExactUrlDupeFilter(connect(redis_url), key="sitemapaudit:test:dupefilter")
    dupes.clear()
    assert not dupes.request_seen(Request("https://e.com/p?a=1&b=2"))
    assert not dupes.request_seen(Request("https://e.com/p?b=2&a=1"))
    assert not dupes.request_seen(Request("https://e.com/p?a=1&b=2#top"))
    assert dupes.request_seen(Request("https://e.com/p?a=1&b=2"))
    dupes.clear()


def test_listed_urls_requested_at_the_same_url_are_each_requested(redis_url: str) -> None:
    # /./a and /a (or 127.1 and 127.0.0.1) are two listed URLs that a browser requests alike.
    dupes = ExactUrlDupeFilter(connect(redis_url), key="sitemapaudit:test:dupefilter")
    dupes.clear()
    assert not dupes.request_seen(Request("https://e.com/a", meta={"url_id": 1}))
    assert not dupes.request_seen(Request("https://e.com/a", meta={"url_id": 2}))
    assert dupes.request_seen(Request("https://e.com/a", meta={"url_id": 1}))
    dupes.clear()


@deferred_f_from_coro_f
async def test_a_distributed_audit_requests_each_listed_url_that_resolves_alike(
    redis_url: str, tmp_path: Path
) -> None:
    site = TestSite({})
    listed = [
        f"{site.base}/./dotpage",
        f"{site.base}/dotpage",
        f"{site.base}/a/%2e%2E/dotpage",
        f"http://127.1:{site.port}/dotpage",
    ]
    site.routes.update(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/": page(),
            "/s.xml": Page(body=urlset(*(url(loc) for loc in listed)), content_type=XML),
            "/dotpage": page(),
        }
    )
    with site:
        records, crawler = await run_audit(
            site.base,
            tmp_path / "report.jsonl",
            settings={"SITEMAPAUDIT_DISTRIBUTED": redis_url, "LOG_LEVEL": "INFO"},
        )
        assert site.hits["/dotpage"] == len(listed)
    assert {r["url"]: (r["status"], r["issues"]) for r in by_record(records, "url")} == {
        loc: (200, []) for loc in listed
    }
    stats = crawler.stats.get_stats()
    assert "sitemapaudit/distributed/duplicates_filtered" not in stats
    assert "sitemapaudit/distributed/sweeps" not in stats  # nothing held back to recover


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


def open_scheduler(
    redis_url: str, spider: Spider, prefix: str, held: set[int] | None = None
) -> AuditScheduler:
    """A scheduler of a worker that holds the URLs ``held`` (ids): it hands back those whose
    requests it did not queue, and those whose requests it took, if it stops."""
    held = set() if held is None else held
    spider.run = SimpleNamespace(  # type: ignore[attr-defined]
        shared=SimpleNamespace(prefix=prefix),
        lost=None,
        page_queued=held.discard,
        page_taken=held.add,
    )
    # (scrapy-redis's own client: replies as bytes, not decoded as the audit's state reads them)
    scheduler = AuditScheduler(redis.Redis.from_url(redis_url), persist=True)
    scheduler.open(spider)
    return scheduler


def audit_spider() -> AuditSpider:
    crawler = get_crawler(AuditSpider, {"SITEMAPAUDIT_HISTORY_PATH": ""})
    return AuditSpider.from_crawler(crawler, domain="https://e.com")


def page_request(spider: AuditSpider, n: int, priority: int = 0) -> Request:
    request = spider._page_request(n, f"https://e.com/p/{n}", RedirectState(), False)
    return request.replace(priority=priority)


def test_requests_are_encoded_as_scrapy_redis_encodes_them(redis_url: str) -> None:
    spider = audit_spider()
    scheduler = open_scheduler(redis_url, spider, f"sitemapaudit:test:{uuid.uuid4().hex}")
    request = page_request(spider, 7)
    ours = picklecompat.loads(scheduler._encode(request))
    theirs = picklecompat.loads(PriorityQueue(None, spider, "k")._encode_request(request))
    assert ours == theirs
    assert (ours["callback"], ours["errback"]) == ("parse_page", "page_failed")
    # A callback that is not a method of the spider fails as scrapy-redis fails.
    stray = request.replace(callback=lambda response: None)
    with pytest.raises(ValueError, match="not an instance method"):
        scheduler._encode(stray)


def test_queued_requests_go_to_redis_with_the_next_take_in_priority_order(redis_url: str) -> None:
    prefix = f"sitemapaudit:test:{uuid.uuid4().hex}"
    spider = audit_spider()
    held: set[int] = {1, 2, 3, 4}
    other_held: set[int] = set()
    one = open_scheduler(redis_url, spider, prefix, held)
    other = open_scheduler(redis_url, audit_spider(), prefix, other_held)
    for n, priority in ((1, 0), (2, 5), (3, 0)):
        assert one.enqueue_request(page_request(spider, n, priority))
    assert held == {4}  # the queued ones are any worker's to request
    assert len(other) == 0  # not sent yet
    taken = one.next_request()
    assert taken is not None
    assert taken.url == "https://e.com/p/2"  # the highest priority first
    assert taken.callback == spider.parse_page
    assert taken.meta["url_id"] == 2
    assert held == {2, 4}
    assert len(other) == 2  # the others went along
    assert [r.url for r in (other.next_request(), other.next_request())] == [
        "https://e.com/p/1",
        "https://e.com/p/3",
    ]
    assert other_held == {1, 3}
    one.enqueue_request(page_request(spider, 4))
    assert len(one) == 1  # reading the length sends what waits
    assert len(other) == 1
    one.close("finished")
    other.close("finished")


def test_an_empty_queue_is_asked_again_after_a_while_or_once_this_worker_queues(
    redis_url: str,
) -> None:
    prefix = f"sitemapaudit:test:{uuid.uuid4().hex}"
    spider = audit_spider()
    one = open_scheduler(redis_url, spider, prefix)
    other = open_scheduler(redis_url, audit_spider(), prefix)
    asked: list[Any] = []
    take = one._take

    def counting_take() -> Request | None:
        asked.append(1)
        return take()

    one._take = counting_take  # type: ignore[method-assign]
    assert one.next_request() is None
    assert one.next_request() is None
    assert len(asked) == 1  # Redis answered empty a moment ago
    other.enqueue_request(page_request(spider, 1))
    assert len(other) == 1
    assert one.next_request() is None  # another worker's request waits a little
    time.sleep(EMPTY_RECHECK * 1.5)
    found = one.next_request()
    assert found is not None
    assert found.url == "https://e.com/p/1"
    one.enqueue_request(page_request(spider, 2))
    again = one.next_request()  # this worker's own request is taken at once
    assert again is not None
    assert again.url == "https://e.com/p/2"
    assert one.next_request() is None  # as many taken back as queued: empty, unasked
    assert len(asked) == 3
