"""libxml2's schema messages in plain language, and the names of elements as messages show them.

libxml2 reports a violation as ``Element '{ns}local': [facet 'enumeration'] The value ...``.
:func:`explain` turns such a message into a reason a site owner can act on ("changefreq
'sometimes' is not one of always/hourly/..."), naming elements with their usual prefixes
(``image:loc``) and the XSD sequence when an element is out of order. The validation itself
(chunks, paths, columns) is in :mod:`sitemapaudit.validation.xsd`.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Container
from dataclasses import dataclass
from typing import Final

from lxml import etree

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation.schemas import (
    EXTENSION_PREFIXES,
    IMAGE_NS,
    ITEM_TAGS,
    NEWS_NS,
    SITEMAP_NS,
    VIDEO_NS,
    XHTML_NS,
)

_VALUE_SHOWN: Final = 80

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

MAX_OCCURS: Final[dict[tuple[str, str], dict[str, int | None]]] = {
    (VIDEO_NS, "video"): {"tag": 32, "price": None, "id": None},
}
"""The children of :data:`SEQUENCES` that the XSD allows more than once (``None``: any number
of times); every other child may appear once."""

REQUIRED: Final[dict[tuple[str, str], frozenset[str]]] = {
    (SITEMAP_NS, "url"): frozenset({"loc"}),
    (SITEMAP_NS, "sitemap"): frozenset({"loc"}),
    (IMAGE_NS, "image"): frozenset({"loc"}),
    (NEWS_NS, "news"): frozenset({"publication", "publication_date", "title"}),
    (NEWS_NS, "publication"): frozenset({"name", "language"}),
    (VIDEO_NS, "video"): frozenset({"thumbnail_loc", "title", "description"}),
    (VIDEO_NS, "tvshow"): frozenset({"show_title", "video_type"}),
}
"""The children each XSD sequence of :data:`SEQUENCES` requires (no ``minOccurs="0"``)."""

_GOOGLE_REQUIRES: Final[dict[tuple[str, str], str]] = {
    (NEWS_NS, "publication"): "the publication's name and language",
    (NEWS_NS, "name"): "the publication's name",
    (NEWS_NS, "language"): "the publication's language",
    (NEWS_NS, "publication_date"): (
        "the article's publication date (YYYY-MM-DD, or with a time such as "
        "2024-06-01T09:30:00+02:00)"
    ),
    (NEWS_NS, "title"): "the article's title",
    (VIDEO_NS, "thumbnail_loc"): "the video's thumbnail",
    (VIDEO_NS, "title"): "the video's title",
    (VIDEO_NS, "description"): "the video's description",
}
"""Why Google needs a required child, in its news and video sitemap documentation."""

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
    (VIDEO_NS, "duration"): "a non-negative whole number of seconds, at most 28800",
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
_STRICT_WILDCARD = "No matching global element declaration available, but demanded by the strict"
_TEXT_IN_ELEMENT_ONLY = "Character content other than whitespace is not allowed"
_ELEMENT_IN_SIMPLE = "Element content is not allowed, because the"

_MISSING_SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(?:Z|[+-]\d\d:\d\d)?$")
_YEAR_MONTH = re.compile(r"^\d{4}(?:-\d\d)?$")
_SPACE_SEPARATOR = re.compile(r"^\d{4}-\d\d-\d\d\s+\d")
_TZ_NO_COLON = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?[+-]\d{4}$")
_TZ_HOURS_ONLY = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d$")
_TZ_OFFSET = re.compile(
    r"^\d{4}-\d\d-\d\d(?:T\d\d:\d\d:\d\d(?:\.\d+)?)?[+-](?P<h>\d\d):(?P<m>\d\d)$"
)
# The form of xsd:date or xsd:dateTime (a year of four or more digits, as the XSD allows),
# whatever the numbers: a value of this form that the XSD refuses names no real day or time.
_DATE_FORM = re.compile(
    r"^-?(?P<y>\d{4,})-(?P<mo>\d\d)-(?P<d>\d\d)"
    r"(?:T(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:\.\d+)?)?"
    r"(?:Z|[+-](?P<zh>\d\d):(?P<zm>\d\d))?$"
)


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


def readable(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        return display_name(match.group("ns"), match.group("local"))

    text = text.replace("##other{" + SITEMAP_NS + "}*", "an extension element")
    return _QNAME.sub(repl, text)


def _shown(value: str) -> str:
    """A value for a message: cut when long, and whitespace other than the plain space (a
    tab, a no-break space, a zero-width space) written as its escape, so that it shows."""
    if len(value) > _VALUE_SHOWN:
        value = value[: _VALUE_SHOWN - 3] + "..."
    return _UNSEEN_RE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), value)


_UNSEEN_RE = re.compile("[^\\S ]|[\u200b-\u200f\u2060\ufeff]")


def _names_list(expected: str) -> str:
    items = [item.strip() for item in readable(expected).split(",") if item.strip()]
    return ", ".join(item if item == "an extension element" else f"<{item}>" for item in items)


def _impossible(form: re.Match[str]) -> str | None:
    """What makes a value of the form of ``xsd:date`` or ``xsd:dateTime`` name no real day or
    time (XSD 1.0 as libxml2 checks it: no year 0000, no leap second, 24:00:00 allowed as
    the end of a day), or ``None`` when its numbers are all possible."""
    year, month, day = int(form["y"]), int(form["mo"]), int(form["d"])
    if year == 0:
        return "there is no year 0000 in XSD dates (1 BC is -0001)"
    if not 1 <= month <= 12:
        return f"there is no month {form['mo']} (months run from 01 to 12)"
    if day == 0:
        return "there is no day 00"
    if month == 2:
        days = 29 if calendar.isleap(year) else 28
        if day == 29 == days + 1:
            return f"February {form['y']} has 28 days ({form['y']} is not a leap year)"
        if day > days:
            return f"February {form['y']} has {days} days, not {day}"
    elif day > (days := calendar.monthrange(2000, month)[1]):
        return f"{calendar.month_name[month]} has {days} days, not {day}"
    if form["h"] is not None:
        hour, minute, second = int(form["h"]), int(form["mi"]), int(form["s"])
        if hour > 24:
            return f"there is no hour {form['h']} (hours run from 00 to 23)"
        if hour == 24 and (minute, second, form["s"]) != (0, 0, "00"):
            return "hour 24 has only 24:00:00, the end of a day"
        if minute > 59:
            return f"there is no minute {form['mi']} (minutes run from 00 to 59)"
        if second > 59:
            return f"there is no second {form['s']} (seconds run from 00 to 59; no leap second)"
    if form["zm"] is not None and int(form["zm"]) > 59:
        return f"a time zone has no minute {form['zm']} (minutes run from 00 to 59)"
    return None


def date_reason(name: str, value: str) -> str:
    """Why a date value fails ``xsd:date | xsd:dateTime``, in plain words."""
    stripped = value.strip()
    form = _DATE_FORM.match(stripped)
    impossible = None if form is None else _impossible(form)
    if impossible is not None:
        # The form is right: naming the forms the XSD accepts would not say what is wrong.
        return (
            f"{name} '{_shown(value)}' is not a W3C/XSD date: it has the right form, but "
            f"{impossible}"
        )
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
    offset = _TZ_OFFSET.match(stripped)
    if offset is not None and (int(offset["h"]), int(offset["m"])) > (14, 0):
        return base + "; time zone offsets run from -14:00 to +14:00"
    return base


def _sequence_text(key: tuple[str, str]) -> str:
    ns, _local = key
    names = [display_name(ns, child) for child in SEQUENCES[key]]
    tail = ", then extension elements" if ns == SITEMAP_NS else ""
    return ", ".join(names) + tail


def _absent_required(
    parent: etree._Element | None, parent_key: tuple[str, str], expected: str
) -> str | None:
    """The first required child among ``expected`` (libxml2's list) that ``parent`` lacks."""
    required = REQUIRED.get(parent_key, frozenset())
    present = (
        set() if parent is None else {child.tag for child in parent if isinstance(child.tag, str)}
    )
    for match in _QNAME.finditer(expected):
        ns, local = match.group("ns"), match.group("local")
        if ns == parent_key[0] and local in required and f"{{{ns}}}{local}" not in present:
            return local
    return None


def _required_reason(parent_name: str, ns: str, child: str, before: str | None) -> str:
    name = display_name(ns, child)
    where = f" before <{before}>" if before else ""
    need = _GOOGLE_REQUIRES.get((ns, child))
    why = f"Google requires {need}" if need else f"<{name}> is required"
    return f"<{parent_name}> has no <{name}>{where}: {why}"


def _order_only(parent: etree._Element, key: tuple[str, str]) -> bool:
    """Whether the children of ``parent`` would fit its XSD sequence once put in its order:
    each one of the sequence, none more often than the XSD allows, none required missing."""
    sequence = SEQUENCES[key]
    most = MAX_OCCURS.get(key, {})
    counts: dict[str, int] = {}
    for child in parent:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        local = local_name(tag)
        if namespace_of(tag) != key[0] or local not in sequence:
            return False
        counts[local] = counts.get(local, 0) + 1
        limit = most.get(local, 1)
        if limit is not None and counts[local] > limit:
            return False
    return REQUIRED.get(key, frozenset()) <= counts.keys()


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
        where = f"after <{element_name(previous)}>" if previous is not None else "first"
        if parent_key[0] != SITEMAP_NS and _order_only(parent, parent_key):
            return (
                f"element order only: <{name}> comes {where} in <{parent_name}>, which the "
                f"sequence of the {EXTENSION_PREFIXES[parent_key[0]]} extension's XSD does not "
                f"allow ({_sequence_text(parent_key)}); Google's documentation does not require "
                "this order, so only XSD validators refuse it"
            )
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
        absent = _absent_required(parent, parent_key, expected) if expected else None
        if absent is not None:
            return _required_reason(parent_name, parent_key[0], absent, name)
        if previous is not None and previous.tag == elem_tag:
            most = MAX_OCCURS.get(parent_key, {}).get(local, 1)
            if most is not None and most > 1:
                count = sum(1 for child in parent if child.tag == elem_tag)
                return f"{count} <{name}> elements in <{parent_name}>; at most {most} are allowed"
            return f"duplicate <{name}>: <{parent_name}> allows it only once here{expected_text}"
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


def _missing_reason(subject: _Subject, m: re.Match[str], element: etree._Element | None) -> str:
    expected = m.group("exp")
    if subject.key in {(SITEMAP_NS, "url"), (SITEMAP_NS, "sitemap")} and (
        expected.strip() == f"{{{SITEMAP_NS}}}loc"
    ):
        return f"<{subject.name}> has no <loc>: <loc> is required"
    item = ITEM_TAGS.get(subject.key[1]) if subject.key[0] == SITEMAP_NS else None
    if item is not None:
        return f"<{subject.name}> lists no <{item}>: at least one is required"
    # libxml2 names every child that could come next, optional ones first: say which
    # required one is missing.
    absent = _absent_required(element, subject.key, expected)
    if absent is not None:
        return _required_reason(subject.name, subject.key[0], absent, None)
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
)


