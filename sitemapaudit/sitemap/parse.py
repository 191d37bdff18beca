"""Streaming reader for sitemap documents: XML urlsets and indexes, text lists, RSS and Atom.

The format is decided from the (decompressed) content alone. XML is fed to lxml chunk by chunk
through a pull parser that reports only the elements the format cares about; entries are
yielded as their elements close and the finished part of the tree is dropped after every
chunk, so memory stays flat however long the document is. The parser never expands entities,
never loads a DTD, never touches the network and never processes XInclude.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from itertools import chain
from typing import Any
from urllib.parse import urljoin

from lxml import etree

from sitemapaudit.sitemap.body import BodyStream
from sitemapaudit.sitemap.lineends import lone_crs_as_lf_chunks
from sitemapaudit.sitemap.records import (
    ASCII_WHITESPACE,
    PROTOCOL_MAX_BYTES,
    PROTOCOL_MAX_ENTRIES,
    SITEMAP_NAMESPACE,
    ChildEntry,
    Problem,
    SitemapKind,
    UrlEntry,
)

DEFAULT_READ_LIMIT = 104_857_600

_PARSER_OPTIONS: dict[str, Any] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
    "collect_ids": False,
}

_UTF8_BOM = b"\xef\xbb\xbf"
_XML_WHITESPACE = b" \t\r\n"
# An XML declaration (``<?xml`` then whitespace; ``<?xml-stylesheet`` is another thing).
_DECLARATION_START = re.compile(rb"<\?xml[ \t\r\n]")
# Starts of UTF-16/UTF-32 encoded XML (byte order marks, or "<" next to a zero byte).
_WIDE_XML_STARTS = (b"\xff\xfe", b"\xfe\xff", b"<\x00", b"\x00<", b"\x00\x00")
# Byte order marks of a text sitemap saved as UTF-16 or UTF-32 (Windows Notepad's "Unicode"),
# with the codec and name of each; UTF-32's before UTF-16's, which they start with.
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
_SNIFF_BYTES = 16
# A text sitemap is recognised by a URL among its first lines (in its first bytes).
_TEXT_SNIFF_LINES = 5
_TEXT_SNIFF_BYTES = 8192
_NEWLINE_BYTES = re.compile(rb"\r\n|\r|\n")
_BLANK = rb"[\t\x0b\x0c\x1c-\x1f ]*"  # what str.strip removes of a line's ASCII bytes
_EOL = rb"(?:\r\n?+|\n)"
_BLANK_LINES = re.compile(
    _EOL + _BLANK + _EOL + _BLANK + _EOL + rb"(?:[\t\x0b\x0c\x1c-\x1f \r\n]*[\r\n])?"
)
"""A line end and the two or more blank lines after it, up to the last line end before a
line with something in it."""
_PERCENT_ESCAPE = "sitemapaudit-percent-escape"


def _percent_escape(exc: UnicodeError) -> tuple[str, int]:
    """A decoding error handler: bytes that do not decode become ``%XX`` escapes."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return "".join(f"%{byte:02X}" for byte in bad), exc.end


codecs.register_error(_PERCENT_ESCAPE, _percent_escape)
_POSITION_SUFFIX = re.compile(r", line \d+, column \d+$")
_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)")
# libxml2's safety limits (the document is read without XML_PARSE_HUGE), by what its message
# names, said plainly: its own messages call a long comment "not finished" and end with advice
# to set a parser flag, which means nothing to whoever fixes the sitemap.
_LIMIT_BYTES = "10,000,000 bytes"
_NOT_READ = "; entries after that point are not read"
# libxml2 finds a piece of markup too long only once it has parsed the chunk the markup ends
# in, and what follows it there: see _read_xml.
_MARKUP_LIMIT = "Buffer size limit"
_SAFETY_LIMITS: tuple[tuple[str, str], ...] = (
    (
        "Text node too long",
        f"a text node (text or white space between tags) is over {_LIMIT_BYTES}{_NOT_READ}",
    ),
    ("Comment too big", f"a comment is over {_LIMIT_BYTES}{_NOT_READ}"),
    ("CData section too big", f"a CDATA section is over {_LIMIT_BYTES}{_NOT_READ}"),
    ("Excessive depth", f"elements are nested more than 256 levels deep{_NOT_READ}"),
    (
        _MARKUP_LIMIT,
        f"one piece of markup (an attribute value, say) shortly before this point is over "
        f"{_LIMIT_BYTES}; entries from that markup on are not read",
    ),
    # Checked although entities are never expanded here: libxml2 counts what they would make,
    # and only XML_PARSE_HUGE, which lifts every other limit too, turns that off.
    (
        "Maximum entity amplification factor exceeded",
        "entity references would expand to over 1,000,000 bytes and more than 5 times the size "
        f"of the document read so far (an entity bomb; they are not expanded here){_NOT_READ}",
    ),
    (
        "Maximum entity nesting depth exceeded",
        "entities are nested more than 19 levels deep (an entity's value refers to another "
        f"entity, whose value refers to another...){_NOT_READ}",
    ),
)
# The name the parser gives the document, so that an error's position can be told to be in the
# document (errors inside an entity's replacement text name no file).
_DOCUMENT_NAME = "sitemapaudit:document"
_PARSER_ADVICE = re.compile(r",? (?:try|use) XML_PARSE_HUGE(?: option)?\s*$")
# A sitemap's root element comes after at most an XML declaration, comments and a DOCTYPE.
ROOT_SEARCH_LIMIT = 1_048_576

