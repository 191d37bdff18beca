"""Checks on whether search engines may crawl and index a listed URL as listed."""

from __future__ import annotations

from sitemapaudit.checks.base import ROBOTS_UNREADABLE, CheckContext, Severity, UrlCheck
from sitemapaudit.facts import UrlFacts
from sitemapaudit.urls import canonical_problem, same_url


class NoIndex(UrlCheck):
    """The page says noindex (meta robots/googlebot or X-Robots-Tag, or an `unavailable_after`
    date that has passed) but is listed for indexing."""

    code = "noindex"
    severity = Severity.ERROR
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        outcome = facts.outcome
        if not outcome.noindex:
            return None
        expired = outcome.unavailable_after
        sources = [
            f"{source} (unavailable_after {expired[source]} has passed)"
            if source in expired
            else source
            for source in outcome.noindex
        ]
        return [f"noindex from {', '.join(sources)}"]


class RobotsBlocked(UrlCheck):
    """robots.txt disallows the URL for the audited user agent (not requested by default)."""

    code = "robots_blocked"
    severity = Severity.ERROR

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if not facts.robots_blocked:
            return None
        unreadable = ctx.extras.get(ROBOTS_UNREADABLE)
        if isinstance(unreadable, str):
            return [unreadable]
        return [f"disallowed for {ctx.config.robots_user_agent} by robots.txt"]


class CanonicalMismatch(UrlCheck):
    """The page's rel=canonical (link element or Link header) names a different URL."""

    code = "canonical_mismatch"
    severity = Severity.WARNING
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        outcome = facts.outcome
        page_url = outcome.final_url or facts.url
        canonical = outcome.canonical
        if canonical is None or canonical == page_url or same_url(canonical, page_url):
            return None
        problem = canonical_problem(canonical)
        if problem is not None:
            return [
                f"canonical ({outcome.canonical_source}) is {canonical}, which is {problem}: "
                "search engines ignore it, so the page has no canonical they can use"
            ]
        return [f"canonical ({outcome.canonical_source}) is {canonical}"]


class CanonicalConflict(UrlCheck):
    """The page names several different canonical URLs (link elements, Link headers); search
    engines may then ignore all of them."""

    code = "canonical_conflict"
    severity = Severity.WARNING
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        outcome = facts.outcome
        if not outcome.canonical_others:
            return None
        names = ", ".join([str(outcome.canonical), *outcome.canonical_others])
        return [f"{1 + len(outcome.canonical_others)} different canonical URLs: {names}"]


class HeadBroken(UrlCheck):
    """The `<head>` ends early, at an element that does not belong there (an `<img>`, a
    `<div>`, text), or, in a page read as XHTML, at its first XML well-formedness error: the
    robots metas, canonical links, refresh metas or hreflang links after it are read as the
    body, or not at all, and search engines ignore them."""

    code = "head_broken"
    severity = Severity.WARNING
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        broken = facts.outcome.head_broken
        if broken is None:
            return None
        ignored = ", ".join(str(signal) for signal in broken["ignored"])
        return [f"the head ends early at {broken['start']}; ignored after it: {ignored}"]


class HeadTooLarge(UrlCheck):
    """The `<head>` does not end within the first 2 MiB of the page the audit reads: a robots
    meta or canonical link after that is not seen (Google reads the first 15 MB of an HTML
    file, and may find a noindex there)."""

    code = "head_too_large"
    severity = Severity.WARNING
    needs_response = True
    needs_page = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        read = facts.outcome.head_too_large
        if read is None:
            return None
        return [
            f"the head does not end within the first {read / 1048576:g} MiB the audit reads; "
            "a robots meta or canonical after that is not seen"
        ]