def explain(message: str, element: etree._Element | None) -> str:
    """Turn a libxml2 schema-validation message into a plain-language reason."""
    match = _MSG.match(message.strip())
    if match is None:
        return readable(message.strip())
    subject = _Subject(match.group("elem"), match.group("attr"))
    rest = match.group("rest").strip()
    for pattern, rule in _FACET_RULES:
        if m := pattern.match(rest):
            return rule(subject, m)
    if m := _MISSING.match(rest):
        return _missing_reason(subject, m, element)
    if m := _NOT_EXPECTED.match(rest):
        return _unexpected_reason(element, subject.tag, m.group("exp"))
    fixed = _fixed_reason(subject, rest)
    if fixed is not None:
        return fixed
    return f"<{subject.name}>: {readable(rest)}"


def unknown_extension(ns: str, name: str, line: int | None) -> Problem:
    """The ``unknown_extension`` problem for namespace ``ns``, first seen as ``<name>``; one
    that is a known extension's namespace written another way says which, and how."""
    near = _near_extension(ns)
    if near is not None:
        known, what, how = near
        return Problem(
            "unknown_extension",
            f"extension namespace {ns} (first element <{name}>) is not the {what} namespace "
            f"{known} ({how}): search engines read {what} elements only in that namespace, so "
            "they ignore these; they were not validated",
            line,
        )
    return Problem(
        "unknown_extension",
        f"extension namespace {ns} (first element <{name}>) has no known schema; its "
        "elements were not validated",
        line,
    )


