"""Checks on whether a URL's `<lastmod>` tells the truth."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime

from sitemapaudit.checks.base import CheckContext, Severity, UrlCheck
from sitemapaudit.facts import FetchOutcome, UrlFacts
from sitemapaudit.page.dates import (
    Lastmod,
    earliest_instant,
    lastmod_delta,
    lastmod_matches,
    parse_http_date,
    parse_pubdate,
    parse_w3c_datetime,
    rfc822_date_problem,
    rfc3339_problem,
    w3c_refusal,
)

# The form most sitemaps write (``YYYY-MM-DDThh:mm:ssTZD``), hours 00-23 and offsets within
# the XSD's -14:00..+14:00: what datetime.fromisoformat reads as parse_w3c_datetime would, only
# faster.
_SECONDS_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:Z|[+-](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))"
)


@functools.lru_cache(maxsize=4096)
def listed_lastmod(lastmod: str | None, lastmod_format: str) -> Lastmod | None:
    """The listed lastmod parsed (strictly as W3C Datetime, an Atom date too; an RSS pubDate as
    RFC 822, or as a W3C Datetime written there instead), or ``None``."""
    if lastmod is None:
        return None
    if lastmod_format == "rfc822":
        return parse_pubdate(lastmod)
    if _SECONDS_RE.fullmatch(lastmod) is not None:
        try:
            value = datetime.fromisoformat(lastmod).astimezone(UTC)
        except (ValueError, OverflowError):  # no such day, or out of datetime's range
            return None
        return Lastmod(value=value, date_only=False, precision="time")
    return parse_w3c_datetime(lastmod)


def usable_last_modified(outcome: FetchOutcome, generated_window: float) -> datetime | None:
    """The response's Last-Modified when it says something: a 2xx answer, parseable, not
    equal (within ``generated_window`` seconds) to the response's Date, and not later."""
    if not outcome.fetched or outcome.status is None or not 200 <= outcome.status < 300:
        return None
    if outcome.last_modified is None:
        return None
    modified = _usable(outcome.last_modified, outcome.date, generated_window)
    if modified is not None and outcome.date is None and _after_arrival(modified, outcome):
        return None
    return modified


def _after_arrival(modified: datetime, outcome: FetchOutcome) -> bool:
    """Whether a Last-Modified sent without a Date is later than when the response arrived, by
    the audit's clock (give or take a server clock that runs ahead): it dates nothing."""
    arrived = _arrival(outcome.checked_at)
    return arrived is not None and (modified - arrived).total_seconds() > _ARRIVAL_SKEW_S


# Seconds a server's clock may run ahead of the audit's before a Last-Modified sent without a
# Date counts as later than the response.
_ARRIVAL_SKEW_S = 60.0


@functools.lru_cache(maxsize=256)
def _arrival(checked_at: str | None) -> datetime | None:
    if checked_at is None:
        return None
    try:
        moment = datetime.fromisoformat(checked_at)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@functools.lru_cache(maxsize=1024)
def _usable(
    last_modified: str, date_header: str | None, generated_window: float
) -> datetime | None:
    """:func:`usable_last_modified` of two header values (several checks ask per record)."""
    modified = parse_http_date(last_modified)
    if modified is None:
        return None
    date = parse_http_date(date_header) if date_header else None
    # Equal to Date: generated on the fly. Later than Date: a server may not send that
    # (RFC 9110, 8.8.2.1), and it dates nothing.
    if date is not None and (date - modified).total_seconds() <= generated_window:
        return None
    return modified


def delta_seconds(facts: UrlFacts, generated_window: float) -> float | None:
    """Last-Modified minus lastmod, in seconds, when both are known and meaningful."""
    modified = usable_last_modified(facts.outcome, generated_window)
    if modified is None:
        return None
    lastmod = listed_lastmod(facts.lastmod, facts.lastmod_format)
    if lastmod is None:
        return None
    return lastmod_delta(lastmod, modified)


class LastmodInvalid(UrlCheck):
    """The `<lastmod>` is not a valid W3C Datetime (or RFC 822 date in an RSS feed, or RFC 3339
    date-time in an Atom feed)."""

    code = "lastmod_invalid"
    severity = Severity.WARNING

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if facts.lastmod is None:
            return None
        if facts.lastmod_format in _FEED_DATES:
            problem = _feed_date_problem(facts.lastmod, facts.lastmod_format)
            return None if problem is None else [problem]
        if listed_lastmod(facts.lastmod, facts.lastmod_format):
            return None
        return [f"lastmod {facts.lastmod!r} is not a valid date{w3c_refusal(facts.lastmod)}"]


