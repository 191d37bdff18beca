"""Shared helpers for the validation tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "validation"
NOW = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)
"""The fixed ``now`` the news fixtures are dated against."""

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
EXTENSION_NAMESPACES = (
    f'xmlns="{SITEMAP_NS}" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "packaging: builds a wheel or an egg of the project (a few seconds, offline)"
    )


def urlset(*urls: str, namespaces: str = EXTENSION_NAMESPACES) -> bytes:
    """A urlset document around ``urls`` (each a complete ``<url>`` element)."""
    body = "\n".join(urls)
    head = '<?xml version="1.0" encoding="UTF-8"?>\n'
    return f"{head}<urlset {namespaces}>\n{body}\n</urlset>\n".encode()


def url(loc: str, inner: str = "") -> str:
    """One ``<url>`` element."""
    return f"<url><loc>{loc}</loc>{inner}</url>"


def big_urlset(
    count: int, *, changefreq: str = "daily", lastmod: str = "2024-05-01T12:00:00+00:00"
) -> bytes:
    """A urlset of ``count`` URLs, one per line."""
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
    rows = [
        f"<url><loc>https://www.example.com/some/path/page-{number}.html</loc>"
        f"<lastmod>{lastmod}</lastmod><changefreq>{changefreq}</changefreq>"
        "<priority>0.5</priority></url>\n"
        for number in range(count)
    ]
    return (head + "".join(rows) + "</urlset>\n").encode()
