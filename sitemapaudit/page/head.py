"""What the ``<head>`` of an HTML page says about indexing: robots metas and the canonical."""

from __future__ import annotations

import codecs
import html
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import lxml.html
from lxml import etree

from sitemapaudit.page.refresh import Refresh, parse_refresh
from sitemapaudit.page.robots_directives import directives_noindex, unavailable_after
from sitemapaudit.page.scan import scan_attributes, scan_head
from sitemapaudit.urls import resolve_href

# The rest of a tag after its name, up to its ">", as the tokenizer reads it: a quoted value
# (after "=") runs to its closing quote, whatever it holds ("</head>", "<body>", ">").
_TAG_REST = rb"""(?:[^>="']++|=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+'|(?!["']))|["'])*+>"""
_WS_OR_END = rb"(?=[\t\n\f\r />])"
# What the head scan passes over in one go: text, and tags other than those below (a quoted
# attribute value holding "</head>" included), and a "<" that starts no tag. It stops before
# anything that may be the start of one of those cut short by the end of what has arrived.
_HEAD_SKIP = (
    rb"(?:[^<]++"
    rb"|<(?!(?i:script|style|title|noframes|body)"
    + _WS_OR_END
    + rb"|/(?i:head)"
    + _WS_OR_END
    + rb")"
    rb"/?[A-Za-z][^\t\n\f\r />]*+" + _TAG_REST + rb"|<(?=[^/A-Za-z!])|</(?=[^A-Za-z])"
    rb"|<!-?(?=[^-]))*+"
)
# What ends the head (``</head>``, ``<body``), and what the tokenizer reads as text or as
# part of a tag, in which neither counts: comments, the raw text of script, style, title and
# noframes elements, and quoted attribute values. After what _HEAD_SKIP passes over, one of:
# ``whole``, a comment or element matched whole (``raw``: its name); ``open``, the start of a
# comment or element that has not ended yet; ``close``, ``</head>``; ``body``, ``<body``;
# ``cut``, a tag whose ">" has not arrived. None: what has arrived ends there, or with
# something cut short.
_HEAD_TOKEN_RE = re.compile(
    _HEAD_SKIP + rb"(?:<(?:(?P<whole>!--(?:-?>|.*?--!?>)"
    rb"|(?P<raw>(?i:script|style|title|noframes))"
    + _WS_OR_END
    + _TAG_REST
    + rb".*?</(?i:(?P=raw))"
    + _WS_OR_END
    + rb")"
    rb"|(?P<open>!--|(?i:script|style|title|noframes)" + _WS_OR_END + rb")"
    rb"|(?P<close>/(?i:head)" + _WS_OR_END + _TAG_REST + rb")"
    rb"|(?P<body>(?i:body)" + _WS_OR_END + rb")"
    rb"|(?P<cut>/?[A-Za-z])))?",
    re.DOTALL,
)
# The start tag of one of those raw-text elements written self-closing (``<script src=a.js/>``):
# in HTML the "/" means nothing, and the element's text runs on to its end tag (a robots meta
# after it is script text), where lxml's parser would end the element at once.
_SELF_CLOSED_TEXT_RE = re.compile(
    r"<(script|style|title|noframes)(?=[\t\n\f\r />])([^<>]*?)/>", re.IGNORECASE
)
# HTML's whitespace (str.strip() would also take U+00A0 and other Unicode spaces, which are
# text to an HTML parser).
HTML_WHITESPACE = "\t\n\f\r "
# The start tags the HTML Standard's "in head" insertion mode keeps in the head (``html`` and
# ``head`` are ignored there): any other start tag, text that is not whitespace and the end
# tags of body, html and br end the head, and the parser starts the body with them.
_IN_HEAD = frozenset(
    {
        "html",
        "head",
        "base",
        "basefont",
        "bgsound",
        "link",
        "meta",
        "title",
        "noscript",
        "noframes",
        "style",
        "script",
        "template",
    }
)
_HEAD_ENDING_END_TAGS = frozenset({"body", "html", "br"})
# Elements whose content the tokenizer reads as text up to their end tag (``noscript`` as a
# browser running scripts reads it, as Google's renderer does).
_TEXT_ELEMENTS = frozenset(
    {"script", "style", "title", "noframes", "noscript", "textarea", "xmp", "iframe", "noembed"}
)
_TAG_ATTRIBUTES = r"""(?:=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+')|[^>])*+>"""
# One piece of a head as the tokenizer reads it: whitespace; a comment, one that runs to the
# end of the text included; a doctype, processing instruction or other bogus comment; an end
# tag (group 1: its name); a start tag (group 2).
_HEAD_PART_RE = re.compile(
    r"[\t\n\f\r ]+"
    r"|<!--(?:-?>|.*?--!?>|.*)"
    r"|<[!?][^>]*>"
    r"|</(?:([A-Za-z][^\t\n\f\r />]*)" + _TAG_ATTRIBUTES + r"|(?![A-Za-z])[^>]*>)"
    r"|<([A-Za-z][^\t\n\f\r />]*)" + _TAG_ATTRIBUTES,
    re.DOTALL,
)
_TEXT_CLOSERS = {
    name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.IGNORECASE) for name in _TEXT_ELEMENTS
}
_META_CHARSET_RE = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.IGNORECASE
)
_XML_ENCODING_RE = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""")
_PRESCAN_BYTES = 1024
# Codecs whose strict decoding of a whole body, when it succeeds, is what decoding it
# incrementally gives.
_STATELESS_CODECS = frozenset({"utf-8", "cp1252"})
# The labels of the WHATWG Encoding Standard (what browsers accept in a charset) by the Python
# codec that decodes as browsers do: a label's own codec often differs (browsers read
# ISO-8859-1 and US-ASCII as windows-1252, Shift_JIS as windows-31j, GB2312 as GB18030, EUC-KR
# as windows-949, Big5 with the HKSCS extensions). A label not listed names no encoding.
_WHATWG_LABELS: dict[str, str] = {
    label: codec
    for codec, labels in {
        "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
        "cp866": "866 cp866 csibm866 ibm866",
        "iso8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2"
        " iso_8859-2:1987 l2 latin2",
        "iso8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3"
        " iso_8859-3:1988 l3 latin3",
        "iso8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4"
        " iso_8859-4:1988 l4 latin4",
        "iso8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595"
        " iso_8859-5 iso_8859-5:1988",
        "iso8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114"
        " iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6"
        " iso_8859-6:1987",
        "iso8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126"
        " iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
        "iso8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138"
        " iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
        "iso8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
        "iso8859-13": "iso-8859-13 iso8859-13 iso885913",
        "iso8859-14": "iso-8859-14 iso8859-14 iso885914",
        "iso8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
        "iso8859-16": "iso-8859-16",
        "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
        "koi8-u": "koi8-ru koi8-u",
        "mac-roman": "csmacintosh mac macintosh x-mac-roman",
        "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
        "cp1250": "cp1250 windows-1250 x-cp1250",
        "cp1251": "cp1251 windows-1251 x-cp1251",
        "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100"
        " iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252"
        " x-cp1252 latin-1",  # latin-1 is no WHATWG label: browsers fall back to windows-1252
        "cp1253": "cp1253 windows-1253 x-cp1253",
        "cp1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9"
        " iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
        "cp1255": "cp1255 windows-1255 x-cp1255",
        "cp1256": "cp1256 windows-1256 x-cp1256",
        "cp1257": "cp1257 windows-1257 x-cp1257",
        "cp1258": "cp1258 windows-1258 x-cp1258",
        "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
        "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58"
        " x-gbk gb18030",
        "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
        "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
        "iso2022_jp": "csiso2022jp iso-2022-jp",
        "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
        "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987"
        " ks_c_5601-1989 ksc5601 ksc_5601 windows-949",
        # Without a byte order mark, "utf-16" and its other labels mean little-endian.
        "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
        "utf-16-be": "unicodefffe utf-16be",
    }.items()
    for label in labels.split()
}


@dataclass(frozen=True, slots=True)
class HeadFacts:
    """The indexing facts of a page's head.

    ``noindex`` lists the sources that forbid indexing (``"meta:robots"``,
    ``"meta:googlebot"``: the lowercased meta name), ``canonical`` is the absolute URL of the
    first ``<link rel="canonical">`` with an ``href``, and ``head_complete`` says whether the
    end of the head (``</head>`` or ``<body``, or what ends it early: see ``broken``) was
    seen. ``unavailable_after`` pairs each of
    those sources that sets an ``unavailable_after`` date with its earliest one (see
    :func:`~sitemapaudit.page.robots_directives.unavailable_after`). ``canonicals`` holds the
    absolute URL of every canonical link, in document order, without repeats. ``refresh`` is
    the delay in seconds and the absolute URL of the first ``<meta http-equiv="refresh">`` (the
    one a browser obeys) when it names a URL. ``broken`` is set when the head ends early, at
    an element that does not belong in it (an ``<img>``, a ``<div>``, text), before its
    ``</head>`` or ``<body>``, and signals come after it that a parser then reads as body
    content, where search engines ignore them: (what ended it, those signals). In a page read
    as XML (:mod:`sitemapaudit.page.xhtml`) it is the first fatal error that ends it.
    """

    noindex: tuple[str, ...]
    canonical: str | None
    head_complete: bool
    unavailable_after: tuple[tuple[str, datetime], ...] = ()
    canonicals: tuple[str, ...] = ()
    refresh: tuple[int, str] | None = None
    broken: tuple[str, tuple[str, ...]] | None = None


def head_end_offset(body: bytes) -> int | None:
    """Byte offset where the content of the head ends: of ``<body``, or, after ``</head>``,
    of the first thing the HTML Standard's "after head" insertion mode does not put back in
    the head (see :func:`_scan_after_head`), or the end of ``body`` when nothing has come
    after ``</head>`` but such elements.

    Case-insensitive, and as the HTML tokenizer reads them: not inside a comment, a quoted
    attribute value or the text of a ``<script>``, ``<style>``, ``<title>`` or
    ``<noframes>``. ``None`` when neither has arrived yet. (A UTF-16 page never matches.)
    """
    return _head_bounds(body)[1]


def _head_bounds(body: bytes) -> tuple[int | None, int | None]:
    """``(offset just past </head>, or None; head_end_offset(body))``."""
    end, resume, closer, closed = _scan_head_end(body)
    if end is not None or closed is None:
        return closed, end
    # Everything after </head> belongs back in the head: the head ends with the body.
    return closed, len(body) if closer is not None else resume


_ScanResult = tuple[int | None, int, "re.Pattern[bytes] | None", int | None]
"""What a head scanner gives: ``(end of the head, or None; where to go on once more bytes
have arrived; the pattern that ends the comment or element open there, if any; the offset
just past ``</head>`` once it has been seen, else None)``."""


def _scan_head_end(body: bytes, start: int = 0, after: bool = False) -> _ScanResult:
    """Scan ``body`` from ``start`` (a place after ``</head>`` when ``after``)."""
    if after:
        return (*_scan_after_head(body, start), start)
    position = start
    while True:
        match = _HEAD_TOKEN_RE.match(body, position)
        assert match is not None  # (everything in the pattern may match nothing)
        group = match.lastgroup
        if group is None:
            # All that has arrived is passed over, or it ends with something cut short.
            return None, match.end(), None, None
        tag = match.start(group) - 1  # (its "<")
        if group == "whole":
            position = match.end()
        elif group == "open":  # one that goes on past what has arrived
            opener = match.group(group).lower()
            if opener == b"!--":
                if len(body) - match.end() < 2:  # "<!-->" and "<!--->" end at once
                    return None, tag, None, None
                return None, match.end(), _CLOSERS[b"--"], None
            content = body.find(b">", match.end())
            if content < 0:  # the start tag itself is cut short
                return None, tag, None, None
            return None, content + 1, _CLOSERS[opener], None
        elif group == "cut":  # a tag cut short: read again with the bytes after it
            return None, tag, None, None
        elif group == "close":  # </head>: what follows may still belong in the head
            return (*_scan_after_head(body, match.end()), match.end())
        else:  # <body
            return tag, tag, None, None


# One piece of what follows ``</head>`` that the "after head" insertion mode keeps in the head
# (no group): whitespace, a comment, a doctype or bogus comment ("</" and no letter too), a
# script, style, title or
# noframes element up to its end tag (group 1: its name), a head element's start tag, an end
# tag other than </body>, </html> and </br> (ignored). Group 2: a comment or raw-text
# element whose end has not arrived. Group 3: a tag's name (an end tag's with its "/").
_AFTER_HEAD_PART_RE = re.compile(
    rb"[\t\n\f\r ]+"
    rb"|<!--(?:-?>|.*?--!?>)"
    rb"|<(?:!(?!--)|\?|/(?![A-Za-z]))[^>]*>"
    rb"|<(script|style|title|noframes)(?=[\t\n\f\r />])"
    + _TAG_REST
    + rb".*?(?=</(?:\1)[\t\n\f\r />])"
    rb"|<(?:meta|link|base|basefont|bgsound|template|head|html)(?=[\t\n\f\r />])"
    + _TAG_REST
    + rb"|</(?!(?:body|html|br)[\t\n\f\r />])[A-Za-z][^\t\n\f\r />]*+"
    + _TAG_REST
    + rb"|(<!--|<(?:script|style|title|noframes)(?=[\t\n\f\r />]))"
    rb"|<(/?[A-Za-z][^\t\n\f\r />]*+)",
    re.IGNORECASE | re.DOTALL,
)
# Start tags that stay in the head after </head> (those the pattern above takes whole when
# their ">" has arrived).
_AFTER_HEAD_TAGS = frozenset(
    {
        b"meta",
        b"link",
        b"base",
        b"basefont",
        b"bgsound",
        b"template",
        b"head",
        b"html",
        b"script",
        b"style",
        b"title",
        b"noframes",
    }
)
_BODY_END_TAGS = frozenset({b"/body", b"/html", b"/br"})


def _scan_after_head(body: bytes, start: int) -> tuple[int | None, int, re.Pattern[bytes] | None]:
    """Scan what follows ``</head>`` as the HTML Standard's "after head" insertion mode reads
    it: whitespace, comments and the elements of a head (``<meta>``, ``<link>``, ``<base>``,
    ``<script>``, ``<style>``, ``<title>``...) are put back in the head, and ignored end tags
    skipped; the head's content ends at the first other thing: ``<body>``, any other element
    (a ``<noscript>`` too), text, or ``</body>``, ``</html>``, ``</br>``. Returns ``(its
    offset, or None; where to go on; closer)`` as :func:`_scan_head_end`."""
    position, size = start, len(body)
    while position < size:
        part = _AFTER_HEAD_PART_RE.match(body, position)
        if part is None:
            following = body[position + 1 : position + 2]
            if body[position] == 0x3C and following in (b"", b"/", b"!", b"?"):
                # "<", "</", "<!..." or "<?..." whose end has not arrived.
                return None, position, None
            return position, position, None  # text (a "<" that starts no tag included)
        if part.lastindex == 2:  # a comment or raw-text element that has not ended yet
            opener = part.group(2).lower()
            if opener == b"<!--":
                if size - part.end() < 2:
                    return None, position, None
                return None, part.end(), _CLOSERS[b"--"]
            content = body.find(b">", part.end())
            if content < 0:
                return None, position, None
            return None, content + 1, _CLOSERS[opener[1:]]
        if part.lastindex == 3:  # a tag whose ">" has not arrived, or that ends the head
            name = part.group(3).lower()
            if part.end() == size:  # its name may go on
                return None, position, None
            if name in _BODY_END_TAGS or (
                not name.startswith(b"/") and name not in _AFTER_HEAD_TAGS
            ):
                return position, position, None
            return None, position, None  # a tag of the head cut short
        position = part.end()
    return None, position, None


# What ends a comment, or the text of each raw-text element, as the tokenizer sees it.
_CLOSERS = {
    b"--": re.compile(rb"--!?>"),
    **{
        name: re.compile(rb"</" + name + rb"(?=[\t\n\f\r />])", re.IGNORECASE)
        for name in (b"script", b"style", b"title", b"noframes")
    },
}
# Bytes kept of the text of an open comment or element: a closer cut by a chunk border.
_CLOSER_OVERLAP = 16


class HeadEnd:
    """Finds the end of the head in a body that arrives in chunks (see
    :func:`head_end_offset`). Each byte is scanned about once: only the start of a tag cut
    short is read again, and only the tail of a long open script, style or comment is kept.
    After ``</head>`` it waits for the first thing that does not belong back in the head."""

    # ``(bytes, start, after) -> _ScanResult``, as _scan_head_end.
    _scan = staticmethod(_scan_head_end)

    def __init__(self) -> None:
        self._pending = b""
        self._dropped = 0
        self._closer: re.Pattern[bytes] | None = None
        # Whether </head> has been seen.
        self._after = False

    def feed(self, data: bytes) -> int | None:
        """The next chunk; the offset of the end of the head in the whole body once seen."""
        pending = self._pending + data
        position = 0
        if self._closer is not None:
            closed = self._closer.search(pending)
            if closed is None:
                self._keep(pending, max(0, len(pending) - _CLOSER_OVERLAP))
                return None
            # After </head> an element's end tag is read as a tag, not as text.
            as_tag = self._after and closed.group(0).startswith(b"</")
            position, self._closer = (closed.start() if as_tag else closed.end()), None
        end, resume, self._closer, closed_at = self._scan(pending, position, self._after)
        self._after = closed_at is not None
        if end is not None:
            return self._dropped + end
        if self._closer is not None:
            resume = max(resume, len(pending) - _CLOSER_OVERLAP)
        self._keep(pending, resume)
        return None

    def _keep(self, pending: bytes, resume: int) -> None:
        self._pending = pending[resume:]
        self._dropped += resume


def _codec(label: str | bytes | None) -> str | None:
    if label is None:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", "replace")
    name = label.strip().strip("\"'").lower()
    # A label browsers do not know (``cp500``, ``utf-7``, ``utf-32``) is ignored, as they ignore
    # it: the page is read as if it named none.
    return _WHATWG_LABELS.get(name)


def _sniff_encoding(body: bytes, declared: str | None) -> tuple[str | None, int]:
    """(codec, bytes of BOM to skip): BOM, then the declared charset, then the document's own."""
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if body.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if body.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    codec = _codec(declared)
    if codec is not None:
        return codec, 0
    start = body[:_PRESCAN_BYTES]
    match = _XML_ENCODING_RE.match(start) or _META_CHARSET_RE.search(start)
    if match is not None:
        codec = _codec(match.group(1))
        if codec is not None and codec.startswith("utf-16"):
            codec = "utf-8"
        return codec, 0
    return None, 0


