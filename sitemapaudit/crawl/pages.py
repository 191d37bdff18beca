"""Turning one page response into a :class:`FetchOutcome` (no Scrapy imports)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sitemapaudit.crawl.redirects import RedirectState
from sitemapaudit.facts import FetchOutcome
from sitemapaudit.page import XML_PAGE_TYPES, content_type_of, media_type, page_facts
from sitemapaudit.page.coding import (
    START_BYTES,
    CodingError,
    body_coding,
    corrupt_data,
    gzip_alone,
    unreadable_start,
    unsupported,
)
from sitemapaudit.page.coding import decoder as coding_decoder
from sitemapaudit.page.head import HeadEnd
from sitemapaudit.page.stream import HEAD_READ_LIMIT
from sitemapaudit.page.xhtml import XmlHeadEnd
from sitemapaudit.sitemap.body import BodyStream


def now_iso() -> str:
    """The current UTC time to the second (formatted once per second, not once per page)."""
    return _format_second(int(time.time()))


@functools.lru_cache(maxsize=1)
def _format_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def page_head_bytes(
    body: bytes, *, whole: bool = True, coding: str | None = None, xml: bool = False
) -> tuple[bytes, str | None]:
    """The start of a page up to the end of <head> (bounded), decoded as its
    ``Content-Encoding`` says (``coding``, from :func:`sitemapaudit.page.coding.body_coding`),
    as browsers decode it; and what makes it unreadable when that shows on the way: corrupt
    data, a coding the audit cannot decode, or (for a ``whole`` body, not a download stopped
    after the head) data that ends before its end. No bytes are returned then when nothing
    could be decoded.

    Browsers read a body as it is when no coding is declared, so gzip data sent without
    ``Content-Encoding: gzip`` is unreadable to them (and to search engines), as is a body
    declared ``gzip`` alone that is not gzip data. An empty body has nothing to decode,
    whatever its coding. ``xml``: the page is read as XML (XHTML), whose head ends by XML's
    rules."""
    if not body:
        return b"", None
    unreadable = unreadable_start(coding, body[:START_BYTES])
    if unreadable is not None:
        return b"", unreadable
    if coding is None:
        return body[:HEAD_READ_LIMIT], None
    if not gzip_alone(coding):
        return _decoded_head(body, coding, whole=whole, xml=xml)
    if len(body) < START_BYTES:  # nothing decodable yet
        return b"", _GZIP_CUT if whole else None
    parts: list[bytes] = []
    head_end = XmlHeadEnd() if xml else HeadEnd()
    stream = BodyStream(body, limit=HEAD_READ_LIMIT)
    for chunk in stream:
        parts.append(chunk)
        if head_end.feed(chunk) is not None:
            break
    if stream.corrupt is not None:
        return b"".join(parts), stream.corrupt
    if whole and stream.cut_short:
        return b"".join(parts), _GZIP_CUT
    return b"".join(parts), None


_GZIP_CUT = "the gzip data is cut short (it ends before its trailer)"


_CHUNK = 65536


def _decoded_head(body: bytes, coding: str, *, whole: bool, xml: bool) -> tuple[bytes, str | None]:
    decoder = coding_decoder(coding)
    if decoder is None:
        return b"", unsupported(coding)
    parts: list[bytes] = []
    head_end = XmlHeadEnd() if xml else HeadEnd()
    seen = 0
    view = memoryview(body)
    start = 0
    try:
        while seen < HEAD_READ_LIMIT:
            data = bytes(view[start : start + _CHUNK]) if not decoder.pending else b""
            start += len(data)
            chunk = decoder.decompress(data, min(_CHUNK, HEAD_READ_LIMIT - seen))
            seen += len(chunk)
            parts.append(chunk)
            if head_end.feed(chunk) is not None or decoder.finished:
                break
            if not data and not chunk:
                # All input taken and nothing more comes out, yet the stream has not ended.
                if whole:
                    return b"".join(parts), f"the {coding} data is cut short"
                break
    except CodingError as exc:
        return b"".join(parts), corrupt_data(coding, exc)
    return b"".join(parts), None


def redirect_outcome(state: RedirectState) -> FetchOutcome:
    """A listed URL's outcome so far: the redirects of its request."""
    # Each hop keeps its Location: the checks tell a loop from a chain past the hop limit by
    # the last one (the report's chain has only the url and status of each hop).
    return FetchOutcome(
        redirect_chain=[dict(hop) for hop in state.chain],
        redirect_loop=state.loop,
        redirect_stopped=state.stopped,
        redirect_broken=state.broken,
        redirect_blocked=state.blocked_target,
    )


