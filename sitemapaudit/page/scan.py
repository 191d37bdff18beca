"""Reading a plain ``<head>`` without building a tree.

Most heads are nothing but ``<meta>``, ``<link>``, ``<base>``, ``<title>``, ``<script>`` and
``<style>`` elements, comments and whitespace, written in the ordinary way. For such a head,
:func:`scan_head` finds its ``<meta>``, ``<link>`` and ``<base>`` tags as the HTML tokenizer
does. Anything whose reading could depend on the parser (character references, other elements
or text, stray end tags, unusual attribute syntax, control characters, form feeds, a tag cut
short, a ``<`` in a title or a ``</`` in a script) makes it return ``None``, and the caller
parses the document with lxml instead."""

from __future__ import annotations

import re

_WS = r"[\t\n\r ]"
# One attribute: a name, optionally "=" and a value; quoted values without character
# references, carriage returns or control characters; an unquoted value ends at whitespace or ">".
_NAME = r"[A-Za-z_:][-A-Za-z0-9_:.]*"
_DOUBLE_QUOTED = r'"[^"&\x00-\x08\x0b\r\x0e-\x1f\x7f-\x9f]*"'
_SINGLE_QUOTED = r"'[^'&\x00-\x08\x0b\r\x0e-\x1f\x7f-\x9f]*'"
_UNQUOTED = r"[^\t\n\f\r \"'<=>`&\x00-\x1f\x7f-\x9f]+(?![^\t\n\f\r >])"
_ATTRIBUTES = (
    rf"(?:{_WS}+{_NAME}(?:{_WS}*={_WS}*(?:{_DOUBLE_QUOTED}|{_SINGLE_QUOTED}|{_UNQUOTED}))?)*"
)
# A comment that does not end abruptly ("<!-->") and holds no "--".
_COMMENT = r"<!--(?!-?>)[^-]*(?:-(?!-)[^-]*)*-->"
_SKIP = f"{_WS}*(?:{_COMMENT}{_WS}*)*"

_PROLOGUE_RE = re.compile(
    rf"{_SKIP}(?:(?i:<!doctype){_WS}[^<>]*>{_SKIP})?"
    rf"(?:(?i:<html){_ATTRIBUTES}{_WS}*>{_SKIP})?"
    rf"(?i:<head){_ATTRIBUTES}{_WS}*>",
    re.ASCII,
)
# The next element of the head: a void element whose attributes are kept, a <title> without
# "<" in its text, or a <script> or <style> whose text holds no "</" or "<!".
_ELEMENT_RE = re.compile(
    rf"{_SKIP}(?:"
    rf"<((?i:meta|link|base))({_ATTRIBUTES}){_WS}*/?>"
    rf"|(?i:<title){_ATTRIBUTES}{_WS}*>[^<]*(?i:</title){_WS}*>"
    rf"|<((?i:script|style)){_ATTRIBUTES}{_WS}*>[^<]*(?:<(?![/!])[^<]*)*</(?i:\3){_WS}*>"
    r")",
    re.ASCII,
)
_END_RE = re.compile(rf"{_SKIP}(?:(?i:</head){_WS}*>)?", re.ASCII)
_ATTRIBUTE_RE = re.compile(
    rf"{_WS}+({_NAME})(?:{_WS}*={_WS}*(?:({_DOUBLE_QUOTED})|({_SINGLE_QUOTED})|({_UNQUOTED})))?",
    re.ASCII,
)


def scan_head(text: str) -> list[tuple[str, str]] | None:
    """The ``meta``, ``link`` and ``base`` tags of a document that is only a plain head.

    ``text`` is a whole document or its start (it may end anywhere after the ``<head>`` tag,
    after ``</head>`` at the latest). Tags come in document order as (lowercase name, the text
    of its attributes, for :func:`scan_attributes`). ``None`` when the head is not plain
    enough to be read without a parser.
    """
    if "\x00" in text:
        return None
    match = _PROLOGUE_RE.match(text)
    if match is None:
        return None
    tags: list[tuple[str, str]] = []
    pos = match.end()
    while (match := _ELEMENT_RE.match(text, pos)) is not None:
        pos = match.end()
        tag = match[1]
        if tag is not None:
            tags.append((tag.lower(), match[2]))
    return tags if _END_RE.fullmatch(text, pos) is not None else None


def scan_attributes(source: str) -> dict[str, str]:
    """The attributes of a tag found by :func:`scan_head`: an attribute given twice keeps its
    first value, one without a value is ``""``."""
    attributes: dict[str, str] = {}
    for name, double, single, bare in _ATTRIBUTE_RE.findall(source):
        attributes.setdefault(name.lower(), double[1:-1] or single[1:-1] or bare)
    return attributes
