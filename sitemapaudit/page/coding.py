"""Incremental decoding of a page body's ``Content-Encoding`` (no Scrapy imports).

The audit asks for gzip only, but some servers answer with ``deflate``, ``br`` or ``zstd``
anyway; browsers decode those, so the audit reads them too. ``deflate`` is zlib data or, from
some servers, raw deflate data, as browsers accept both. ``br`` and ``zstd`` need the ``brotli``
(or ``brotlicffi``) and ``backports.zstd`` (``compression.zstd`` from Python 3.14) modules that
Scrapy itself uses; without them such a body cannot be decoded. A body is decoded as its header
says, never by its bytes: gzip data sent without ``Content-Encoding: gzip``, or declared in
another coding, is not readable, as browsers refuse it, nor is a body declared ``gzip``
(``x-gzip``) alone that is not gzip data (:func:`unreadable_start` says so from the body's first
bytes; gzip alone is read by :class:`sitemapaudit.sitemap.body.BodyStream`). Several codings
(``deflate, gzip``: deflated, then gzipped) are undone from the last listed to the first, as
browsers do (RFC 9110, section 8.4), gzip among them, whatever the body's first bytes.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from sitemapaudit.sitemap.body import GZIP_MAGIC

_GZIP = frozenset({"gzip", "x-gzip"})
_IGNORED = frozenset({"", "identity"})
# Codings browsers know; a body in one of them is not HTML until decoded.
_KNOWN = frozenset({"deflate", "br", "zstd", "compress", "x-compress"})
# More codings on one body than this are not undone: each needs a decompressor and its window
# (up to 16 MiB for br), and a page is never compressed that many times over.
MAX_CODINGS = 4
# Output asked of an outer coding at a time when undoing several.
_LAYER_CHUNK = 65536


def _module(*names: str) -> ModuleType | None:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


class CodingError(Exception):
    """The body's data is not valid in its coding."""


class Decoder:
    """Decompresses one coding a chunk at a time, never returning more than asked for."""

    def __init__(self, coding: str, impl: Any, errors: tuple[type[BaseException], ...]) -> None:
        self.coding = coding
        self._impl = impl
        self._errors = errors
        self._input = b""

    def decompress(self, data: bytes, max_length: int) -> bytes:
        """The next at most ``max_length`` bytes of output, taking ``data`` as more input
        (input that does not fit is kept for the next calls)."""
        try:
            return self._step(data, max_length)
        except self._errors as exc:
            raise CodingError(str(exc) or type(exc).__name__) from exc

    @property
    def pending(self) -> bool:
        """Whether output may be waiting without more input."""
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        """Whether the compressed stream has ended."""
        raise NotImplementedError

    def _step(self, data: bytes, max_length: int) -> bytes:
        raise NotImplementedError


class _Deflate(Decoder):
    def __init__(self) -> None:
        super().__init__("deflate", None, (zlib.error,))
        self._head = b""

    def _step(self, data: bytes, max_length: int) -> bytes:
        if self._impl is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            # A zlib header: compression method 8 and a check value making it a multiple of 31.
            is_zlib = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self._impl = zlib.decompressobj(zlib.MAX_WBITS if is_zlib else -zlib.MAX_WBITS)
            if is_zlib:
                try:
                    return bytes(self._impl.decompress(data, max_length))
                except zlib.error:
                    # Raw deflate data whose first bytes happen to look like a zlib header.
                    self._impl = zlib.decompressobj(-zlib.MAX_WBITS)
        data = self._impl.unconsumed_tail + data
        return bytes(self._impl.decompress(data, max_length))

    @property
    def pending(self) -> bool:
        return self._impl is not None and bool(self._impl.unconsumed_tail)

    @property
    def finished(self) -> bool:
        return self._impl is not None and bool(self._impl.eof)


class _Gzip(Decoder):
    def __init__(self) -> None:
        # One gzip member; what follows it is ignored, as browsers ignore it.
        super().__init__("gzip", zlib.decompressobj(16 + zlib.MAX_WBITS), (zlib.error,))

    def _step(self, data: bytes, max_length: int) -> bytes:
        if self._impl.eof:
            return b""
        data = self._impl.unconsumed_tail + data
        return bytes(self._impl.decompress(data, max_length))

    @property
    def pending(self) -> bool:
        return not self._impl.eof and bool(self._impl.unconsumed_tail)

    @property
    def finished(self) -> bool:
        return bool(self._impl.eof)


