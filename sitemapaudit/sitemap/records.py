"""Typed records produced by the sitemap readers.

These are the contract between the pure parsing code and the crawl: a reader takes bytes and
yields :class:`UrlEntry` and :class:`ChildEntry` objects one at a time, and collects
:class:`Problem` objects for everything that is wrong with the document itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# The protocol's limits (sitemaps.org): at most 50,000 entries and 50 MiB uncompressed.
# What is stripped around a location or date: ASCII whitespace only (XML Schema's whitespace
# for an anyURI or a date is four of them; robots.txt parsers and the WHATWG URL parser trim no
# more). A no-break space or another Unicode space is part of the value, as it is for a browser.
ASCII_WHITESPACE = " \t\n\r\x0b\x0c"
PROTOCOL_MAX_ENTRIES = 50_000
# The namespace of urlset and sitemapindex elements.
SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
PROTOCOL_MAX_BYTES = 52_428_800


class SitemapKind(StrEnum):
    """What a document turned out to be, whatever it was served as."""

    URLSET = "urlset"
    SITEMAPINDEX = "sitemapindex"
    TEXT = "text"
    RSS = "rss"
    ATOM = "atom"
    UNKNOWN = "unknown"


@dataclass(slots=True, frozen=True)
class Problem:
    """Something wrong with a document, as a finding code plus a human-readable message."""

    code: str
    message: str
    line: int | None = None
    column: int | None = None

    def describe(self) -> str:
        """The message with its position, as it goes into a report's ``errors`` list."""
        if self.line is None:
            return self.message
        if self.column is None:
            return f"line {self.line}: {self.message}"
        return f"line {self.line}, column {self.column}: {self.message}"


@dataclass(slots=True, frozen=True)
class UrlEntry:
    """One page listed by a urlset, text sitemap or feed.

    ``loc`` is the value as listed with surrounding whitespace stripped and entities decoded;
    ``lastmod`` is the value as written (stripped), or ``None`` when absent;
    ``lastmod_format`` says how to read it: ``"w3c"`` (sitemaps), ``"rfc822"`` (an RSS
    ``pubDate``) or ``"rfc3339"`` (an Atom ``updated``, read as a W3C Datetime and judged as
    the RFC 3339 date-time Atom requires).
    """

    loc: str
    lastmod: str | None = None
    line: int | None = None
    lastmod_format: str = "w3c"


@dataclass(slots=True, frozen=True)
class ChildEntry:
    """One child sitemap listed by a sitemap index."""

    loc: str
    lastmod: str | None = None
    line: int | None = None


Entry = UrlEntry | ChildEntry
