"""Every check of the audit, and the subset a configuration enables."""

from __future__ import annotations

from sitemapaudit.checks.base import Check, SitemapCheck, UrlCheck
from sitemapaudit.checks.fetching import (
    MetaRefresh,
    Redirect,
    RedirectBlocked,
    RedirectBroken,
    RedirectLoop,
    UrlFetchFailed,
    UrlHttpError,
    UrlNon200,
)
from sitemapaudit.checks.indexing import (
    CanonicalConflict,
    CanonicalMismatch,
    HeadBroken,
    HeadTooLarge,
    NoIndex,
    RobotsBlocked,
)
from sitemapaudit.checks.lastmod import (
    LastmodFuture,
    LastmodInvalid,
    LastmodMismatch,
    LastmodUnverifiable,
)
from sitemapaudit.checks.listing import (
    Duplicate,
    InvalidUrl,
    OutOfScope,
    UrlFragment,
    UrlOffHost,
    UrlTooLong,
    UrlUnescaped,
)
from sitemapaudit.checks.sitemaps import STRUCTURE_CHECKS
from sitemapaudit.checks.validation import VALIDATION_SITEMAP_CHECKS, HreflangNotReciprocal
from sitemapaudit.config import AuditConfig
from sitemapaudit.errors import ConfigError

URL_CHECKS: tuple[type[UrlCheck], ...] = (
    InvalidUrl,
    UrlTooLong,
    UrlOffHost,
    OutOfScope,
    UrlFragment,
    UrlUnescaped,
    RobotsBlocked,
    UrlFetchFailed,
    UrlHttpError,
    UrlNon200,
    Redirect,
    RedirectLoop,
    RedirectBroken,
    RedirectBlocked,
    MetaRefresh,
    NoIndex,
    CanonicalMismatch,
    CanonicalConflict,
    HeadBroken,
    HeadTooLarge,
    LastmodInvalid,
    LastmodFuture,
    LastmodMismatch,
    LastmodUnverifiable,
    Duplicate,
    HreflangNotReciprocal,
)

SITEMAP_CHECKS: tuple[type[SitemapCheck], ...] = (*STRUCTURE_CHECKS, *VALIDATION_SITEMAP_CHECKS)

ALL_CHECKS: tuple[type[Check], ...] = (*SITEMAP_CHECKS, *URL_CHECKS)  # type: ignore[type-arg]


def all_codes() -> set[str]:
    return {check.code for check in ALL_CHECKS}


def response_codes() -> frozenset[str]:
    """The URL finding codes only a request of the URL can find (its response or failure)."""
    return frozenset(check.code for check in URL_CHECKS if check.needs_response)


def page_codes() -> frozenset[str]:
    """The URL finding codes judged from a 2xx answer's headers and ``<head>``."""
    return frozenset(check.code for check in URL_CHECKS if check.needs_page)


def lastmod_codes() -> frozenset[str]:
    """The URL finding codes judged from a readable ``<lastmod>``."""
    return frozenset(check.code for check in URL_CHECKS if check.needs_lastmod)


def document_codes() -> frozenset[str]:
    """The sitemap finding codes read from a sitemap's document (its body, an index's
    entries): not those of its fetch, its location, its index's ``<lastmod>`` or robots.txt."""
    return frozenset(check.code for check in SITEMAP_CHECKS if check.needs_document)


def enabled_checks(
    config: AuditConfig,
) -> tuple[list[SitemapCheck], list[UrlCheck]]:
    """Instances of the checks not switched off by SITEMAPAUDIT_DISABLED_CHECKS."""
    unknown = config.disabled_checks - all_codes()
    if unknown:
        raise ConfigError(
            "SITEMAPAUDIT_DISABLED_CHECKS names unknown finding codes: "
            + ", ".join(sorted(unknown))
        )
    sitemap = [c() for c in SITEMAP_CHECKS if c.code not in config.disabled_checks]
    url = [c() for c in URL_CHECKS if c.code not in config.disabled_checks]
    return sitemap, url
