"""Following redirects hop by hop, so that every hop ends up in the record; the sitemaps
that wait for the answer of a followed redirect's target."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urljoin

from sitemapaudit.crawl.counts import Stats
from sitemapaudit.crawl.tree import SitemapRef
from sitemapaudit.sitemap.records import Problem
from sitemapaudit.urls import loc_problems, normalize_url, same_url
from sitemapaudit.words import count_noun

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class Hosts(Protocol):
    """Where redirects may lead: an :class:`~sitemapaudit.urls.Origin`, or the
    :class:`~sitemapaudit.urls.SitemapHosts` of a sitemap request."""

    def owns(self, url: str) -> bool: ...


@dataclass(slots=True)
class RedirectState:
    """The hops seen so far for one listed URL."""

    chain: list[dict[str, Any]] = field(default_factory=list)
    loop: bool = False
    stopped: str | None = None
    # The target of a redirect that was not followed because it is on another host.
    other_host: str | None = None
    # Why the last redirect cannot be followed by anyone (no Location, not an http(s) URL).
    broken: str | None = None
    # The target of a redirect that robots.txt disallows (requested only with fetch_blocked).
    blocked_target: str | None = None


def next_hop(
    state: RedirectState,
    *,
    url: str,
    status: int,
    location: str | None,
    origin: Hosts,
    max_redirects: int,
    allowed: Callable[[str], bool] | None = None,
    follow_blocked: bool = False,
    conflicting: Sequence[str] = (),
) -> str | None:
    """Record one response; return the URL to request next, or ``None`` when the chain ends.

    The chain ends on a non-redirect status, a revisited URL or too many hops (``loop``), a
    redirect nobody can follow (``broken``: no Location, or one that is not an http(s) URL), or
    a target this audit must not request (``stopped``; one on another host than ``origin``
    owns is also ``other_host``; one that ``allowed`` (robots.txt) refuses is also
    ``blocked_target``, and is still requested with ``follow_blocked``).
    """
    if status not in REDIRECT_STATUSES:
        return None
    if len(conflicting) > 1:
        state.chain.append({"url": url, "status": status, "location": None})
        values = ", ".join(repr(value) for value in conflicting)
        state.broken = (
            f"the {status} answer has {len(conflicting)} different Location headers ({values}), "
            "which browsers refuse to follow"
        )
        state.stopped = "not followed: it has several different Location headers"
        return None
    if not location or not location.strip():
        state.chain.append({"url": url, "status": status, "location": None})
        header = "no Location header" if location is None else "an empty Location header"
        state.broken = f"the {status} answer has {header}"
        state.stopped = f"not followed: it has {header}"
        return None
    try:
        target = urljoin(url, location.strip())
    except ValueError:
        state.chain.append({"url": url, "status": status, "location": location})
        state.broken = f"its Location {location!r} is not a usable URL"
        state.stopped = f"not followed: the Location {location!r} is not a usable URL"
        return None
    state.chain.append({"url": url, "status": status, "location": target})
    visited = {normalize_url(hop["url"]) for hop in state.chain}
    if normalize_url(target) in visited or len(state.chain) > max_redirects:
        state.loop = True
        return None
    if loc_problems(target, max_length=8192):
        state.broken = f"its Location {target!r} is not a valid http(s) URL"
        state.stopped = f"not followed: {target!r} is not a valid http(s) URL"
        return None
    if not origin.owns(target):
        state.stopped = f"not followed: {target} is on another host"
        state.other_host = target
        return None
    if allowed is not None and not allowed(target):
        state.blocked_target = target
        if not follow_blocked:
            state.stopped = f"not followed: robots.txt disallows {target}"
            return None
    return target


def loop_detail(chain: list[dict[str, Any]], max_redirects: int) -> str:
    """How a redirect chain that ``next_hop`` gave up (``loop``) ended: back to a URL of the
    chain, or past the hop limit. Each hop needs its ``location``."""
    target = chain[-1].get("location") if chain else None
    if not target:
        return "the redirect chain did not end"
    if any(same_url(str(hop["url"]), str(target)) for hop in chain):
        return f"a loop: {target} redirects again after {count_noun(len(chain), 'hop')}"
    return f"more than {max_redirects} redirects: {target} was not requested"


def hops_text(chain: list[dict[str, Any]], target: str | None) -> str:
    """A redirect chain as ``a (301) -> b (302) -> target``."""
    hops = [f"{hop['url']} ({hop['status']})" for hop in chain]
    return " -> ".join([*hops, target] if target else hops)


def sitemap_loop(chain: list[dict[str, Any]], max_redirects: int) -> Problem:
    """The ``redirect_loop`` finding of a sitemap, with its hops (a sitemap record has no
    redirect chain of its own)."""
    target = chain[-1].get("location") if chain else None
    return Problem(
        "redirect_loop", f"{loop_detail(chain, max_redirects)}: {hops_text(chain, target)}"
    )


def sitemap_redirect(chain: list[dict[str, Any]], target: str) -> Problem:
    """The ``redirect`` finding of a sitemap whose location redirects to ``target``, a sitemap
    the audit reads under its own name (the sitemap that redirects lists nothing)."""
    hops = hops_text(chain, target)
    return Problem(
        "redirect",
        f"redirects to {target}: {hops}, a sitemap this audit reads under its own name; "
        "robots.txt and indexes should name the final location",
    )


class HopWaits:
    """Targets of followed sitemap redirects whose answers have not come, each with the
    sitemap listed there meanwhile that waits for that answer, if any."""

    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self._hops: dict[str, SitemapRef | None] = {}

    def requested(self, target: str) -> None:
        """A sitemap's redirect is followed to ``target``: a sitemap an index lists there
        meanwhile waits for that answer instead of being requested again (see
        :meth:`unparked`)."""
        self._hops.setdefault(normalize_url(target), None)

    def unparked(self, refs: list[SitemapRef]) -> list[SitemapRef]:
        """The sitemaps of ``refs`` to request now: not one that a redirect being followed
        is about to fetch, which waits for that answer (:meth:`answered`)."""
        if not self._hops:
            return refs
        now: list[SitemapRef] = []
        for ref in refs:
            key = normalize_url(ref.url)
            if key in self._hops and self._hops[key] is None:
                self._hops[key] = ref
                self.stats.inc_value("sitemapaudit/sitemaps/waited_for_redirect")
            else:
                now.append(ref)
        return now

    def answered(self, url: str) -> SitemapRef | None:
        """The answer (or failure) of a followed redirect's request to ``url`` has come: the
        sitemap listed there that waited for it, if any."""
        return self._hops.pop(normalize_url(url), None) if self._hops else None
