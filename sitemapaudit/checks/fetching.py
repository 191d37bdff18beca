"""Checks on what requesting a listed URL returned: status, failures and redirects."""

from __future__ import annotations

from typing import Any

from sitemapaudit.checks.base import CheckContext, Severity, UrlCheck
from sitemapaudit.crawl.redirects import REDIRECT_STATUSES, loop_detail
from sitemapaudit.facts import UrlFacts
from sitemapaudit.urls import same_url
from sitemapaudit.words import count_noun

# Longer delay-seconds are shown as the float they were read as (Python refuses to turn a
# string of over 4,300 digits into an int).
_MAX_DIGITS = 100


def error_status_detail(status: int, retry_after: dict[str, Any] | None, ctx: CheckContext) -> str:
    """The detail of an error status; for a 429/503 that was not retried because its
    Retry-After asked for a longer wait than SITEMAPAUDIT_RETRY_AFTER_MAX, why: the wait asked
    for (and the date, when the header gave one) and the cap."""
    if retry_after is None:
        return f"HTTP status {status}"
    value = str(retry_after.get("value", ""))
    until = "" if value.isdigit() else f" (until {value})"
    # Seconds as the header gave them (a float would round a huge value).
    digits = value.isdigit() and len(value) < _MAX_DIGITS
    wait = f"{int(value):,}" if digits else _seconds(float(retry_after["seconds"]))
    return (
        f"HTTP status {status}, not retried: its Retry-After asks to wait "
        f"{wait} s{until}, more than "
        f"SITEMAPAUDIT_RETRY_AFTER_MAX ({_seconds(ctx.config.retry_after_max)} s)"
    )


def _seconds(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value.is_integer() else f"{value:g}"


class UrlHttpError(UrlCheck):
    """The URL's final status is 4xx or 5xx (after retries)."""

    code = "http_error"
    severity = Severity.ERROR
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        status = facts.outcome.status
        if status is not None and status >= 400:
            return [error_status_detail(status, facts.outcome.retry_after, ctx)]
        return None


class UrlNon200(UrlCheck):
    """The URL's final status is neither 200 nor an error or a redirect: another 2xx (204 No
    Content...) or a 3xx that redirects nowhere (300, 304 to a request that was not
    conditional). Search engines index pages that answer 200."""

    code = "non_200"
    severity = Severity.WARNING
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        status = facts.outcome.status
        if status is None or status == 200 or status >= 400 or status in REDIRECT_STATUSES:
            return None
        return [f"HTTP status {status}: listed URLs should answer 200"]


class UrlFetchFailed(UrlCheck):
    """The URL could not be fetched: DNS, connection, timeout (after retries); or its body
    cannot be decoded as its ``Content-Encoding`` says, which browsers refuse too."""

    code = "fetch_failed"
    severity = Severity.ERROR
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        return [facts.outcome.error] if facts.outcome.error else None


class Redirect(UrlCheck):
    """The listed URL redirects; sitemaps should list final URLs. Every hop is in the record."""

    code = "redirect"
    severity = Severity.WARNING
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        outcome = facts.outcome
        if not outcome.redirect_chain:
            return None
        hops = len(outcome.redirect_chain)
        if outcome.redirect_loop:
            return [
                f"redirects {count_noun(hops, 'time')} without reaching a page "
                f"({_loop(facts, ctx)})"
            ]
        if outcome.redirect_stopped:
            # The last response is itself a redirect, to a target the audit did not request.
            return [
                f"redirects {count_noun(hops, 'time')}, the last one {outcome.redirect_stopped}"
            ]
        return [f"redirects to {outcome.final_url} in {count_noun(hops, 'hop')}"]


class RedirectBroken(UrlCheck):
    """The URL answers with a redirect nobody can follow: no Location header or an empty
    one, a Location that is not an http(s) URL, or several different ones."""

    code = "redirect_broken"
    severity = Severity.ERROR
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        broken = facts.outcome.redirect_broken
        if broken is None:
            return None
        return [f"{facts.outcome.final_url or facts.url} redirects, but {broken}"]


class RedirectBlocked(UrlCheck):
    """The URL redirects to a URL that robots.txt disallows for the audited user agent (the
    target is not requested by default)."""

    code = "redirect_blocked"
    severity = Severity.ERROR
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        target = facts.outcome.redirect_blocked
        if target is None:
            return None
        return [
            f"redirects to {target}, disallowed for {ctx.config.robots_user_agent} by robots.txt"
        ]


class MetaRefresh(UrlCheck):
    """The page sends browsers to another URL with a `<meta http-equiv="refresh">` (or a
    Refresh header), which search engines treat as a redirect; list the target instead."""

    code = "meta_refresh"
    severity = Severity.WARNING
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        refresh = facts.outcome.refresh
        if refresh is None:
            return None
        target = str(refresh["url"])
        if same_url(target, facts.outcome.final_url or facts.url):
            return None  # a refresh of the page itself reloads it
        source = "<meta> refresh" if refresh["source"] == "meta" else "Refresh header"
        return [f"{source} sends browsers to {target} after {refresh['delay']} s"]


class RedirectLoop(UrlCheck):
    """The redirect chain revisits a URL or exceeds SITEMAPAUDIT_MAX_REDIRECTS hops."""

    code = "redirect_loop"
    severity = Severity.ERROR
    needs_response = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        return [_loop(facts, ctx)] if facts.outcome.redirect_loop else None


def _loop(facts: UrlFacts, ctx: CheckContext) -> str:
    """How a redirect chain ended in ``redirect_loop``: back to a URL of the chain, or past the
    hop limit."""
    return loop_detail(facts.outcome.redirect_chain, ctx.config.max_redirects)
