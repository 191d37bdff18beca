"""XSD validation of a parsed urlset or sitemapindex, with path-annotated messages.

Validation uses lxml's :class:`~lxml.etree.XMLSchema` (libxml2) against the combined schema
of :mod:`sitemapaudit.validation.schemas`. Two properties of libxml2 shape this module:

* For every violation libxml2 computes the node's XPath by counting the node's preceding
  siblings, so a 50,000-URL document with one error per ``<url>`` costs quadratic time
  (about 9 s). The root's element children are therefore validated in chunks of
  :data:`CHUNK_SIZE` under a copy of the root element, and put back afterwards; a valid
  50,000-URL document validates in about 0.1 s and one with 50,000 errors in about 0.3 s.
* After an unexpected element, libxml2 skips the rest of that parent's children. The
  root's own content model (extension elements first, then ``<url>``/``<sitemap>``
  elements only) is therefore checked here in Python, and only the children that fit it
  are handed to libxml2, so a misplaced element hides nothing in the following entries.

:func:`validate_tree` works on a whole parsed document; :mod:`sitemapaudit.validation.streaming`
runs the same chunks one at a time as a pull parser completes them, with the same findings, and
is what :func:`~sitemapaudit.validation.validate_document` uses for well-formed documents.

Each violation becomes one ``schema_invalid`` :class:`Problem` whose message starts with the
element's path (``/urlset/url[3]/changefreq``) followed by a plain-language reason. The line
comes from the parsed tree and the column (1-based) from an expat pass over the bytes that
runs only when there is something to report. Elements from a namespace without a shipped
schema, which the XSD's strict wildcards reject, are not schema violations here: each such
namespace is reported once as ``unknown_extension``.
"""

from __future__ import annotations

import pyexpat
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, cast

from lxml import etree

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation.schemas import (
    EXTENSION_PREFIXES,
    IMAGE_NS,
    NEWS_NS,
    SITEMAP_NS,
    VIDEO_NS,
    XHTML_NS,
    load_schema,
)

CHUNK_SIZE: Final = 500
MAX_SCHEMA_PROBLEMS: Final = 1000
_VALUE_SHOWN: Final = 80

ITEM_TAGS: Final[dict[str, str]] = {"urlset": "url", "sitemapindex": "sitemap"}
"""Root local name -> the entry element it lists."""

_CHANGEFREQ = "always/hourly/daily/weekly/monthly/yearly/never"

SEQUENCES: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    (SITEMAP_NS, "url"): ("loc", "lastmod", "changefreq", "priority"),
    (SITEMAP_NS, "sitemap"): ("loc", "lastmod"),
    (IMAGE_NS, "image"): ("loc", "caption", "geo_location", "title", "license"),
    (NEWS_NS, "news"): (
        "publication",
        "access",
        "genres",
        "publication_date",
        "title",
        "keywords",
        "stock_tickers",
    ),
    (NEWS_NS, "publication"): ("name", "language"),
    (VIDEO_NS, "video"): (
        "thumbnail_loc",
        "title",
        "description",
        "content_loc",
        "player_loc",
        "duration",
        "expiration_date",
        "rating",
        "content_segment_loc",
        "view_count",
        "publication_date",
        "tag",
        "category",
        "family_friendly",
        "restriction",
        "gallery_loc",
        "price",
        "requires_subscription",
        "uploader",
        "tvshow",
        "platform",
        "live",
        "id",
    ),
    (VIDEO_NS, "tvshow"): (
        "show_title",
        "video_type",
        "episode_title",
        "season_number",
        "episode_number",
        "premier_date",
    ),
}
"""The XSD sequences (child order) of the complex elements, for order messages."""

_DATE_ELEMENTS: Final = frozenset(
    {
        (SITEMAP_NS, "lastmod"),
        (NEWS_NS, "publication_date"),
        (VIDEO_NS, "publication_date"),
        (VIDEO_NS, "expiration_date"),
        (VIDEO_NS, "premier_date"),
    }
)

_VALUE_KINDS: Final[dict[tuple[str, str], str]] = {
    (VIDEO_NS, "duration"): "a whole number of seconds from 0 to 28800",
    (VIDEO_NS, "rating"): "a number from 0.0 to 5.0",
    (VIDEO_NS, "view_count"): "a non-negative whole number",
    (VIDEO_NS, "season_number"): "a whole number of 1 or more",
    (VIDEO_NS, "episode_number"): "a whole number of 1 or more",
    (VIDEO_NS, "family_friendly"): "yes or no",
    (VIDEO_NS, "requires_subscription"): "yes or no",
    (VIDEO_NS, "live"): "yes or no",
}

