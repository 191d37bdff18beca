"""The audit spider's arguments (``-a name=value``), parsed and validated before any request."""

from __future__ import annotations

from dataclasses import dataclass

from sitemapaudit.config import parse_bool
from sitemapaudit.errors import ConfigError
from sitemapaudit.urls import Origin, loc_problems, parse_origin


@dataclass(frozen=True, slots=True)
class AuditArguments:
    origin: Origin
    sitemaps: tuple[str, ...]
    fetch_urls: bool | None


def parse_arguments(
    domain: str | None = None,
    sitemap: str | None = None,
    fetch_urls: str | None = None,
    **unknown: object,
) -> AuditArguments:
    """Validate the arguments of ``scrapy crawl audit``; a bad one raises ConfigError naming it."""
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ConfigError(f"unknown argument(s) for the audit spider: {names}")
    if not domain:
        raise ConfigError("the domain argument is required: scrapy crawl audit -a domain=HOST")
    origin = parse_origin(domain)
    sitemaps = tuple(s.strip() for s in (sitemap or "").split(",") if s.strip())
    for url in sitemaps:
        if loc_problems(url):
            raise ConfigError(f"invalid value for sitemap: {url!r} is not an absolute http(s) URL")
    return AuditArguments(
        origin=origin,
        sitemaps=sitemaps,
        fetch_urls=None if fetch_urls is None else parse_bool("fetch_urls", fetch_urls),
    )
