"""Following redirects hop by hop, so that every hop ends up in the record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urljoin

from sitemapaudit.urls import loc_problems, normalize_url

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


def next_hop(
    state: RedirectState,
    *,
    url: str,
    status: int,
    location: str | None,
    origin: Hosts,
    max_redirects: int,
) -> str | None:
    """Record one response; return the URL to request next, or ``None`` when the chain ends.

    The chain ends on a non-redirect status, a missing or unusable Location, a revisited URL or
    too many hops (``loop``), or a target this audit must not request (``stopped``; one on
    another host than ``origin`` owns is also ``other_host``).
    """
    if status not in REDIRECT_STATUSES or not location:
        return None
    try:
        target = urljoin(url, location.strip())
    except ValueError:
        state.chain.append({"url": url, "status": status, "location": location})
        state.stopped = f"not followed: the Location {location!r} is not a usable URL"
        return None
    state.chain.append({"url": url, "status": status, "location": target})
    visited = {normalize_url(hop["url"]) for hop in state.chain}
    if normalize_url(target) in visited or len(state.chain) > max_redirects:
        state.loop = True
        return None
    if loc_problems(target, max_length=8192):
        state.stopped = f"not followed: {target!r} is not a valid http(s) URL"
        return None
    if not origin.owns(target):
        state.stopped = f"not followed: {target} is on another host"
        state.other_host = target
        return None
    return target
