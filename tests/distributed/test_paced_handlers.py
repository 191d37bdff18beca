"""A distributed audit wraps the http and https download handlers in the cluster's pace."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from sitemapaudit.distributed.ratelimit import ClusterPacedHandler, paced_handlers
from sitemapaudit.spiders.audit import AuditSpider


def test_the_handlers_the_settings_name_are_the_ones_wrapped() -> None:
    settings = Settings(
        {"DOWNLOAD_HANDLERS": {"https": "example.Handler", "ftp": None, "s3": "other.S3"}}
    )
    handlers = paced_handlers(settings)
    assert issubclass(handlers["http"], ClusterPacedHandler)
    assert handlers["http"].inner == settings.getwithbase("DOWNLOAD_HANDLERS")["http"]
    assert handlers["https"].inner == "example.Handler"
    # Other schemes are left as they were, a switched-off one included.
    assert handlers["ftp"] is None
    assert handlers["s3"] == "other.S3"


def test_a_scheme_switched_off_stays_off() -> None:
    handlers = paced_handlers(Settings({"DOWNLOAD_HANDLERS": {"http": None}}))
    assert handlers["http"] is None
    assert issubclass(handlers["https"], ClusterPacedHandler)


@pytest.mark.parametrize("value", [" ", ""])
def test_spaces_are_no_redis_url(value: str) -> None:
    """As the configuration reads SITEMAPAUDIT_DISTRIBUTED: spaces alone are a single-process
    audit, and spaces around a URL are not part of it."""
    single = Settings({"SITEMAPAUDIT_DISTRIBUTED": value})
    AuditSpider.update_settings(single)
    assert single.get("REDIS_URL") is None
    assert "scrapy_redis" not in str(single.get("SCHEDULER"))
    cluster = Settings({"SITEMAPAUDIT_DISTRIBUTED": f" redis://127.0.0.1:1/0{value}"})
    AuditSpider.update_settings(cluster)
    assert cluster.get("REDIS_URL") == "redis://127.0.0.1:1/0"


def test_only_a_distributed_audit_gets_them_even_over_command_line_handlers() -> None:
    single = Settings()
    AuditSpider.update_settings(single)
    assert "http" not in single.getdict("DOWNLOAD_HANDLERS")

    cluster = Settings({"SITEMAPAUDIT_DISTRIBUTED": "redis://127.0.0.1:1/0"})
    cluster.set("DOWNLOAD_HANDLERS", {"https": "example.Handler"}, priority="cmdline")
    AuditSpider.update_settings(cluster)
    handlers = cluster.getdict("DOWNLOAD_HANDLERS")
    assert handlers["https"].inner == "example.Handler"
    # Applied again as Scrapy does when it starts the crawler, the command line's value does
    # not replace them.
    cluster.set("DOWNLOAD_HANDLERS", {"https": "example.Handler"}, priority="cmdline")
    assert issubclass(cluster.getdict("DOWNLOAD_HANDLERS")["https"], ClusterPacedHandler)
    # Wrapping twice does not pace twice.
    assert paced_handlers(cluster)["https"] is handlers["https"]
