"""Turning crawl facts into report records by running the enabled checks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sitemapaudit.checks.base import Check, CheckContext, Severity, UrlCheck
from sitemapaudit.checks.lastmod import delta_seconds
from sitemapaudit.checks.registry import enabled_checks
from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import NOT_REQUESTED, SitemapFacts, UrlFacts
from sitemapaudit.report.records import SitemapRecord, UrlRecord


class RecordBuilder:
    """Runs the enabled checks over facts and builds the records of the report."""

    def __init__(self, config: AuditConfig, audit_time: datetime) -> None:
        self.sitemap_checks, self.url_checks = enabled_checks(config)
        # The checks to run, by whether the URL was requested and whether it broke a URL rule
        # (a check that needs a response passes every URL that was not requested, one that
        # needs a rule every URL that broke none).
        self._plans: dict[tuple[bool, bool], list[UrlCheck]] = {
            (requested, broke_rule): [
                c
                for c in self.url_checks
                if (requested or not c.needs_response) and (broke_rule or not c.needs_rule)
            ]
            for requested in (False, True)
            for broke_rule in (False, True)
        }
        self.ctx = CheckContext(config=config, audit_time=audit_time)
        checks: list[Check] = [*self.sitemap_checks, *self.url_checks]  # type: ignore[type-arg]
        self.severity: dict[tuple[str, str], Severity] = {
            (c.record, c.code): c.severity for c in checks
        }

    def sitemap_record(self, facts: SitemapFacts) -> SitemapRecord:
        issues, errors = _run(self.sitemap_checks, facts, self.ctx)
        return SitemapRecord(
            url=facts.url,
            found_via=facts.found_via,
            parent=facts.parent,
            kind=facts.kind,
            status=facts.status,
            gzip=facts.gzip,
            bytes=facts.bytes,
            url_count=facts.url_count,
            child_count=facts.child_count,
            issues=issues,
            errors=errors,
            not_modified=facts.not_modified,
        )

    def url_record(self, facts: UrlFacts) -> UrlRecord:
        outcome = facts.outcome
        if outcome is NOT_REQUESTED or outcome == NOT_REQUESTED:
            # A URL that was not requested (``validate``, ``fetch_urls=no``): the checks that
            # need a response all pass, and there is no Last-Modified to compare.
            issues, errors = _run(self._plans[False, bool(facts.rules)], facts, self.ctx)
            return UrlRecord(
                url=facts.url,
                sitemaps=list(facts.sitemaps),
                lastmod=facts.lastmod,
                robots_blocked=facts.robots_blocked,
                issues=issues,
                errors=errors,
            )
        issues, errors = _run(self._plans[True, bool(facts.rules)], facts, self.ctx)
        chain = [{"url": hop["url"], "status": hop["status"]} for hop in outcome.redirect_chain]
        return UrlRecord(
            url=facts.url,
            sitemaps=list(facts.sitemaps),
            lastmod=facts.lastmod,
            status=outcome.status,
            fetched=outcome.fetched,
            redirect_chain=chain,
            final_url=outcome.final_url,
            last_modified=outcome.last_modified,
            lastmod_delta_s=delta_seconds(facts, self.ctx.config.generated_date_window),
            noindex=list(outcome.noindex),
            robots_blocked=facts.robots_blocked,
            canonical=outcome.canonical,
            issues=issues,
            errors=errors,
            checked_at=outcome.checked_at,
            carried_over=outcome.carried_over,
        )


def _run(checks: Sequence[Check], facts: object, ctx: CheckContext) -> tuple[list[str], list[str]]:  # type: ignore[type-arg]
    issues: list[str] = []
    errors: list[str] = []
    for check in checks:
        details = check.run(facts, ctx)
        if details is None:
            continue
        code = check.code
        if code not in issues:
            issues.append(code)
        errors.extend(f"{code}: {detail}" for detail in details)
    return issues, errors
