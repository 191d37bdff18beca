"""Capped, streaming decompression of a fetched document.

A sitemap is gunzipped when its bytes say so (the gzip magic ``1f 8b``), whatever the headers or
the file name claimed: servers send ``.gz`` files without ``Content-Encoding``, plain files with
it, and ``.gz`` files with ``Content-Encoding: gzip`` on top (two gzip layers). How many layers
there may be does depend on the headers: a search engine undoes the coding a response declares,
then gunzips a gzip file once; it does not look for gzip data inside that. Decompression is
incremental and bounded, so a gzip bomb costs at most ``limit`` bytes of output and never more
than a few chunks of memory.

Deflate data carries no check of its own: only the CRC-32 in a gzip member's trailer tells
whether what was decoded is what was compressed. A stream cut short loses its end, but what was
decoded before the cut came from intact bytes. Corrupt data is different: a damaged byte can
decode to wrong output for a while before the decoder hits something impossible, so nothing
decoded from a damaged member can be trusted.
"""

from __future__ import annotations

import zlib
from collections.abc import Generator, Iterable, Iterator

from sitemapaudit.sitemap.records import Problem

GZIP_MAGIC = b"\x1f\x8b"
# A .gz file served with Content-Encoding: gzip is two layers; more than that is not unwrapped.
MAX_GZIP_LAYERS = 2

_GZIP_WBITS = 16 + zlib.MAX_WBITS