_ATOMIC_TYPES: Final[dict[str, str]] = {
    "decimal": "a decimal number",
    "anyURI": "a URI",
    "nonNegativeInteger": "a non-negative whole number",
    "integer": "a whole number",
    "language": "a language tag such as en or en-GB",
    "LanguageCode": "a language tag such as en or en-GB",
    "tPriority": "a decimal number between 0.0 and 1.0",
    "date": "an XSD date (YYYY-MM-DD)",
    "dateTime": "an XSD date-time (YYYY-MM-DDThh:mm:ss with an optional time zone)",
}

_MSG = re.compile(
    r"^Element '(?P<elem>[^']*)'(?:, attribute '(?P<attr>[^']*)')?: (?P<rest>.*)$", re.S
)
_QNAME = re.compile(r"\{(?P<ns>[^}]*)\}(?P<local>[^\s,'()]+)")
_STEP = re.compile(r"^(?P<name>[^\[\]]+)(?:\[(?P<idx>\d+)\])?$")
_ENUM = re.compile(
    r"\[facet 'enumeration'\] The value '(?P<v>.*)' is not an element of the set \{(?P<set>.*)\}\.",
    re.S,
)
_RANGE = re.compile(
    r"\[facet '(?P<facet>(?:min|max)(?:In|Ex)clusive)'\] The value '(?P<v>.*)' is "
    r"(?:greater|less) than (?:or equal to )?the (?:maximum|minimum) value allowed "
    r"\('(?P<lim>[^']*)'\)\.",
    re.S,
)
_MINLEN = re.compile(
    r"\[facet 'minLength'\] The value has a length of '(?P<n>\d+)'; this underruns the "
    r"allowed minimum length of '(?P<m>\d+)'\."
)
_MAXLEN = re.compile(
    r"\[facet 'maxLength'\] The value has a length of '(?P<n>\d+)'; this exceeds the "
    r"allowed maximum length of '(?P<m>\d+)'\."
)
_PATTERN = re.compile(
    r"\[facet 'pattern'\] The value '(?P<v>.*)' is not accepted by the pattern '(?P<p>.*)'\.",
    re.S,
)
_NOT_VALID = re.compile(
    r"'(?P<v>.*)' is not a valid value of the (?:local )?(?P<kind>atomic|union|list) type"
    r"(?: '(?P<t>[^']*)')?\.",
    re.S,
)
_NOT_EXPECTED = re.compile(
    r"This element is not expected\.(?: Expected is (?:one of )?\( (?P<exp>.*) \)\.)?", re.S
)
_MISSING = re.compile(
    r"Missing child element\(s\)\. Expected is (?:one of )?\( (?P<exp>.*) \)\.", re.S
)
_ATTR_NOT_ALLOWED = re.compile(r"The attribute '(?P<a>[^']*)' is not allowed\.")
_ATTR_REQUIRED = re.compile(r"The attribute '(?P<a>[^']*)' is required but missing\.")
_WILDCARD_ERROR: Final = int(etree.ErrorTypes.SCHEMAV_CVC_ELT_1)
_STRICT_WILDCARD = "No matching global element declaration available, but demanded by the strict"
_TEXT_IN_ELEMENT_ONLY = "Character content other than whitespace is not allowed"
_ELEMENT_IN_SIMPLE = "Element content is not allowed, because the"

_MISSING_SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(?:Z|[+-]\d\d:\d\d)?$")
_YEAR_MONTH = re.compile(r"^\d{4}(?:-\d\d)?$")
_SPACE_SEPARATOR = re.compile(r"^\d{4}-\d\d-\d\d\s+\d")
_TZ_NO_COLON = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?[+-]\d{4}$")
_TZ_HOURS_ONLY = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d$")


def source_line(node: etree._Element) -> int | None:
    """The line an element starts on, if the parser recorded one."""
    line = getattr(node, "sourceline", None)
    return line if isinstance(line, int) and line > 0 else None


def local_name(tag: str) -> str:
    """``{ns}local`` -> ``local``."""
    return tag.rpartition("}")[2]


def namespace_of(tag: str) -> str | None:
    """``{ns}local`` -> ``ns``; ``None`` for an element without a namespace."""
    if tag.startswith("{"):
        return tag[1:].partition("}")[0]
    return None


