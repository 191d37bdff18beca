"""The per-response "Crawled" line is built only when the log shows DEBUG lines."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.test import get_crawler

from sitemapaudit import settings as project_settings
from sitemapaudit.logformatter import AuditLogFormatter


def _formatter(**settings: Any) -> AuditLogFormatter:
    crawler = get_crawler(
        Spider, settings_dict={"LOG_FORMATTER": project_settings.LOG_FORMATTER, **settings}
    )
    formatter = build_from_crawler(load_object(crawler.settings["LOG_FORMATTER"]), crawler)
    assert isinstance(formatter, AuditLogFormatter)
    return formatter


def _crawled(formatter: AuditLogFormatter) -> Any:
    request = Request("http://127.0.0.1/page")
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    return formatter.crawled(request, response, Spider("audit"))


@pytest.mark.parametrize(
    "settings",
    [
        {"LOG_LEVEL": "DEBUG"},
        {"LOG_LEVEL": "debug"},
        {"LOG_LEVEL": logging.DEBUG},
        {"LOG_LEVEL": "NOTSET"},
        {"LOG_LEVEL": "NO-SUCH-LEVEL"},
    ],
)
def test_crawled_lines_when_debug_is_shown(settings: dict[str, Any]) -> None:
    line = _crawled(_formatter(**settings))
    assert line is not None
    assert line["level"] == logging.DEBUG
    assert line["args"]["status"] == 200


@pytest.mark.parametrize(
    "settings",
    [
        {"LOG_LEVEL": "INFO"},
        {"LOG_LEVEL": "WARNING"},
        {"LOG_LEVEL": logging.ERROR},
        {"LOG_LEVEL": "DEBUG", "LOG_ENABLED": False},
    ],
)
def test_no_crawled_line_when_debug_is_not_shown(settings: dict[str, Any]) -> None:
    assert _crawled(_formatter(**settings)) is None


def test_the_project_default_log_level_builds_no_line_per_response() -> None:
    assert _crawled(_formatter(LOG_LEVEL=project_settings.LOG_LEVEL)) is None


def test_no_scraped_line() -> None:
    assert _formatter(LOG_LEVEL="DEBUG").scraped({}, None, Spider("audit")) is None
