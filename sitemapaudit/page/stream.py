"""Watching a page download until its ``<head>`` is complete (no Scrapy imports).

Fed the raw bytes of a response as they arrive (plain, or gzip when the response says
``Content-Encoding: gzip``, or another coding :mod:`sitemapaudit.page.coding` decodes),
:class:`HeadWatcher` says when everything the checks need has
arrived, so the rest of a large page need not be downloaded. The head of a page read as XML
(XHTML) ends by XML's rules (:mod:`sitemapaudit.page.xhtml`).
"""

from __future__ import annotations

import zlib

from sitemapaudit.page.coding import CodingError, decoder, several
from sitemapaudit.page.head import HeadEnd
from sitemapaudit.page.xhtml import XhtmlRoot, XmlHeadEnd
from sitemapaudit.sitemap.body import GZIP_MAGIC


class HeadWatcher:
    """Says when the end of ``<head>`` (or the start of ``<body>``) has been received."""

    def __init__(
        self,
        *,
        gzip: bool = False,
        coding: str | None = None,
        limit: int = 2 * 1024 * 1024,
        min_bytes: int = 0,
        xml: bool = False,
        xhtml_root: bool = False,
    ) -> None:
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None
        # ``coding`` as from sitemapaudit.page.coding.body_coding; one the audit cannot decode
        # leaves nothing to watch for (the page is reported as not decodable).
        self._decoder = decoder(coding) if coding is not None and not gzip else None
        undecodable = coding is not None and not gzip and self._decoder is None
        # Several codings are undone as listed, whatever the body's first bytes.
        self._by_bytes = coding is None or not several(coding)
        # ``xml``: a page read as XML (XHTML), whose head ends by XML's rules; ``xhtml_root``:
        # one that is a page only if its root element is XHTML's <html> (application/xml),
        # nothing more to read once it is known not to be.
        self._head_end = XmlHeadEnd() if xml else HeadEnd()
        self._root = XhtmlRoot() if xhtml_root else None
        self._seen = 0
        self.limit = limit
        # Raw bytes to receive before saying stop, even once the head is complete: a body of
        # unknown length may be a small page, best read whole.
        self.min_bytes = min_bytes
        self._received = 0
        self._undecodable = undecodable
        self.done = False

    def feed(self, data: bytes) -> bool:
        """Take the next raw chunk; ``True`` once the head is complete (or the limit reached)
        and at least ``min_bytes`` have been received."""
        first = self._received == 0
        self._received += len(data)
        if self.done:
            return self._received >= self.min_bytes
        if first and self._inflate is None and self._by_bytes and data.startswith(GZIP_MAGIC):
            # Gzip data whatever the header said, as the page is read (by its bytes).
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._decoder, self._undecodable = None, False
        if self._undecodable:
            self.done = True
            return True
        if self._inflate is not None:
            try:
                data = self._inflate.decompress(data, self.limit)
            except zlib.error:
                self.done = True
                return True
        elif self._decoder is not None:
            try:
                data = self._decoder.decompress(data, self.limit - self._seen)
            except CodingError:
                self.done = True
                return True
        self._seen += len(data)
        if self._root is not None and self._root.feed(data) is not None:
            if not self._root.known:
                self.done = True
                return self._received >= self.min_bytes
            self._root = None
        if self._head_end.feed(data) is not None or self._seen >= self.limit:
            self.done = True
        return self.done and self._received >= self.min_bytes
