"""The audit spider's arguments (``-a name=value``), parsed and validated before any request."""

from __future__ import annotations

from dataclasses import dataclass

from sitemapaudit.checks.registry import all_codes
from sitemapaudit.config import parse_bool
from sitemapaudit.errors import ConfigError
from sitemapaudit.urls import Origin, loc_problems, parse_origin


@dataclass(frozen=True, slots=True)
class FailOn:
    """When ``scrapy crawl audit`` exits non-zero: ``-a fail_on=error|warning|never|CODE,...``."""

    policy: str
    severities: frozenset[str]
    codes: frozenset[str]

    def failed(self, counts: dict[str, int], severities: dict[str, int]) -> bool:
        if any(severities.get(s, 0) for s in self.severities):
            return True
        return any(counts.get(code, 0) for code in self.codes)


def parse_fail_on(value: str | None) -> FailOn:
    policy = (value or "never").strip()
    if policy == "never":
        return FailOn(policy, frozenset(), frozenset())
    if policy == "error":
        return FailOn(policy, frozenset({"error"}), frozenset())
    if policy == "warning":
        return FailOn(policy, frozenset({"error", "warning"}), frozenset())
    codes = frozenset(c.strip() for c in policy.split(",") if c.strip())
    unknown = codes - all_codes()
    if not codes or unknown:
        bad = ", ".join(sorted(unknown)) or repr(value)
        raise ConfigError(
            f"invalid value for fail_on: {bad} (use error, warning, never or finding codes)"
        )
    return FailOn(",".join(sorted(codes)), frozenset(), codes)


@dataclass(frozen=True, slots=True)
class AuditArguments:
    origin: Origin
    sitemaps: tuple[str, ...]
    fetch_urls: bool | None
    fail_on: FailOn


def parse_arguments(
    domain: str | None = None,
    sitemap: str | None = None,
    fetch_urls: str | None = None,
    fail_on: str | None = None,
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
        fail_on=parse_fail_on(fail_on),
    )
