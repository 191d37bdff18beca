"""What a redirect chain that was not followed to its end means: findings on a sitemap, or why
the homepage's answer is not read for sitemap links."""

from __future__ import annotations

from sitemapaudit.crawl.redirects import RedirectState, sitemap_loop
from sitemapaudit.crawl.run import sitemap_hosts_hint
from sitemapaudit.sitemap.records import Problem
from sitemapaudit.words import count_noun


def redirect_problems(state: RedirectState, max_redirects: int) -> list[Problem]:
    """What an unfollowed redirect of a sitemap means, as findings on the sitemap."""
    if state.loop:
        return [sitemap_loop(state.chain, max_redirects)]
    if state.other_host is not None:
        return [
            Problem(
                "off_host",
                f"redirects to another host, {state.stopped} "
                f"{sitemap_hosts_hint(state.other_host)}",
            )
        ]
    if state.broken is not None:
        return [Problem("redirect_broken", f"redirect not followed: {state.broken}")]
    if state.stopped:
        return [Problem("invalid_url", f"redirect {state.stopped}")]
    return []


def homepage_unread(status: int, state: RedirectState, max_redirects: int) -> str | None:
    """Why the homepage's answer cannot be read for sitemap links (an error status other
    than 404 and 410, a redirect chain that ends nowhere), or ``None``. A redirect to another
    host has a note of its own (see ``AuditRun.homepage_received``)."""
    if state.loop:
        return (
            f"it redirects in a loop or more than {max_redirects} times, given up after "
            f"{count_noun(len(state.chain), 'hop')}"
        )
    if state.other_host is not None:
        return None
    if state.broken is not None:
        return f"HTTP {status}, a redirect that cannot be followed: {state.broken}"
    if state.stopped:
        return f"HTTP {status}, a redirect not followed: {state.stopped}"
    if status >= 300 and status not in _HOMEPAGE_MISSING:
        return f"HTTP {status}"
    return None


# A homepage that is not there names no sitemap, as a robots.txt that is not there has no rules
# (a host that only keeps sitemaps, a CDN, may well have none).
_HOMEPAGE_MISSING = frozenset({404, 410})
