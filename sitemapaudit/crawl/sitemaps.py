"""Reading the sitemaps of an audit: a fetched body, a 304 whose entries the history kept, a
failure, a redirect to a sitemap read under its own record; the child sitemaps an index lists
and the records of indexes that wait for their children's first answers.

:class:`SitemapReading` is a part of :class:`~sitemapaudit.crawl.run.AuditRun`: reading a
sitemap settles its facts, registers its children in the tree and the inventory, and counts
the sitemaps outstanding, all state of the run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl.conditional import ConditionalRequests, carried_over
from sitemapaudit.crawl.counts import RunTotals, Stats
from sitemapaudit.crawl.held import HeldIndexes
from sitemapaudit.crawl.intake import CHILD_FORMAT, AlternateSink, read_sitemap
from sitemapaudit.crawl.redirects import HopWaits, RedirectState, sitemap_redirect
from sitemapaudit.crawl.rules import UrlRules
from sitemapaudit.crawl.run_history import RunHistory
from sitemapaudit.crawl.tree import (
    ChildProblems,
    Decision,
    SitemapRef,
    SitemapTree,
    off_host_sitemap,
)
from sitemapaudit.discovery.robots import RobotsPolicy
from sitemapaudit.facts import SitemapFacts
from sitemapaudit.history.store import STORE_FAILURES
from sitemapaudit.inventory import Inventory, NewEntry
from sitemapaudit.sitemap.records import Problem, SitemapKind
from sitemapaudit.urls import Origin
from sitemapaudit.validation.freshness import NewestLastmod, index_lastmod_problems
from sitemapaudit.words import count_noun

logger = logging.getLogger(__name__)

INDEX_KINDS = {SitemapKind.SITEMAPINDEX.value}


class SitemapReading:
    """The sitemap side of :class:`~sitemapaudit.crawl.run.AuditRun`."""

    origin: Origin
    config: AuditConfig
    stats: Stats
    tree: SitemapTree
    inventory: Inventory
    totals: RunTotals
    hreflang: AlternateSink
    robots: RobotsPolicy | None
    audit_time: datetime
    url_rules: UrlRules
    run_history: RunHistory
    conditional: ConditionalRequests
    held: HeldIndexes
    hops: HopWaits
    _sitemaps_outstanding: int
    _skipped_children: list[SitemapFacts]

    if TYPE_CHECKING:

        def settle(self, facts: SitemapFacts) -> SitemapFacts: ...

        def wake(self) -> None: ...

        def _pending(self, ref: SitemapRef) -> SitemapRef: ...

    def hop_requested(self, target: str) -> None:
        """A sitemap's redirect is followed to ``target`` (see :meth:`HopWaits.requested`)."""
        self.hops.requested(target)

    def unparked(self, refs: list[SitemapRef]) -> list[SitemapRef]:
        """The sitemaps of ``refs`` to request now (see :meth:`HopWaits.unparked`)."""
        return self.hops.unparked(refs)

    def hop_answered(self, url: str) -> SitemapRef | None:
        """The sitemap that waited for the answer of a followed redirect's request to ``url``,
        if any (see :meth:`HopWaits.answered`)."""
        return self.hops.answered(url)

    def redirect_known(self, ref: SitemapRef, target: str) -> bool:
        """Whether a redirect of the sitemap ``ref`` leads to ``target``, a sitemap known to this
        audit (read under its own record): then the redirect is not followed."""
        return self.tree.redirect_known(target, source=ref.url)

    def redirect_ended(
        self,
        ref: SitemapRef,
        redirects: RedirectState,
        target: str,
        waiting: SitemapRef | None = None,
    ) -> tuple[SitemapFacts | None, SitemapRef | None]:
        """The redirects of the sitemap ``ref`` ended at ``target``, which answered. The target
        is a sitemap of its own, read under its own record in the place of ``ref`` (its
        ``found_via``, parent and depth), whichever of the redirect or an index (robots.txt...)
        listing it came first; ``ref`` gets the ``redirect`` finding and lists nothing. Returns
        ``ref``'s facts (``None`` for a common path: only a guess) and the target's ref, to read
        the answer with, or ``None`` when the audit knows the target already (``waiting``,
        the sitemap listed there that waited for this answer, reads it then)."""
        decision = self.tree.redirect_target(target, source=ref.url)
        moved = waiting
        if decision is Decision.FETCH:
            moved = self._pending(
                SitemapRef(
                    target,
                    ref.found_via,
                    ref.parent,
                    ref.depth,
                    ref.lastmod,
                    ref.url,
                    ref.listed_at,
                )
            )
            self.inventory.sitemap_redirected(target, ref.url, ref.parent)
            self._sitemaps_outstanding += 1
        return self.sitemap_redirected(ref, redirects, target), moved

    def sitemap_redirected(
        self, ref: SitemapRef, redirects: RedirectState, target: str
    ) -> SitemapFacts | None:
        """A sitemap that redirects to a sitemap read under its own record: a record of its own
        with the finding, listing nothing, unless it was only a common path tried."""
        self.stats.inc_value("sitemapaudit/sitemaps/redirected_to_known")
        if ref.found_via == "index" and ref.parent and self.tree.loops(ref.parent, target):
            # The index lists a URL that redirects back to it, or to an index above it.
            self.stats.inc_value("sitemapaudit/sitemaps/index_cycle_by_redirect")
            self._late_cycle(ref.parent, ref.url)
        problems = [sitemap_redirect(redirects.chain, target)]
        blocked = self._blocked_hop(ref, redirects, target)
        if blocked is not None:
            problems.append(
                Problem(
                    "robots_blocked",
                    f"redirects to {blocked}, which robots.txt disallows for "
                    f"{self.config.robots_user_agent}: search engines that obey robots.txt do "
                    "not follow it",
                )
            )
        facts = self._not_read(ref, status=redirects.chain[-1]["status"], problems=problems)
        return None if facts is None else self.settle(facts)

    def _blocked_hop(self, ref: SitemapRef, redirects: RedirectState, target: str) -> str | None:
        """The first location on the audited host that a sitemap's redirects lead to and that
        robots.txt disallows, where search engines stop (the audit reads it all the same); not
        when robots.txt disallows the sitemap itself (its own ``robots_blocked`` says so)."""
        robots = self.robots
        if robots is None or (self.origin.owns(ref.url) and not robots.can_fetch(ref.url)):
            return None
        for url in [*(str(hop["url"]) for hop in redirects.chain[1:]), target]:
            if self.origin.owns(url) and not robots.can_fetch(url):
                return url
        return None

    def _not_read(
        self,
        ref: SitemapRef,
        *,
        status: int | None = None,
        error: str | None = None,
        problems: list[Problem] | None = None,
        common_path_stat: str | None = None,
    ) -> SitemapFacts | None:
        """The facts of a sitemap that was requested but not read; ``None`` for a common path
        (only a guess: no record)."""
        self._sitemap_finished(ref)
        if ref.found_via == "common-path":
            self.inventory.sitemap_done(ref.url, {})
            if common_path_stat is not None:
                self.stats.inc_value(common_path_stat)
            return None
        return SitemapFacts(
            url=ref.url,
            found_via=ref.found_via,
            parent=ref.parent,
            depth=ref.depth,
            fetched=status is not None,
            status=status,
            error=error,
            problems=list(problems or []),
        )

    def sitemap_failed(
        self,
        ref: SitemapRef,
        *,
        status: int | None = None,
        error: str | None = None,
        problems: list[Problem] | None = None,
        retry_after: dict[str, Any] | None = None,
    ) -> SitemapFacts | None:
        """A sitemap that could not be fetched (error) or answered with an error status
        (``retry_after``: see :attr:`SitemapFacts.retry_after`).

        A common path that is not there is no finding: it was only a guess (``None``); one that
        answers with a server error gets a note (a sitemap generator may fail there).
        """
        if ref.found_via == "common-path" and status is not None and status >= 500:
            self.totals.notes.append(
                f"{ref.url}, a common sitemap path, answered with status {status}: if a sitemap "
                "is generated there, its generator fails"
            )
        facts = self._not_read(
            ref,
            status=status,
            error=error,
            problems=problems,
            common_path_stat="sitemapaudit/common_paths/missing",
        )
        if facts is None:
            return None
        facts.retry_after = retry_after
        self.stats.inc_value("sitemapaudit/sitemaps/failed")
        if error is None and facts.problems:  # a redirect not followed: why, not its status
            problem = facts.problems[0]
            logger.warning("sitemap %s not read: %s: %s", ref.url, problem.code, problem.message)
        else:
            logger.warning("sitemap %s failed: %s", ref.url, error or f"HTTP {status}")
        return self.settle(facts)

    def read_sitemap(
        self,
        ref: SitemapRef,
        status: int,
        body: bytes,
        *,
        url: str | None = None,
        gzip_encoded: bool = False,
        gzip_undone: bool = False,
    ) -> tuple[SitemapFacts | None, list[SitemapRef]]:
        """Read one fetched sitemap: stream its URLs into the inventory, decide its children.

        ``url`` is where the body came from (``ref.url``): the base of the relative links of
        an Atom feed. ``gzip_encoded``: the response declared ``Content-Encoding: gzip``.
        ``gzip_undone``: ``body`` is what is left once codings with gzip among them were
        undone (the body as sent was gzip data).
        """
        children = ChildProblems()
        child_refs: list[SitemapRef] = []
        skipped: list[SitemapFacts] = []
        self.inventory.sitemap_reading(ref.url)
        if ref.found_via == "common-path":
            self.tree.count()  # before its children take theirs (given back if no sitemap)
        listings = self.conditional.listing_recorder(ref.url)
        newest = self._newest(ref)
        facts = read_sitemap(
            body,
            SitemapFacts(
                url=ref.url,
                found_via=ref.found_via,
                parent=ref.parent,
                depth=ref.depth,
                status=status,
            ),
            inventory=self.inventory,
            rules=self.url_rules.of_sitemap(ref.url, ref.moved_from or url or ref.url),
            on_child=lambda loc, lastmod: self._child(
                ref, loc, children, child_refs, skipped, lastmod=lastmod
            ),
            read_limit=self.config.sitemap_read_limit,
            now=self.audit_time,
            near_limit_fraction=self.config.near_limit_fraction,
            hreflang=self.hreflang,
            on_listing=listings.add if listings is not None else None,
            base_url=url or ref.url,
            newest=newest,
            gzip_encoded=gzip_encoded,
        )
        facts.gzip = facts.gzip or gzip_undone
        if listings is not None:
            listings.close()
        facts.problems.extend(children.problems())
        facts.problems.extend(self._index_lastmod(ref, newest))
        if facts.kind in INDEX_KINDS and ref.found_via == "index":
            facts.problems.append(
                Problem("nested_index", f"this index is listed by the index {ref.parent}")
            )
        self.hreflang.flush()
        self._skipped_children = [self.settle(child) for child in skipped]
        self._sitemap_finished(ref)
        if (
            ref.found_via == "common-path"
            and facts.kind == SitemapKind.UNKNOWN.value
            # Broken gzip data may be a sitemap that cannot be read: that is worth knowing.
            and not any(problem.code == "gzip_invalid" for problem in facts.problems)
        ):
            self.tree.release()
            self.inventory.sitemap_done(ref.url, {})
            self.stats.inc_value("sitemapaudit/common_paths/not_a_sitemap")
            return None, child_refs
        self.settle(facts)
        self._hold(facts, child_refs)
        self.stats.inc_value("sitemapaudit/sitemaps/read")
        self.stats.inc_value("sitemapaudit/listings", facts.url_count)
        logger.info(
            "sitemap %s: %s, %s, %s, %s",
            ref.url,
            facts.kind,
            count_noun(facts.url_count, "URL"),
            count_noun(facts.child_count, "child sitemap"),
            # (Those of checks switched off are in no record: not counted here either.)
            count_noun(
                sum(p.code not in self.config.disabled_checks for p in facts.problems), "problem"
            ),
        )
        return facts, child_refs

    def conditional_headers(self, url: str) -> tuple[dict[str, str], int | None]:
        """Request headers that let the server answer 304 if the sitemap has not changed since
        the previous run, and that run's id."""
        return self.conditional.headers(url)

    def rejudge_due(self, url: str, run_id: int, *, log: bool = True) -> bool | None:
        """Whether a sitemap run ``run_id`` read is requested without validators, to be judged
        again (see :meth:`ConditionalRequests.rejudge_due`)."""
        return self.conditional.rejudge_due(url, run_id, log=log)

    def keep_not_modified(
        self, url: str, etag: str | None, last_modified: str | None, previous_run: int
    ) -> bool:
        """A sitemap answered 304: keep its validators, and say whether run ``previous_run``'s
        entries can stand for the body (see :meth:`ConditionalRequests.keep_not_modified`)."""
        return self.conditional.keep_not_modified(url, etag, last_modified, previous_run)

    def remember_validators(
        self, url: str, etag: str | None, last_modified: str | None, rejudge_after: str | None
    ) -> None:
        """Keep a sitemap's validators (see :meth:`ConditionalRequests.remember_validators`)."""
        self.conditional.remember_validators(url, etag, last_modified, rejudge_after)

    def reuse_sitemap(
        self, ref: SitemapRef, previous_run: int
    ) -> tuple[SitemapFacts | None, list[SitemapRef]]:
        """A 304 Not Modified: the previous run's entries of this sitemap stand for its body,
        and its findings and facts (kind, gzip, bytes) those the run that read the body found
        (see :func:`carried_over`).

        Should the history fail while they are read, the entries read until then count, and
        the sitemap is reported as ``fetch_failed`` (its body is known to no one)."""
        history = self.run_history.store
        assert history is not None
        failures: list[Exception] = []
        children = ChildProblems()
        child_refs: list[SitemapRef] = []
        skipped: list[SitemapFacts] = []
        self.inventory.sitemap_reading(ref.url)
        if ref.found_via == "common-path":
            self.tree.count()  # a guess that held a sitemap last time, and still does
        listings = self.conditional.listing_recorder(ref.url)
        newest = self._newest(ref)
        url_count = child_count = 0

        def entries() -> Iterator[NewEntry]:
            nonlocal url_count, child_count
            try:
                for loc, lastmod, fmt in history.listings(previous_run, ref.url):
                    if listings is not None:
                        listings.add(loc, lastmod, fmt)
                    if fmt == CHILD_FORMAT:
                        child_count += 1
                        self._child(ref, loc, children, child_refs, skipped, lastmod=lastmod)
                    else:
                        url_count += 1
                        if newest is not None and lastmod is not None:
                            newest.add(lastmod, fmt)
                        yield NewEntry(loc, lastmod, fmt, self.url_rules.codes(loc, ref.url))
            except STORE_FAILURES as exc:
                failures.append(exc)

        self.inventory.add_entries(ref.url, entries())
        if listings is not None:
            listings.close()
        before: dict[str, Any] = {}
        if not failures:
            try:
                before = history.sitemap_record(previous_run, ref.url) or {}
            except STORE_FAILURES as exc:
                failures.append(exc)
        error = None
        if failures:
            self.run_history.failed(failures[0])
            error = (
                f"not modified (304), but the entries run {previous_run} kept of it could not "
                f"be read from the history ({self.run_history.error}); "
                f"{count_noun(url_count, 'URL')} "
                f"and {count_noun(child_count, 'child sitemap')} were read before that"
            )
        carried, read_run = carried_over(before, previous_run)
        facts = SitemapFacts(
            url=ref.url,
            found_via=ref.found_via,
            parent=ref.parent,
            depth=ref.depth,
            fetched=True,
            status=304,
            kind=str(before.get("kind") or "unknown"),
            gzip=bool(before.get("gzip")),
            bytes=int(before.get("bytes") or 0),
            url_count=url_count,
            child_count=child_count,
            problems=[
                *carried,
                *children.problems(),
                *self._index_lastmod(ref, newest),
            ],
            not_modified=True,
            error=error,
            read_run=read_run,
        )
        self._skipped_children = [self.settle(child) for child in skipped]
        self._sitemap_finished(ref)
        self.settle(facts)
        self._hold(facts, child_refs)
        self.stats.inc_value("sitemapaudit/sitemaps/not_modified")
        self.stats.inc_value("sitemapaudit/listings", url_count)
        logger.info(
            "sitemap %s: not modified since run %d, %s and %s reused",
            ref.url,
            previous_run,
            count_noun(url_count, "URL"),
            count_noun(child_count, "child sitemap"),
        )
        return facts, child_refs

    def take_skipped_children(self) -> list[SitemapFacts]:
        skipped, self._skipped_children = self._skipped_children, []
        return skipped

    def _newest(self, ref: SitemapRef) -> NewestLastmod | None:
        """What tracks a sitemap's newest URL lastmod, when its index gave it a lastmod."""
        if ref.lastmod is None:  # (only an index gives one)
            return None
        # (A lastmod of the sitemap is in the future past the moment it is read.)
        return NewestLastmod(datetime.now(UTC))

    def _index_lastmod(self, ref: SitemapRef, newest: NewestLastmod | None) -> list[Problem]:
        """The findings of the lastmod the index gave this sitemap (none without one)."""
        if ref.lastmod is None or newest is None:
            return []
        return index_lastmod_problems(
            ref.lastmod,
            ref.parent,
            newest.newest(),
            now=self.audit_time if ref.listed_at is None else datetime.fromisoformat(ref.listed_at),
            tolerance_s=self.config.lastmod_tolerance,
        )

    def _child(
        self,
        parent: SitemapRef,
        loc: str,
        problems: ChildProblems,
        refs: list[SitemapRef],
        skipped: list[SitemapFacts],
        *,
        lastmod: str | None = None,
    ) -> None:
        depth = parent.depth + 1
        decision = self.tree.consider(loc, depth=depth, parent=parent.url)
        if decision is Decision.FETCH:
            listed_at = None if lastmod is None else datetime.now(UTC).isoformat()
            refs.append(
                self._pending(SitemapRef(loc, "index", parent.url, depth, lastmod, None, listed_at))
            )
            self._sitemaps_outstanding += 1
        elif decision is Decision.KNOWN:
            pass
        elif decision is Decision.OFF_HOST:
            message = off_host_sitemap(loc)
            skipped.append(skipped_sitemap(loc, "index", parent.url, "off_host", message))
        elif decision is Decision.SEEN:
            if self.tree.loops(parent.url, loc):
                problems.add("index_cycle", loc)
            else:
                # Listed by another index too, by robots.txt, or twice: read once, and fine.
                self.stats.inc_value("sitemapaudit/sitemaps/listed_again")
        elif decision is Decision.TOO_DEEP:
            problems.add("index_too_deep", loc)
        elif decision is Decision.CAPPED:
            problems.add("sitemap_limit", loc)
        else:
            problems.add("invalid_url", loc)

    def _sitemap_finished(self, ref: SitemapRef) -> None:
        self._sitemaps_outstanding -= 1
        self.totals.sitemaps += 1
        if ref.found_via == "index" and ref.parent is not None:
            self.held.answered(ref.parent, ref.url)
        self.wake()

    # -- records of indexes that wait for their children's first answers -------------------
    def _hold(self, facts: SitemapFacts, children: list[SitemapRef]) -> None:
        """Keep the record of an index until each child it had fetched answered (see
        :meth:`HeldIndexes.hold`)."""
        self.held.hold(facts, children)

    def reportable(self, facts: SitemapFacts | None) -> SitemapFacts | None:
        """``facts`` to send now, or ``None`` when the record waits (see :meth:`_hold`)."""
        return self.held.reportable(facts)

    def _late_cycle(self, index: str, child: str) -> None:
        """``index`` lists ``child``, which redirects back to it or to an index above it (see
        :meth:`HeldIndexes.late_cycle`)."""
        self.held.late_cycle(index, child)

    def take_released(self, *, all_held: bool = False) -> list[SitemapFacts]:
        """The records of indexes whose children all answered; ``all_held``: every record
        still waiting too (the audit is over, or stopped)."""
        return self.held.take_released(all_held=all_held)


def skipped_sitemap(
    url: str, via: str, parent: str | None, code: str, message: str
) -> SitemapFacts:
    """The facts of a sitemap not requested, with the finding that says why."""
    return SitemapFacts(url=url, found_via=via, parent=parent, problems=[Problem(code, message)])
