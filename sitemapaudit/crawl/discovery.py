"""Where an audit looks for sitemaps (robots.txt, the homepage, the common paths): how far it
got, and its notes on robots.txt and the homepage for the summary; what robots.txt that could
not be read, or that disallows a sitemap, makes the findings say."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.counts import Stats
from sitemapaudit.discovery.robots import RobotsPolicy
from sitemapaudit.urls import Origin, origin_of

logger = logging.getLogger(__name__)

_OBEY = "search engines that obey robots.txt do not fetch it"


@dataclass(slots=True)
class Discovery:
    """Where sitemaps are looked for, and whether the common paths are still needed."""

    robots_done: bool = False
    homepage_done: bool = False
    found: int = 0
    common_paths_tried: bool = False
    # Whether the homepage waits for robots.txt's answer to be requested (homepage_due).
    homepage_waits: bool = False
    # Why the homepage's sitemap links are unknown (not read, or could not be), if they are.
    homepage_unread: str | None = None
    # robots.txt's sitemaps while the homepage it let through is requested: registered with
    # the homepage's, so that no index is read before both sources have named theirs (a
    # sitemap the homepage names and an index lists is found via the homepage, not by
    # whichever answer came first).
    robots_held: list[tuple[str, str]] = field(default_factory=list)
    # Sitemaps the homepage named before robots.txt was read: registered after robots.txt's
    # own, so a sitemap both name is found via robots.txt whichever answer came first.
    homepage_held: list[tuple[str, str]] = field(default_factory=list)
    # Whether the argument sitemaps wait for robots.txt (see AuditRun.argument_refs).
    arguments_held: bool = False

    def needs_common_paths(self) -> bool:
        return (
            self.robots_done
            and self.homepage_done
            and self.found == 0
            and not self.common_paths_tried
        )


class DiscoveryNotes:
    """The remarks on robots.txt and the homepage for the summary, the log and the stats, and
    why either got no HTTP answer."""

    def __init__(self, origin: Origin, config: AuditConfig, stats: Stats) -> None:
        self.origin = origin
        self.config = config
        self.stats = stats
        # Why robots.txt or the homepage got no HTTP answer (see unreachable).
        self._failures: dict[str, str] = {}
        # Notes on robots.txt, then on the homepage: in this order whichever answered first.
        self._notes: dict[str, list[str]] = {"robots.txt": [], "the homepage": []}

    def notes(self) -> list[str]:
        """robots.txt's notes, then the homepage's."""
        return [*self._notes["robots.txt"], *self._notes["the homepage"]]

    def note(self, source: str, note: str, *, stat: str | None = None) -> None:
        """A remark on robots.txt or the homepage for the summary, the log and the stats.
        (Logged as it happens at INFO: the summary logs its notes as warnings, once.)"""
        self._notes[source].append(note)
        if stat is not None:
            self.stats.inc_value(f"sitemapaudit/{stat}")
        logger.info("%s", note)

    def robots_read(
        self,
        robots: RobotsPolicy,
        status: int | None,
        *,
        moved_to: str | None,
        gave_up: int | None,
        error: str | None,
    ) -> None:
        """The remarks on robots.txt as evaluated (see ``AuditRun.robots_received``)."""
        if error is not None:
            self._failures["robots.txt"] = error
        if moved_to is not None:
            self.note(
                "robots.txt",
                f"robots.txt of {self.origin.url} redirects to {moved_to}, on another host, "
                "which the audit does not request: it counts as not found, so no robots.txt "
                "rules apply and it names no sitemap",
                stat="discovery/robots_other_host",
            )
        if gave_up is not None:
            self.note(
                "robots.txt",
                f"robots.txt of {self.origin.url} redirects in a loop or more than 5 times "
                f"(given up after {gave_up} hops): as Google does, it counts as not found, so no "
                "robots.txt rules apply and it names no sitemap",
                stat="discovery/robots_redirects_given_up",
            )
        if robots.html_page:
            self.note(
                "robots.txt",
                f"robots.txt of {self.origin.url} answered with an HTML page, not a robots.txt "
                "(a soft 404?): search engines find no rules or Sitemap lines in it, so every "
                "URL is allowed",
                stat="discovery/robots_html",
            )
        delay = robots.crawl_delay
        if delay and self.config.honor_crawl_delay and delay > self.config.max_crawl_delay:
            self.note(
                "robots.txt",
                f"robots.txt asks for a Crawl-delay of {delay:g} s; requests were spaced by "
                f"SITEMAPAUDIT_MAX_CRAWL_DELAY, {self.config.max_crawl_delay:g} s",
                stat="robots/crawl_delay_capped",
            )
        if robots.outcome == "disallow_all":
            why = f"status {status}" if error is None else error
            self.note(
                "robots.txt",
                f"robots.txt could not be read ({why}); "
                f"{_disallow_all_basis(status)}, every URL is treated as disallowed",
            )

    def homepage_read(
        self,
        *,
        moved_to: str | None,
        error: str | None,
        unread: str | None,
        partial: bool,
        blocked: bool,
    ) -> str | None:
        """The remarks on the homepage as answered (see ``AuditRun.homepage_received``);
        returns why its sitemap links are unknown, if this answer says (``None``: it does
        not)."""
        why: str | None = None
        if error is not None:
            self._failures["the homepage"] = error
        if blocked:
            why = "was not read because robots.txt disallows it"
            self.note(
                "the homepage",
                "the homepage was not read because robots.txt disallows it; its sitemap links "
                "are unknown",
                stat="discovery/homepage_blocked",
            )
        elif partial and error is not None:
            self.note(
                "the homepage",
                f"the homepage was read only in part ({error}): only the sitemap links in "
                "what arrived of it are known",
                stat="discovery/homepage_partial",
            )
        elif (unread := unread or error) is not None:
            why = "could not be read"
            self.note(
                "the homepage",
                f"the homepage could not be read ({unread}), so its sitemap links are unknown",
                stat="discovery/homepage_unread",
            )
        if moved_to is not None:
            why = "redirects to another host"
            self.note(
                "the homepage",
                f"the homepage of {self.origin.url} redirects to {moved_to}, on another host: "
                f"this audit covers {self.origin.url} only, and sitemaps and URLs on that host "
                "are reported as off_host; to audit that site, run it with "
                f"-a domain={origin_of(moved_to)}",
                stat="discovery/homepage_other_host",
            )
        return why

    def unreachable(self, answers: int) -> str | None:
        """The note of an audit in which no request got an HTTP answer (``answers`` is the
        number of responses): the site could not be reached, and nothing was audited; else
        ``None``."""
        if answers:
            return None
        why = "; ".join(
            f"{what}: {self._failures[what]}"
            for what in ("robots.txt", "the homepage")
            if what in self._failures
        )
        note = (
            f"the site could not be reached: no request to {self.origin.url} got an HTTP "
            f"answer{f' ({why})' if why else ''}, so nothing was audited"
        )
        # A bare host means https; the site may only speak plain HTTP (a TLS error, or no
        # server on the https port). Not after a DNS failure: the host itself is unknown.
        if self.origin.scheme == "https" and "DNSLookupError" not in why:
            plain = Origin("http", self.origin.host, self.origin.port).url
            note += f"; if the site is served over plain HTTP, run with -a domain={plain}"
        return note


def sitemap_blocked(robots: RobotsPolicy, user_agent: str) -> str:
    """Why robots.txt disallows a sitemap, for its ``robots_blocked`` finding."""
    if robots.outcome != "disallow_all":
        return f"robots.txt disallows it for {user_agent}: {_OBEY}"
    return f"{_unreadable(robots)} every URL is disallowed, this sitemap included: {_OBEY}"


def every_url_blocked(robots: RobotsPolicy) -> str:
    """Why every URL is ``robots_blocked`` under a robots.txt that could not be read."""
    return f"{_unreadable(robots)} every URL is disallowed: {_OBEY}"


def _unreadable(robots: RobotsPolicy) -> str:
    """The start of a finding under a robots.txt that could not be read."""
    if robots.status is None:
        why = "robots.txt could not be fetched"
    else:
        why = f"robots.txt answered with status {robots.status}"
    return f"{why}, so {_disallow_all_basis(robots.status)}"


def _disallow_all_basis(status: int | None) -> str:
    """Why an unreadable robots.txt disallows every URL: RFC 9309 for a 5xx answer or none;
    Google's reading for a 429, which the RFC counts among the 4xx (no rules)."""
    return "as Google reads a 429" if status == 429 else "as RFC 9309 requires"
