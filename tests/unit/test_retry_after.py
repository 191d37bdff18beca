"""Retry-After on 429/503: waited for up to SITEMAPAUDIT_RETRY_AFTER_MAX, else not retried,
and the response says why."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from scrapy import Request, Spider
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from sitemapaudit.checks.base import CheckContext
from sitemapaudit.checks.fetching import error_status_detail
from sitemapaudit.config import AuditConfig
from sitemapaudit.middlewares import META_KEY, RetryAfterMiddleware, retry_after_seconds


def middleware() -> RetryAfterMiddleware:
    crawler = get_crawler(Spider, {"SITEMAPAUDIT_RETRY_AFTER_MAX": 60, "RETRY_TIMES": 2})
    crawler.spider = Spider.from_crawler(crawler, "audit")
    return RetryAfterMiddleware.from_crawler(crawler)


def answer(request: Request, status: int, retry_after: str) -> Response:
    return Response(request.url, status=status, headers={"Retry-After": retry_after})


def test_a_wait_over_the_cap_is_not_retried_and_says_why() -> None:
    request = Request("https://example.com/p")
    response = answer(request, 503, "3600")
    assert middleware().process_response(request, response) is response
    assert request.meta[META_KEY] == {"value": "3600", "seconds": 3600.0}


def test_a_wait_within_the_cap_is_retried_unmarked() -> None:
    request = Request("https://example.com/p")
    retry = middleware().process_response(request, answer(request, 429, "0"))
    assert isinstance(retry, Request)
    assert META_KEY not in request.meta
    assert META_KEY not in retry.meta


def test_a_long_wait_after_the_last_retry_is_not_the_reason() -> None:
    """The retries were over: the response would not have been retried whatever it asked."""
    request = Request("https://example.com/p", meta={"retry_times": 2})
    response = answer(request, 429, "3600")
    assert middleware().process_response(request, response) is response
    assert META_KEY not in request.meta


def test_a_huge_wait_is_said_as_the_header_gave_it() -> None:
    crawler = get_crawler(Spider, {"SITEMAPAUDIT_RETRY_AFTER_MAX": 60})
    ctx = CheckContext(
        AuditConfig.from_settings(crawler.settings), datetime(2024, 1, 1, tzinfo=UTC)
    )
    value = "99999999999999999999999"
    detail = error_status_detail(503, {"value": value, "seconds": float(value)}, ctx)
    assert "asks to wait 99,999,999,999,999,999,999,999 s, more than" in detail


def test_the_last_answer_still_holds_the_host_for_its_wait() -> None:
    """The retries are over, but the server asked the client to wait: the host's other
    requests wait too."""
    mw = middleware()
    held: list[tuple[str, float]] = []
    mw._hold_host = lambda request, wait: held.append((request.url, wait))  # type: ignore[method-assign]
    request = Request("https://example.com/p", meta={"retry_times": 2})
    response = answer(request, 429, "6")
    assert mw.process_response(request, response) is response
    assert held == [("https://example.com/p", 6.0)]
    # A wait past the cap is not retried, and does not hold the host (the README's rule).
    held.clear()
    request = Request("https://example.com/q", meta={"retry_times": 2})
    assert mw.process_response(request, answer(request, 503, "3600")).status == 503
    assert held == []


@pytest.mark.parametrize("value", ["\u00b2", "1\u00b9", "\u0663", "+5", "5.5", "-1"])
def test_a_retry_after_that_is_no_number_of_seconds_is_ignored(value: str) -> None:
    # RFC 9110: delay-seconds is ASCII digits (str.isdigit() takes superscripts too).
    assert retry_after_seconds(value, 0.0) is None
    request = Request("https://example.com/p")
    retry = middleware().process_response(request, answer(request, 429, value))
    assert isinstance(retry, Request)
