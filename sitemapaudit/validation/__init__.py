"""Offline, detailed validation of XML sitemaps (no Scrapy imports).

:func:`validate_document` checks one decompressed urlset or sitemapindex against the official
XSDs (shipped in the package, never fetched) and against the protocol's and Google's further
rules; :class:`HreflangGraph` checks hreflang reciprocity across all sitemaps of an audit.
:data:`CODES` lists every finding code with its severity and meaning. :func:`judge_document`
also says until when the findings that depend on the time of validation hold.
"""

from __future__ import annotations

from typing import Final

from sitemapaudit.validation.document import (
    Judgement,
    check_encoding,
    check_limits,
    check_unread_encoding,
    judge_document,
    validate_document,
)
from sitemapaudit.validation.hreflang import HreflangGraph, is_valid_hreflang, iter_alternates
from sitemapaudit.validation.schemas import SchemaLoadError, load_schema, schema_files

CODES: Final[dict[str, tuple[str, str]]] = {
    "schema_invalid": (
        "error",
        "The document violates the sitemap XSD (or an extension's XSD).",
    ),
    "namespace_invalid": (
        "error",
        "The root element is not in the http://www.sitemaps.org/schemas/sitemap/0.9 namespace.",
    ),
    "encoding_invalid": (
        "error",
        "The document is not UTF-8: another declared encoding, UTF-16, or invalid bytes.",
    ),
    "unescaped_characters": (
        "error",
        "A raw '&', '<' or ']]>' appears where XML requires an entity such as &amp;.",
    ),
    "entity_reference": (
        "warning",
        "The document uses entity references, which are never expanded.",
    ),
    "near_limit": (
        "warning",
        "The document is close to the 50,000-entry or 50 MiB protocol limit.",
    ),
    "unknown_extension": (
        "warning",
        "Extension elements from a namespace without a known schema were not validated.",
    ),
    "too_many_images": (
        "error",
        "A <url> has more than 1,000 image:image elements.",
    ),
    "news_too_many": (
        "error",
        "A news sitemap lists more than 1,000 news:news entries, or a <url> more than one.",
    ),
    "news_too_old": (
        "warning",
        "A news:publication_date is more than two days old.",
    ),
    "news_date_invalid": (
        "warning",
        "A news:publication_date is a time without a time zone, or a date with one: the XSD "
        "accepts both, W3C Datetime neither.",
    ),
    "news_missing_field": (
        "error",
        "A news:name or news:title is empty: Google requires both.",
    ),
    "invalid_url": (
        "error",
        "An image:loc, video:thumbnail_loc, video:content_loc, video:player_loc or hreflang "
        "xhtml:link href is not an absolute http(s) URL (or is empty).",
    ),
    "video_missing_field": (
        "error",
        "A video:video lacks thumbnail_loc, title, description, or content_loc/player_loc.",
    ),
    "video_url_is_page": (
        "warning",
        "A video:content_loc or video:player_loc is the page's own <loc>, not the video or its "
        "player.",
    ),
    "video_duration_invalid": (
        "warning",
        "A video:duration is not a whole number of seconds from 1 to 28800, Google's range.",
    ),
    "video_expired": (
        "warning",
        "A video:expiration_date has passed: Google no longer shows the video.",
    ),
    "hreflang_invalid": (
        "error",
        "An xhtml:link alternate has a hreflang that is not BCP 47 or x-default, or whose "
        "language is not ISO 639-1 or region not ISO 3166-1 alpha-2, or no href.",
    ),
    "hreflang_unsupported": (
        "warning",
        "An xhtml:link alternate's hreflang is valid, but its language has three letters and no "
        "ISO 639-1 code, the only languages Google documents.",
    ),
    "hreflang_no_self": (
        "warning",
        "A <url> lists hreflang alternates but none for the page itself.",
    ),
    "hreflang_conflict": (
        "warning",
        "A <url> lists several URLs for one hreflang value (compared without case).",
    ),
    "hreflang_not_reciprocal": (
        "warning",
        "An hreflang alternate does not list the page back as its own alternate (an alternate "
        "href that is not an absolute http(s) URL is invalid_url, and left out).",
    ),
}
"""Every finding code of this package: code -> (severity, one-line meaning)."""

__all__ = [
    "CODES",
    "HreflangGraph",
    "Judgement",
    "SchemaLoadError",
    "check_encoding",
    "check_limits",
    "check_unread_encoding",
    "is_valid_hreflang",
    "iter_alternates",
    "judge_document",
    "load_schema",
    "schema_files",
    "validate_document",
]
