"""Turning one page response into a :class:`FetchOutcome` (no Scrapy imports)."""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from sitemapaudit.facts import FetchOutcome
from sitemapaudit.page import page_facts
from sitemapaudit.page.head import head_end_offset
from sitemapaudit.sitemap.body import GZIP_MAGIC, BodyStream

# Bytes of a (decompressed) page read when looking for the end of <head>.
HEAD_READ_LIMIT = 2 * 1024 * 1024


def now_iso() -> str:
    """The current UTC time to the second (formatted once per second, not once per page)."""
    return _format_second(int(time.time()))


@functools.lru_cache(maxsize=1)
def _format_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def page_head_bytes(body: bytes) -> bytes:
    """The start of a page, decompressed if gzip, up to the end of <head> (bounded)."""
    if not body.startswith(GZIP_MAGIC):
        return body[:HEAD_READ_LIMIT]
    parts: list[bytes] = []
    for chunk in BodyStream(body, limit=HEAD_READ_LIMIT):
        parts.append(chunk)
        if head_end_offset(b"".join(parts[-2:])) is not None:
            break
    return b"".join(parts)


def outcome_from_response(
    *,
    url: str,
    status: int,
    headers: Mapping[str, Sequence[str]],
    body: bytes,
    outcome: FetchOutcome,
    user_agent: str,
) -> FetchOutcome:
    """Fill ``outcome`` with the final response's status, dates and indexing signals."""
    outcome.fetched = True
    outcome.status = status
    outcome.final_url = url
    outcome.checked_at = now_iso()
    outcome.last_modified = _first(headers, "last-modified")
    outcome.date = _first(headers, "date")
    outcome.content_type = _first(headers, "content-type")
    if 200 <= status < 300:
        facts = page_facts(url, headers, page_head_bytes(body), user_agent=user_agent.lower())
        outcome.noindex = list(facts.noindex)
        outcome.canonical = facts.canonical
        outcome.canonical_source = facts.canonical_source
    return outcome


def _first(headers: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None