class _Brotli(Decoder):
    def _step(self, data: bytes, max_length: int) -> bytes:
        self._input += data
        if self._impl.can_accept_more_data():
            data, self._input = self._input, b""
        else:
            data = b""
        return bytes(self._impl.process(data, output_buffer_limit=max_length))

    @property
    def pending(self) -> bool:
        return bool(self._input) or not self._impl.can_accept_more_data()

    @property
    def finished(self) -> bool:
        return bool(self._impl.is_finished())


class _Zstd(Decoder):
    def _step(self, data: bytes, max_length: int) -> bytes:
        if self._impl.eof:
            return b""
        return bytes(self._impl.decompress(data, max_length))

    @property
    def pending(self) -> bool:
        return not self._impl.eof and not self._impl.needs_input

    @property
    def finished(self) -> bool:
        return bool(self._impl.eof)


class _Stack(Decoder):
    """Several codings, undone from the outermost (the last listed) in."""

    def __init__(self, coding: str, layers: list[Decoder]) -> None:
        super().__init__(coding, None, ())
        self._layers = layers  # the outermost first
        self._moved = False

    def decompress(self, data: bytes, max_length: int) -> bytes:
        self._input += data
        while True:
            self._moved = False
            out = self._pull(len(self._layers) - 1, max_length)
            # An inner coding may take an outer one's output without giving any yet.
            if out or not self._moved or not self.pending:
                return out

    def _pull(self, index: int, max_length: int) -> bytes:
        layer = self._layers[index]
        if layer.finished:
            return b""
        if index == 0:
            data, self._input = self._input, b""
        elif layer.pending:
            data = b""
        else:
            data = self._pull(index - 1, _LAYER_CHUNK)
        try:
            out = layer.decompress(data, max_length)
        except CodingError as exc:
            raise CodingError(f"{layer.coding}: {exc}") from exc
        self._moved = self._moved or bool(out)
        return out

    @property
    def pending(self) -> bool:
        if self.finished:
            return False
        return bool(self._input) or any(layer.pending for layer in self._layers)

    @property
    def finished(self) -> bool:
        return self._layers[-1].finished


def body_coding(values: Sequence[str] | None) -> str | None:
    """The coding to undo for ``Content-Encoding`` header ``values`` before a body can be
    read: ``None`` when it is to be read as it is (no coding, ``identity``, or a coding no
    browser knows, which browsers ignore), else the lowercased coding list (``gzip`` alone:
    see :func:`gzip_alone`; several codings when they are more than one: see
    :func:`several`)."""
    codings = [
        coding.strip().lower()
        for value in values or ()
        for coding in value.split(",")
        if coding.strip().lower() not in _IGNORED
    ]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] not in _GZIP and codings[0] not in _KNOWN:
        return None
    return ", ".join(codings)


def gzip_alone(coding: str | None) -> bool:
    """Whether ``coding`` (from :func:`body_coding`) is ``gzip`` (``x-gzip``) alone: a body
    that is gzip data is read by its bytes, and one that is not cannot be read at all."""
    return coding in _GZIP


GZIP_UNDECLARED = (
    "the body is gzip data, but the response does not say Content-Encoding: gzip "
    "(browsers and search engines read it as it is, compressed)"
)
NOT_GZIP = "the body is not gzip data (it does not start with the gzip magic 1f 8b)"
START_BYTES = len(GZIP_MAGIC)
"""The first bytes of a body that :func:`unreadable_start` needs to judge it."""


def unreadable_start(coding: str | None, start: bytes) -> str | None:
    """Why a body whose first bytes are ``start`` cannot be read as ``coding`` (from
    :func:`body_coding`) says, seen from those bytes alone: gzip data with no coding declared,
    or a body declared ``gzip`` alone that is not gzip data. ``None`` when nothing shows (yet:
    ``start`` shorter than :data:`START_BYTES` may be the start of either)."""
    if coding is None:
        return GZIP_UNDECLARED if start.startswith(GZIP_MAGIC) else None
    if coding in _GZIP and not GZIP_MAGIC.startswith(start[:START_BYTES]):
        return NOT_GZIP
    return None


def unsupported(coding: str) -> str:
    """What makes a body in ``coding`` unreadable when :func:`decoder` gives none for it."""
    return f"Content-Encoding {coding!r} is not supported"