class BodyStream:
    """Iterating yields the document's bytes in chunks of at most ``chunk_size`` bytes.

    The body is gunzipped when it starts with the gzip magic (``1f 8b``), whatever the headers
    or file name said. ``gzip_encoded`` is whether the response declared ``Content-Encoding:
    gzip`` (``False`` for a file, which a server sends as it is): a second gzip layer inside
    the first is unwrapped only then, and gzip data left inside the layers a search engine
    undoes (one, or two with the header) is ``gzip_invalid`` and is not unwrapped. ``None``
    (the headers are not known or do not matter) unwraps up to two layers and says nothing
    of more. Reading stops at ``limit`` uncompressed bytes; the decompressed document is never
    held in memory as a whole.

    Attributes:
        gzip: the body was gzip (known right after construction, from the magic bytes).
        gzip_layers: gzip layers unwrapped (0, 1 or 2; final once iteration has ended).
        gzip_inside: what the layers unwrapped gave is gzip data again, left as it is (known
            once iteration has started; always ``False`` when ``gzip_encoded`` is ``None``).
        bytes_read: uncompressed bytes yielded so far.
        truncated: reading stopped at ``limit`` and the document went on past it.
        problems: ``gzip_invalid`` when a gzip stream is corrupt or cut short; the bytes
            decoded before the fault are still yielded, unless ``checked``.
        corrupt: what is wrong when the gzip data itself is corrupt (not only cut short).
        cut_short: the gzip stream ended before its trailer.

    ``checked``: of corrupt gzip data (a decoding error or a trailer that does not match),
    only the gzip members whose trailers checked out before the damaged one are yielded. The
    body is then inflated twice, once to find the damage and once to read it; a body that is
    not gzip is read once.
    """

    def __init__(
        self,
        body: bytes,
        *,
        limit: int,
        chunk_size: int = 65536,
        checked: bool = False,
        gzip_encoded: bool | None = None,
    ) -> None:
        if limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be positive, got {chunk_size}")
        self._body = body
        self.limit = limit
        self.chunk_size = chunk_size
        self.checked = checked
        self.gzip_encoded = gzip_encoded
        self._max_layers = MAX_GZIP_LAYERS if gzip_encoded is None else 1 + gzip_encoded
        self.gzip: bool = body[:2] == GZIP_MAGIC
        self.gzip_layers: int = 0
        self.gzip_inside = False
        self.bytes_read: int = 0
        self.truncated: bool = False
        self.problems: list[Problem] = []
        self.corrupt: str | None = None
        self.cut_short = False
        # Per gzip layer: the output bytes up to the end of its last member that checked out.
        self._verified: dict[int, int] = {}
        self._corrupt_layer = 1

    def __iter__(self) -> Iterator[bytes]:
        self._reset()
        if self.checked and self.gzip:
            return self._checked()
        return self._capped(self._document())

    def _reset(self) -> None:
        self.gzip_layers = 0
        self.gzip_inside = False
        self.bytes_read = 0
        self.truncated = False
        self.problems = []
        self.corrupt = None
        self.cut_short = False
        self._verified = {}

    def _checked(self) -> Iterator[bytes]:
        """The document without anything decoded from a corrupt gzip member."""
        for _ in self._capped(self._document()):
            pass
        if self.corrupt is None:
            self._reset()
            yield from self._capped(self._document())
            return
        layers, decoded, corrupt = self.gzip_layers, self.bytes_read, self.corrupt
        where = self._where(self._corrupt_layer)
        # The innermost layer's output is the document; the members of that layer that
        # checked out before the damage (in either layer) are intact.
        trusted = self._verified.get(layers, 0)
        self._reset()
        source = self._capped(self._document())
        given = 0
        try:
            for chunk in source:
                room = trusted - given
                if len(chunk) >= room:
                    if room:
                        yield chunk[:room]
                    break
                given += len(chunk)
                yield chunk
        finally:
            source.close()
        kept = (
            f"only the {trusted:,} bytes of the complete gzip members before the damaged one"
            if trusted
            else "none of them"
        )
        self.gzip_layers, self.bytes_read, self.corrupt = layers, trusted, corrupt
        self.problems = [
            *(self.problems[:1] if self.gzip_inside else []),
            Problem(
                "gzip_invalid",
                f"{corrupt}{where}; {decoded:,} bytes were decoded before the fault and {kept} "
                "are read: deflate data has no check before a gzip member's trailer, so what "
                "was decoded before the fault may already be wrong",
            ),
        ]

    def _document(self) -> Iterator[bytes]:
        source: Iterator[bytes] = self._slices()
        for layer in range(1, self._max_layers + 1):
            head, source = _peek(source, len(GZIP_MAGIC))
            if not head.startswith(GZIP_MAGIC):
                return source
            self.gzip_layers = layer
            source = self._inflate(source, layer)
        if self.gzip_encoded is None:
            return source
        head, source = _peek(source, len(GZIP_MAGIC))
        if head.startswith(GZIP_MAGIC):
            self.gzip_inside = True
            self.problems.insert(0, Problem("gzip_invalid", self._inside_message()))
        return source

    def _inside_message(self) -> str:
        if self.gzip_encoded:
            return (
                "the gzip data inside the gzip data is gzip data again (gzipped three times): "
                "search engines undo the Content-Encoding: gzip the response declares and "
                "gunzip the file once, so they find gzip data where the sitemap should be; "
                "the third layer is not unwrapped"
            )
        return (
            "the gzip data holds gzip data again (gzipped twice), and no Content-Encoding: "
            "gzip accounts for the outer layer: search engines gunzip a sitemap file once, "
            "and once more only when the response declares Content-Encoding: gzip, so they "
            "find gzip data where the sitemap should be; the inner layer is not unwrapped"
        )

    def _slices(self) -> Iterator[bytes]:
        body = memoryview(self._body)
        size = self.chunk_size
        for start in range(0, len(body), size):
            yield bytes(body[start : start + size])

    def _capped(self, source: Iterator[bytes]) -> Generator[bytes, None, None]:
        limit = self.limit
        try:
            for chunk in source:
                if not chunk:
                    continue
                room = limit - self.bytes_read
                if len(chunk) > room:
                    if room > 0:
                        self.bytes_read += room
                        yield chunk[:room]
                    self.truncated = True
                    return
                self.bytes_read += len(chunk)
                yield chunk
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def _inflate(self, source: Iterable[bytes], layer: int) -> Iterator[bytes]:
        """Gunzip ``source`` (possibly several concatenated gzip members) chunk by chunk."""
        size = self.chunk_size
        inflater: zlib._Decompress | None = zlib.decompressobj(_GZIP_WBITS)
        pending = b""
        produced = 0
        for chunk in source:
            data = pending + chunk if pending else chunk
            pending = b""
            while data:
                if inflater is None:
                    # Between members: another member starts with the magic; anything else is
                    # trailing padding or garbage and ends the stream.
                    if len(data) < len(GZIP_MAGIC):
                        pending = data
                        break
                    if not data.startswith(GZIP_MAGIC):
                        return
                    inflater = zlib.decompressobj(_GZIP_WBITS)
                saved = inflater.copy()
                try:
                    out = inflater.decompress(data, size)
                except zlib.error as exc:
                    salvaged = _salvage(saved, data, size)
                    if salvaged:
                        produced += len(salvaged)
                        yield salvaged
                    self._corrupt(layer, exc)
                    return
                if out:
                    produced += len(out)
                    yield out
                if inflater.eof:
                    # zlib sets eof only once the member's CRC-32 and length have matched.
                    self._verified[layer] = produced
                    data = inflater.unused_data
                    inflater = None
                else:
                    data = inflater.unconsumed_tail
        if inflater is None:
            return
        # Output zlib still holds once all input is consumed (a match cut by max_length).
        while not inflater.eof:
            try:
                out = inflater.decompress(b"", size)
            except zlib.error as exc:
                self._corrupt(layer, exc)
                return
            if not out:
                break
            produced += len(out)
            yield out
        if inflater.eof:
            self._verified[layer] = produced
        else:
            self.cut_short = True
            self._gzip_invalid(layer, "gzip stream is truncated (it ends before its trailer)")

    def _corrupt(self, layer: int, exc: zlib.error) -> None:
        if self.corrupt is None:
            self.corrupt = f"corrupt gzip data ({exc})"
            self._corrupt_layer = layer
        self._gzip_invalid(layer, f"corrupt gzip data ({exc})")

    def _gzip_invalid(self, layer: int, message: str) -> None:
        if any(p.code == "gzip_invalid" for p in self.problems):
            return
        self.problems.append(
            Problem(
                "gzip_invalid",
                f"{message}{self._where(layer)}; {self.bytes_read} bytes were decoded before "
                "the fault",
            )
        )

    @staticmethod
    def _where(layer: int) -> str:
        return "" if layer == 1 else " (inner layer of a doubly gzipped body)"


def _peek(source: Iterator[bytes], count: int) -> tuple[bytes, Iterator[bytes]]:
    """The first ``count`` bytes of ``source`` (fewer at its end) and an equivalent iterator."""
    taken: list[bytes] = []
    have = 0
    for chunk in source:
        if chunk:
            taken.append(chunk)
            have += len(chunk)
            if have >= count:
                break
    return b"".join(taken)[:count], _chain(taken, source)


def _chain(first: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield from first
        yield from rest
    finally:
        close = getattr(rest, "close", None)
        if close is not None:
            close()


def _salvage(inflater: zlib._Decompress, data: bytes, limit: int) -> bytes:
    """Re-inflate ``data`` one input byte at a time from a saved state, up to the fault.

    zlib discards a call's output when the call fails, e.g. on a bad checksum in the trailer
    after the last data block; stepping through the input keeps everything decoded before it.
    """
    out = bytearray()
    for offset in range(len(data)):
        try:
            out += inflater.decompress(data[offset : offset + 1])
        except zlib.error:
            break
        if inflater.eof or len(out) >= limit:
            break
    return bytes(out[:limit])