def display_name(ns: str | None, local: str, prefix: str | None = None) -> str:
    """How an element or type name is written in messages.

    Sitemap elements go bare (``url``), shipped extensions get their customary prefix
    (``image:loc``), XSD types get ``xs:``, anything else keeps the document's prefix or is
    written in Clark notation.
    """
    if ns == SITEMAP_NS or ns is None:
        return local
    if ns in EXTENSION_PREFIXES:
        return f"{EXTENSION_PREFIXES[ns]}:{local}"
    if ns == "http://www.w3.org/2001/XMLSchema":
        return f"xs:{local}"
    if prefix:
        return f"{prefix}:{local}"
    return f"{{{ns}}}{local}"


def steps_up_to(
    element: etree._Element, known: Container[etree._Element]
) -> tuple[list[str], etree._Element | None]:
    """Path steps from ``element`` up to its first ancestor in ``known`` (innermost first,
    ``name[n]`` where siblings share the name), and that ancestor; ``None`` when the walk
    reached the root instead."""
    steps: list[str] = []
    node: etree._Element | None = element
    while node is not None and node not in known:
        parent = node.getparent()
        name = element_name(node)
        if parent is None:
            steps.append(name)
            break
        same = [c for c in parent if c.tag == node.tag]
        steps.append(f"{name}[{same.index(node) + 1}]" if len(same) > 1 else name)
        node = parent
    return steps, (node if node is not None and node in known else None)


def element_name(element: etree._Element) -> str:
    """The display name of an element."""
    tag = element.tag
    if not isinstance(tag, str):
        return "#node"
    return display_name(namespace_of(tag), local_name(tag), element.prefix)