def corrupt_data(coding: str, error: CodingError) -> str:
    """What makes a body in ``coding`` unreadable when its decoder raises ``error``."""
    return f"the {coding} data is corrupt: {error}"


def declares_gzip(values: Sequence[str] | None) -> bool:
    """Whether ``Content-Encoding`` header ``values`` name gzip (``x-gzip``) among their
    codings: a search engine undoes that layer before it reads a sitemap."""
    return any(
        coding.strip().lower() in _GZIP for value in values or () for coding in value.split(",")
    )


def several(coding: str) -> bool:
    """Whether ``coding`` (from :func:`body_coding`) is several codings, undone as the header
    lists them whatever the body's first bytes (the gzip magic included)."""
    return "," in coding


def decoder(coding: str) -> Decoder | None:
    """An incremental decoder for ``coding`` (from :func:`body_coding`), or ``None`` when
    the audit cannot decode it (``compress``, a coding no browser knows among several, more
    than :data:`MAX_CODINGS`, or a module is missing)."""
    codings = coding.split(", ")
    if len(codings) == 1:
        return _decoder(coding)
    if len(codings) > MAX_CODINGS:
        return None
    layers = [_decoder(name) for name in reversed(codings)]
    if any(layer is None for layer in layers):
        return None
    return _Stack(coding, [layer for layer in layers if layer is not None])


def _decoder(coding: str) -> Decoder | None:
    if coding in _GZIP:
        return _Gzip()
    if coding == "deflate":
        return _Deflate()
    if coding == "br":
        brotli = _module("brotli", "brotlicffi")
        if brotli is not None:
            return _Brotli(coding, brotli.Decompressor(), (brotli.error,))
    if coding == "zstd":
        zstd = _module("compression.zstd", "backports.zstd")
        if zstd is not None:
            return _Zstd(coding, zstd.ZstdDecompressor(), (zstd.ZstdError,))
    return None


def decode_capped(
    body: bytes, coding: str, limit: int, *, whole: bool = True, chunk_size: int = _LAYER_CHUNK
) -> tuple[bytes, str | None]:
    """``body`` decoded as ``coding`` (from :func:`body_coding`) says, up to ``limit`` bytes
    of output: a body that decodes to more (a decompression bomb) costs no more than that,
    and the caller tells it from one that fits by asking a byte more than it reads. Also what
    makes it unreadable: a coding the audit cannot decode (:func:`unsupported`), corrupt data
    (:func:`corrupt_data`), or, for a ``whole`` body (not a download stopped part way), data
    that ends before its end; no bytes are returned then. An empty body is empty, whatever its
    coding."""
    if not body:
        return b"", None
    decoding = decoder(coding)
    if decoding is None:
        return b"", unsupported(coding)
    parts: list[bytes] = []
    produced = 0
    view = memoryview(body)
    start = 0
    try:
        while produced < limit and not decoding.finished:
            data = bytes(view[start : start + chunk_size]) if not decoding.pending else b""
            start += len(data)
            chunk = decoding.decompress(data, min(chunk_size, limit - produced))
            produced += len(chunk)
            parts.append(chunk)
            if not data and not chunk:
                # All input taken and nothing more comes out, yet the stream has not ended.
                if whole:
                    return b"", f"the {coding} data is cut short (it ends before its end)"
                break
    except CodingError as exc:
        return b"", corrupt_data(coding, exc)
    body = b"".join(parts)
    # (brotli may give a little more than asked for.)
    return body if len(body) <= limit else body[:limit], None


def undo_coding(
    body: bytes, encodings: Sequence[str] | None, limit: int, *, whole: bool = True
) -> tuple[bytes, str | None]:
    """A body read as its ``Content-Encoding`` header ``encodings`` say, up to ``limit``
    bytes (see :func:`decode_capped`), or ``b""`` and why that cannot be done. A body
    declared ``gzip`` alone that is no gzip data is kept as it is, as lenient readers of
    robots.txt and of the homepage's links read it."""
    coding = body_coding(encodings)
    if coding is None or (gzip_alone(coding) and not body.startswith(GZIP_MAGIC)):
        return body, None
    decoded, why = decode_capped(body, coding, limit, whole=whole)
    if why is not None:
        return b"", f"its Content-Encoding: {coding} cannot be undone: {why}"
    return decoded, None
