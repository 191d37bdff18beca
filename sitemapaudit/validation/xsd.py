"""XSD validation of a parsed urlset or sitemapindex, with path-annotated messages.

Validation uses lxml's :class:`~lxml.etree.XMLSchema` (libxml2) against the combined schema
of :mod:`sitemapaudit.validation.schemas`. Two properties of libxml2 shape this module:

* For every violation libxml2 computes the node's XPath by counting the node's preceding
  siblings, so a 50,000-URL document with one error per ``<url>`` costs quadratic time
  (about 9 s). The root's element children are therefore validated in chunks of
  :data:`CHUNK_SIZE` under a copy of the root element, and put back afterwards; a valid
  50,000-URL document validates in about 0.1 s and one with 50,000 errors in about 0.3 s.
* libxml2 reports every attribute an element may not have, and lxml keeps each report as an
  object: 600,000 attributes on one ``<url>`` cost over 500 MB. No element of the shipped
  schemas allows more than a few dozen attributes, so only the first
  :data:`MAX_ATTRIBUTES` of an element (and any later one that a schema requires somewhere)
  are handed to libxml2, and the element gets one finding saying how many it had.
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

The reasons come from :func:`sitemapaudit.validation.messages.explain`.
"""

from __future__ import annotations

import pyexpat
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, cast

from lxml import etree

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation.messages import (
    element_name,
    explain,
    local_name,
    misplaced_reason,
    namespace_of,
    note_unknown,
    readable,
    source_line,
    steps_up_to,
    unknown_extension,
    wildcard_element,
)
from sitemapaudit.validation.schemas import (
    EXTENSION_PREFIXES,
    ITEM_TAGS,
    SITEMAP_NS,
    load_schema,
    required_attribute_names,
)

CHUNK_SIZE: Final = 500
MAX_SCHEMA_PROBLEMS: Final = 1000
_STEP = re.compile(r"^(?P<name>[^\[\]]+)(?:\[(?P<idx>\d+)\])?$")
_WILDCARD_ERROR: Final = int(etree.ErrorTypes.SCHEMAV_CVC_ELT_1)
MAX_ATTRIBUTES: Final = 100
"""Attributes of one element validated; the ones after them are dropped (schema-required aside)."""
_CROWDED: Final = etree.XPath(f"descendant::*[@*[{MAX_ATTRIBUTES + 1}]]")
_kept_path: etree.XPath | None = None


def _kept(element: etree._Element) -> list[tuple[str, str]]:
    """The attributes of a crowded element that are validated, in document order."""
    global _kept_path  # noqa: PLW0603
    if _kept_path is None:
        required = " or ".join(
            f"local-name()='{name}'" for name in sorted(required_attribute_names())
        )
        _kept_path = etree.XPath(
            f"@*[position() <= {MAX_ATTRIBUTES}]"
            + (
                f" | @*[position() > {MAX_ATTRIBUTES}][namespace-uri()=''][{required}]"
                if required
                else ""
            )
        )
    values = cast(list[Any], _kept_path(element))
    return [(str(value.attrname), str(value)) for value in values]


def crowded_reason(count: int) -> str:
    return (
        f"{count:,} attributes, more than any sitemap element allows: only the first "
        f"{MAX_ATTRIBUTES} were validated"
    )


def root_attributes(root: etree._Element) -> tuple[dict[str, str], str | None]:
    """The root attributes each chunk's root gets, and a reason if some were dropped."""
    if not root.xpath(f"boolean(@*[{MAX_ATTRIBUTES + 1}])"):
        return {str(key): str(value) for key, value in root.attrib.items()}, None
    count = int(cast(float, root.xpath("count(@*)")))
    return dict(_kept(root)), crowded_reason(count)


def trim_attributes(chunk_root: etree._Element) -> list[tuple[etree._Element, str]]:
    """Drop the attributes past :data:`MAX_ATTRIBUTES` of the chunk's elements (not its root).

    Returns each trimmed element with its finding's reason.
    """
    trimmed: list[tuple[etree._Element, str]] = []
    for element in cast(list[etree._Element], _CROWDED(chunk_root)):
        count = int(cast(float, element.xpath("count(@*)")))
        kept = _kept(element)
        element.attrib.clear()
        for name, value in kept:
            element.set(name, value)
        trimmed.append((element, crowded_reason(count)))
    return trimmed


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
    attrib, reason = root_attributes(root)
    if reason is not None:
        ctx.add(_Finding(None, reason, source_line(root), is_root=True))
    for number, group in enumerate(groups):
        nsmap = cast(Any, root.nsmap)
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
    name = wildcard_element(str(entry.message))
    ns = namespace_of(name) if name is not None else None
    if name is None or ns is None or ns in EXTENSION_PREFIXES:
        return False
    known = unknown.get(ns)
    if known is None or known[1] is None or (entry.line or 0) < known[1]:
        element, _is_root = resolve(chunk, entry.path)
        if element is not None:
            note_unknown(unknown, ns, element_name(element), source_line(element))
        else:
            note_unknown(unknown, ns, readable(name), entry.line or None)
    return True


def _validate_chunks(ctx: _Context, chunks: list[Chunk]) -> None:
    schema = load_schema()
    original_line = source_line(ctx.root)
    for chunk in chunks:
        for crowded, reason in trim_attributes(chunk.root):
            ctx.add(_Finding(crowded, reason, source_line(crowded)))
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
