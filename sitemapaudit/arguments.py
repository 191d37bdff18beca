"""The audit spider's arguments (``-a name=value``), parsed and validated before any request."""

from __future__ import annotations

from dataclasses import dataclass

from sitemapaudit.checks.registry import all_codes
from sitemapaudit.config import parse_bool
from sitemapaudit.errors import ConfigError
from sitemapaudit.urls import Origin, loc_problems, parse_origin
from sitemapaudit.words import noun


@dataclass(frozen=True, slots=True)
class FailOn:
    """When ``scrapy crawl audit`` exits non-zero: ``-a fail_on=error|warning|never|CODE,...``."""

    policy: str
    severities: frozenset[str]
    codes: frozenset[str]

    def failed(
        self, counts: dict[str, int], severities: dict[str, int], *, no_sitemap: bool = False
    ) -> bool:
        """Whether findings match; ``no_sitemap``: the audit, complete, found no sitemap at
        all, which has no finding (no record to carry it) but fails ``error`` and ``warning``
        as an error would: a site whose sitemaps are all gone must not pass a nightly run."""
        return bool(self.matched(counts, severities, no_sitemap=no_sitemap))

    def matched(
        self, counts: dict[str, int], severities: dict[str, int], *, no_sitemap: bool = False
    ) -> list[str]:
        """What made :meth:`failed` true, as ``error=3``, ``duplicate=2`` (findings of
        that severity or code, as the summary counts them) or ``no sitemap was found``;
        empty when nothing."""
        found = [
            f"{severity}={severities[severity]:,}"
            for severity in ("error", "warning")
            if severity in self.severities and severities.get(severity, 0)
        ]
        if no_sitemap and "error" in self.severities:
            found.append("no sitemap was found")
        found += [f"{code}={counts[code]:,}" for code in sorted(self.codes) if counts.get(code, 0)]
        return found


def parse_fail_on(value: str | None) -> FailOn:
    """``never`` (also when not given), ``error``, ``warning``, or comma-separated finding codes
    (which may include ``error`` or ``warning``)."""
    if value is None:
        return FailOn("never", frozenset(), frozenset())
    items = [item.strip() for item in value.split(",") if item.strip()]
    if not items:
        raise ConfigError(
            f"fail_on is empty ({value!r}): use error, warning, never or finding codes"
        )
    if items == ["never"]:
        return FailOn("never", frozenset(), frozenset())
    levels = {"error": {"error"}, "warning": {"error", "warning"}}
    severities = frozenset(s for item in items for s in levels.get(item, ()))
    codes = frozenset(item for item in items if item not in levels)
    if "never" in codes:
        raise ConfigError(
            f"invalid value for fail_on: {value!r} (never cannot be combined with others)"
        )
    unknown = codes - all_codes()
    if unknown:
        raise ConfigError(
            f"invalid value for fail_on: {', '.join(sorted(unknown))} is not a finding code "
            "(use error, warning, never, or finding codes from the README's table)"
        )
    level = "warning" if "warning" in severities else "error" if severities else None
    policy = ",".join([*([level] if level else []), *sorted(codes)])
    return FailOn(policy, severities, codes)


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
    """Validate the arguments of ``scrapy crawl audit``; a bad one raises ConfigError naming it.
    (``_job``, which scrapyd adds to every job it starts, is its own.)"""
    unknown.pop("_job", None)
    if unknown:
        names = ", ".join(sorted(unknown))
        raise ConfigError(f"unknown {noun(len(unknown), 'argument')} for the audit spider: {names}")
    if not domain:
        raise ConfigError("the domain argument is required: scrapy crawl audit -a domain=HOST")
    if fetch_urls is not None and not fetch_urls.strip():
        raise ConfigError("invalid value for fetch_urls: it is empty (give yes or no)")
    origin = parse_origin(domain)
    sitemaps = tuple(s.strip() for s in (sitemap or "").split(",") if s.strip())
    if sitemap is not None and not sitemaps:
        # Not a fall-back to discovery: a script whose variable is unset would audit other
        # sitemaps than it names, and pass.
        raise ConfigError(
            f"invalid value for sitemap: it names no URL ({sitemap!r}); leave the argument out "
            "to discover the sitemaps"
        )
    for url in sitemaps:
        if loc_problems(url):
            raise ConfigError(f"invalid value for sitemap: {url!r} is not an absolute http(s) URL")
    return AuditArguments(
        origin=origin,
        sitemaps=sitemaps,
        fetch_urls=None if fetch_urls is None else parse_bool("fetch_urls", fetch_urls),
        fail_on=parse_fail_on(fail_on),
    )


def check_fail_on(fail_on: FailOn, disabled_checks: frozenset[str]) -> None:
    """A :class:`ConfigError` when ``fail_on`` names codes whose checks are switched off: a
    policy that can never fail on them is a mistake, not a choice."""
    off = fail_on.codes & disabled_checks
    if off:
        raise ConfigError(
            f"fail_on names finding codes that SITEMAPAUDIT_DISABLED_CHECKS switches off: "
            f"{', '.join(sorted(off))} (they can never be found)"
        )
