"""Offline validation of one sitemap document: :func:`validate_document`.

Document-level checks live here (encoding, namespace, unescaped characters, size limits);
the XSD run is in :mod:`sitemapaudit.validation.xsd` and the extension rules in
:mod:`sitemapaudit.validation.extensions`. A well-formed urlset or sitemapindex without a
DOCTYPE is never held as a whole tree: :mod:`sitemapaudit.validation.streaming` runs those
checks chunk by chunk with the same findings; anything else is parsed whole, as before.

Nothing here touches the network or the file system other than the shipped schemas: the
document is parsed from bytes with entity resolution, DTD loading and network access off,
and ``xsi:schemaLocation`` hints are never read (libxml2 only follows them when validating
without a schema, which never happens here).
"""

from __future__ import annotations

import bisect
import codecs
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from lxml import etree

from sitemapaudit.sitemap.lineends import lone_crs_as_lf
from sitemapaudit.sitemap.records import PROTOCOL_MAX_BYTES, PROTOCOL_MAX_ENTRIES, Problem
from sitemapaudit.validation.extensions import ExtensionScan, unknown_namespaces
from sitemapaudit.validation.messages import local_name, namespace_of, source_line
from sitemapaudit.validation.schemas import (
    ITEM_TAGS,
    SAFE_PARSER_OPTIONS,
    SITEMAP_NS,
    EmptyResolver,
)
from sitemapaudit.validation.streaming import StreamResult, stream_document
from sitemapaudit.validation.xsd import MAX_SCHEMA_PROBLEMS, validate_tree

MAX_PROBLEMS_PER_CODE: Final = 1000
_HEAD_BYTES: Final = 1 << 16
_UTF8_SLICE: Final = 1 << 18


