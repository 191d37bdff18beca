"""The tree of sitemaps: which ones to fetch, and why the others are not fetched."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.urls import (
    Origin,
    SitemapHosts,
    invalid_url_reason,
    is_valid_url,
    loc_problems,
    normalize_url,
    url_origin,
)

# The longest sitemap URL the audit requests. SITEMAPAUDIT_MAX_URL_LENGTH is for listed pages;
# a longer sitemap location is still a sitemap (the limit of redirect targets, the same).
SITEMAP_URL_MAX_LENGTH = 8192


class Decision(StrEnum):
    FETCH = "fetch"
    SEEN = "seen"
    OFF_HOST = "off_host"
    INVALID = "invalid"
    TOO_DEEP = "too_deep"
    CAPPED = "capped"
    # Already registered by this same parent (a parent read again after its reader died).
    KNOWN = "known"


@dataclass(frozen=True, slots=True)
class SitemapRef:
    """A sitemap to fetch: where it was found and how deep in the tree it sits."""

    url: str
    found_via: str
    parent: str | None
    depth: int
    # The `<lastmod>` the parent index gives for it, if any.
    lastmod: str | None = None
    # The sitemap that redirects here, for a sitemap read in its place: its URLs may be in
    # the directory of either location.
    moved_from: str | None = None
    # When the index that gives ``lastmod`` was read (ISO 8601, UTC): the lastmod is in the
    # future when it is later than that.
    listed_at: str | None = None


class SitemapTree:
    """Decides, for each sitemap reference, whether it is fetched; remembers every one seen."""

    def __init__(
        self,
        origin: Origin,
        *,
        max_depth: int,
        max_sitemaps: int,
        max_url_length: int,
        sitemap_hosts: tuple[Origin, ...] = (),
    ):
        self.origin = origin
        # Where sitemaps are fetched: the origin and the other hosts that keep its sitemaps.
        self.hosts = SitemapHosts(origin, sitemap_hosts)
        self.max_depth = max_depth
        self.max_sitemaps = max_sitemaps
        self.max_url_length = max_url_length
        # Every sitemap seen (normalized), with the parent that first listed it (``None`` for
        # robots.txt, the homepage, arguments, common paths, or unknown after a resume; for the
        # location a sitemap redirects to, that sitemap), to tell a loop from a sitemap listed
        # again.
        self._parents: dict[str, str | None] = {}
        self.scheduled = 0

    def __len__(self) -> int:
        return len(self._parents)

    def restore(self, urls: list[str], parents: dict[str, str | None] | None = None) -> None:
        """Mark sitemaps of an interrupted audit as seen (with the parents that listed them)."""
        known = parents or {}
        for url in urls:
            self._parents.setdefault(normalize_url(url), known.get(url))

    def seen(self, url: str) -> bool:
        return normalize_url(url) in self._parents

    def consider(self, url: str, *, depth: int, parent: str | None = None) -> Decision:
        """Classify one reference; a FETCH decision counts it against the cap."""
        if loc_problems(url, max_length=self.max_url_length):
            return Decision.INVALID
        key = normalize_url(url)
        if key in self._parents:
            return Decision.SEEN
        if not self.hosts.owns(url):
            self._parents[key] = parent
            return Decision.OFF_HOST
        if depth > self.max_depth:
            return Decision.TOO_DEEP
        if self.scheduled >= self.max_sitemaps:
            return Decision.CAPPED
        self._parents[key] = parent
        self.scheduled += 1
        return Decision.FETCH

    def release(self) -> None:
        """Give back the place a FETCH decision took under the cap: it was made for a guess (a
        common path), which takes a place only once it holds a sitemap (:meth:`count`)."""
        self.scheduled -= 1

    def count(self) -> None:
        """A guess that is read takes its place under the cap (past it, when sitemaps filled
        the cap while it was fetched: it is read all the same), before its children do."""
        self.scheduled += 1

    def redirect_target(self, url: str, *, source: str) -> Decision:
        """The location the redirects of the sitemap ``source`` end at, which answered there: a
        sitemap of its own (FETCH: to read under its own record, in the place of ``source``),
        or one the audit knows already (SEEN). It sits below ``source`` in the tree, so that an
        index listing ``source`` below it is a loop, and takes no place under the cap: it is
        the sitemap ``source`` names."""
        key = normalize_url(url)
        if key in self._parents:
            return Decision.SEEN
        self._parents[key] = source
        return Decision.FETCH

    def redirect_known(self, url: str, *, source: str) -> bool:
        """Whether a redirect of the sitemap ``source`` leads to ``url``, a sitemap the audit
        knows already (read, or to be read, under its own record)."""
        return normalize_url(url) in self._parents

    def restore_redirect(self, target: str, source: str) -> None:
        """A resumed audit: ``target`` was read in the place of ``source``, which redirects."""
        self._parents[normalize_url(target)] = source

    def parent_of(self, url: str) -> str | None:
        """The sitemap that first listed ``url`` (``None`` for a root, or one not seen)."""
        return self._parents.get(normalize_url(url))

    def loops(self, index: str, loc: str) -> bool:
        """Whether ``loc``, listed by ``index``, is ``index`` itself or an index above it (the
        sitemap that redirects to one of them is above it too): a loop. (A sitemap seen
        elsewhere, or listed twice, is only listed again.)"""
        target = normalize_url(loc)
        node: str | None = index
        walked: set[str] = set()
        while node is not None:
            key = normalize_url(node)
            if key == target:
                return True
            if key in walked:
                return False
            walked.add(key)
            node = self.parent_of(key)
        return False


class ChildProblems:
    """Collects what an index's children broke, as bounded problems for the index's record."""

    _SAMPLE = 5

    def __init__(self) -> None:
        self._by_code: dict[str, list[str]] = {}
        self._counts: dict[str, int] = {}

    def add(self, code: str, url: str) -> None:
        self._counts[code] = self._counts.get(code, 0) + 1
        sample = self._by_code.setdefault(code, [])
        if len(sample) < self._SAMPLE:
            sample.append(url)

    def problems(self) -> list[Problem]:
        reasons = {
            "index_cycle": "lists itself or an index above it (a loop), not read again",
            "index_too_deep": "lists sitemaps deeper than the depth cap, not fetched",
            "sitemap_limit": "lists sitemaps past the sitemap-count cap, not fetched",
            "invalid_url": "lists sitemap locations that are not valid http(s) URLs",
        }
        result = []
        for code, count in self._counts.items():
            if code == "invalid_url":
                sample = "; ".join(f"{url} ({why_invalid(url)})" for url in self._by_code[code])
            else:
                sample = ", ".join(self._by_code[code])
            more = f" and {count - self._SAMPLE} more" if count > self._SAMPLE else ""
            result.append(Problem(code, f"{reasons[code]}: {sample}{more}"))
        return result


def why_invalid(url: str) -> str:
    """Why a sitemap location is ``invalid_url``: the rule it breaks, or its length."""
    if is_valid_url(url):
        return f"{len(url):,} characters: too long to request"
    return invalid_url_reason(url)


def sitemap_hosts_hint(url: str) -> str:
    """What to do about a sitemap on another host, or redirected there: the value of
    SITEMAPAUDIT_SITEMAP_HOSTS that lets it be fetched, with its port when it is not the
    scheme's default (a bare host stands for the default ports only)."""
    origin = url_origin(url)
    if origin is None:
        value = "that host"
    else:
        host = f"[{origin.host}]" if ":" in origin.host else origin.host
        value = host if origin.port is None else f"{host}:{origin.port}"
    return f"(if the site keeps its sitemaps there, add {value} to SITEMAPAUDIT_SITEMAP_HOSTS)"


def off_host_sitemap(url: str) -> str:
    """The ``off_host`` message of a listed sitemap on another host."""
    return f"on another host, not fetched {sitemap_hosts_hint(url)}"
