"""HTTP ``Link`` headers (RFC 8288)."""

from __future__ import annotations

from collections.abc import Sequence

_SPACE = " \t\r\n"


def parse_link_header(values: Sequence[str]) -> list[tuple[str, frozenset[str]]]:
    """The links of one or more ``Link`` header values, in order.

    Each link is ``(target as written, lowercased rel values)``: ``<url>; rel="canonical"``
    gives ``("url", frozenset({"canonical"}))``. A header may hold several comma-separated
    links; commas and semicolons inside ``<...>`` or quoted strings do not split. Only the
    first ``rel`` parameter of a link counts (RFC 8288, 3.3); a link without one has an empty
    set. Malformed parts are skipped.
    """
    if isinstance(values, str):
        values = [values]
    links: list[tuple[str, frozenset[str]]] = []
    for value in values:
        if isinstance(value, str):
            links.extend(_parse_one(value))
    return links


def _parse_one(text: str) -> list[tuple[str, frozenset[str]]]:
    links: list[tuple[str, frozenset[str]]] = []
    length = len(text)
    pos = 0
    while pos < length:
        while pos < length and (text[pos] in _SPACE or text[pos] == ","):
            pos += 1
        if pos >= length:
            break
        if text[pos] != "<":
            pos = _skip_link(text, pos)
            continue
        close = text.find(">", pos + 1)
        if close == -1:
            break
        target = text[pos + 1 : close].strip(_SPACE)
        pos = close + 1
        rel: frozenset[str] | None = None
        while True:
            while pos < length and text[pos] in _SPACE:
                pos += 1
            if pos >= length or text[pos] == ",":
                break
            if text[pos] != ";":
                pos = _skip_link(text, pos)
                break
            pos += 1
            name, param_value, pos = _parse_param(text, pos)
            if name == "rel" and rel is None:
                rel = frozenset(token.lower() for token in (param_value or "").split())
        links.append((target, rel if rel is not None else frozenset()))
    return links


def _parse_param(text: str, pos: int) -> tuple[str, str | None, int]:
    """Read ``name[=value]`` from ``pos``; returns (lowercased name, value, next position)."""
    length = len(text)
    while pos < length and text[pos] in _SPACE:
        pos += 1
    start = pos
    while pos < length and text[pos] not in "=;," and text[pos] not in _SPACE:
        pos += 1
    name = text[start:pos].lower()
    while pos < length and text[pos] in _SPACE:
        pos += 1
    if pos >= length or text[pos] != "=":
        return name, None, pos
    pos += 1
    while pos < length and text[pos] in _SPACE:
        pos += 1
    if pos < length and text[pos] == '"':
        pos += 1
        chars: list[str] = []
        while pos < length and text[pos] != '"':
            if text[pos] == "\\" and pos + 1 < length:
                pos += 1
            chars.append(text[pos])
            pos += 1
        return name, "".join(chars), min(pos + 1, length)
    start = pos
    while pos < length and text[pos] not in ";,":
        pos += 1
    return name, text[start:pos].strip(_SPACE), pos


def _skip_link(text: str, pos: int) -> int:
    """The position of the comma that ends the current (malformed) link, or the end."""
    length = len(text)
    quoted = False
    while pos < length:
        char = text[pos]
        if quoted:
            if char == "\\":
                pos += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == ",":
            return pos
        pos += 1
    return length