# libxml2 stores line numbers in 16 bits; from this line on it derives them from text nodes.
_BIG_LINE = 65535
# Completed children of an open record are dropped once it holds more than this many.
_RECORD_PRUNE_THRESHOLD = 256
# XInclude elements (both namespaces of the specification's drafts); never processed.
_XINCLUDE_TAGS = (
    "{http://www.w3.org/2001/XInclude}include",
    "{http://www.w3.org/2003/XInclude}include",
)
_MAX_NAMES_SHOWN = 5
_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
# RFC 4287 (4.2.7.2): a rel is a name of the IANA registry or that name as an IRI under it.
_ATOM_ALTERNATE = frozenset(("alternate", "http://www.iana.org/assignments/relation/alternate"))
# A URI reference that starts with a scheme is absolute (RFC 3986, section 4.3).
_SCHEME_START = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Entries without a location listed one by one; past this, they are only counted.
MAX_MISSING_LOC_LISTED = 1000


class _Role(IntEnum):
    """What an element means to the reader, by its tag."""

    OTHER = 0
    RECORD = 1
    CONTAINER = 2
    LOC = 3
    LASTMOD = 4
    ATOM_LINK = 5
    LASTMOD_FALLBACK = 6


# Roles of the fields of a record; the first two, the fields of sitemaps, are looked up once.
_FIELD_ROLES = frozenset({_Role.LOC, _Role.LASTMOD, _Role.ATOM_LINK, _Role.LASTMOD_FALLBACK})
_LOC, _LASTMOD = _Role.LOC, _Role.LASTMOD


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where the entries of one XML format sit and what their parts are called.

    Feed elements must be in the namespace of the feed's root element, and so must the
    elements of a urlset or sitemapindex in the sitemap namespace (a ``<loc>`` of another
    namespace, in an extension, lists nothing). A urlset or sitemapindex in another namespace
    (which validation reports) is read by local names in any namespace.
    """

    kind: SitemapKind
    record: str
    fields: dict[str, _Role]
    lastmod_format: str = "w3c"
    container: str | None = None

    @property
    def any_namespace(self) -> bool:
        return self.kind in (SitemapKind.URLSET, SitemapKind.SITEMAPINDEX)

    @property
    def loc_name(self) -> str:
        return next(name for name, role in self.fields.items() if role in _LOC_ROLES)


_LOC_ROLES = frozenset({_Role.LOC, _Role.ATOM_LINK})

_LAYOUTS = {
    "urlset": _Layout(SitemapKind.URLSET, "url", {"loc": _Role.LOC, "lastmod": _Role.LASTMOD}),
    "sitemapindex": _Layout(
        SitemapKind.SITEMAPINDEX, "sitemap", {"loc": _Role.LOC, "lastmod": _Role.LASTMOD}
    ),
    "rss": _Layout(
        SitemapKind.RSS,
        "item",
        {"link": _Role.LOC, "pubDate": _Role.LASTMOD},
        lastmod_format="rfc822",
        container="channel",
    ),
    "feed": _Layout(
        SitemapKind.ATOM,
        "entry",
        {"link": _Role.ATOM_LINK, "updated": _Role.LASTMOD, "modified": _Role.LASTMOD_FALLBACK},
        lastmod_format="rfc3339",
    ),
}


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _namespace(tag: str) -> str:
    return tag[1:].partition("}")[0] if tag.startswith("{") else ""


class _Roles:
    """Classifies elements by tag for one format, caching each answer."""

    def __init__(self, layout: _Layout, root_tag: str) -> None:
        names: dict[str, _Role] = {layout.record: _Role.RECORD, **layout.fields}
        if layout.container is not None:
            names[layout.container] = _Role.CONTAINER
        self._names = names
        namespace = _namespace(root_tag)
        lenient = layout.any_namespace and namespace != SITEMAP_NAMESPACE
        self.namespace: str | None = None if lenient else namespace
        self.cache: dict[str, _Role] = {}
        # The element names the pull parser reports: records and the root itself (a record's
        # fields are read from its children).
        self.tags = [self._tag(layout.record), root_tag]

    def __call__(self, tag: str) -> _Role:
        role = self.cache.get(tag)
        if role is None:
            role = _Role.OTHER
            if self.namespace is None or _namespace(tag) == self.namespace:
                role = self._names.get(_local(tag), _Role.OTHER)
            self.cache[tag] = role
        return role

    def of(self, node: Any) -> _Role:
        """The role of any node (entity references, whose tag is not a string, are OTHER)."""
        tag = node.tag
        role = self.cache.get(tag)
        if role is None:
            role = self(tag) if isinstance(tag, str) else _Role.OTHER
            self.cache[tag] = role
        return role

    def _tag(self, name: str) -> str:
        if self.namespace is None:
            return "{*}" + name
        return f"{{{self.namespace}}}{name}" if self.namespace else name


def _text(element: Any) -> str:
    """The stripped text content of an element, CDATA and child elements included."""
    if len(element) == 0:
        text: str | None = element.text
        return text.strip(ASCII_WHITESPACE) if text else ""
    return "".join(element.itertext()).strip(ASCII_WHITESPACE)


def _source_line(element: Any) -> int | None:
    """The line of an element's start tag.

    Past line 65534 libxml2 reports the line where the element's first text node ends; the
    newlines inside that text are taken back out.
    """
    line: int | None = element.sourceline
    if line is None or line < _BIG_LINE:
        return line
    node = element
    for _ in range(4):
        text: str | None = node.text
        if text:
            return max(line - text.count("\n"), _BIG_LINE)
        if len(node) == 0:
            break
        node = node[0]
    return line


def _atom_alternate(element: Any, document_url: str | None) -> str:
    """The href of an Atom ``link`` that points at the entry's page, or ``""``.

    A relative href is resolved as RFC 4287 (section 2) says: against the ``xml:base`` in
    scope (XML Base: on the link or an ancestor, itself resolved against the ones above it),
    and otherwise against the URL the document was retrieved from (RFC 3986, section 5.1).
    Without an absolute base it is kept as written (a location the URL checks report as not
    absolute).
    """
    rel: str | None = element.get("rel")
    if rel is not None and rel.strip().lower() not in _ATOM_ALTERNATE:
        return ""
    href: str | None = element.get("href")
    if not href:
        return ""
    href = href.strip(ASCII_WHITESPACE)
    if not href or _SCHEME_START.match(href):
        return href
    base = document_url
    # The outermost xml:base first: each one is resolved against those above it.
    nodes = [element, *element.iterancestors()]
    for value in [node.get(_XML_BASE) for node in reversed(nodes)]:
        if value:
            base = _join(base, value.strip(ASCII_WHITESPACE))
    resolved = _join(base, href)
    return resolved if resolved is not None and _SCHEME_START.match(resolved) else href


def _join(base: str | None, reference: str) -> str | None:
    """``reference`` resolved against ``base``; ``None`` when that gives no absolute URI."""
    if _SCHEME_START.match(reference):
        return reference
    if base is None:
        return None
    try:
        joined = urljoin(base, reference)
    except ValueError:  # a base that is no URL (``http://[é``)
        return None
    return joined if _SCHEME_START.match(joined) else None


class _Fields:
    """The fields of the record being read: its locations and lastmods, child by child.

    A record's children are read when it ends, except those pruning takes out of the tree
    earlier (a record with very many children), which are read just before they go.
    """

    def __init__(self, roles: _Roles, document_url: str | None) -> None:
        self._roles = roles
        self._document_url = document_url
        self.record: Any = None
        self.locs: list[str] = []
        # Locations holding entity references, which are never expanded: each with their names.
        self.unexpanded: list[tuple[str, list[str]]] = []
        self.saw_loc = False
        self.lastmod: str | None = None
        self.fallback: str | None = None

    def read(self, record: Any, children: Iterable[Any]) -> None:
        """Read ``children`` of ``record`` (the first call for a record starts afresh)."""
        if record is not self.record:
            self.record = record
            self.locs = []
            self.unexpanded = []
            self.saw_loc = False
            self.lastmod = self.fallback = None
        roles = self._roles
        cache = roles.cache
        for child in children:
            role = cache.get(child.tag) or roles.of(child)
            if role is _LOC:
                self.saw_loc = True
                value = _text(child)
                names = _entity_names(child) if len(child) else None
                if names:
                    self.unexpanded.append((value, names))
                elif value:
                    self.locs.append(value)
            elif role is _LASTMOD:
                if self.lastmod is None:
                    self.lastmod = _text(child)
            elif role is _Role.ATOM_LINK:
                self.saw_loc = True
                if not self.locs:
                    value = _atom_alternate(child, self._document_url)
                    if value:
                        self.locs.append(value)
            elif role is _Role.LASTMOD_FALLBACK and self.fallback is None:
                self.fallback = _text(child)

    def end(self, record: Any) -> tuple[list[str], bool, str | None]:
        """The locations, whether any location element was there, and the lastmod."""
        self.read(record, record)
        self.record = None
        lastmod = self.fallback if self.lastmod is None else self.lastmod
        return self.locs, self.saw_loc, lastmod


def _entity_names(element: Any) -> list[str]:
    """The names of the entity references in an element, each once, in document order."""
    return list(dict.fromkeys(str(node.name) for node in element.iter(etree.Entity)))


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_NAMES_SHOWN])
    if len(names) > _MAX_NAMES_SHOWN:
        shown += f" and {len(names) - _MAX_NAMES_SHOWN} more"
    return shown


class _NothingResolver(etree.Resolver):
    """Answers every request for an external DTD or entity with empty content.

    With ``load_dtd=False`` libxml2 still opens an external DTD (or a parameter entity's file)
    when the document refers to an entity it does not declare; this keeps it from reading
    local files, and ``no_network`` already keeps it off the network.
    """

    def resolve(self, system_url: str, public_id: str, context: Any) -> Any:  # type: ignore[override]
        return self.resolve_string(b"", context, base_url=None)


def _new_parser(**options: Any) -> Any:
    parser = etree.XMLPullParser(**options, **_PARSER_OPTIONS, base_url=_DOCUMENT_NAME)
    parser.resolvers.add(_NothingResolver())
    return parser


@dataclass(slots=True)
class _Root:
    """The root element as found by the first pass, and the bytes read to find it."""

    layout: _Layout
    tag: str
    consumed: list[bytes]


class SitemapReader:
    """Streams one sitemap document.

    Iterate once to get :class:`UrlEntry` / :class:`ChildEntry` objects in document order;
    ``kind``, ``gzip``, ``bytes``, ``problems``, ``url_count`` and ``child_count`` are final
    after iteration ends. Any input bytes are accepted: everything wrong with the document
    becomes a :class:`Problem`, never an exception. ``base_url`` is the URL the document was
    retrieved from (after redirects), against which the relative links of an Atom feed are
    resolved; ``None`` for a document without one (a local file). ``gzip_encoded``: the
    response declared ``Content-Encoding: gzip``, so a gzip file inside that coding is
    unwrapped too (see :class:`BodyStream`); a file has no such header.
    """

    def __init__(
        self,
        body: bytes,
        *,
        read_limit: int = DEFAULT_READ_LIMIT,
        base_url: str | None = None,
        gzip_encoded: bool = False,
    ) -> None:
        self._stream = BodyStream(body, limit=read_limit, checked=True, gzip_encoded=gzip_encoded)
        self.read_limit = read_limit
        self.base_url = base_url
        self.kind: SitemapKind = SitemapKind.UNKNOWN
        self.gzip: bool = self._stream.gzip
        self.bytes: int = 0
        self.url_count: int = 0
        self.child_count: int = 0
        self.problems: list[Problem] = []
        self._iterated = False
        self._complete = False
        self._line_offset = 0
        self._column_offset = 0
        self._xinclude_seen = False
        self._missing_locs = 0
        self._unexpanded_locs = 0
        self._record_name = ""
        self._invalid_text_lines = 0
        self._first_invalid_text: tuple[int, int, str, str] | None = None
        self._wide_encoding: str | None = None
        self._xml_encoding: str | None = None

    def __iter__(self) -> Iterator[UrlEntry | ChildEntry]:
        if self._iterated:
            raise RuntimeError("a SitemapReader can be iterated only once")
        self._iterated = True
        return self._read()

    # -- dispatch ------------------------------------------------------------------------------
    def _read(self) -> Iterator[UrlEntry | ChildEntry]:
        chunks = iter(self._stream)
        try:
            head, self._line_offset, self._column_offset, utf8_bom = _skip_preamble(chunks)
            # A UTF-8 byte order mark says what the encoding is, whatever the XML declaration
            # says (XML 1.0, appendix F; libxml2 and browsers agree): the mark is skipped
            # here, so the parser is told. (check_encoding reports the contradiction.)
            self._xml_encoding = "utf-8" if utf8_bom else None
            if (self._line_offset or self._column_offset) and _DECLARATION_START.match(head):
                self._misplaced_declaration()
            lowered = head[:_SNIFF_BYTES].lower()
            if not head and self._stream.problems:
                self._not_a_sitemap(
                    "nothing readable came out of its gzip data (see gzip_invalid), so what "
                    "the document is cannot be told"
                )
            elif not head:
                self._not_a_sitemap("the document is empty")
            elif self._stream.gzip_inside:
                self._not_a_sitemap(
                    "what came out of its gzip data is gzip data again, which search engines "
                    "do not unwrap (see gzip_invalid)"
                )
            elif lowered.startswith((b"<!doctype html", b"<html")):
                self._not_a_sitemap("the document is an HTML page, not a sitemap")
            elif (wide := _wide_text(head)) is not None:
                codec, self._wide_encoding, bom = wide
                self.kind = SitemapKind.TEXT
                text = _transcoded(chain((head[bom:],), chunks), codec)
                yield from self._read_text(text, self._line_offset + 1)
            elif head.startswith(b"<") or head.startswith(_WIDE_XML_STARTS):
                xml: Iterator[bytes] = chain((head,), chunks)
                if not head.startswith(_WIDE_XML_STARTS):
                    xml = lone_crs_as_lf_chunks(xml)
                root = self._find_root(xml)
                if root is not None:
                    yield from self._read_xml(root, xml)
            elif lowered.startswith((b"http://", b"https://")) or _text_list(head):
                self.kind = SitemapKind.TEXT
                yield from self._read_text(chain((head,), chunks), self._line_offset + 1)
            else:
                self._not_a_sitemap(
                    "the document is neither XML nor a text list of URLs (none of its first "
                    f"{_TEXT_SNIFF_LINES} lines starts with http:// or https://)"
                )
            if self._stream.gzip_layers:
                # Reading may have stopped before the end of the gzip data (a refused or broken
                # document): the rest is still decompressed, within the read limit, so that a
                # corrupt stream is reported as gzip_invalid rather than only by its symptoms.
                for _ in chunks:
                    pass
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
            self._finish()

    def _not_a_sitemap(self, message: str, line: int | None = None) -> None:
        self.kind = SitemapKind.UNKNOWN
        self.problems.append(Problem("not_a_sitemap", message, line))

    # -- text ----------------------------------------------------------------------------------
    def _read_text(self, chunks: Iterable[bytes], first_line: int) -> Iterator[UrlEntry]:
        """One entry per non-blank line; LF, CRLF and CR-only line ends.

        A line may span any number of chunks: its pieces are kept in a list and joined once
        the line ends, so reading stays linear however long a line is. Lines are split as
        bytes (a line end is never part of a UTF-8 sequence) and decoded one by one: a line
        that is not UTF-8 keeps its other bytes as percent-escapes (``caf%E9``, the URL a
        Latin-1 server serves) and the sitemap gets one ``encoding_invalid``.
        """
        line = first_line
        pieces: list[bytes] = []  # the current line so far
        held = b""  # a CR at the end of a chunk, which may be the first half of a CRLF
        for chunk in chunks:
            data = held + chunk
            held = b""
            if data.endswith(b"\r"):
                data, held = data[:-1], b"\r"
            position = 0
            # A run of blank lines is found by one search and only counted, so a document of
            # nothing but line ends costs what a scan of its bytes does, not a step per line.
            for run in _BLANK_LINES.finditer(data):
                # The lines before the run, the last one ended by the run's first line end.
                parts = _split_lines(data[position : run.start()])
                pieces.append(parts[0])
                parts[0] = b"".join(pieces)
                pieces = []
                yield from self._text_entries(parts, line)
                line += len(parts)
                line += _line_ends(data, run.start(), run.end()) - 1
                position = run.end()
            parts = _split_lines(data[position:])
            last = parts.pop()
            if parts:
                if pieces:
                    pieces.append(parts[0])
                    parts[0] = b"".join(pieces)
                    pieces = []
                yield from self._text_entries(parts, line)
                line += len(parts)
            if last:
                pieces.append(last)
        pieces.append(held)
        yield from self._text_entries(_NEWLINE_BYTES.split(b"".join(pieces)), line)
        self._complete = True

    def _text_entries(self, parts: list[bytes], line: int) -> Iterator[UrlEntry]:
        """The entries of consecutive lines of a text sitemap, the first at ``line``."""
        for number, part in enumerate(parts, line):
            value = self._text_line(part, number)
            if value:
                self.url_count += 1
                yield UrlEntry(value, None, number)

    def _text_line(self, raw: bytes, line: int) -> str:
        """One line of a text sitemap, decoded and stripped."""
        try:
            return raw.decode("utf-8").strip(ASCII_WHITESPACE)
        except UnicodeDecodeError as exc:
            value = raw.decode("utf-8", _PERCENT_ESCAPE).strip(ASCII_WHITESPACE)
            self._invalid_text_lines += 1
            if self._first_invalid_text is None:
                column = len(raw[: exc.start].decode("utf-8", "replace")) + 1
                snippet = raw[exc.start : exc.start + 4].hex(" ")
                self._first_invalid_text = (line, column, snippet, value)
            return value

    def _text_encoding_problem(self) -> Problem | None:
        if self._wide_encoding is not None:
            name = self._wide_encoding
            return Problem(
                "encoding_invalid",
                f"the document is encoded as {name} (detected from its byte order mark); text "
                f"sitemaps must be UTF-8. Its lines are read as {name} here",
                1,
                1,
            )
        if self._first_invalid_text is None:
            return None
        line, column, snippet, value = self._first_invalid_text
        count = self._invalid_text_lines
        return Problem(
            "encoding_invalid",
            f"bytes that are not valid UTF-8 ({snippet}...; {count} line"
            f"{'s' if count != 1 else ''} in the document); text sitemaps must be UTF-8. Such "
            f"lines are read with those bytes percent-encoded, this one as {value[:200]!r}",
            line,
            column,
        )

    # -- XML: first pass, up to the root element ------------------------------------------------
    def _find_root(self, chunks: Iterable[bytes]) -> _Root | None:
        """Parse up to the root element's start tag and decide the format from it.

        The bytes read on the way are returned, to be parsed again by the second pass, which
        reports only the elements of the format found here.
        """
        parser = _new_parser(events=("start",), encoding=self._xml_encoding)
        consumed: list[bytes] = []
        size = 0
        for chunk in chain(chunks, (None,)):
            error: etree.LxmlError | None = None
            try:
                if chunk is None:
                    parser.close()
                else:
                    consumed.append(chunk)
                    size += len(chunk)
                    parser.feed(chunk)
            except etree.LxmlError as exc:
                error = exc
            for _, element in parser.read_events():
                return self._root(element, consumed)
            if self._stream.truncated and chunk is None:
                break
            if error is not None or _first_error(parser) is not None:
                self._malformed(_first_error(parser), error)
                self._not_a_sitemap("the document is not well-formed XML")
                return None
            if size > ROOT_SEARCH_LIMIT:
                self._not_a_sitemap(
                    f"no root element in the first {ROOT_SEARCH_LIMIT:,} bytes of the XML"
                )
                return None
        self._not_a_sitemap(f"no root element in the first {self._stream.bytes_read:,} bytes")
        return None

    def _root(self, element: Any, consumed: list[bytes]) -> _Root | None:
        tag: str = element.tag
        name = _local(tag)
        layout = _LAYOUTS.get(name)
        if layout is None:
            if name.lower() == "html":
                message = "the document is an HTML page, not a sitemap"
            else:
                message = (
                    f"the root element is <{name}>, not <urlset>, <sitemapindex>, <rss> or <feed>"
                )
            self._not_a_sitemap(message, self._line(_source_line(element)))
            return None
        self.kind = layout.kind
        self._check_doctype(element)
        return _Root(layout, tag, consumed)

    def _check_doctype(self, root: Any) -> None:
        docinfo = root.getroottree().docinfo
        details: list[str] = []
        dtd = docinfo.internalDTD
        if dtd is not None:
            names = [str(entity.name) for entity in dtd.iterentities()]
            if names:
                details.append(f"declares entities ({_names(names)}), which are not expanded")
        external: str | None = docinfo.system_url or docinfo.public_id
        if external:
            details.append(f"references an external DTD ({external}), which is not loaded")
        if details:
            self.problems.append(Problem("xml_entities", "the DOCTYPE " + " and ".join(details)))

    # -- XML: second pass, the entries ----------------------------------------------------------
    def _read_xml(  # noqa: PLR0915
        self, found: _Root, rest: Iterator[bytes]
    ) -> Iterator[UrlEntry | ChildEntry]:
        layout = found.layout
        roles = _Roles(layout, found.tag)
        role_cache = roles.cache
        parser = _new_parser(
            events=("start", "end"),
            tag=[*roles.tags, *_XINCLUDE_TAGS],
            encoding=self._xml_encoding,
        )
        read_events: Callable[[], Iterator[tuple[str, Any]]] = parser.read_events
        stream = self._stream
        line_offset = self._line_offset
        is_child = layout.kind is SitemapKind.SITEMAPINDEX
        lastmod_format = layout.lastmod_format
        record_role = _Role.RECORD
        fields = _Fields(roles, self.base_url)
        root: Any = None
        container: Any = None
        record: Any = None  # the record being read (started, not yet ended)

        def is_container(node: Any) -> bool:
            nonlocal container
            if node is container:
                return True
            if layout.container is None or node is None or roles(node.tag) is not _Role.CONTAINER:
                return False
            if node.getparent() is not root:
                return False
            container = node
            return True

        def pruning(record: Any, children: list[Any]) -> None:
            if is_container(record.getparent()):
                fields.read(record, children)

        for chunk in chain(_take_all(found.consumed), rest, (None,)):
            at_end = chunk is None
            if at_end and stream.truncated:
                return
            error: etree.LxmlError | None = None
            try:
                if chunk is None:
                    parser.close()
                else:
                    parser.feed(chunk)
            except etree.LxmlError as exc:
                error = exc
                fault = _first_error(parser)
                if fault is not None and _MARKUP_LIMIT in fault.message:
                    # The markup, over 10,000,000 bytes, started many chunks back: every
                    # element of this chunk comes after its start and is not read, as no
                    # entry after any other safety limit is.
                    for _ in read_events():
                        pass
            produced = False
            for event, element in read_events():
                produced = True
                if event == "start":
                    if root is None:
                        root = element
                        if layout.container is None:
                            container = root
                    elif (role_cache.get(element.tag) or roles(element.tag)) is record_role:
                        record = element
                    continue
                tag = element.tag
                if (role_cache.get(tag) or roles(tag)) is not record_role:
                    if tag in _XINCLUDE_TAGS:
                        self._xinclude(element)
                    continue
                if element is record:
                    record = None
                parent = element.getparent()
                if parent is not container and not is_container(parent):
                    continue
                locs, saw_loc, lastmod = fields.end(element)
                line: int | None = element.sourceline
                if line is not None:
                    if line >= _BIG_LINE:
                        line = _source_line(element) or line
                    line += line_offset
                for value, names in fields.unexpanded:
                    self._unexpanded_loc(layout, value, names, line)
                if not locs and not fields.unexpanded:
                    self._missing_loc(layout, saw_loc, line)
                elif is_child:
                    for loc in locs:
                        self.child_count += 1
                        yield ChildEntry(loc, lastmod, line)
                else:
                    for loc in locs:
                        self.url_count += 1
                        yield UrlEntry(loc, lastmod, line, lastmod_format)

            if error is not None or at_end or not produced:
                fault = _first_error(parser)
                if error is not None or fault is not None:
                    # A document cut short by a broken gzip stream fails at its end; the
                    # gzip_invalid problem already says why.
                    if not (at_end and stream.problems):
                        self._malformed(fault, error, record)
                    return
            if root is not None:
                _prune(root, roles, pruning)
        self._complete = True

    # -- problems ------------------------------------------------------------------------------
    def _line(self, line: int | None) -> int | None:
        return None if line is None else line + self._line_offset

    def _xinclude(self, element: Any) -> None:
        if self._xinclude_seen:
            return
        self._xinclude_seen = True
        href = (element.get("href") or "").strip()
        self.problems.append(
            Problem(
                "xml_entities",
                f"the document uses XInclude (<include href={href!r}>), which is not processed",
                self._line(_source_line(element)),
            )
        )

    def _missing_loc(self, layout: _Layout, saw_loc: bool, line: int | None) -> None:
        self._missing_locs += 1
        if self._missing_locs > MAX_MISSING_LOC_LISTED:
            return
        record = layout.record
        self._record_name = record
        if layout.kind is SitemapKind.ATOM:
            message = f'<{record}> has no <link> with an href (rel="alternate" or no rel)'
        elif saw_loc:
            message = f"<{record}> has an empty <{layout.loc_name}>"
        else:
            message = f"<{record}> has no <{layout.loc_name}>"
        self.problems.append(Problem("missing_loc", message, line))

    def _unexpanded_loc(
        self, layout: _Layout, value: str, names: list[str], line: int | None
    ) -> None:
        """A location holding entity references: not an entry (what it stands for is unknown),
        but ``invalid_url``, naming them."""
        self._unexpanded_locs += 1
        if self._unexpanded_locs > MAX_MISSING_LOC_LISTED:
            return
        refs = _names([f"&{name};" for name in names])
        which = f"references {refs}, which are" if len(names) > 1 else f"reference {refs}, which is"
        self.problems.append(
            Problem(
                "invalid_url",
                f"<{layout.loc_name}> {value[:200]!r} contains the entity {which} not expanded "
                "(entities other than the five predefined ones and character references are "
                "not allowed); not requested",
                line,
            )
        )

    def _malformed(self, fault: Any, error: etree.LxmlError | None, record: Any = None) -> None:
        """An ``xml_malformed`` problem for the parser's first error (or its exception).

        ``record`` is the record being read when the parser stopped, if any: its line is given
        for an error whose position is inside an entity's replacement text, which is no
        position in the document.
        """
        line: int | None
        column: int | None
        prefix = "the XML is not well-formed"
        if fault is not None:
            message = str(fault.message)
            line, column = fault.line, fault.column
            limit = next((plain for key, plain in _SAFETY_LIMITS if key in message), None)
            if limit is not None:
                prefix = "reading stopped at a parser safety limit"
                message = limit
            elif fault.type == etree.ErrorTypes.ERR_RESOURCE_LIMIT:
                prefix = "reading stopped at a parser safety limit"
                message = _PARSER_ADVICE.sub("", message)
            if fault.filename != _DOCUMENT_NAME:
                # The position is inside an entity's replacement text: the record being read
                # is where the document's reading stopped.
                line = None if record is None else _source_line(record)
                column = None
        else:
            message = _POSITION_SUFFIX.sub("", str(getattr(error, "msg", None) or error))
            line, column = getattr(error, "position", None) or (None, None)
        if not line:
            line = column = None
        else:
            if line == 1 and column:
                column += self._column_offset
            line += self._line_offset
        if self._line_offset:
            offset = self._line_offset
            message = _LINE_IN_MESSAGE.sub(lambda m: f"line {int(m[1]) + offset}", message)
        self.problems.append(
            Problem("xml_malformed", f"{prefix}: {message.strip()}", line, column or None)
        )

    def _misplaced_declaration(self) -> None:
        """Whitespace before the XML declaration: XML parsers refuse the document (a classic of
        blank lines printed by a CMS plugin). It is skipped here and every entry still read."""
        line, column = self._line_offset + 1, self._column_offset + 1
        what = "blank lines" if line > 1 else "whitespace"
        self.problems.append(
            Problem(
                "xml_malformed",
                f"{what} before the XML declaration, which must be the very start of the "
                "document: XML parsers refuse it (the entries are still read here)",
                line,
                column,
            )
        )

    # -- summary -------------------------------------------------------------------------------
    def _finish(self) -> None:
        stream = self._stream
        self.bytes = stream.bytes_read
        leading = list(stream.problems)
        if stream.truncated:
            leading.append(
                Problem(
                    "too_large",
                    f"the uncompressed document is larger than the read limit of "
                    f"{self.read_limit:,} bytes (the protocol allows at most "
                    f"{PROTOCOL_MAX_BYTES:,}); reading stopped at {stream.bytes_read:,} bytes "
                    f"and entries past that point were not read",
                )
            )
        elif stream.bytes_read > PROTOCOL_MAX_BYTES:
            leading.append(
                Problem(
                    "too_large",
                    f"the uncompressed document is {stream.bytes_read:,} bytes; the protocol "
                    f"allows at most {PROTOCOL_MAX_BYTES:,} bytes (50 MiB)",
                )
            )
        self.problems[:0] = leading
        if (encoding := self._text_encoding_problem()) is not None:
            self.problems.append(encoding)
        for code, count, what in (
            (
                "missing_loc",
                self._missing_locs,
                f"<{self._record_name}> entries without a location are",
            ),
            (
                "invalid_url",
                self._unexpanded_locs,
                "locations with unexpanded entity references are",
            ),
        ):
            if count > MAX_MISSING_LOC_LISTED:
                self.problems.append(
                    Problem(
                        code,
                        f"{count - MAX_MISSING_LOC_LISTED:,} more {what} not listed (only the "
                        f"first {MAX_MISSING_LOC_LISTED:,} are)",
                    )
                )
        at_least = "at least " if stream.truncated else ""
        if self.kind is SitemapKind.SITEMAPINDEX:
            if self.child_count > PROTOCOL_MAX_ENTRIES:
                self.problems.append(
                    Problem(
                        "index_too_many_sitemaps",
                        f"the index lists {at_least}{self.child_count:,} sitemaps; the protocol "
                        f"allows at most {PROTOCOL_MAX_ENTRIES:,}",
                    )
                )
        elif self.kind is not SitemapKind.UNKNOWN and self.url_count > PROTOCOL_MAX_ENTRIES:
            self.problems.append(
                Problem(
                    "too_many_urls",
                    f"the sitemap lists {at_least}{self.url_count:,} URLs; the protocol allows "
                    f"at most {PROTOCOL_MAX_ENTRIES:,}",
                )
            )
        if (
            self.kind is not SitemapKind.UNKNOWN
            and self._complete
            and self.url_count + self.child_count == 0
        ):
            self.problems.append(Problem("empty", f"the {self.kind.value} lists no entries"))


def _text_list(head: bytes) -> bool:
    """Whether a document that is not XML reads as a text sitemap whose first lines include a
    stray one (a comment, a bare host): one of its first ``_TEXT_SNIFF_LINES`` non-blank lines
    starts with http:// or https://. (Its other lines are then entries that are not URLs.)"""
    lines = [line.strip().lower() for line in _NEWLINE_BYTES.split(head[:_TEXT_SNIFF_BYTES])]
    first = [line for line in lines if line][:_TEXT_SNIFF_LINES]
    return any(line.startswith((b"http://", b"https://")) for line in first)


def _wide_text(head: bytes) -> tuple[str, str, int] | None:
    """The codec, encoding name and byte order mark length of a text sitemap saved as UTF-16
    or UTF-32 with a byte order mark; ``None`` for anything else (XML in those encodings
    included). The text is recognised by the rules of a UTF-8 one."""
    for bom, codec, name in _WIDE_BOMS:
        if head.startswith(bom):
            text = head[len(bom) :].decode(codec, "replace").lstrip(" \t\r\n")
            sample = text.encode("utf-8")
            if sample.startswith(b"<"):
                return None
            if sample[:_SNIFF_BYTES].lower().startswith((b"http://", b"https://")) or _text_list(
                sample
            ):
                return codec, name, len(bom)
            return None
    return None


def _transcoded(chunks: Iterable[bytes], codec: str) -> Iterator[bytes]:
    """``chunks`` in ``codec`` as UTF-8; bytes that do not decode become ``%XX`` escapes."""
    decoder = codecs.getincrementaldecoder(codec)(_PERCENT_ESCAPE)
    for chunk in chunks:
        text = decoder.decode(chunk)
        if text:
            yield text.encode("utf-8")
    yield decoder.decode(b"", True).encode("utf-8")


def _split_lines(data: bytes) -> list[bytes]:
    """``data`` split at its line ends (LF, CRLF, CR); it must not end inside a CRLF."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")


def _line_ends(data: bytes, start: int, end: int) -> int:
    """The line ends (LF, CRLF, CR) in ``data[start:end]``, which splits no CRLF."""
    return (
        data.count(b"\n", start, end)
        + data.count(b"\r", start, end)
        - data.count(b"\r\n", start, end)
    )


def _skip_preamble(chunks: Iterator[bytes]) -> tuple[bytes, int, int, bool]:
    """Skip a UTF-8 BOM and leading whitespace.

    Returns the first bytes of the content (at least ``_SNIFF_BYTES``, and at least
    ``_TEXT_SNIFF_BYTES`` when it does not start with ``<``, unless the document is shorter),
    the line ends (LF, CRLF or CR) and trailing columns of what was skipped, so that
    positions reported on the rest can be mapped back onto the whole document, and whether
    there was a BOM.
    """
    buffer = b""
    lines = columns = 0
    bom_checked = started = after_cr = bom = False
    for chunk in chunks:
        buffer += chunk
        if not bom_checked:
            if len(buffer) < len(_UTF8_BOM) and _UTF8_BOM.startswith(buffer):
                continue
            if buffer.startswith(_UTF8_BOM):
                buffer = buffer[len(_UTF8_BOM) :]
                bom = True
            bom_checked = True
        if not started:
            content = buffer.lstrip(_XML_WHITESPACE)
            skipped = buffer[: len(buffer) - len(content)]
            last_end = max(skipped.rfind(b"\n"), skipped.rfind(b"\r"))
            if last_end >= 0:
                # (An LF after a CR that ended the chunk before is the end of that CRLF.)
                crlf_split = after_cr and skipped.startswith(b"\n")
                lines += _line_ends(skipped, 0, len(skipped)) - crlf_split
                columns = len(skipped) - last_end - 1
            else:
                columns += len(skipped)
            after_cr = skipped.endswith(b"\r")
            buffer = content
            if not buffer:
                continue
            started = True
        if len(buffer) >= (_SNIFF_BYTES if buffer.startswith(b"<") else _TEXT_SNIFF_BYTES):
            break
    if not started:
        buffer = buffer.lstrip(_XML_WHITESPACE)
    return buffer, lines, columns, bom


def _take_all(items: list[bytes]) -> Iterator[bytes]:
    """Yield the items of a list, releasing each from the list as it goes."""
    items.reverse()
    while items:
        yield items.pop()


def _first_error(parser: Any) -> Any:
    """The first error (not warning) lxml logged for this feed parser, or ``None``."""
    for entry in parser.feed_error_log:
        if entry.level >= etree.ErrorLevels.ERROR and entry.domain != etree.ErrorDomains.IO:
            return entry
    return None


def _prune(root: Any, roles: _Roles, pruning: Callable[[Any, list[Any]], None]) -> None:
    """Drop the finished part of the tree: every completed element has been read already.

    Each element on the open path keeps only its last child (the one still being parsed).
    Records keep their children (they are read when the record ends, and the line of a record
    past line 65534 is derived from them) unless they have very many: those are handed to
    ``pruning`` with their record before they go. A field (``loc``, ``lastmod``...) still
    open keeps its content, which is read when its record ends.
    """
    node = root
    in_record = is_record = False
    while True:
        count = len(node)
        if count == 0:
            return
        if count > 1 and (not in_record or count > _RECORD_PRUNE_THRESHOLD):
            if is_record:
                pruning(node, node[:-1])
            del node[:-1]
        node = node[-1]
        tag = node.tag
        if not isinstance(tag, str):
            return
        role = roles(tag)
        if role in _FIELD_ROLES and in_record:
            return
        is_record = role is _Role.RECORD
        in_record = in_record or is_record
