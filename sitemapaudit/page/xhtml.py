"""What the ``<head>`` of a page read as XML says: XHTML served as ``application/xhtml+xml``.

Browsers, and Google's renderer with them, parse a response served as
``application/xhtml+xml`` (or as ``application/xml`` or ``text/xml``, when its root element is
XHTML's ``<html>``) with an XML parser, not the HTML one: ``<script src="a.js"/>`` and
``<title/>`` end where they are written, CDATA sections, comments and processing instructions
are read as XML reads them, element names are case-sensitive and elements count by their
namespace, whatever their prefix. A document that is not well-formed stops at its first fatal
error: Chromium (libxml2, as lxml is) renders what came before it under an error message,
Firefox nothing at all. Its head is read here up to that error, and what it loses after it is
reported as the head breaking there.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from collections.abc import Iterable
from typing import Any

from lxml import etree

from sitemapaudit.page.head import (
    _XML_ENCODING_RE,
    HeadEnd,
    HeadFacts,
    _Attributes,
    _codec,
    _parse_text,
    head_facts,
    signals_named,
)

XHTML_NS = "http://www.w3.org/1999/xhtml"
XHTML_MEDIA_TYPE = "application/xhtml+xml"
# Read as XHTML when their root element is XHTML's <html>; otherwise not a page.
XML_MEDIA_TYPES = frozenset({"application/xml", "text/xml"})
XML_PAGE_TYPES = XML_MEDIA_TYPES | {XHTML_MEDIA_TYPE}

_X = "{" + XHTML_NS + "}"
_HTML, _HEAD, _TEMPLATE = _X + "html", _X + "head", _X + "template"
_SIGNAL_TAGS = {_X + "meta": "meta", _X + "link": "link", _X + "base": "base"}

# What ends the head of an XML document: its ``</head>`` end tag or a ``<body>`` start tag,
# with any prefix (names are case-sensitive), outside comments, CDATA sections, processing
# instructions and a DOCTYPE's internal subset. Groups: 1, the start of a comment, CDATA
# section or processing instruction that has not ended yet; 2, of an internal subset; 3,
# ``</head>``; 4, ``<body``. (XML allows no ``<`` in attribute values.)
_PREFIX = rb"(?:[A-Za-z_][-.\w]*:)?"
_XML_HEAD_TOKEN_RE = re.compile(
    rb"<(?:!--.*?-->|!\[CDATA\[.*?\]\]>|\?.*?\?>|!DOCTYPE[^\[>]*\[.*?\][\t\n\r ]*>"
    rb"|(!--|!\[CDATA\[|\?)"
    rb"|(!DOCTYPE[^\[>]*\[)"
    rb"|(/" + _PREFIX + rb"head[\t\n\r ]*>)"
    rb"|(" + _PREFIX + rb"body(?=[\t\n\r />])))",
    re.DOTALL,
)
_XML_CLOSERS = {
    b"!--": re.compile(rb"-->"),
    b"![CDATA[": re.compile(rb"\]\]>"),
    b"?": re.compile(rb"\?>"),
}


def _scan_xml_head_end(
    body: bytes, start: int = 0
) -> tuple[int | None, int, re.Pattern[bytes] | None]:
    """As the HTML scan of :class:`~sitemapaudit.page.head.HeadEnd`, by XML's rules."""
    resume = start
    for match in _XML_HEAD_TOKEN_RE.finditer(body, start):
        group = match.lastindex
        if group is None:  # a whole comment, CDATA section, processing instruction, subset
            resume = match.end()
        elif group == 1:  # one that goes on past what has arrived
            return None, match.end(), _XML_CLOSERS[match.group(1)]
        elif group == 2:  # an internal subset: read again once more bytes have arrived
            return None, match.start(), None
        else:
            return (match.end() if group == 3 else match.start()), resume, None
    cut = body.rfind(b"<", resume)
    return None, len(body) if cut < 0 else cut, None


def _scan_xml_chunk(
    body: bytes, start: int = 0, after: bool = False
) -> tuple[int | None, int, re.Pattern[bytes] | None, int | None]:
    """:func:`_scan_xml_head_end` as :class:`HeadEnd` calls its scanner (an XML head ends at
    its ``</head>``: nothing after it is put back in the head)."""
    return (*_scan_xml_head_end(body, start), None)


class XmlHeadEnd(HeadEnd):
    """Finds the end of the head of an XML document that arrives in chunks (see
    :func:`xml_head_end_offset`)."""

    _scan = staticmethod(_scan_xml_chunk)


def xml_head_end_offset(body: bytes) -> int | None:
    """Byte offset just past ``</head>`` or of ``<body``, whichever comes first, as an XML
    parser reads them: with any namespace prefix, case-sensitive, not inside a comment, a CDATA
    section or a processing instruction. ``None`` when neither has arrived yet."""
    return _scan_xml_head_end(body)[0]


