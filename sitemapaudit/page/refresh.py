"""Declarative refreshes: ``<meta http-equiv="refresh">`` and the ``Refresh`` header.

A refresh that names a URL sends the browser there after a delay; search engines treat it as a
redirect (Google: an instant one as a permanent redirect, a delayed one as a temporary one).
"""

from __future__ import annotations

from dataclasses import dataclass

from sitemapaudit.urls import resolve_href

_WHITESPACE = "\t\n\x0c\r "
# What the URL parser strips from both ends of a URL: C0 controls and space.
_URL_STRIP = "".join(map(chr, range(0x21)))


@dataclass(frozen=True, slots=True)
class Refresh:
    """A parsed refresh value: the delay in whole seconds and the URL text, as written
    (``None`` when it names no URL, which reloads the page itself)."""

    delay: int
    url: str | None

    def target(self, base: str, query_encoding: str = "utf-8") -> str | None:
        """The absolute URL the refresh sends the browser to, resolved against ``base``
        (its query percent-encoded in ``query_encoding``, the page's)."""
        if self.url is None:
            return None
        return resolve_href(base, self.url.strip(_URL_STRIP), query_encoding=query_encoding)


def parse_refresh(value: str) -> Refresh | None:
    """Read a refresh value as the HTML standard's "shared declarative refresh steps" do.

    ``"5"``, ``"0; url=/next"``, ``"3,URL='/x'"``, ``"0 /next"``. ``None`` when the value is not
    a refresh at all (it does not start with a number).
    """
    pos, end = _skip(value, 0), len(value)
    start = pos
    while pos < end and value[pos].isascii() and value[pos].isdigit():
        pos += 1
    digits = value[start:pos]
    if not digits and (pos >= end or value[pos] != "."):
        return None
    delay = int(digits) if digits else 0
    while pos < end and (value[pos] == "." or (value[pos].isascii() and value[pos].isdigit())):
        pos += 1
    if pos < end:
        if value[pos] not in _WHITESPACE and value[pos] not in ";,":
            return None
        pos = _skip(value, pos)
        if pos < end and value[pos] in ";,":
            pos = _skip(value, pos + 1)
    if pos >= end:
        return Refresh(delay, None)
    return Refresh(delay, _url_text(value, pos) or None)


def _url_text(value: str, pos: int) -> str:
    """The URL part of a refresh value from ``pos``: after an optional ``url=`` and an
    optional opening quote, up to the matching quote or the end."""
    plain = value[pos:]
    if value[pos : pos + 3].lower() != "url":
        return _unquote(value, pos)
    after = _skip(value, pos + 3)
    if after >= len(value) or value[after] != "=":
        return plain
    return _unquote(value, _skip(value, after + 1))


def _unquote(value: str, pos: int) -> str:
    if pos < len(value) and value[pos] in "'\"":
        quote = value[pos]
        text = value[pos + 1 :]
        cut = text.find(quote)
        return text if cut < 0 else text[:cut]
    return value[pos:]


def _skip(value: str, pos: int) -> int:
    while pos < len(value) and value[pos] in _WHITESPACE:
        pos += 1
    return pos
