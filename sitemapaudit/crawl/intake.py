"""Reading one sitemap document: decompress (capped), validate, stream entries onward.

Shared by the audit crawl and the ``validate`` command: URL entries stream into the
inventory, child sitemap locations go to a callback, and the document's own problems (from the
reader and the validator) come back in a :class:`SitemapFacts`.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Protocol

from sitemapaudit.facts import SitemapFacts
from sitemapaudit.inventory import NewEntry
from sitemapaudit.sitemap.body import BodyStream
from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import (
    PROTOCOL_MAX_BYTES,
    PROTOCOL_MAX_ENTRIES,
    ChildEntry,
    Problem,
    SitemapKind,
    UrlEntry,
)
from sitemapaudit.validation import (
    check_encoding,
    check_limits,
    check_unread_encoding,
    iter_alternates,
    judge_document,
)
from sitemapaudit.validation.freshness import NewestLastmod

# In stored listings, the lastmod format of a child sitemap of an index.
CHILD_FORMAT = "sitemap"

VALIDATED_KINDS = (SitemapKind.URLSET, SitemapKind.SITEMAPINDEX)
# Sitemaps read without a schema: a text list of URLs, an RSS or Atom feed.
LISTED_KINDS = (SitemapKind.TEXT, SitemapKind.RSS, SitemapKind.ATOM)


class EntrySink(Protocol):
    """Where the URL entries of a sitemap go (the inventory, local or shared)."""

    def add_entries(
        self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = ...
    ) -> int: ...


class AlternateSink(Protocol):
    """Where the hreflang alternates of the sitemaps go (see ``HreflangGraph``)."""

    def add(self, loc: str, alternates: Iterable[tuple[str, str]], sitemap: str) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def read_sitemap(
    body: bytes,
    facts: SitemapFacts,
    *,
    inventory: EntrySink,
    rules: Callable[[str], tuple[str, ...]],
    on_child: Callable[[str, str | None], None],
    read_limit: int,
    now: datetime,
    near_limit_fraction: float,
    hreflang: AlternateSink | None = None,
    on_listing: Callable[[str, str | None, str], None] | None = None,
    base_url: str | None = None,
    newest: NewestLastmod | None = None,
    gzip_encoded: bool = False,
) -> SitemapFacts:
    """Read ``body`` (as downloaded) into ``facts``; entries go to ``inventory`` as they stream.

    A document up to the protocol's 50 MiB is decompressed once and also validated; a larger
    one is only streamed (it is ``too_large`` whatever else is wrong with it). ``base_url`` is
    the URL the body came from, after redirects (relative Atom links are resolved against it);
    ``None`` for a local file. ``newest`` is fed the lastmod of every URL entry.
    ``gzip_encoded``: the response declared ``Content-Encoding: gzip`` (a local file does not).
    A validated document whose findings would change with the time (``news_too_old``,
    ``video_expired``) sets ``facts.rejudge_after``.
    """
    stream = BodyStream(
        body, limit=min(PROTOCOL_MAX_BYTES, read_limit) + 1, gzip_encoded=gzip_encoded
    )
    # BytesIO grows one buffer in place and getvalue() hands that buffer over without a copy
    # (a bytearray plus bytes(bytearray) held the document twice).
    buffer = io.BytesIO()
    for chunk in stream:
        buffer.write(chunk)
    data: bytes | None = None
    if stream.truncated or stream.problems:
        # Too large to validate, or broken gzip: only stream it (the reader reports both).
        del buffer
        reader = SitemapReader(
            body, read_limit=read_limit, base_url=base_url, gzip_encoded=gzip_encoded
        )
    else:
        data = buffer.getvalue()
        del buffer
        reader = SitemapReader(data, read_limit=read_limit, base_url=base_url)

    def url_entries() -> Iterator[NewEntry]:
        for entry in reader:
            if isinstance(entry, UrlEntry):
                if on_listing is not None:
                    on_listing(entry.loc, entry.lastmod, entry.lastmod_format)
                if newest is not None and entry.lastmod is not None:
                    newest.add(entry.lastmod, entry.lastmod_format)
                yield NewEntry(entry.loc, entry.lastmod, entry.lastmod_format, rules(entry.loc))
            elif isinstance(entry, ChildEntry):
                if on_listing is not None:
                    on_listing(entry.loc, entry.lastmod, CHILD_FORMAT)
                on_child(entry.loc, entry.lastmod)

    inventory.add_entries(facts.url, url_entries())
    facts.fetched = True
    facts.kind = reader.kind.value
    facts.gzip = stream.gzip or reader.gzip
    facts.bytes = reader.bytes
    facts.url_count = reader.url_count
    facts.child_count = reader.child_count
    facts.problems.extend(reader.problems)
    if not any(p.code == "too_large" for p in facts.problems):
        _judge_size(facts, stream, reader, data, read_limit)
    over_limit = max(reader.url_count, reader.child_count) > PROTOCOL_MAX_ENTRIES
    if data is not None and reader.kind in VALIDATED_KINDS:
        # Past the entry limit too (the reader reports the count): a well-formed document goes
        # chunk by chunk as always, but its whole tree is never built, as its size is bounded
        # by the 50 MiB limit only; one that would need it gets the findings of its text.
        judged = judge_document(
            data, now=now, near_limit_fraction=near_limit_fraction, whole_tree=not over_limit
        )
        facts.problems.extend(judged.problems)
        if judged.rejudge_after is not None:
            facts.rejudge_after = judged.rejudge_after.astimezone(UTC).isoformat()
    elif data is not None and reader.kind in LISTED_KINDS:
        # A text list or a feed has no schema, but the protocol's limits are the same.
        facts.problems.extend(
            check_limits(reader.url_count, reader.bytes, near_limit_fraction, "urlset")
        )
        if reader.kind is not SitemapKind.TEXT:
            # A feed is XML, and sitemaps are UTF-8 whatever their format (a text list has
            # its own rule, in the reader).
            facts.problems.extend(check_encoding(data))
    elif data is not None and reader.kind is SitemapKind.UNKNOWN:
        facts.problems.extend(check_unread_encoding(data))
    if hreflang is not None and reader.kind is SitemapKind.URLSET:
        # Past the entry limit too, and past the size limit or a broken gzip (read again as it
        # inflates, up to where the reader stopped): its pages are still listed, and the
        # alternates of other sitemaps that point at them are judged against theirs.
        document = (
            data
            if data is not None
            else BodyStream(body, limit=read_limit, checked=True, gzip_encoded=gzip_encoded)
        )
        for loc, alternates in iter_alternates(document):
            hreflang.add(loc, alternates, facts.url)
    return facts


def _judge_size(
    facts: SitemapFacts,
    stream: BodyStream,
    reader: SitemapReader,
    data: bytes | None,
    read_limit: int,
) -> None:
    """``too_large`` where the reader did not find it: decompressed past the protocol's limit
    (the reader may have stopped earlier, at an error, while the decompression went on to the
    limit), or decompressed whole a byte or more past it with the reader stopped before."""
    over = read_limit >= PROTOCOL_MAX_BYTES or reader.bytes > PROTOCOL_MAX_BYTES
    if stream.truncated and over:
        facts.problems.append(
            Problem(
                "too_large",
                f"over {PROTOCOL_MAX_BYTES:,} bytes uncompressed (the protocol's limit)",
            )
        )
    elif data is not None and len(data) > PROTOCOL_MAX_BYTES:
        facts.bytes = len(data)
        facts.problems.append(
            Problem(
                "too_large",
                f"the uncompressed document is {len(data):,} bytes; the protocol allows at most "
                f"{PROTOCOL_MAX_BYTES:,} bytes (50 MiB)",
            )
        )