class _NothingResolver(etree.Resolver):
    """Answers every request for an external DTD or entity with empty content.

    With ``load_dtd=False`` libxml2 still opens the external DTD a DOCTYPE names when the
    document refers to an entity it does not declare (``&nbsp;``); this keeps it from reading
    local files, and ``no_network`` keeps it off the network. Such an entity is then no error,
    as for browsers (which know the entities of the XHTML DTDs without loading them); its text
    is left out.
    """

    def resolve(  # type: ignore[override]
        self, system_url: str | None, public_id: str | None, context: Any
    ) -> Any:
        return self.resolve_string(b"", context, base_url=None)


def _new_parser(*, ends: bool) -> etree.XMLPullParser:
    """A parser that reports start tags (and end tags, with ``ends``), and reads nothing
    else than the bytes it is fed."""
    parser = etree.XMLPullParser(
        events=("start", "end") if ends else ("start",),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        collect_ids=False,
    )
    parser.resolvers.add(_NothingResolver())
    return parser


class XhtmlRoot:
    """Says, from the first bytes of an XML document, whether its root element is XHTML's
    ``<html>``: :attr:`known` is ``None`` until it is known."""

    def __init__(self) -> None:
        self._parser: etree.XMLPullParser | None = _new_parser(ends=False)
        self.known: bool | None = None

    def feed(self, data: bytes) -> bool | None:
        """The next bytes; :attr:`known` after them (``False`` too for a document that is not
        well-formed before its root)."""
        parser = self._parser
        if parser is None:
            return self.known
        try:
            parser.feed(data)
        except etree.XMLSyntaxError:
            self.known, self._parser = False, None
            return False
        for _event, element in parser.read_events():
            self.known, self._parser = (
                isinstance(element, etree._Element) and (element.tag == _HTML),
                None,
            )
            return self.known
        if _first_fatal(parser) is not None:
            self.known, self._parser = False, None
        return self.known


def _xhtml_root(body: bytes, chunk: int = 4096) -> bool:
    """Whether the root element of ``body`` is XHTML's ``<html>``, read only as far as it."""
    root = XhtmlRoot()
    for start in range(0, len(body), chunk):
        known = root.feed(body[start : start + chunk])
        if known is not None:
            return known
    return False


def _first_fatal(parser: etree.XMLPullParser) -> etree._LogEntry | None:
    """The first fatal error of a parser: the point at which a browser stops reading (errors
    that are not fatal, as an undeclared namespace prefix, show a message and read on)."""
    for entry in parser.feed_error_log:
        if entry.level == etree.ErrorLevels.FATAL:
            return entry
    return None