class _LazyPattern:
    """A regular expression compiled on first use. The patterns built on XML's Name
    production take milliseconds each to compile: the root's compile with the first document
    validated, the scanner's with the first broken one, and a command that validates nothing
    never compiles them."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.compiled.match(text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)


_NAME_START = (
    r"A-Za-z_:\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF"
    r"\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD"
)
_NAME_CHAR = _NAME_START + r"\-.0-9\u00B7\u0300-\u036F\u203F-\u2040"
_NAME = f"[{_NAME_START}][{_NAME_CHAR}]*"

_DECLARATION: Final = re.compile(
    r"""<\?xml\s[^>]*?encoding\s*=\s*(?P<q>["'])(?P<enc>[^"']*)(?P=q)""", re.S
)
_PROLOG_SKIP: Final = re.compile(
    r"\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>", re.S | re.IGNORECASE
)
_ROOT_START: Final = _LazyPattern(
    rf"<(?P<name>{_NAME})(?P<attrs>(?:\s+{_NAME}\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*/?>"
)
_ROOT_NAME: Final = _LazyPattern(rf"<(?P<name>{_NAME})")
_ATTRIBUTE: Final = _LazyPattern(rf"(?P<name>{_NAME})\s*=\s*(?:\"(?P<d>[^\"]*)\"|'(?P<s>[^']*)')")

_CANDIDATE: Final = re.compile(r"[<&]|\]\]>")
_REFERENCE: Final = _LazyPattern(rf"&(?:#[0-9]+|#x[0-9a-fA-F]+|(?P<name>{_NAME}));")
_COMMENT: Final = re.compile(r"<!--.*?-->", re.S)
_CDATA: Final = re.compile(r"<!\[CDATA\[.*?\]\]>", re.S)
_PI: Final = re.compile(r"<\?.*?\?>", re.S)
_DOCTYPE: Final = re.compile(r"<!DOCTYPE(?:[^\[>]|\[.*?\])*>", re.S)
_END_TAG: Final = _LazyPattern(rf"</{_NAME}\s*>")
_START_TAG: Final = _LazyPattern(
    rf"<{_NAME}(?P<attrs>(?:\s+{_NAME}\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*/?>"
)
_TAG_NAME: Final = _LazyPattern(rf"</?{_NAME}")
_ENTITY_DECL: Final = _LazyPattern(rf"<!ENTITY\s+(?P<name>{_NAME})")
_PREDEFINED: Final = frozenset({"amp", "lt", "gt", "quot", "apos"})

_NAMESPACE_HINTS: Final = (
    ("https://www.sitemaps.org/schemas/sitemap/0.9", "uses https:// instead of http://"),
    ("http://www.sitemaps.org/schemas/sitemap/0.9/", "has a trailing '/'"),
    ("http://www.sitemaps.org/schemas/sitemap", "lacks the trailing '/0.9'"),
    ("http://www.sitemaps.org/schemas/sitemap/", "lacks the trailing '0.9'"),
    ("http://sitemaps.org/schemas/sitemap/0.9", "lacks 'www.'"),
    ("http://www.google.com/schemas/sitemap/0.84", "is Google's retired 0.84 namespace"),
    ("http://www.google.com/schemas/sitemap/0.9", "is on google.com instead of sitemaps.org"),
)


@dataclass(slots=True, frozen=True)
class _Encoding:
    codec: str
    """The Python codec that decodes the document as a parser would."""
    bom: str | None
    declared: str | None
    declared_offset: int | None
    """Character offset of the declared name in the decoded text."""


@dataclass(slots=True, frozen=True)
class _Root:
    local: str
    namespace: str | None
    line: int | None
    column: int | None


class _Lines:
    """Line and column (both 1-based) of character offsets in a text."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] | None = None

    def position(self, offset: int) -> tuple[int, int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer("\n", self._text)]
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1


class _Collector:
    """Problems with at most ``limit`` per code, then one saying how many were left out."""

    def __init__(self, limit: int = MAX_PROBLEMS_PER_CODE) -> None:
        self.problems: list[Problem] = []
        self._limit = limit
        self._counts: Counter[str] = Counter()

    def add(self, problem: Problem) -> None:
        self._counts[problem.code] += 1
        if self._counts[problem.code] <= self._limit:
            self.problems.append(problem)

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    def finish(self) -> list[Problem]:
        for code, count in self._counts.items():
            if count > self._limit:
                more = count - self._limit
                self.problems.append(
                    Problem(
                        code, f"{more} more {code} finding{'s' if more != 1 else ''} not listed"
                    )
                )
        return self.problems


def _detect_encoding(data: bytes) -> _Encoding:
    bom: str | None = None
    codec = "utf-8"
    body = data
    if data.startswith(codecs.BOM_UTF8):
        bom, codec, body = "UTF-8", "utf-8", data[3:]
    elif data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        bom = "UTF-32"
        codec = "utf-32"
    elif data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        bom, codec = "UTF-16", "utf-16"
    elif data.startswith(b"<\x00?\x00"):
        codec = "utf-16-le"
    elif data.startswith(b"\x00<\x00?"):
        codec = "utf-16-be"
    head = body[:1024].decode(codec, errors="replace").lstrip("\ufeff")
    match = _DECLARATION.match(head.lstrip())
    declared = match.group("enc") if match else None
    offset = None
    if match is not None:
        offset = (len(head) - len(head.lstrip())) + match.start("enc")
    if codec == "utf-8" and bom is None and declared:
        # A byte order mark wins over the declaration (XML 1.0, appendix F), as in libxml2.
        try:
            found = codecs.lookup(declared).name
        except LookupError:
            found = None
        if found is not None and found != "utf-8":
            codec = found
    return _Encoding(codec, bom, declared, offset)


def _is_utf8_name(name: str) -> bool:
    return name.strip().lower().replace("_", "-") in {"utf-8", "utf8"}


def _decode(data: bytes, encoding: _Encoding) -> str:
    try:
        text = data.decode(encoding.codec, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff")


def check_encoding(data: bytes) -> list[Problem]:
    """``encoding_invalid`` problems: a non-UTF-8 encoding, or bytes that are not UTF-8."""
    encoding = _detect_encoding(data)
    if _utf16_or_32(encoding):
        kind = encoding.bom or "UTF-16"
        how = "byte order mark" if encoding.bom else "byte pattern"
        return [
            Problem(
                "encoding_invalid",
                f"the document is encoded as {kind} (detected from its {how}); sitemaps must "
                "be UTF-8",
                1,
                1,
            )
        ]
    if encoding.declared is not None and not _is_utf8_name(encoding.declared):
        column = (encoding.declared_offset or 0) + 1
        if encoding.bom is None:
            message = (
                f"the XML declaration says encoding={encoding.declared!r}; sitemaps must be "
                "UTF-8 (and declare it, or declare nothing)"
            )
        else:
            message = (
                f"the byte order mark says UTF-8 but the XML declaration says "
                f"encoding={encoding.declared!r}; the byte order mark wins (as in XML parsers "
                "and browsers) and the document is read as UTF-8. Sitemaps must be UTF-8: "
                'declare encoding="UTF-8", or nothing'
            )
        return [Problem("encoding_invalid", message, 1, column)]
    if _is_utf8(data):
        return []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line_start = data.rfind(b"\n", 0, start) + 1
        line = data.count(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
        decoded = data.decode("utf-8", errors="replace")
        bad = decoded.count("\ufffd") - data.count(b"\xef\xbf\xbd")
        snippet = data[start : start + 4].hex(" ")
        return [
            Problem(
                "encoding_invalid",
                f"bytes at offset {start} are not valid UTF-8 ({snippet}...; {bad} invalid "
                f"sequence{'s' if bad != 1 else ''} in the document); sitemaps must be UTF-8",
                line,
                column,
            )
        ]
    return []


def check_unread_encoding(data: bytes) -> list[Problem]:
    """``encoding_invalid`` for a document the XML parser could not read, when its byte order
    mark or its XML declaration names an encoding other than UTF-8 (UTF-32, or one the parser
    does not know): the likely reason it could not be read. Nothing for other documents (an
    HTML page in another encoding is no sitemap, whatever its encoding)."""
    encoding = _detect_encoding(data)
    if _utf16_or_32(encoding) or (
        encoding.declared is not None and not _is_utf8_name(encoding.declared)
    ):
        return check_encoding(data)
    return []


def _utf16_or_32(encoding: _Encoding) -> bool:
    """Whether a byte order mark or the bytes themselves show UTF-16 or UTF-32."""
    return encoding.bom in {"UTF-16", "UTF-32"} or encoding.codec in {"utf-16-le", "utf-16-be"}


def _is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8, decoded a slice at a time (no copy of the whole text)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        for start in range(0, len(data), _UTF8_SLICE):
            decoder.decode(data[start : start + _UTF8_SLICE])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def _namespaces(attrs: str) -> dict[str | None, str]:
    found: dict[str | None, str] = {}
    for match in _ATTRIBUTE.finditer(attrs):
        name = match.group("name")
        value = match.group("d") if match.group("d") is not None else match.group("s") or ""
        if name == "xmlns":
            found[None] = value
        elif name.startswith("xmlns:"):
            found[name[6:]] = value
    return found


def sniff_root(text: str) -> tuple[_Root | None, int | None]:
    """Find the root element of a possibly broken document; also return its offset."""
    position = 0
    length = len(text)
    while position < length:
        skip = _PROLOG_SKIP.match(text, position)
        if skip is None or skip.end() == position:
            break
        position = skip.end()
    match = _ROOT_START.match(text, position)
    if match is not None:
        name, namespaces = match.group("name"), _namespaces(match.group("attrs"))
    else:
        bare = _ROOT_NAME.match(text, position)
        if bare is None:
            return None, None
        name, namespaces = bare.group("name"), {}
    prefix, _, local = name.rpartition(":")
    namespace = namespaces.get(prefix or None)
    lines = _Lines(text[: position + 1])
    line, column = lines.position(position)
    return _Root(local, namespace or None, line, column), position


def check_namespace(root: _Root) -> list[Problem]:
    """``namespace_invalid`` when the root is not in the sitemaps.org 0.9 namespace."""
    if root.namespace == SITEMAP_NS:
        return []
    expected = f'xmlns="{SITEMAP_NS}"'
    if root.namespace is None:
        message = f"<{root.local}> has no namespace; the root element must declare {expected}"
    else:
        hint = next(
            (text for wrong, text in _NAMESPACE_HINTS if root.namespace.rstrip() == wrong),
            None,
        )
        if hint is None and root.namespace.strip() == SITEMAP_NS:
            hint = "has surrounding whitespace"
        detail = f" (it {hint})" if hint else ""
        message = (
            f"<{root.local}> is in the namespace {root.namespace!r}{detail}; it must be "
            f"{SITEMAP_NS!r} exactly"
        )
    return [Problem("namespace_invalid", message, root.line, root.column)]


def check_limits(entries: int, size: int, fraction: float, kind: str) -> list[Problem]:
    """``near_limit`` warnings when a document is close to, but within, a protocol limit."""
    problems: list[Problem] = []
    entry_name = "URLs" if kind == "urlset" else "child sitemaps"
    if fraction * PROTOCOL_MAX_ENTRIES <= entries <= PROTOCOL_MAX_ENTRIES:
        problems.append(
            Problem(
                "near_limit",
                f"{entries:,} {entry_name} is {_percent(entries, PROTOCOL_MAX_ENTRIES)} of the "
                f"protocol's limit of {PROTOCOL_MAX_ENTRIES:,} per sitemap; split it before "
                "it grows past the limit",
            )
        )
    if fraction * PROTOCOL_MAX_BYTES <= size <= PROTOCOL_MAX_BYTES and size > 0:
        problems.append(
            Problem(
                "near_limit",
                f"{size:,} bytes uncompressed is {_percent(size, PROTOCOL_MAX_BYTES)} of the "
                f"protocol's limit of {PROTOCOL_MAX_BYTES:,} bytes (50 MiB); split it before "
                "it grows past the limit",
            )
        )
    return problems


def _percent(part: int, whole: int) -> str:
    """``part`` as a whole percentage of ``whole``, rounded down: a document just within a limit
    is not said to be at 100 % of it (only one exactly at it)."""
    return f"{part * 100 // whole}%"


def _context(text: str, offset: int) -> str:
    snippet = text[max(0, offset - 15) : offset + 15].replace("\n", " ")
    return snippet.strip()


class _Scanner:
    """The tolerant scan behind :func:`scan_unescaped`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _Lines(text)
        self.declared = {m.group("name") for m in _ENTITY_DECL.finditer(text[:_HEAD_BYTES])}
        self.problems: list[Problem] = []

    def report(self, offset: int, what: str) -> None:
        line, column = self.lines.position(offset)
        self.problems.append(
            Problem(
                "unescaped_characters",
                f"{what} near {_context(self.text, offset)!r}",
                line,
                column,
            )
        )

    def ampersand(self, offset: int) -> None:
        reference = _REFERENCE.match(self.text, offset)
        if reference is None:
            self.report(
                offset,
                "raw '&' that does not start an entity or character reference: write it as &amp;",
            )
            return
        name = reference.group("name")
        if name is not None and name not in _PREDEFINED and name not in self.declared:
            self.report(
                offset,
                f"'&{name};' is not one of XML's predefined entities (amp, lt, gt, quot, "
                "apos): write a literal '&' as &amp;",
            )

    def attributes(self, start: int, end: int) -> None:
        for match in re.finditer(r"[<&]", self.text[start:end]):
            offset = start + match.start()
            if match.group() == "<":
                self.report(offset, "raw '<' inside an attribute value: write it as &lt;")
            else:
                self.ampersand(offset)

    def less_than(self, offset: int) -> int:
        """Handle a ``<`` at ``offset``; return where scanning resumes."""
        text = self.text
        for skipper in (_COMMENT, _CDATA, _PI, _DOCTYPE, _END_TAG):
            skipped = skipper.match(text, offset)
            if skipped is not None:
                return skipped.end()
        tag = _START_TAG.match(text, offset)
        if tag is not None:
            self.attributes(tag.start("attrs"), tag.end("attrs"))
            return tag.end()
        if text[offset + 1 : offset + 2] in {"!", "?"}:
            return offset + 1
        name = _TAG_NAME.match(text, offset)
        if name is not None:
            following = text[name.end() : name.end() + 1]
            if following == "" or following in " \t\r\n/>":
                return name.end()
        self.report(offset, "raw '<' in text: write it as &lt;")
        return offset + 1

    def run(self) -> list[Problem]:
        position = 0
        while True:
            found = _CANDIDATE.search(self.text, position)
            if found is None:
                return self.problems
            offset = found.start()
            token = found.group()
            if token == "&":
                self.ampersand(offset)
                position = offset + 1
            elif token == "]]>":
                self.report(offset, "']]>' in text: write the '>' as &gt;")
                position = offset + 3
            else:
                position = self.less_than(offset)


def scan_unescaped(text: str) -> list[Problem]:
    """``unescaped_characters``: raw ``&``, ``<`` or ``]]>`` where XML requires an escape.

    A tolerant scan of the decoded document: comments, CDATA sections, processing
    instructions and the DOCTYPE are skipped; well-formed tags are skipped after checking
    their attribute values. A ``<`` followed by a name and then whitespace, ``/``, ``>`` or
    the end of the document is taken as a broken or truncated tag, which the parser reports;
    any other ``<`` (``a < b``, ``a<b</loc>``) is reported as unescaped. An entity reference
    other than the five predefined ones (and any the DOCTYPE declares) is reported too.
    """
    return _Scanner(text).run()


def _parser() -> etree.XMLParser:
    parser = etree.XMLParser(**SAFE_PARSER_OPTIONS)
    parser.resolvers.add(EmptyResolver())
    return parser


def _count_entries_text(text: str, item: str) -> int:
    pattern = re.compile(rf"<(?:{_NAME}:)?{item}[\s/>]")
    return sum(1 for _ in pattern.finditer(text))


@dataclass(frozen=True, slots=True)
class Judgement:
    """What :func:`judge_document` found."""

    problems: list[Problem]
    """The findings, as :func:`validate_document` returns them."""
    rejudge_after: datetime | None
    """The earliest moment, ``now`` or later, past which the same document judged again would
    have one more ``news_too_old`` or ``video_expired`` (an article turns two days old, a video
    expires); until then it would have the same findings. ``None`` when no such finding can
    appear."""


def validate_document(
    data: bytes, *, now: datetime | None = None, near_limit_fraction: float = 0.9
) -> list[Problem]:
    """Validate one decompressed sitemap document offline and return its problems.

    Only ``urlset`` and ``sitemapindex`` documents are checked (whatever their namespace);
    any other root, or no root at all, gives ``[]``. Codes, with their severities, are
    listed in :data:`sitemapaudit.validation.CODES`.

    Well-formedness errors themselves are not reported here (the reader does that); for a
    document that is not well-formed this reports the encoding, namespace, size and
    unescaped-character findings only. ``now`` (default: the current time, UTC) dates the
    news freshness and video expiration rules; a naive ``now`` is taken as UTC.
    ``near_limit_fraction`` sets how close to the 50,000-entry and 50 MiB limits a document
    must be to get ``near_limit``. Lines and columns are 1-based.
    """
    return judge_document(data, now=now, near_limit_fraction=near_limit_fraction).problems


def judge_document(
    data: bytes,
    *,
    now: datetime | None = None,
    near_limit_fraction: float = 0.9,
    whole_tree: bool = True,
) -> Judgement:
    """:func:`validate_document`'s findings, and until when they hold (see :class:`Judgement`).

    ``whole_tree=False`` never builds the whole tree of a document (for one past the
    50,000-entry limit, whose tree is not bounded by that limit): a well-formed urlset or
    sitemapindex without a DOCTYPE is validated chunk by chunk as always; any other document
    gets only the findings of its text (encoding, namespace, size, unescaped characters), as a
    document that is not well-formed does.
    """
    if not 0 < near_limit_fraction <= 1:
        raise ValueError(f"near_limit_fraction must be in (0, 1], got {near_limit_fraction!r}")
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # Lines are counted by LF, by libxml2 and here: a lone CR is made one (see lineends).
    data = lone_crs_as_lf(data)
    # A well-formed urlset or sitemapindex goes chunk by chunk, in a fraction of the memory of
    # its whole tree; anything else (or a document with a DOCTYPE) takes the whole tree.
    streamed = stream_document(data, now=moment)
    if streamed is not None:
        return Judgement(
            _streamed_problems(data, streamed, near_limit_fraction), streamed.rejudge_after
        )
    return _whole_tree_problems(data, moment, near_limit_fraction, parse=whole_tree)


def _whole_tree_problems(
    data: bytes, moment: datetime, near_limit_fraction: float, *, parse: bool = True
) -> Judgement:
    """:func:`judge_document` on the whole parsed tree (or the text of a broken document, or of
    any document when not ``parse``)."""
    tree_root: etree._Element | None = None
    if parse:
        try:
            tree_root = etree.fromstring(data, _parser())
        except (etree.XMLSyntaxError, ValueError):
            tree_root = None
    text: str | None = None
    if tree_root is not None:
        tag = tree_root.tag
        if not isinstance(tag, str) or local_name(tag) not in ITEM_TAGS:
            return Judgement([], None)
        head_text = _decode(data[:_HEAD_BYTES], _detect_encoding(data))
        sniffed, _offset = sniff_root(head_text)
        if sniffed is not None and sniffed.local == local_name(tag):
            line, column = sniffed.line, sniffed.column
        else:
            line, column = source_line(tree_root), None
        root = _Root(local_name(tag), namespace_of(tag), line, column)
    else:
        text = _decode(data, _detect_encoding(data))
        sniffed, _offset = sniff_root(text)
        if sniffed is None or sniffed.local not in ITEM_TAGS:
            return Judgement([], None)
        root = sniffed
    collector = _Collector()
    collector.extend(check_encoding(data))
    namespace_problems = check_namespace(root)
    collector.extend(namespace_problems)
    item = ITEM_TAGS[root.local]
    if tree_root is not None:
        tag = tree_root.tag
        assert isinstance(tag, str)
        item_tag = tag[: len(tag) - len(root.local)] + item
        entries = sum(1 for kid in tree_root if kid.tag == item_tag)
    else:
        assert text is not None
        entries = _count_entries_text(text, item)
    collector.extend(check_limits(entries, len(data), near_limit_fraction, root.local))
    if tree_root is None:
        assert text is not None
        collector.extend(scan_unescaped(text))
        return Judgement(collector.finish(), None)
    # The extension findings, with the scan kept for when they would change with the time.
    root_tag = tree_root.tag
    assert isinstance(root_tag, str)
    scan = ExtensionScan(root_tag, now=moment)
    scan.feed(tree_root)
    collector.extend(scan.finish())
    if namespace_problems:
        collector.extend(unknown_namespaces(tree_root))
    problems = collector.finish()
    if not namespace_problems:
        problems.extend(validate_tree(tree_root, data, limit=MAX_SCHEMA_PROBLEMS))
    return Judgement(problems, scan.rejudge_after)


def _streamed_problems(data: bytes, streamed: StreamResult, fraction: float) -> list[Problem]:
    """:func:`validate_document`'s answer for a document :func:`stream_document` took."""
    tag = streamed.root.tag
    assert isinstance(tag, str)
    head_text = _decode(data[:_HEAD_BYTES], _detect_encoding(data))
    sniffed, _offset = sniff_root(head_text)
    if sniffed is not None and sniffed.local == local_name(tag):
        line, column = sniffed.line, sniffed.column
    else:
        line, column = source_line(streamed.root), None
    root = _Root(local_name(tag), namespace_of(tag), line, column)
    collector = _Collector()
    collector.extend(check_encoding(data))
    namespace_problems = check_namespace(root)
    collector.extend(namespace_problems)
    collector.extend(check_limits(streamed.entries, len(data), fraction, root.local))
    collector.extend(streamed.extension_problems)
    if namespace_problems:
        collector.extend(streamed.unknown_problems)
    problems = collector.finish()
    if not namespace_problems:
        problems.extend(streamed.schema_problems)
    return problems
