"""Response header lines as long as browsers take them.

Twisted's HTTP client reads a response's header lines with a line reader that drops the
connection at a line of more than 16 KiB: a page with a long ``Content-Security-Policy`` or
``Link`` header, which browsers and search engines read, would be ``fetch_failed`` ("Connection
was closed cleanly"). Chromium reads response headers up to 256 KiB in all.
"""

from __future__ import annotations

from twisted.web._newclient import HTTPClientParser

HEADER_LINE_MAX_BYTES = 256 * 1024


def allow_long_header_lines() -> None:
    """Let the HTTP client (Scrapy's parser is a subclass of Twisted's) read header lines up to
    :data:`HEADER_LINE_MAX_BYTES`; a longer one still ends the download (``fetch_failed``)."""
    HTTPClientParser.MAX_LENGTH = max(HTTPClientParser.MAX_LENGTH, HEADER_LINE_MAX_BYTES)