def _xml_text(body: bytes, declared: str | None) -> tuple[str, str, str | None]:
    """The text of an XML document as browsers decode it, the codec, and the text from the
    first bytes that are not in that encoding on (``None`` when every byte decodes).

    The encoding comes from a BOM, else the Content-Type charset, else the XML declaration,
    else UTF-8; a ``<meta charset>`` does not count in XML. Browsers decode an XML document
    strictly: bytes that are not in its encoding are a fatal error. A character cut at the end
    of a partial body is dropped."""
    codec: str | None
    if body.startswith(codecs.BOM_UTF8):
        codec, data = "utf-8", body[3:]
    elif body.startswith(codecs.BOM_UTF16_LE):
        codec, data = "utf-16-le", body[2:]
    elif body.startswith(codecs.BOM_UTF16_BE):
        codec, data = "utf-16-be", body[2:]
    else:
        data = body
        codec = _codec(declared)
        if codec is None:
            match = _XML_ENCODING_RE.match(body)
            codec = _codec(match.group(1)) if match is not None else None
            if codec is None or codec.startswith("utf-16"):
                # Bytes that hold this declaration are not UTF-16 (without a BOM).
                codec = "utf-8"
    try:
        return codecs.getincrementaldecoder(codec)("strict").decode(data, final=False), codec, None
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode(codec, "replace")
        return good, codec, data[exc.start :].decode(codec, "replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return data.decode("utf-8", "replace"), "utf-8", None


def parse_xhtml_head(
    body: bytes,
    base_url: str,
    *,
    user_agent: str = "googlebot",
    encoding: str | None = None,
    xhtml: bool = True,
) -> HeadFacts | None:
    """Read the robots metas, the canonical links and the refresh meta of the head of an XML
    document, as an XML parser reads them.

    ``body`` may be cut anywhere; only what comes before the end of the head (see
    :func:`xml_head_end_offset`) is parsed. Only elements in the XHTML namespace count: the
    ``meta``, ``link`` and ``base`` elements of the ``<head>`` that is the first child of an
    ``<html>`` root, at any depth but not in a ``<template>`` (a ``<noscript>`` is an ordinary
    element in XML: a refresh in it counts). A document that is not well-formed is read up to
    its first fatal error, and ``broken`` names the error and the signals after it.

    ``xhtml`` says the response was served as ``application/xhtml+xml``; a document served
    as ``application/xml`` or ``text/xml`` whose root is not XHTML's ``<html>`` (or that is
    not well-formed before it) is not a page: ``None``. ``encoding`` is the charset of the
    Content-Type header, if any.
    """
    if not xhtml and not _xhtml_root(body):
        return None
    end = xml_head_end_offset(body)
    portion = body if end is None else body[:end]
    agent = user_agent.strip().lower()
    text, codec, undecoded = _xml_text(portion, encoding)
    if "\r" in text:  # XML reads CR LF and a lone CR as LF (lines count as libxml2 counts them)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    parser = _new_parser(ends=True)
    with contextlib.suppress(etree.XMLSyntaxError):
        parser.feed(text)
    events = [
        (event, element)
        for event, element in parser.read_events()
        if isinstance(element, etree._Element)
    ]
    # Closing the parser reads what it held back waiting for more (a "&" with no ";" after
    # it): only its errors count; what else it reports is the end of the portion, cut short.
    with contextlib.suppress(etree.XMLSyntaxError):
        parser.close()
    root, tags = _head_tags(events)
    if not xhtml and root != _HTML:
        return None
    error = _first_fatal(parser)
    at = 0 if error is None else _index(text, error.line, error.column)
    if error is not None and at >= _cut(text):
        error = None  # the end of the text, which ends at the end of the head or is cut short
    broken: tuple[str, tuple[str, ...]] | None = None
    if root is not None and root != _HTML:
        lost = _signals_in(text + (undecoded or ""), agent)
        if lost:
            broken = (f"the root element <{_local(root)}>, outside the XHTML namespace", lost)
    elif error is not None:
        lost = _signals_in(_from_tag(text, at) + (undecoded or ""), agent)
        if lost:
            message = error.message.strip().splitlines()[0]
            broken = (f"an XML error at line {error.line}, column {error.column}: {message}", lost)
    elif undecoded is not None:
        lost = _signals_in(undecoded, agent)
        if lost:
            line = text.count("\n") + 1
            column = len(text) - (text.rfind("\n") + 1) + 1
            broken = (f"bytes that are not {codec} at line {line}, column {column}", lost)
    return head_facts(
        tags,
        base_url,
        user_agent=user_agent,
        agent=agent,
        query_encoding="utf-8" if codec.startswith("utf-16") else codec,
        head_complete=end is not None,
        broken=broken,
    )


def _head_tags(
    events: Iterable[tuple[str, etree._Element]],
) -> tuple[str | None, list[tuple[str, _Attributes]]]:
    """The tag of the root element, and the XHTML ``meta``, ``link`` and ``base`` elements of
    the ``<head>`` that is its first child (when the root is XHTML's ``<html>``)."""
    root: str | None = None
    tags: list[tuple[str, _Attributes]] = []
    depth = 0
    head = False  # inside the head
    template = 0  # the depth of the template being skipped, if any
    for event, element in events:
        if event == "end":
            if depth == template:
                template = 0
            depth -= 1
            if depth == 1 and head:
                break
            continue
        depth += 1
        tag = element.tag
        if not isinstance(tag, str):
            continue
        if depth == 1:
            root = tag
            if tag != _HTML:
                break
        elif depth == 2:
            if tag != _HEAD:
                break
            head = True
        elif not template:
            if tag == _TEMPLATE:
                template = depth
            elif (name := _SIGNAL_TAGS.get(tag)) is not None:
                tags.append((name, element))
    return root, tags


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _index(text: str, line: int, column: int) -> int:
    """The index in ``text`` of libxml2's line and column (both from 1, in characters)."""
    start = 0
    for _ in range(max(0, line - 1)):
        newline = text.find("\n", start)
        if newline < 0:
            return len(text)
        start = newline + 1
    return min(len(text), start + max(0, column - 1))


def _cut(text: str) -> int:
    """Where the last tag, comment or section of ``text`` starts if it has no end (the text
    was cut there), else the end of ``text``: an error from there on is the cut's, not the
    document's."""
    opened = text.rfind("<")
    return opened if opened >= 0 and ">" not in text[opened:] else len(text)


def _from_tag(text: str, at: int) -> str:
    """The text from ``at`` on, from the start of the tag ``at`` is in, if any: an element
    whose start tag holds an error is lost with it."""
    opened = text.rfind("<", 0, at + 1)
    return text[opened:] if opened > text.rfind(">", 0, at) else text[at:]


def _signals_in(text: str, agent: str) -> tuple[str, ...]:
    """The signals (see :func:`~sitemapaudit.page.head.signals_named`) that the ``meta`` and
    ``link`` tags of ``text``, with any prefix, would give, as a lenient parser reads them."""
    root = _parse_text(text) if text.strip() else None
    if root is None:
        return ()
    return signals_named(
        (
            (local, element)
            for element in root.iter()
            if isinstance(element.tag, str)
            and (local := element.tag.rpartition(":")[2]) in ("meta", "link")
        ),
        agent,
    )
