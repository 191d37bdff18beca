"""Shared helpers for the sitemap reader tests."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import ChildEntry, UrlEntry

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SITEMAPS = FIXTURES / "sitemaps"
CORPUS = FIXTURES / "corpus"


def fixture(name: str) -> bytes:
    return (SITEMAPS / name).read_bytes()


def read(body: bytes, **kwargs: int) -> tuple[SitemapReader, list[UrlEntry | ChildEntry]]:
    reader = SitemapReader(body, **kwargs)
    return reader, list(reader)


def codes(reader: SitemapReader) -> list[str]:
    return [problem.code for problem in reader.problems]


def locs(entries: list[UrlEntry | ChildEntry]) -> list[str]:
    return [entry.loc for entry in entries]


def urlset(count: int, *, lines_per_url: int = 1) -> bytes:
    """A urlset with ``count`` URLs; each <url> spans ``lines_per_url`` lines (1 or 3)."""
    head = b'<?xml version="1.0" encoding="UTF-8"?>\n'
    head += b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    if lines_per_url == 1:
        template = b"<url><loc>https://www.example.com/p/%d</loc></url>\n"
    else:
        template = b"<url>\n<loc>https://www.example.com/p/%d</loc>\n</url>\n"
    return head + b"".join(template % i for i in range(count)) + b"</urlset>\n"


def gzip_stream(pieces: Iterator[bytes]) -> bytes:
    """Gzip the concatenation of ``pieces`` without holding it in memory."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [compressor.compress(piece) for piece in pieces]
    out.append(compressor.flush())
    return b"".join(out)