def decode_html(body: bytes, *, encoding: str | None = None) -> str:
    """The text of an HTML document, which may be cut short.

    The encoding comes from a BOM, else ``encoding`` (the HTTP charset), else a
    ``<meta charset>`` or XML declaration in the first 1024 bytes; without any, UTF-8 is tried
    and windows-1252 used when the bytes are not UTF-8. Bytes that do not decode are
    replaced; a character cut at the end of a partial body is dropped.
    """
    return _decode_html(body, encoding)[0]


def _decode_html(body: bytes, encoding: str | None) -> tuple[str, str]:
    """:func:`decode_html`'s text, and the codec it was decoded with."""
    codec, skip = _sniff_encoding(body, encoding)
    data = body[skip:]
    if codec in _STATELESS_CODECS or codec is None:
        try:  # the common case: every byte decodes and no character is cut at the end
            return data.decode(codec or "utf-8"), codec or "utf-8"
        except UnicodeDecodeError:
            pass
    if codec is None:
        strict = codecs.getincrementaldecoder("utf-8")("strict")
        try:
            return str(strict.decode(data, final=False)), "utf-8"
        except UnicodeDecodeError:
            codec = "cp1252"
    try:
        lenient = codecs.getincrementaldecoder(codec)("replace")
        return str(lenient.decode(data, final=False)), codec
    except (LookupError, UnicodeError, ValueError, TypeError):
        return data.decode("utf-8", "replace"), "utf-8"