# A feed's date format: what judges it, the element, the standard it must follow, and what is
# added when the value is still a W3C Datetime (a date alone, say) that the other checks read.
_FEED_DATES: dict[str, tuple[Callable[[str], str | None], str, str]] = {
    "rfc822": (
        rfc822_date_problem,
        "pubDate {value!r} is not an RFC 822 date: {problem}",
        " (it is read as such for the other lastmod checks)",
    ),
    "rfc3339": (
        rfc3339_problem,
        "updated {value!r} is not an RFC 3339 date-time, as Atom requires: {problem}",
        " (it is still read for the other lastmod checks)",
    ),
}


@functools.lru_cache(maxsize=4096)
def _feed_date_problem(value: str, date_format: str) -> str | None:
    """What is wrong with an RSS pubDate (``rfc822``) or an Atom date (``rfc3339``), or
    ``None``."""
    judge, message, still_read = _FEED_DATES[date_format]
    problem = judge(value)
    if problem is None:
        return None
    if listed_lastmod(value, date_format) is not None:
        problem += still_read
    return message.format(value=value, problem=problem)


class LastmodFuture(UrlCheck):
    """The `<lastmod>` is later than the moment the audit had read every sitemap."""

    code = "lastmod_future"
    severity = Severity.WARNING
    needs_lastmod = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        lastmod = listed_lastmod(facts.lastmod, facts.lastmod_format)
        if lastmod is None:
            return None
        read_at = ctx.sitemaps_read_at
        if earliest_instant(lastmod) > (read_at or ctx.audit_time):
            if read_at is None:
                return [
                    f"lastmod {facts.lastmod} is after the audit time "
                    f"{ctx.audit_time:%Y-%m-%dT%H:%M:%SZ}"
                ]
            return [
                f"lastmod {facts.lastmod} is after {read_at:%Y-%m-%dT%H:%M:%SZ}, when the audit "
                "had read every sitemap"
            ]
        return None


class LastmodMismatch(UrlCheck):
    """The `<lastmod>` differs from the page's Last-Modified beyond the tolerance setting."""

    code = "lastmod_mismatch"
    severity = Severity.WARNING
    needs_lastmod = True
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        lastmod = listed_lastmod(facts.lastmod, facts.lastmod_format)
        modified = usable_last_modified(facts.outcome, ctx.config.generated_date_window)
        if lastmod is None or modified is None:
            return None
        if lastmod_matches(lastmod, modified, tolerance_s=ctx.config.lastmod_tolerance):
            return None
        return [f"lastmod {facts.lastmod} but Last-Modified {facts.outcome.last_modified}"]


class LastmodUnverifiable(UrlCheck):
    """The page has no usable Last-Modified (absent, not a date, equal to its Date or later than
    it): lastmod is unchecked. Not for a response whose body could not be read
    (``fetch_failed`` says what is wrong with it)."""

    code = "lastmod_unverifiable"
    severity = Severity.NOTICE
    needs_lastmod = True
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        outcome = facts.outcome
        if listed_lastmod(facts.lastmod, facts.lastmod_format) is None:
            return None
        if not outcome.fetched or outcome.status is None or not 200 <= outcome.status < 300:
            return None
        if usable_last_modified(outcome, ctx.config.generated_date_window) is not None:
            return None
        if outcome.last_modified is None:
            return ["the response has no Last-Modified header"]
        modified = parse_http_date(outcome.last_modified)
        if modified is None:
            return [f"Last-Modified {outcome.last_modified!r} is not an HTTP date"]
        date = parse_http_date(outcome.date) if outcome.date else None
        if (
            date is not None
            and (modified - date).total_seconds() > ctx.config.generated_date_window
        ):
            return [
                f"Last-Modified {outcome.last_modified} is later than the response's Date "
                f"{outcome.date}, which servers may not send (RFC 9110)"
            ]
        if date is None:
            return [
                f"Last-Modified {outcome.last_modified} is later than when the response "
                f"arrived ({outcome.checked_at}), and the response has no Date: a time to come "
                "dates nothing"
            ]
        gap = (date - modified).total_seconds()
        if gap == 0:
            return ["Last-Modified equals the response's Date (generated on the fly)"]
        return [
            f"Last-Modified {outcome.last_modified} is {abs(gap):g} s "
            f"{'before' if gap > 0 else 'after'} the response's Date {outcome.date}, within "
            "SITEMAPAUDIT_GENERATED_DATE_WINDOW (generated on the fly)"
        ]