def outcome_from_response(
    *,
    url: str,
    status: int,
    headers: Mapping[str, Sequence[str]],
    body: bytes,
    outcome: FetchOutcome,
    user_agent: str,
    stopped: bool = False,
) -> FetchOutcome:
    """Fill ``outcome`` with the final response's status, dates and indexing signals."""
    outcome.fetched = True
    outcome.status = status
    outcome.final_url = url
    outcome.checked_at = now_iso()
    outcome.last_modified = _first(headers, "last-modified")
    outcome.date = _first(headers, "date")
    outcome.content_type = content_type_of(headers.get("content-type") or [])
    if 200 <= status < 300:
        coding = body_coding(headers.get("content-encoding"))
        kind = None if outcome.content_type is None else media_type(outcome.content_type)
        xml = kind in XML_PAGE_TYPES
        head, corrupt = b"", None
        # A response that is no page (a PDF, an image, a gzip file) is judged by its headers
        # alone; one without a Content-Type may sniff as HTML.
        if kind is None or kind == "text/html" or xml:
            head, corrupt = page_head_bytes(body, whole=not stopped, coding=coding, xml=xml)
        if corrupt is not None:
            # Browsers refuse such a page (a decoding error), and search engines cannot read it.
            if coding is None:
                outcome.error = f"the page cannot be read: {corrupt}"
            else:
                outcome.error = f"the page's {coding}-encoded body cannot be decoded: {corrupt}"
            outcome.fetched = False
        facts = page_facts(url, headers, head, user_agent=user_agent.lower())
        outcome.noindex = list(facts.noindex)
        outcome.canonical = facts.canonical
        outcome.canonical_source = facts.canonical_source
        outcome.canonical_others = list(facts.canonical_others)
        if facts.refresh is not None:
            source, delay, target = facts.refresh
            outcome.refresh = {"source": source, "delay": delay, "url": target}
        if facts.head_broken is not None:
            start, ignored = facts.head_broken
            outcome.head_broken = {"start": start, "ignored": list(ignored)}
        elif corrupt is None and not facts.head_complete and len(head) >= HEAD_READ_LIMIT:
            # The head runs on past what is read: a robots meta or canonical after is unseen
            # (Google reads the first 15 MB of an HTML file).
            outcome.head_too_large = HEAD_READ_LIMIT
        if facts.unavailable_after:
            _expire(outcome, facts.unavailable_after, datetime.now(UTC))
    return outcome


def _expire(outcome: FetchOutcome, dates: tuple[tuple[str, datetime], ...], now: datetime) -> None:
    """A source whose ``unavailable_after`` date has passed at ``now`` (when the page was
    checked) forbids indexing as a noindex does (Google no longer shows the page)."""
    for source, when in dates:
        if when <= now and source not in outcome.noindex:
            outcome.noindex.append(source)
            outcome.unavailable_after[source] = when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _first(headers: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


@dataclass(slots=True)
class PendingPage:
    """The final response of a listed URL, waiting in a :class:`PageQueue` to be read."""

    url_id: int
    blocked: bool
    url: str
    status: int
    headers: Mapping[str, Sequence[str]]
    body: bytes
    outcome: FetchOutcome
    """The outcome so far (the redirect chain); :meth:`PageQueue.read` fills in the rest."""
    stopped: bool = False
    """Whether the download was stopped (head-only): the body is cut short on purpose."""


class PageQueue:
    """Final page responses, read a batch at a time.

    A page read as soon as its response arrives, between Scrapy's own work on the other
    responses, takes about twice as long as one read right after the page before it: the
    reading code and its regular expressions are no longer in the processor's caches. So pages
    wait until ``size`` of them have arrived, or their bodies hold ``max_bytes`` (the queue
    never holds more than that and one body), or the first of them has waited ``max_wait``
    seconds, and are then read one after another.
    """

    def __init__(
        self,
        user_agent: str,
        *,
        size: int = 32,
        max_bytes: int = 1 << 20,
        max_wait: float = 0.05,
    ) -> None:
        self.user_agent = user_agent
        self.size = size
        self.max_bytes = max_bytes
        self.max_wait = max_wait
        self._pages: list[PendingPage] = []
        self._bytes = 0
        self._since = 0.0

    def __len__(self) -> int:
        return len(self._pages)

    def add(self, page: PendingPage, now: float) -> bool:
        """Queue a page; whether the batch is full (time to :meth:`read` it)."""
        pages = self._pages
        if not pages:
            self._since = now
        pages.append(page)
        self._bytes += len(page.body)
        return len(pages) >= self.size or self._bytes >= self.max_bytes

    def clear(self) -> int:
        """Drop the waiting pages unread (the audit stopped); how many there were."""
        count = len(self._pages)
        self._pages, self._bytes = [], 0
        return count

    def wait_left(self, now: float) -> float | None:
        """Seconds until the waiting pages are due (0 when they are); ``None`` when none wait."""
        if not self._pages:
            return None
        return max(0.0, self._since + self.max_wait - now)

    def read(
        self, on_error: Callable[[PendingPage, Exception], None] | None = None
    ) -> list[PendingPage]:
        """Take every waiting page, its ``outcome`` filled from its response, in arrival order.

        A page whose reading raises (a bug) is handed to ``on_error`` and left out, so that it
        does not take the other pages of its batch with it; without ``on_error`` the exception
        propagates."""
        pages, self._pages = self._pages, []
        self._bytes = 0
        read: list[PendingPage] = []
        for page in pages:
            try:
                outcome_from_response(
                    url=page.url,
                    status=page.status,
                    headers=page.headers,
                    body=page.body,
                    outcome=page.outcome,
                    user_agent=self.user_agent,
                    stopped=page.stopped,
                )
            except Exception as exc:
                if on_error is None:
                    raise
                on_error(page, exc)
                continue
            read.append(page)
        return read
