"""Watching a page download until its ``<head>`` is complete (no Scrapy imports).

Fed the raw bytes of a response as they arrive, :class:`HeadWatcher` decodes them exactly as
the response's ``Content-Encoding`` says (:mod:`sitemapaudit.page.coding`, the rule the page is
read by) and says when everything the checks need has arrived, so the rest of a large page need
not be downloaded; or, as soon as it shows, that the body cannot be read as its header says
(gzip data sent without ``Content-Encoding: gzip``, a body that is not in its declared coding, a
coding the audit cannot decode), so that nothing more of it is downloaded. The head of a page
read as XML (XHTML) ends by XML's rules (:mod:`sitemapaudit.page.xhtml`).
"""

from __future__ import annotations

from sitemapaudit.page.coding import (
    START_BYTES,
    CodingError,
    corrupt_data,
    decoder,
    gzip_alone,
    unreadable_start,
    unsupported,
)
from sitemapaudit.page.head import HeadEnd
from sitemapaudit.page.xhtml import XhtmlRoot, XmlHeadEnd

# Bytes of a (decoded) page read when looking for the end of its <head>: a head that has not
# ended by then is reported (head_too_large), not read further.
HEAD_READ_LIMIT = 2 * 1024 * 1024


class HeadWatcher:
    """Says when the end of ``<head>`` (or the start of ``<body>``) has been received, or
    that the body cannot be read (``unreadable`` says why)."""

    def __init__(
        self,
        *,
        coding: str | None = None,
        limit: int = HEAD_READ_LIMIT,
        min_bytes: int = 0,
        xml: bool = False,
        xhtml_root: bool = False,
    ) -> None:
        # ``coding`` as from sitemapaudit.page.coding.body_coding.
        self._coding = coding
        self._decoder = decoder(coding) if coding is not None else None
        self.unreadable: str | None = None
        """Why the body cannot be read as its header says, once that shows."""
        if coding is not None and self._decoder is None:
            self.unreadable = unsupported(coding)
        # The body's first bytes, kept until they show whether it is in its declared coding
        # (no coding, or gzip alone); ``None`` once they have (or when there is nothing to see).
        self._start: bytes | None = b"" if coding is None or gzip_alone(coding) else None
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
        self.done = False

    def feed(self, data: bytes) -> bool:
        """Take the next raw chunk; ``True`` once the head is complete (or the limit reached)
        and at least ``min_bytes`` have been received, or at once when the body cannot be
        read."""
        self._received += len(data)
        if self.done:
            return self._received >= self.min_bytes
        if self._start is not None:
            start = self._start + data[:START_BYTES]
            self._start = start if len(start) < START_BYTES else None
            self.unreadable = unreadable_start(self._coding, start)
        if self.unreadable is not None:
            self.done = True
            return True
        if self._decoder is not None:
            try:
                data = self._decoder.decompress(data, self.limit - self._seen)
            except CodingError as exc:
                self.unreadable = corrupt_data(self._decoder.coding, exc)
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
