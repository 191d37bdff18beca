"""Sitemaps a home page points to with ``rel="sitemap"`` links."""

from __future__ import annotations

from collections.abc import Sequence

import lxml.html

from sitemapaudit.page.head import document_base, document_head, parse_html, rel_tokens
from sitemapaudit.page.links import parse_link_header
from sitemapaudit.sitemap.body import GZIP_MAGIC, BodyStream
from sitemapaudit.urls import normalize_url, resolve

# Decompressed bytes of a gzip home page that are read.
HOMEPAGE_READ_LIMIT = 10 * 1024 * 1024


def homepage_sitemaps(
    body: bytes, base_url: str, link_headers: Sequence[str]
) -> list[tuple[str, str]]:
    """``(absolute url, found_via)`` for each sitemap a home page links to, deduplicated.

    ``<link rel="sitemap" href="...">`` elements anywhere in the HTML come first
    (``"html-link"``; ``rel`` is a case-insensitive token list, ``<base href>`` honoured),
    then ``Link`` header values with ``rel="sitemap"`` (``"link-header"``, resolved against
    ``base_url``). A URL found twice (the same after :func:`~sitemapaudit.urls.normalize_url`)
    keeps its first place and spelling. A gzip body (recognised by its magic bytes) is unpacked
    first, up to ``HOMEPAGE_READ_LIMIT`` bytes.
    """
    found: list[tuple[str, str]] = []
    seen: set[str] = set()

    def add(url: str | None, via: str) -> None:
        if url is None:
            return
        key = normalize_url(url)
        if key not in seen:
            seen.add(key)
            found.append((url, via))

    if body.startswith(GZIP_MAGIC):
        body = b"".join(BodyStream(body, limit=HOMEPAGE_READ_LIMIT))
    root = parse_html(body) if body else None
    if root is not None:
        base = document_base(document_head(root), base_url)
        for link in root.iter("link"):
            if not isinstance(link, lxml.html.HtmlElement):
                continue
            href = link.get("href")
            if href is not None and "sitemap" in rel_tokens(link.get("rel")):
                add(resolve(base, href), "html-link")
    for target, rels in parse_link_header(link_headers):
        if "sitemap" in rels:
            add(resolve(base_url, target), "link-header")
    return found