_PARSERS = threading.local()


def _parser() -> lxml.html.HTMLParser:
    """This thread's HTML parser (building one per page costs as much as a small parse)."""
    parser: lxml.html.HTMLParser | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = lxml.html.HTMLParser(
            encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True
        )
    return parser


def parse_html(body: bytes, *, encoding: str | None = None) -> lxml.html.HtmlElement | None:
    """The root ``<html>`` element of a (possibly partial or broken) HTML document.

    ``None`` when there is nothing to parse. Comments and processing instructions are
    dropped and nothing is fetched from the network.
    """
    return _parse_text(decode_html(body, encoding=encoding))


def _parse_text(text: str) -> lxml.html.HtmlElement | None:
    if not text.strip():
        return None
    parser = _parser()
    try:
        root = lxml.html.document_fromstring(
            text.encode("utf-8", "replace"), parser=parser, ensure_head_body=False
        )
    except (etree.LxmlError, ValueError, TypeError):
        return None
    return root if isinstance(root, lxml.html.HtmlElement) else None


def document_head(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The ``<head>`` element of a document parsed by :func:`parse_html`, if it has one."""
    for child in root:
        if isinstance(child, lxml.html.HtmlElement) and child.tag == "head":
            return child
    return None


def _elements(head: lxml.html.HtmlElement, *tags: str) -> Iterator[lxml.html.HtmlElement]:
    """The ``tags`` elements of the head in document order, leaving out inert ``<template>``
    content."""
    templates = next(head.iter("template"), None) is not None
    for element in head.iter(*tags):
        if not isinstance(element, lxml.html.HtmlElement):
            continue
        if templates and any(ancestor.tag == "template" for ancestor in element.iterancestors()):
            continue
        yield element


def rel_tokens(value: str | None) -> frozenset[str]:
    """The lowercased tokens of a ``rel`` attribute value."""
    return frozenset(value.lower().split()) if value else frozenset()


def document_base(head: lxml.html.HtmlElement | None, url: str) -> str:
    """The base URL of a document: the first ``<base href>`` in its head, else ``url``."""
    if head is not None:
        for base in _elements(head, "base"):
            href = base.get("href")
            if href is not None:
                resolved = resolve_href(url, href)
                return resolved if resolved is not None else url
    return url


class _Attributes(Protocol):
    def get(self, key: str, /) -> str | None: ...


def head_break(text: str) -> tuple[int, str] | None:
    """Where a head ends early by the HTML Standard's tree construction rules, and what ends
    it: the offset in ``text`` (a document's start, up to its ``</head>`` or ``<body`` at the
    latest) of the first start tag that does not belong in a head (``"<svg>"``), end tag of
    body, html or br (``"</br>"``) or text that is not whitespace (``"the text 'x'"``),
    outside ``<template>`` content. ``None`` when nothing in ``text`` ends the head."""
    position, templates, size = 0, 0, len(text)
    while position < size:
        part = _HEAD_PART_RE.match(text, position)
        if part is None:
            after = text[position + 1 : position + 2]
            if text[position] == "<" and (
                after in ("/", "!", "?", "") or (after.isascii() and after.isalpha())
            ):
                return None  # a tag cut short at the end of the text
            following = text.find("<", position + 1)
            following = size if following < 0 else following
            run = text[position:following]
            words = html.unescape(run).strip(HTML_WHITESPACE)
            if templates or not words:
                position = following
                continue
            start = following - len(run.lstrip(HTML_WHITESPACE))
            return start, f"the text {words[:40]!r}"
        end_name, start_name = part[1], part[2]
        if end_name is not None:
            name = end_name.lower()
            if name == "template":
                templates = max(0, templates - 1)
            elif not templates and name in _HEAD_ENDING_END_TAGS:
                return position, f"</{name}>"
        elif start_name is not None:
            name = start_name.lower()
            if name == "template":
                templates += 1
            elif not templates and name not in _IN_HEAD:
                return position, f"<{name}>"
            elif name in _TEXT_ELEMENTS:
                closer = _TEXT_CLOSERS[name].search(text, part.end())
                if closer is None:
                    return None
                position = closer.start()
                continue
        position = part.end()
    return None


def _parsed_head_tags(
    text: str, agent: str, *, ended: bool
) -> tuple[list[tuple[str, _Attributes]], tuple[str, tuple[str, ...]] | None, bool]:
    """The ``meta``, ``link`` and ``base`` elements of the head lxml builds, in document order;
    when ``text`` ends where the head ends (``ended``: at its ``</head>`` or ``<body>``) but
    the parser started the body before that, what started it and the signals it took along
    (see ``HeadFacts.broken``); and whether something in ``text`` ends the head early."""
    text = _SELF_CLOSED_TEXT_RE.sub(r"<\1\2>", text)
    # lxml's parser ends a head at fewer elements than browsers do (not at <svg>, <input> or
    # a custom element): the body is started where the HTML Standard starts it.
    ended_at = head_break(text)
    if ended_at is not None:
        cut, start = ended_at
        # An end tag that ends the head (</body>, </br>) gives way to the body it implies.
        rest = text.index(">", cut) + 1 if start.startswith("</") else cut
        text = f"{text[:cut]}<body>{text[rest:]}"
    root = _parse_text(text)
    head = document_head(root) if root is not None else None
    tags: list[tuple[str, _Attributes]] = []
    if head is not None:
        tags = [
            (str(element.tag), element)
            for element in _elements(head, "meta", "link", "base")
            if not (element.tag == "meta" and _is_refresh(element) and _in_noscript(element))
        ]
    broken = None
    if ended and root is not None:
        broken = _early_body(root, agent, None if ended_at is None else ended_at[1])
    return tags, broken, ended_at is not None


def _early_body(
    root: lxml.html.HtmlElement, agent: str, start: str | None
) -> tuple[str, tuple[str, ...]] | None:
    """What started the body inside the head (``start``, when known), and the signals after
    it (``None`` when the parser put nothing in a body, or nothing that matters came
    after)."""
    body = next((child for child in root if child.tag == "body"), None)
    if body is None:
        return None
    ignored = signals_named(
        ((str(element.tag), element) for element in body.iter("meta", "link")), agent
    )
    if not ignored:
        return None
    if start is not None:
        return start, ignored
    text = (body.text or "").strip(HTML_WHITESPACE)
    if text:
        start = f"the text {text[:40]!r}"
    else:
        first = next((child for child in body if isinstance(child.tag, str)), None)
        start = "an element" if first is None else f"<{first.tag}>"
    return start, ignored


def signals_named(tags: Iterable[tuple[str, _Attributes]], agent: str) -> tuple[str, ...]:
    """What the ``meta`` and ``link`` tags among ``tags`` (name, attributes) say that matters to
    the checks, each named once, in document order: ``"a robots meta"``, ``"a <agent> meta"``,
    ``"a refresh meta"``, ``"a canonical link"``, ``"hreflang links"``."""
    named: dict[str, None] = {}
    for tag, attributes in tags:
        if tag == "meta":
            name = (attributes.get("name") or "").strip().lower()
            if name in ("robots", agent):
                named[f"a {name} meta"] = None
            elif _is_refresh(attributes):
                named["a refresh meta"] = None
        elif tag == "link":
            rels = rel_tokens(attributes.get("rel"))
            if "canonical" in rels:
                named["a canonical link"] = None
            elif "alternate" in rels and attributes.get("hreflang") is not None:
                named["hreflang links"] = None
    return tuple(named)


def _in_noscript(element: lxml.html.HtmlElement) -> bool:
    """Inside ``<noscript>``: a browser that runs scripts, as Google's renderer does, reads
    none of it (a refresh there is for browsers without scripts)."""
    return any(ancestor.tag == "noscript" for ancestor in element.iterancestors())


def _scanned_head_tags(scanned: list[tuple[str, str]], agent: str) -> list[tuple[str, _Attributes]]:
    """The scanned tags that can matter to :func:`parse_head`, with their attributes read: a
    robots, user-agent or refresh meta or a canonical link has that word in its attribute
    text."""
    if not agent.isascii():  # its lowercase may depend on neighbouring letters: read every meta
        agent = ""
    tags: list[tuple[str, _Attributes]] = []
    for tag, source in scanned:
        text = source.lower()
        if tag == "link":
            wanted = "canonical" in text
        else:
            wanted = tag == "base" or "robots" in text or agent in text or "refresh" in text
        if wanted:
            tags.append((tag, scan_attributes(source)))
    return tags


def _after_head_tags(text: str, agent: str) -> list[tuple[str, _Attributes]]:
    """The tags that matter of what follows ``</head>`` and is put back in the head."""
    scanned = scan_head("<head>" + text)
    if scanned is not None:
        return _scanned_head_tags(scanned, agent)
    return _parsed_head_tags(f"<head>{text}</head>", agent, ended=True)[0]


def parse_head(
    body: bytes,
    base_url: str,
    *,
    user_agent: str = "googlebot",
    encoding: str | None = None,
) -> HeadFacts:
    """Read the robots metas, the canonical links and the refresh meta of a page's head.

    ``body`` may be cut anywhere (a download stopped after ``</head>``); only what comes
    before the end of the head is parsed. Only metas in the head named ``robots`` or
    ``user_agent`` count, so "noindex" in body text, in a script or in a meta inside the body
    does not. ``encoding`` is the charset of the Content-Type header, if any.
    """
    closed, end = _head_bounds(body)
    portion = body if end is None else body[:end]
    # What follows </head> and belongs back in the head (see _scan_after_head).
    after = b""
    if closed is not None and closed < len(portion):
        portion, after = portion[:closed], portion[closed:]
    agent = user_agent.strip().lower()
    text, codec = _decode_html(portion, encoding)
    # Browsers percent-encode the query of a URL in the page's encoding (UTF-8 for UTF-16).
    query_encoding = "utf-8" if codec.startswith("utf-16") else codec
    scanned = scan_head(text)
    broken: tuple[str, tuple[str, ...]] | None = None
    ended_early = False
    if scanned is None:
        tags, broken, ended_early = _parsed_head_tags(text, agent, ended=end is not None)
    else:
        tags = _scanned_head_tags(scanned, agent)
    if after.strip(b"\t\n\f\r ") and not ended_early:
        # (After a head that something ended early, </head> is a stray end tag in the body.)
        tags = [*tags, *_after_head_tags(after.decode(codec, "replace"), agent)]
    return head_facts(
        tags,
        base_url,
        user_agent=user_agent,
        agent=agent,
        query_encoding=query_encoding,
        head_complete=end is not None or ended_early,
        broken=broken,
    )


def head_facts(
    tags: Iterable[tuple[str, _Attributes]],
    base_url: str,
    *,
    user_agent: str,
    agent: str,
    query_encoding: str,
    head_complete: bool,
    broken: tuple[str, tuple[str, ...]] | None,
) -> HeadFacts:
    """The facts of a head from its ``meta``, ``link`` and ``base`` tags (name, attributes) in
    document order. ``agent`` is ``user_agent`` stripped and lowercased; ``query_encoding`` is
    the one in which the queries of its URLs are percent-encoded (the page's)."""
    noindex: list[str] = []
    expiries: dict[str, datetime] = {}
    base_href: str | None = None
    canonical_hrefs: list[str] = []
    first_refresh: Refresh | None = None
    for tag, attributes in tags:
        if tag == "meta":
            name = (attributes.get("name") or "").strip().lower()
            if name not in ("robots", agent):
                if first_refresh is None and _is_refresh(attributes):
                    first_refresh = parse_refresh(attributes.get("content") or "")
                continue
            source = f"meta:{name}"
            content = attributes.get("content") or ""
            if source not in noindex and directives_noindex(content, user_agent=user_agent):
                noindex.append(source)
            when = unavailable_after(content, user_agent=user_agent)
            if when is not None:
                expiries[source] = min(when, expiries.get(source, when))
        elif tag == "link":
            href = attributes.get("href")
            if href is not None and "canonical" in rel_tokens(attributes.get("rel")):
                canonical_hrefs.append(href)
        elif base_href is None:
            base_href = attributes.get("href")
    base = base_url
    if base_href is not None:
        base = resolve_href(base_url, base_href, query_encoding=query_encoding) or base_url
    canonicals = tuple(
        dict.fromkeys(
            url
            for href in canonical_hrefs
            if (url := resolve_href(base, href, query_encoding=query_encoding)) is not None
        )
    )
    refresh: tuple[int, str] | None = None
    if (
        first_refresh is not None
        and (target := first_refresh.target(base, query_encoding)) is not None
    ):
        refresh = (first_refresh.delay, target)
    return HeadFacts(
        noindex=tuple(noindex),
        canonical=canonicals[0] if canonicals else None,
        head_complete=head_complete,
        unavailable_after=tuple(expiries.items()),
        canonicals=canonicals,
        refresh=refresh,
        broken=broken,
    )


def _is_refresh(attributes: _Attributes) -> bool:
    return (attributes.get("http-equiv") or "").strip().lower() == "refresh"
