"""What a fetched page says about its own indexing: robots directives, canonical, dates.

Pure functions: headers and bytes in, frozen records out. No Scrapy imports in this package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sitemapaudit.page.dates import (
    Lastmod,
    lastmod_delta,
    lastmod_matches,
    parse_http_date,
    parse_rfc822_date,
    parse_w3c_datetime,
)
from sitemapaudit.page.head import HeadFacts, head_end_offset, parse_head
from sitemapaudit.page.links import parse_link_header
from sitemapaudit.page.refresh import parse_refresh
from sitemapaudit.page.robots_directives import (
    directives_noindex,
    unavailable_after,
    x_robots_tag_noindex,
)
from sitemapaudit.page.xhtml import (
    XHTML_MEDIA_TYPE,
    XML_MEDIA_TYPES,
    XML_PAGE_TYPES,
    parse_xhtml_head,
)
from sitemapaudit.urls import normalize_url, resolve_href, usable_canonical

__all__ = [
    "HTML_MEDIA_TYPES",
    "XML_MEDIA_TYPES",
    "XML_PAGE_TYPES",
    "HeadFacts",
    "Lastmod",
    "PageFacts",
    "charset",
    "content_type_of",
    "directives_noindex",
    "head_end_offset",
    "is_html",
    "lastmod_delta",
    "lastmod_matches",
    "media_type",
    "page_facts",
    "parse_head",
    "parse_http_date",
    "parse_link_header",
    "parse_rfc822_date",
    "parse_w3c_datetime",
    "x_robots_tag_noindex",
]

HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
# The HTML signatures of the WHATWG MIME Sniffing Standard, each followed by a space or ">".
_HTML_SNIFF_RE = re.compile(
    rb"(?:<!doctype\s+html|<html|<head|<script|<iframe|<h1|<div|<font|<table|<a|<style"
    rb"|<title|<b|<body|<br|<p|<!--)(?=[\s>])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class PageFacts:
    """The indexing facts of one response.

    ``noindex`` lists the sources that forbid indexing (``"meta:robots"``,
    ``"meta:googlebot"``, ``"header:x-robots-tag"``). ``canonical`` is absolute: the first
    ``<link rel="canonical">`` (``canonical_source == "link"``), else ``Link: <...>;
    rel="canonical"`` header (``"header"``), that search engines can use (see
    :func:`~sitemapaudit.urls.canonical_problem`), or the first of all when none can be used.
    ``last_modified``, ``date`` and
    ``content_type`` are the raw header values. ``unavailable_after`` pairs each source that
    sets an ``unavailable_after`` date (a robots meta, ``"header:x-robots-tag"``) with the
    earliest one: Google stops showing the page once it has passed. ``canonical_others``
    lists the other canonical URLs the page names (link elements, then Link headers) that are
    not the same URL as ``canonical``. ``refresh`` is a refresh that sends the browser to a
    URL: (source, delay in seconds, absolute URL), from the first ``<meta
    http-equiv="refresh">`` (``"meta"``), else from a ``Refresh`` header (``"header"``).
    ``head_broken`` is ``HeadFacts.broken``: the head ended early and signals after it are
    ignored. ``head_complete`` is ``HeadFacts.head_complete`` (``True`` when no head is read:
    a response that is no page).
    """

    noindex: tuple[str, ...]
    canonical: str | None
    canonical_source: str | None
    last_modified: str | None
    date: str | None
    content_type: str | None
    unavailable_after: tuple[tuple[str, datetime], ...] = ()
    canonical_others: tuple[str, ...] = ()
    refresh: tuple[str, int, str] | None = None
    head_broken: tuple[str, tuple[str, ...]] | None = None
    head_complete: bool = True


def _values(headers: Mapping[str, Sequence[str]], name: str) -> list[str]:
    values = headers.get(name)
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    return [value for value in values if isinstance(value, str)]


def _first(headers: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = _values(headers, name)
    return values[0] if values else None


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MIME_RE = re.compile(rf"[ \t\r\n]*({_TOKEN})/({_TOKEN})[ \t\r\n]*(;.*)?", re.DOTALL)
_QUOTED_OR_COMMA_RE = re.compile(r'"(?:[^"\\]|\\.)*"?|,')


def _split_values(values: Sequence[str]) -> list[str]:
    """Header values split at commas outside quoted strings, as the Fetch standard splits
    them (several ``Content-Type`` lines are one list)."""
    parts: list[str] = []
    for value in values:
        start = 0
        for match in _QUOTED_OR_COMMA_RE.finditer(value):
            if match.group() == ",":
                parts.append(value[start : match.start()])
                start = match.end()
        parts.append(value[start:])
    return parts


def content_type_of(values: Sequence[str]) -> str | None:
    """The Content-Type of a response as browsers read it (the Fetch standard's "extract a
    MIME type"): of its values, the last valid media type other than ``*/*``, with the charset
    of the last value that names one for that type; ``None`` when no value is valid (the body
    is then sniffed). Two lines ``text/plain`` and ``text/html`` give ``text/html``."""
    essence: str | None = None
    found: str | None = None
    charset_of: str | None = None
    for value in _split_values(values):
        match = _MIME_RE.fullmatch(value)
        if match is None:
            continue
        kind = f"{match[1]}/{match[2]}".lower()
        if kind == "*/*":
            continue
        named = charset(match[3] or "")
        if kind != essence:
            essence, charset_of = kind, named
        elif named is not None:
            charset_of = named
        found = kind
    if found is None:
        return None
    return found if charset_of is None else f"{found}; charset={charset_of}"


def media_type(content_type: str | None) -> str | None:
    """The lowercased ``type/subtype`` of a Content-Type value, without parameters."""
    if not content_type:
        return None
    value = content_type.split(";", 1)[0].strip().lower()
    return value or None


def charset(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value, if any."""
    if not content_type:
        return None
    match = _CHARSET_RE.search(content_type)
    return match.group(1) if match else None


def is_html(content_type: str | None, body: bytes) -> bool:
    """Whether a response is HTML: by its media type, or by sniffing when it has none."""
    kind = media_type(content_type)
    if kind is not None:
        return kind in HTML_MEDIA_TYPES
    return _sniffs_html(body)


def _sniffs_html(body: bytes) -> bool:
    start = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n\x0c")
    return _HTML_SNIFF_RE.match(start) is not None


def page_facts(
    url: str,
    headers: Mapping[str, Sequence[str]],
    body: bytes,
    *,
    user_agent: str = "googlebot",
) -> PageFacts:
    """Collect the indexing facts of the response for ``url``.

    ``headers`` maps lowercase header names to their values. The body is parsed only when the
    response is HTML (``text/html``, or no Content-Type and a body that sniffs as HTML) or
    XHTML (``application/xhtml+xml``, or ``application/xml`` and ``text/xml`` whose root element
    is XHTML's ``<html>``), the latter as an XML parser reads it (see
    :func:`~sitemapaudit.page.xhtml.parse_xhtml_head`); PDFs, images, JSON, other XML and the
    rest are judged by headers alone.
    """
    content_type = content_type_of(_values(headers, "content-type"))
    noindex: list[str] = []
    expiries: list[tuple[str, datetime]] = []
    canonical: str | None = None
    source: str | None = None
    canonicals: list[str] = []
    refresh: tuple[str, int, str] | None = None
    head_broken: tuple[str, tuple[str, ...]] | None = None
    head_complete = True
    kind = media_type(content_type)
    head: HeadFacts | None = None
    if kind in XML_PAGE_TYPES:
        head = parse_xhtml_head(
            body,
            url,
            user_agent=user_agent,
            encoding=charset(content_type),
            xhtml=kind == XHTML_MEDIA_TYPE,
        )
    elif kind == "text/html" or (kind is None and _sniffs_html(body)):
        head = parse_head(body, url, user_agent=user_agent, encoding=charset(content_type))
    if head is not None:
        noindex.extend(head.noindex)
        expiries.extend(head.unavailable_after)
        canonicals.extend(head.canonicals)
        if head.refresh is not None:
            refresh = ("meta", *head.refresh)
        head_broken = head.broken
        head_complete = head.head_complete
    robots_headers = _values(headers, "x-robots-tag")
    if x_robots_tag_noindex(robots_headers, user_agent=user_agent):
        noindex.append("header:x-robots-tag")
    header_dates = [
        when
        for value in robots_headers
        if (when := unavailable_after(value, user_agent=user_agent)) is not None
    ]
    if header_dates:
        expiries.append(("header:x-robots-tag", min(header_dates)))
    links = len(canonicals)
    link_values = _values(headers, "link")
    if link_values:
        for target, rels in parse_link_header(link_values):
            if "canonical" in rels and (resolved := resolve_href(url, target)) is not None:
                canonicals.append(resolved)
    if canonicals:
        canonical, source = _chosen(canonicals, links)
    if refresh is None:
        refresh = _header_refresh(url, _first(headers, "refresh"))
    return PageFacts(
        noindex=tuple(noindex),
        canonical=canonical,
        canonical_source=source,
        last_modified=_first(headers, "last-modified"),
        date=_first(headers, "date"),
        content_type=content_type,
        unavailable_after=tuple(expiries),
        canonical_others=_others(canonical, canonicals),
        refresh=refresh,
        head_broken=head_broken,
        head_complete=head_complete,
    )


def _chosen(canonicals: list[str], links: int) -> tuple[str, str]:
    """The page's canonical and its source (``"link"``: one of the first ``links``, link
    elements; else ``"header"``): the first that search engines can use, as they ignore the
    others (``javascript:``, a URL that does not parse); when none can be used, the first,
    which ``canonical_mismatch`` reports as such."""
    chosen = next((index for index, value in enumerate(canonicals) if usable_canonical(value)), 0)
    return canonicals[chosen], "link" if chosen < links else "header"


def _others(canonical: str | None, canonicals: list[str]) -> tuple[str, ...]:
    """The canonical URLs that name another URL than ``canonical``, each once. One that is
    not an http(s) URL (``javascript:``...) names none: search engines ignore it, and a page
    whose ``canonical`` is one has none to conflict with."""
    if canonical is None or len(canonicals) < 2 or not usable_canonical(canonical):
        return ()
    others: dict[str, str] = {}
    chosen = normalize_url(canonical)
    for other in canonicals:
        key = normalize_url(other)
        if key != chosen and usable_canonical(other):
            others.setdefault(key, other)
    return tuple(others.values())


def _header_refresh(url: str, value: str | None) -> tuple[str, int, str] | None:
    refresh = parse_refresh(value) if value else None
    target = None if refresh is None else refresh.target(url)
    return None if refresh is None or target is None else ("header", refresh.delay, target)