def _readable(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        return display_name(match.group("ns"), match.group("local"))

    text = text.replace("##other{" + SITEMAP_NS + "}*", "an extension element")
    return _QNAME.sub(repl, text)


def _shown(value: str) -> str:
    if len(value) > _VALUE_SHOWN:
        return value[: _VALUE_SHOWN - 3] + "..."
    return value


def _names_list(expected: str) -> str:
    items = [item.strip() for item in _readable(expected).split(",") if item.strip()]
    return ", ".join(item if item == "an extension element" else f"<{item}>" for item in items)


def date_reason(name: str, value: str) -> str:
    """Why a date value fails ``xsd:date | xsd:dateTime``, in plain words."""
    stripped = value.strip()
    base = (
        f"{name} '{_shown(value)}' is not a W3C/XSD date: the XSD accepts YYYY-MM-DD or "
        "YYYY-MM-DDThh:mm:ss (optional fraction, optional Z or +hh:mm)"
    )
    if _MISSING_SECONDS.match(stripped):
        return base + "; seconds are required by the XSD"
    if _YEAR_MONTH.match(stripped):
        return base + "; a year or a year-month alone is not accepted by the XSD"
    if _SPACE_SEPARATOR.match(stripped):
        return base + "; separate date and time with 'T', not a space"
    if _TZ_NO_COLON.match(stripped):
        return base + "; write the time zone as +hh:mm"
    if _TZ_HOURS_ONLY.match(stripped):
        return base + "; write the time zone as +hh:mm, with minutes"
    return base


def _sequence_text(key: tuple[str, str]) -> str:
    ns, _local = key
    names = [display_name(ns, child) for child in SEQUENCES[key]]
    tail = ", then extension elements" if ns == SITEMAP_NS else ""
    return ", ".join(names) + tail


def _unexpected_reason(element: etree._Element | None, elem_tag: str, expected: str | None) -> str:
    ns, local = namespace_of(elem_tag), local_name(elem_tag)
    name = display_name(ns, local)
    parent = element.getparent() if element is not None else None
    expected_text = f"; expected {_names_list(expected)}" if expected else ""
    if parent is None or not isinstance(parent.tag, str):
        return f"<{name}> is not allowed here{expected_text}"
    parent_key = (namespace_of(parent.tag) or "", local_name(parent.tag))
    parent_name = element_name(parent)
    previous = element.getprevious() if element is not None else None
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()
    sequence = SEQUENCES.get(parent_key)
    if sequence is not None and ns == parent_key[0] and local in sequence:
        if (
            expected
            and expected.strip() == f"{{{parent_key[0]}}}{sequence[0]}"
            and local != sequence[0]
        ):
            first = display_name(parent_key[0], sequence[0])
            return (
                f"<{parent_name}> has no <{first}> before <{name}>: <{first}> is required and "
                f"must be the first child of <{parent_name}>"
            )
        if previous is not None and previous.tag == elem_tag:
            return f"duplicate <{name}>: <{parent_name}> allows it only once here{expected_text}"
        where = f"after <{element_name(previous)}>" if previous is not None else "first"
        return (
            f"wrong element order: <{name}> cannot come {where} in <{parent_name}>{expected_text}; "
            f"the children of <{parent_name}> must follow the sequence {_sequence_text(parent_key)}"
        )
    if sequence is not None and parent_key[0] == SITEMAP_NS and ns != SITEMAP_NS and ns:
        return (
            f"wrong element order: extension element <{name}> cannot come before "
            f"<{parent_name}>'s own elements{expected_text}; the children of <{parent_name}> "
            f"must follow the sequence {_sequence_text(parent_key)}"
        )
    if ns is None and parent_key[0] == SITEMAP_NS:
        return (
            f"<{name}> has no namespace and is not allowed in <{parent_name}>{expected_text}; "
            "extension elements need their own namespace"
        )
    return f"<{name}> is not allowed in <{parent_name}>{expected_text}"


@dataclass(slots=True, frozen=True)
class _Subject:
    """The element (and attribute) a libxml2 message is about."""

    tag: str
    attr: str | None

    @property
    def key(self) -> tuple[str, str]:
        return namespace_of(self.tag) or "", local_name(self.tag)

    @property
    def name(self) -> str:
        return display_name(namespace_of(self.tag), local_name(self.tag))

    @property
    def text(self) -> str:
        return f"attribute {self.attr} of <{self.name}>" if self.attr else self.name


def _enumeration_reason(subject: _Subject, m: re.Match[str]) -> str:
    value = m.group("v")
    allowed = re.findall(r"'([^']*)'", m.group("set"))
    reason = f"{subject.text} '{_shown(value)}' is not one of {'/'.join(allowed)}"
    folded = {a.lower(): a for a in allowed}
    if value not in allowed and value.strip().lower() in folded:
        hint = folded[value.strip().lower()]
        if value.strip() == hint:
            reason += f" (remove the surrounding whitespace: '{hint}')"
        else:
            reason += f" (values are case-sensitive: write '{hint}')"
    return reason


def _range_reason(subject: _Subject, m: re.Match[str]) -> str:
    value = m.group("v")
    if subject.key == (SITEMAP_NS, "priority") and not subject.attr:
        return f"priority {_shown(value)} is outside 0.0-1.0"
    limit = m.group("lim")
    bound = {
        "maxInclusive": f"greater than the maximum {limit}",
        "maxExclusive": f"not less than {limit}",
        "minInclusive": f"less than the minimum {limit}",
        "minExclusive": f"not greater than {limit}",
    }[m.group("facet")]
    return f"{subject.text} {_shown(value)} is {bound}"


def _min_length_reason(subject: _Subject, m: re.Match[str]) -> str:
    if subject.key == (SITEMAP_NS, "loc") and not subject.attr:
        return (
            f"loc is {m.group('n')} characters long; the XSD requires 12 to 2048 "
            "characters (an absolute URL)"
        )
    return (
        f"{subject.text} is {m.group('n')} characters long, "
        f"shorter than the minimum of {m.group('m')}"
    )


def _max_length_reason(subject: _Subject, m: re.Match[str]) -> str:
    return (
        f"{subject.text} is {m.group('n')} characters long, "
        f"longer than the maximum of {m.group('m')}"
    )


def _pattern_reason(subject: _Subject, m: re.Match[str]) -> str:
    value = m.group("v")
    if subject.key == (NEWS_NS, "language") and not subject.attr:
        return (
            f"news:language '{_shown(value)}' must be a lowercase ISO 639 code of 2 or 3 "
            f"letters, or zh-cn / zh-tw (pattern {m.group('p')})"
        )
    return f"{subject.text} '{_shown(value)}' does not match the pattern {m.group('p')}"


def _value_reason(subject: _Subject, m: re.Match[str]) -> str:
    value = m.group("v")
    key = subject.key
    if not subject.attr:
        if key in _DATE_ELEMENTS:
            return date_reason(subject.name, value)
        if key == (SITEMAP_NS, "changefreq"):
            return f"changefreq '{_shown(value)}' is not one of {_CHANGEFREQ}"
        if key == (SITEMAP_NS, "priority"):
            return f"priority '{_shown(value)}' is not a decimal number between 0.0 and 1.0"
    elif subject.attr == "hreflang" and key[0] == XHTML_NS:
        return (
            f"hreflang '{_shown(value)}' is not a valid language tag "
            "(xs:language: letters and digits in groups of 1-8 joined by '-', e.g. en-GB)"
        )
    type_name = local_name(m.group("t") or "")
    kind = None if subject.attr else _VALUE_KINDS.get(key)
    if kind is None:
        kind = _ATOMIC_TYPES.get(type_name)
    if kind is None and m.group("kind") == "union":
        kind = "one of the allowed forms"
    if kind is None:
        kind = f"a valid {type_name}" if type_name else "a valid value"
    return f"{subject.text} '{_shown(value)}' is not {kind}"


def _missing_reason(subject: _Subject, m: re.Match[str]) -> str:
    expected = m.group("exp")
    if subject.key in {(SITEMAP_NS, "url"), (SITEMAP_NS, "sitemap")} and (
        expected.strip() == f"{{{SITEMAP_NS}}}loc"
    ):
        return f"<{subject.name}> has no <loc>: <loc> is required"
    item = ITEM_TAGS.get(subject.key[1]) if subject.key[0] == SITEMAP_NS else None
    if item is not None:
        return f"<{subject.name}> lists no <{item}>: at least one is required"
    return f"<{subject.name}> is missing a required child element: expected {_names_list(expected)}"


def _fixed_reason(subject: _Subject, rest: str) -> str | None:
    name = subject.name
    if m := _ATTR_NOT_ALLOWED.match(rest):
        return f"attribute {m.group('a')} is not allowed on <{name}>"
    if m := _ATTR_REQUIRED.match(rest):
        return f"<{name}> needs the attribute {m.group('a')}"
    if rest.startswith(_STRICT_WILDCARD):
        schema = EXTENSION_PREFIXES.get(subject.key[0])
        if schema:
            return f"<{name}> is not an element of the {schema} extension schema"
        return f"<{name}> is not declared by any shipped schema"
    if rest.startswith(_TEXT_IN_ELEMENT_ONLY):
        return f"text is not allowed directly inside <{name}>, only child elements"
    if rest.startswith(_ELEMENT_IN_SIMPLE):
        return f"<{name}> must contain only text, not child elements"
    return None


_FACET_RULES: Final = (
    (_ENUM, _enumeration_reason),
    (_RANGE, _range_reason),
    (_MINLEN, _min_length_reason),
    (_MAXLEN, _max_length_reason),
    (_PATTERN, _pattern_reason),
    (_NOT_VALID, _value_reason),
    (_MISSING, _missing_reason),
)


def explain(message: str, element: etree._Element | None) -> str:
    """Turn a libxml2 schema-validation message into a plain-language reason."""
    match = _MSG.match(message.strip())
    if match is None:
        return _readable(message.strip())
    subject = _Subject(match.group("elem"), match.group("attr"))
    rest = match.group("rest").strip()
    for pattern, rule in _FACET_RULES:
        if m := pattern.match(rest):
            return rule(subject, m)
    if m := _NOT_EXPECTED.match(rest):
        return _unexpected_reason(element, subject.tag, m.group("exp"))
    fixed = _fixed_reason(subject, rest)
    if fixed is not None:
        return fixed
    return f"<{subject.name}>: {_readable(rest)}"


def unknown_extension(ns: str, name: str, line: int | None) -> Problem:
    """The ``unknown_extension`` problem for namespace ``ns``, first seen as ``<name>``."""
    return Problem(
        "unknown_extension",
        f"extension namespace {ns} (first element <{name}>) has no known schema; its "
        "elements were not validated",
        line,
    )


@dataclass(slots=True)
class Chunk:
    root: etree._Element
    kids: list[etree._Element]


@dataclass(slots=True)
class _Finding:
    element: etree._Element | None
    reason: str
    line: int | None
    is_root: bool = False


@dataclass(slots=True)
class _Context:
    root: etree._Element
    kids: list[etree._Element]
    data: bytes
    findings: list[_Finding] = field(default_factory=list)
    total: int = 0
    root_reasons: set[str] = field(default_factory=set)
    unknown: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    """Namespaces without a shipped schema -> (first element's name, its line)."""
    limit: int = MAX_SCHEMA_PROBLEMS

    def add(self, finding: _Finding) -> None:
        if finding.is_root:
            if finding.reason in self.root_reasons:
                return
            self.root_reasons.add(finding.reason)
        self.total += 1
        if len(self.findings) < self.limit:
            self.findings.append(finding)


def _structure(ctx: _Context) -> list[int]:
    """Check the root's own content model; return the indexes of the kids to validate."""
    root_tag = ctx.root.tag
    assert isinstance(root_tag, str)
    item = "{" + SITEMAP_NS + "}" + ITEM_TAGS[local_name(root_tag)]
    root_name = element_name(ctx.root)
    keep: list[int] = []
    seen_item = False
    for index, kid in enumerate(ctx.kids):
        reason, seen_item = misplaced_reason(kid, item, root_name, seen_item, ctx.unknown)
        if reason is None:
            keep.append(index)
        else:
            ctx.add(_Finding(kid, reason, source_line(kid)))
    return keep


def misplaced_reason(
    kid: etree._Element,
    item: str,
    root_name: str,
    seen_item: bool,
    unknown: dict[str, tuple[str, int | None]],
) -> tuple[str | None, bool]:
    """Check one element child of the root against the root's content model.

    ``item`` is the entry tag (``{sitemap ns}url``) and ``seen_item`` whether an entry came
    before. Returns why ``kid`` is misplaced (``None`` when it fits and goes to the XSD run)
    and the new ``seen_item``; an unshipped namespace is recorded in ``unknown``.
    """
    tag = kid.tag
    assert isinstance(tag, str)
    if tag == item:
        return None, True
    item_name = local_name(item)
    ns = namespace_of(tag)
    name = element_name(kid)
    if ns is not None and ns != SITEMAP_NS:
        if not seen_item:
            return None, seen_item
        if ns not in EXTENSION_PREFIXES:
            unknown.setdefault(ns, (name, source_line(kid)))
        reason = (
            f"<{name}> directly inside <{root_name}> after a <{item_name}>: extension "
            f"elements belong inside <{item_name}>, after its own elements"
        )
    elif ns is None:
        reason = (
            f"<{name}> has no namespace and is not allowed in <{root_name}>; expected <{item_name}>"
        )
    else:
        reason = f"<{name}> is not allowed in <{root_name}>; expected <{item_name}>"
    return reason, seen_item


def _chunks(ctx: _Context, keep: list[int]) -> list[Chunk]:
    root = ctx.root
    root_tag = root.tag
    assert isinstance(root_tag, str)
    item = "{" + SITEMAP_NS + "}" + ITEM_TAGS[local_name(root_tag)]
    groups: list[list[int]] = []
    current: list[int] = []
    has_item = False
    for index in keep:
        is_item = ctx.kids[index].tag == item
        if is_item and has_item and len(current) >= CHUNK_SIZE:
            groups.append(current)
            current = []
            has_item = False
        current.append(index)
        has_item = has_item or is_item
    if current or not groups:
        groups.append(current)
    chunks: list[Chunk] = []
    for number, group in enumerate(groups):
        nsmap = cast(Any, root.nsmap)
        attrib = {str(key): str(value) for key, value in root.attrib.items()}
        chunk_root = etree.Element(root_tag, attrib=attrib, nsmap=nsmap)
        if number == 0:
            chunk_root.text = root.text
        kids = [ctx.kids[i] for i in group]
        chunk_root.extend(kids)
        chunks.append(Chunk(chunk_root, kids))
    return chunks


def resolve(chunk: Chunk, path: str | None) -> tuple[etree._Element | None, bool]:
    """Find the element a libxml2 node path names inside ``chunk``; also say if it is the root."""
    if not path or not path.startswith("/"):
        return None, False
    steps = path.split("/")[1:]
    if not steps:
        return None, False
    node: etree._Element = chunk.root
    if len(steps) == 1:
        return node, True
    for depth, step in enumerate(steps[1:]):
        match = _STEP.match(step)
        if match is None:
            return None, False
        name, index = match.group("name"), int(match.group("idx") or 1)
        siblings: list[etree._Element] = (
            chunk.kids if depth == 0 else [c for c in node if isinstance(c.tag, str)]
        )
        if name != "*":
            prefix, _, local = name.rpartition(":")
            siblings = [
                c
                for c in siblings
                if isinstance(c.tag, str)
                and local_name(c.tag) == local
                and (c.prefix == prefix if prefix else namespace_of(c.tag) is None)
            ]
        if not 0 < index <= len(siblings):
            return None, False
        node = siblings[index - 1]
    return node, False


def unknown_wildcard(unknown: dict[str, tuple[str, int | None]], chunk: Chunk, entry: Any) -> bool:
    """Record a strict-wildcard error for an unshipped namespace; say whether it was one."""
    message = str(entry.message)
    if _STRICT_WILDCARD not in message:
        return False
    head = _MSG.match(message)
    ns = namespace_of(head.group("elem")) if head else None
    if ns is None or ns in EXTENSION_PREFIXES:
        return False
    if ns not in unknown:
        element, _is_root = resolve(chunk, entry.path)
        if element is not None:
            unknown[ns] = (element_name(element), source_line(element))
        else:
            assert head is not None
            unknown[ns] = (_readable(head.group("elem")), entry.line or None)
    return True


def _validate_chunks(ctx: _Context, chunks: list[Chunk]) -> None:
    schema = load_schema()
    original_line = source_line(ctx.root)
    for chunk in chunks:
        if schema.validate(chunk.root.getroottree()):
            continue
        for entry in cast(Iterable[Any], schema.error_log):
            if entry.type == _WILDCARD_ERROR and unknown_wildcard(ctx.unknown, chunk, entry):
                continue
            if len(ctx.findings) >= ctx.limit:
                ctx.total += 1
                continue
            element, is_root = resolve(chunk, entry.path)
            reason = explain(entry.message, element)
            line: int | None = original_line if is_root else (entry.line or None)
            if element is not None and not is_root:
                line = source_line(element) or line
            ctx.add(_Finding(None if is_root else element, reason, line, is_root))


def _restore(ctx: _Context) -> None:
    ctx.root.extend(ctx.kids)


def _paths(ctx: _Context, findings: list[_Finding]) -> dict[int, str]:
    """Display paths (``/urlset/url[3]/changefreq``) for the findings' elements."""
    root_tag = ctx.root.tag
    assert isinstance(root_tag, str)
    root_path = "/" + element_name(ctx.root)
    position: dict[etree._Element, int] = {}
    for number, kid in enumerate(ctx.kids):
        position[kid] = number
    kid_index: dict[int, tuple[int, int]] = {}
    wanted_kids: set[int] = set()
    for finding in findings:
        element = finding.element
        while element is not None and element not in position:
            element = element.getparent()
        if element is not None:
            wanted_kids.add(position[element])
    if wanted_kids:
        counts: dict[str, int] = {}
        ordinal_of: dict[int, int] = {}
        for number, kid in enumerate(ctx.kids):
            tag = kid.tag
            assert isinstance(tag, str)
            counts[tag] = counts.get(tag, 0) + 1
            ordinal_of[number] = counts[tag]
        for number in wanted_kids:
            tag = ctx.kids[number].tag
            assert isinstance(tag, str)
            kid_index[number] = (ordinal_of[number], counts[tag])
    paths: dict[int, str] = {}
    for number, finding in enumerate(findings):
        element = finding.element
        if element is None:
            paths[number] = root_path
            continue
        steps, node = steps_up_to(element, position)
        if node is not None:
            ordinal, total = kid_index[position[node]]
            name = element_name(node)
            steps.append(f"{name}[{ordinal}]" if total > 1 else name)
        paths[number] = root_path + "".join("/" + step for step in reversed(steps))
    return paths


class _FoundError(Exception):
    pass


def _columns(ctx: _Context, findings: list[_Finding]) -> dict[int, tuple[int, int]]:
    """(line, 1-based column) of the start tag of each finding's element, by document order."""
    ordinal_of: dict[etree._Element, int] = {}
    wanted: dict[etree._Element, list[int]] = {}
    for number, finding in enumerate(findings):
        target = finding.element if finding.element is not None else ctx.root
        wanted.setdefault(target, []).append(number)
    if ctx.root in wanted:
        ordinal_of[ctx.root] = 0
    remaining = len(wanted) - len(ordinal_of)
    ordinal = 1
    if remaining:
        for kid in ctx.kids:
            for node in kid.iter():
                if not isinstance(node.tag, str):
                    continue
                if node in wanted:
                    ordinal_of[node] = ordinal
                    remaining -= 1
                ordinal += 1
            if remaining <= 0:
                break
    by_ordinal: dict[int, etree._Element] = {v: k for k, v in ordinal_of.items()}
    positions: dict[int, tuple[int, int]] = {}
    if not by_ordinal:
        return positions
    found = start_tag_positions(ctx.data, set(by_ordinal))
    for ordinal_number, element in by_ordinal.items():
        if ordinal_number in found:
            for number in wanted[element]:
                positions[number] = found[ordinal_number]
    return positions


def start_tag_positions(data: bytes, ordinals: set[int]) -> dict[int, tuple[int, int]]:
    """(line, 1-based column) of the start tags with the given document-order ordinals.

    The root element is ordinal 0. An expat pass over ``data`` that stops after the last
    wanted start tag (or at an entity declaration, or at an expat error).
    """
    if not ordinals:
        return {}
    last = max(ordinals)
    parser = pyexpat.ParserCreate()
    parser.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
    counter = [0]
    found: dict[int, tuple[int, int]] = {}

    def start(_name: str, _attrs: object) -> None:
        number = counter[0]
        counter[0] = number + 1
        if number in ordinals:
            found[number] = (parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
            if number >= last:
                raise _FoundError

    def refuse_entities(*_args: object) -> None:
        raise _FoundError

    parser.StartElementHandler = start
    parser.EntityDeclHandler = refuse_entities
    try:
        parser.Parse(data, True)
    except _FoundError:
        pass
    except pyexpat.ExpatError:
        pass
    return found


def _inline_entity_references(root: etree._Element) -> list[Problem]:
    """Replace unexpanded entity references by their literal text; report them."""
    if not getattr(root.getroottree().docinfo, "doctype", ""):
        return []
    entities = [node for node in root.iter() if isinstance(node, etree._Entity)]
    if not entities:
        return []
    names: list[str] = []
    first_line = source_line(entities[0])
    for node in entities:
        literal = node.text or f"&{node.tag};"
        name = literal.strip("&;")
        if name not in names:
            names.append(name)
        text = literal + (node.tail or "")
        previous = node.getprevious()
        parent = node.getparent()
        if previous is not None:
            previous.tail = (previous.tail or "") + text
        elif parent is not None:
            parent.text = (parent.text or "") + text
        if parent is not None:
            parent.remove(node)
    shown = ", ".join(f"&{name};" for name in names[:10])
    return [
        Problem(
            "entity_reference",
            f"the document uses entity references that are never expanded ({shown}); "
            "their elements were validated with the reference text in place",
            first_line,
        )
    ]


def validate_tree(
    root: etree._Element, data: bytes, *, limit: int = MAX_SCHEMA_PROBLEMS
) -> list[Problem]:
    """Validate a parsed urlset or sitemapindex in the sitemap namespace.

    ``data`` are the bytes ``root`` was parsed from (used to find columns). The root's
    element children are moved into chunk documents during validation and put back at the
    end, after any comments or processing instructions that sat among them; unexpanded
    entity references are replaced by their text. Returns ``schema_invalid`` problems
    (at most ``limit``, then one saying how many more there were) and one
    ``entity_reference`` problem if the document had any.
    """
    problems = _inline_entity_references(root)
    kids = [kid for kid in root if isinstance(kid.tag, str)]
    ctx = _Context(root, kids, data, limit=limit)
    keep = _structure(ctx)
    chunks = _chunks(ctx, keep)
    try:
        _validate_chunks(ctx, chunks)
    finally:
        _restore(ctx)
    problems.extend(
        unknown_extension(ns, name, line)
        for ns, (name, line) in sorted(ctx.unknown.items(), key=lambda item: item[1][1] or 0)
    )
    if not ctx.findings:
        return problems
    findings = sorted(ctx.findings, key=lambda f: f.line if f.line is not None else 0)
    paths = _paths(ctx, findings)
    columns = _columns(ctx, findings)
    for number, finding in enumerate(findings):
        line, column = finding.line, None
        if number in columns:
            line, column = columns[number]
        problems.append(
            Problem("schema_invalid", f"{paths[number]}: {finding.reason}", line, column)
        )
    if ctx.total > len(ctx.findings):
        more = ctx.total - len(ctx.findings)
        problems.append(
            Problem(
                "schema_invalid",
                f"{more} more schema violation{'s' if more != 1 else ''} not listed "
                f"(only the first {len(ctx.findings)} are reported)",
            )
        )
    return problems
