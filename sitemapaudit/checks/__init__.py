"""Checks: one small class per finding code, run by the checks pipeline over crawl facts."""

from sitemapaudit.checks.base import Check, CheckContext, Severity, SitemapCheck, UrlCheck
from sitemapaudit.checks.registry import ALL_CHECKS, enabled_checks

__all__ = [
    "ALL_CHECKS",
    "Check",
    "CheckContext",
    "Severity",
    "SitemapCheck",
    "UrlCheck",
    "enabled_checks",
]
