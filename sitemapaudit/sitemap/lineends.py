"""XML's line ends: LF, CRLF and a lone CR are each one line break (XML 1.0, section 2.11).

libxml2, and the scans of decoded text here, count lines by LF alone, so in a document whose
lines end in a lone CR (old Mac OS) every position would be on line 1. Before such a document
is parsed each lone CR is made an LF: the same number of bytes, and the same document to an
XML parser (which turns a lone CR into an LF itself), so only the line numbers change. A
document with no lone CR is passed on as it is, after a scan or two of its bytes in C.

Only for a document in an encoding where a CR byte is always a CR: one that starts like
UTF-16 or UTF-32 (a byte order mark, or a zero byte among its first ones) is left alone.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator

_LONE_CR = re.compile(rb"\r(?!\n)")
_WIDE_STARTS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _wide(start: bytes) -> bool:
    """Whether a document starting with ``start`` looks UTF-16 or UTF-32 encoded."""
    return start.startswith(_WIDE_STARTS) or b"\x00" in start[:4]


def _lone_crs_as_lf(data: bytes) -> bytes:
    if b"\r" not in data or data.count(b"\r") == data.count(b"\r\n"):
        return data
    return _LONE_CR.sub(b"\n", data)


def lone_crs_as_lf(data: bytes) -> bytes:
    """The document ``data`` with each CR not followed by an LF made an LF."""
    return data if _wide(data) else _lone_crs_as_lf(data)


def lone_crs_as_lf_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """:func:`lone_crs_as_lf` for a document that comes in chunks, whose encoding the caller
    knows is not UTF-16 or UTF-32. A CR that ends a chunk is held back until the next one
    shows whether an LF follows it."""
    held = b""
    for chunk in chunks:
        data = held + chunk if held else chunk
        held = b""
        if data.endswith(b"\r"):
            data, held = data[:-1], b"\r"
        if data:
            yield _lone_crs_as_lf(data)
    if held:
        yield b"\n"