_KNOWN_EXTENSIONS: Final = (
    (IMAGE_NS, "image sitemap"),
    (VIDEO_NS, "video sitemap"),
    (NEWS_NS, "news sitemap"),
    (XHTML_NS, "XHTML (hreflang)"),
)


def _namespace_key(ns: str) -> str:
    key = ns.strip().lower().removeprefix("https://").removeprefix("http://")
    return key.removeprefix("www.").rstrip("/")


def _near_extension(ns: str) -> tuple[str, str, str] | None:
    """The known extension namespace that ``ns`` writes another way (scheme, ``www.``, a
    trailing slash, letter case), its name, and how ``ns`` differs; else ``None``."""
    key = _namespace_key(ns)
    for known, what in _KNOWN_EXTENSIONS:
        if key != _namespace_key(known):
            continue
        written = ns.strip()
        how = []
        if written.lower().startswith("https://"):
            how.append("https:// instead of http://")
        if ("://www." in written.lower()) != ("://www." in known):
            how.append("without www." if "://www." in known else "with www.")
        if written.endswith("/") and not known.endswith("/"):
            how.append("a trailing /")
        if not how:
            how.append("other letter case")  # (the only difference left)
        return known, what, ", ".join(how)
    return None


def note_unknown(
    unknown: dict[str, tuple[str, int | None]], ns: str, name: str, line: int | None
) -> None:
    """Record ``<name>`` of the unshipped namespace ``ns`` at ``line`` in ``unknown``, unless an
    element of it seen earlier in the document is there (whatever order they are found in)."""
    known = unknown.get(ns)
    if known is None or (line is not None and (known[1] is None or line < known[1])):
        unknown[ns] = (name, line)


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
            note_unknown(unknown, ns, name, source_line(kid))
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


def wildcard_element(message: str) -> str | None:
    """The element (``{ns}local``, as libxml2 names it) of a message saying that a strict
    wildcard found no declaration for it; ``None`` for any other message."""
    if _STRICT_WILDCARD not in message:
        return None
    head = _MSG.match(message)
    return head.group("elem") if head else None
