"""Validation of one document without its whole tree: the entries go by in chunks.

:func:`validate_tree` and :class:`ExtensionScan` fed the root work on a fully parsed document,
whose lxml tree is several times the size of the document (about 30 MB for 50,000 URLs). Here the
document is fed to a pull parser in slices and the root's children are taken out as soon as
they are complete, in the same chunks the whole-tree pass validates: the extension rules, the
root's content model and the XSD run see every chunk while it is alive, each finding keeps
what its message needs (its path below the entry, its line, its element's position in
document order), and the chunk is dropped. At most about one chunk and one slice of the
document are in memory at once.

The findings, their order, messages, lines and columns are those of the whole-tree pass.
Whatever this does not handle returns ``None`` and the caller takes the whole-tree path: a
document that is not well-formed, one with a DOCTYPE (entity references), or a root that is
not a ``urlset`` or ``sitemapindex``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, cast

from lxml import etree

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation.extensions import ExtensionScan, NamespaceScan
from sitemapaudit.validation.messages import (
    element_name,
    explain,
    local_name,
    misplaced_reason,
    namespace_of,
    note_unknown,
    source_line,
    steps_up_to,
    unknown_extension,
)
from sitemapaudit.validation.schemas import (
    ITEM_TAGS,
    SAFE_PARSER_OPTIONS,
    SITEMAP_NS,
    EmptyResolver,
    load_schema,
)
from sitemapaudit.validation.xsd import (
    CHUNK_SIZE,
    MAX_SCHEMA_PROBLEMS,
    Chunk,
    resolve,
    root_attributes,
    start_tag_positions,
    trim_attributes,
    unknown_wildcard,
)

SLICE_BYTES: Final = 1 << 16
"""Bytes fed to the parser at a time."""

_WILDCARD_ERROR: Final = int(etree.ErrorTypes.SCHEMAV_CVC_ELT_1)
_ROOT_TAGS: Final = [f"{{*}}{name}" for name in ITEM_TAGS]


class _WholeTreeNeededError(Exception):
    """The document needs the whole-tree path."""


@dataclass(slots=True)
class _Record:
    """One schema finding, with what its message needs once its element is gone."""

    reason: str
    line: int | None
    is_root: bool = False
    element: etree._Element | None = None
    """The element while its chunk is alive; ``None`` for the root (or an unresolved path)."""
    at_root: bool = False
    """The finding is about the root element (its path is the root's, its column the root's)."""
    steps: list[str] = field(default_factory=list)
    """The path below the entry, innermost step first."""
    kid: tuple[str, str, int] | None = None
    """The root child the element is in: its tag, display name and ordinal among its tag."""
    ordinal: int | None = None
    """The element's start tag in document order (the root is 0)."""


@dataclass(slots=True)
class StreamResult:
    """What :func:`stream_document` found in a well-formed urlset or sitemapindex."""

    root: etree._Element
    entries: int
    extension_problems: list[Problem]
    unknown_problems: list[Problem]
    """``unknown_namespaces`` findings (filled only when the root's namespace is wrong)."""
    schema_problems: list[Problem]
    """``validate_tree`` findings (filled only when the root's namespace is right)."""
    rejudge_after: datetime | None = None
    """See :attr:`~sitemapaudit.validation.extensions.ExtensionScan.rejudge_after`."""


class _Stream:
    """The state of one document's chunked pass."""

    def __init__(self, root: etree._Element, data: bytes, now: datetime) -> None:
        root_tag = root.tag
        assert isinstance(root_tag, str)
        self.root = root
        self.data = data
        self.root_tag = root_tag
        self.root_line = source_line(root)
        local = local_name(root_tag)
        self.validating = namespace_of(root_tag) == SITEMAP_NS
        self.entry_tag = root_tag[: len(root_tag) - len(local)] + ITEM_TAGS[local]
        self.item = "{" + SITEMAP_NS + "}" + ITEM_TAGS[local]
        self.root_name = element_name(root)
        self.extensions = ExtensionScan(root_tag, now=now)
        self.namespaces = NamespaceScan(root_tag)
        self.schema = load_schema() if self.validating else None
        self.root_attrib, self.root_crowded = root_attributes(root)
        self.entries = 0
        self.tag_counts: dict[str, int] = {}
        self.seen_item = False
        # The region not flushed yet: root child nodes examined, its element children, the
        # misplaced ones among them (index -> record, None past the record limit), and the
        # tag counts before it.
        self.region_nodes = 0
        self.region: list[etree._Element] = []
        self.region_misplaced: dict[int, _Record | None] = {}
        self.region_counts: dict[str, int] = {}
        self.kept = 0
        self.has_item = False
        self.flushed = 0
        self.validated = 0
        self.base = 1
        """Document ordinal of the region's first element."""
        # The content-model findings (the whole-tree pass lists all of them first), and the
        # XSD run's findings as libxml2 reported them, to be merged as that pass does.
        self.misplaced: list[_Record] = []
        self.misplaced_total = 0
        self.structure_unknown: dict[str, tuple[str, int | None]] = {}
        self.wildcard_unknown: dict[str, tuple[str, int | None]] = {}
        self.reported: list[_Record] = []
        self.reported_new = 0
        self.reported_roots: set[str] = set()
        self.reported_extra = 0

    # -- nodes as they complete ---------------------------------------------------------------
    def take(self, final: bool) -> None:
        """Examine the root's children that are complete (all of them when ``final``)."""
        nodes: list[etree._Element] = cast(Any, self.root)[self.region_nodes :]
        if not final and nodes:
            nodes = nodes[:-1]
        item = self.item if self.validating else None
        counts = self.tag_counts
        for node in nodes:
            tag = node.tag
            if tag == item:
                # The common case, an entry in its place: the content-model check in short.
                self.entries += 1
                if self.has_item and self.kept >= CHUNK_SIZE:
                    self.flush(final=False)
                counts[tag] = counts.get(tag, 0) + 1
                self.kept += 1
                self.has_item = self.seen_item = True
                self.region.append(node)
            elif isinstance(tag, str):
                self._kid(node, tag)
            self.region_nodes += 1
        if final and (self.region or self.validated == 0):
            self.flush(final=True)

    def _kid(self, kid: etree._Element, tag: str) -> None:
        if tag == self.entry_tag:
            self.entries += 1
        if not self.validating:
            if len(self.region) >= CHUNK_SIZE:
                self.flush(final=False)
        else:
            reason, self.seen_item = misplaced_reason(
                kid, self.item, self.root_name, self.seen_item, self.structure_unknown
            )
            if reason is not None:
                record: _Record | None = None
                self.misplaced_total += 1
                if len(self.misplaced) < MAX_SCHEMA_PROBLEMS:
                    record = _Record(reason, source_line(kid), element=kid)
                    self.misplaced.append(record)
                self.region_misplaced[len(self.region)] = record
            else:
                is_item = tag == self.item
                if is_item and self.has_item and self.kept >= CHUNK_SIZE:
                    self.flush(final=False)
                self.kept += 1
                self.has_item = self.has_item or is_item
        # (Counted after any flush: the counts before a region are its kids' starting point.)
        self.tag_counts[tag] = self.tag_counts.get(tag, 0) + 1
        self.region.append(kid)

    # -- one region ---------------------------------------------------------------------------
    def flush(self, *, final: bool) -> None:
        """Check the region's children, validate its chunk and drop it from the tree."""
        root = self.root
        region = self.region
        misplaced = self.region_misplaced
        chunk_root = etree.Element(
            self.root_tag, attrib=self.root_attrib, nsmap=cast(Any, root.nsmap)
        )
        if self.flushed == 0:
            chunk_root.text = root.text
        self.flushed += 1
        chunk_root.extend(region)
        self.extensions.feed(chunk_root)
        if not self.validating:
            self.namespaces.feed(region)
        size = int(cast(float, chunk_root.xpath("count(descendant::*)")))
        records = [record for record in misplaced.values() if record is not None]
        if self.validating:
            kept = region
            if misplaced:
                for index in misplaced:
                    chunk_root.remove(region[index])
                kept = [kid for index, kid in enumerate(region) if index not in misplaced]
            if kept or (final and self.validated == 0):
                self.validated += 1
                records.extend(self._validate(Chunk(chunk_root, kept)))
        if records:
            self._place(records)
        self.base += size
        leftover = self.region_nodes - len(region)
        if leftover > 0:
            del cast(Any, root)[:leftover]
        self.region_nodes = 0
        self.region = []
        self.region_misplaced = {}
        self.region_counts = dict(self.tag_counts)
        self.kept = 0
        self.has_item = False

    def _validate(self, chunk: Chunk) -> list[_Record]:
        """The XSD run on one chunk (as ``_validate_chunks`` does it for each chunk)."""
        assert self.schema is not None
        schema = self.schema
        records: list[_Record | None] = []
        if self.root_crowded is not None:
            records.append(self._record(self.root_crowded, self.root_line, None, is_root=True))
            self.root_crowded = None
        for crowded, reason in trim_attributes(chunk.root):
            records.append(self._record(reason, source_line(crowded), crowded, is_root=False))
        if schema.validate(chunk.root.getroottree()):
            return [record for record in records if record is not None]
        for entry in cast(Iterable[Any], schema.error_log):
            if entry.type == _WILDCARD_ERROR and unknown_wildcard(
                self.wildcard_unknown, chunk, entry
            ):
                continue
            if self.reported_new >= MAX_SCHEMA_PROBLEMS:
                self.reported_extra += 1
                continue
            element, is_root = resolve(chunk, entry.path)
            reason = explain(entry.message, element)
            line: int | None = self.root_line if is_root else (entry.line or None)
            if element is not None and not is_root:
                line = source_line(element) or line
            records.append(self._record(reason, line, element, is_root=is_root))
        return [record for record in records if record is not None]

    def _record(
        self, reason: str, line: int | None, element: etree._Element | None, *, is_root: bool
    ) -> _Record | None:
        """Keep one XSD-run finding as ``validate_tree`` counts it (``None`` past the limit)."""
        if self.reported_new >= MAX_SCHEMA_PROBLEMS:
            self.reported_extra += 1
            return None
        if is_root:
            if reason not in self.reported_roots:
                self.reported_roots.add(reason)
                self.reported_new += 1
        else:
            self.reported_new += 1
        kept = None if is_root else element
        record = _Record(reason, line, is_root, kept, at_root=kept is None)
        self.reported.append(record)
        return record

    def _place(self, records: list[_Record]) -> None:
        """Paths below the entries and document ordinals of the region's findings."""
        counts = dict(self.region_counts)
        kid_of: dict[etree._Element, tuple[str, int]] = {}
        for kid in self.region:
            tag = kid.tag
            assert isinstance(tag, str)
            counts[tag] = counts.get(tag, 0) + 1
            kid_of[kid] = (tag, counts[tag])
        wanted: dict[etree._Element, list[_Record]] = {}
        for record in records:
            element = record.element
            if element is None:
                record.ordinal = 0
                continue
            wanted.setdefault(element, []).append(record)
            steps, node = steps_up_to(element, kid_of)
            if node is not None:
                tag, ordinal = kid_of[node]
                record.kid = (tag, element_name(node), ordinal)
            record.steps = steps
        ordinal = self.base
        remaining = len(wanted)
        for kid in self.region:
            if remaining <= 0:
                break
            for node in kid.iter():
                if not isinstance(node.tag, str):
                    continue
                found = wanted.get(node)
                if found is not None:
                    for record in found:
                        record.ordinal = ordinal
                    remaining -= 1
                ordinal += 1
        for record in records:
            record.element = None

    # -- the end ------------------------------------------------------------------------------
    def schema_problems(self) -> list[Problem]:
        """What ``validate_tree`` returns for the document (no entity references here)."""
        unknown = dict(self.structure_unknown)
        for ns, (name, line) in self.wildcard_unknown.items():
            note_unknown(unknown, ns, name, line)
        problems = [
            unknown_extension(ns, name, line)
            for ns, (name, line) in sorted(unknown.items(), key=lambda item: item[1][1] or 0)
        ]
        limit = MAX_SCHEMA_PROBLEMS
        findings: list[_Record] = []
        total = 0
        roots: set[str] = set()
        for record in self.misplaced:
            total += 1
            if len(findings) < limit:
                findings.append(record)
        total += self.misplaced_total - len(self.misplaced)
        for record in self.reported:
            if len(findings) >= limit:
                total += 1
                continue
            if record.is_root:
                if record.reason in roots:
                    continue
                roots.add(record.reason)
            total += 1
            findings.append(record)
        total += self.reported_extra
        if not findings:
            return problems
        findings.sort(key=lambda f: f.line if f.line is not None else 0)
        positions = start_tag_positions(
            self.data, {f.ordinal for f in findings if f.ordinal is not None}
        )
        root_path = "/" + self.root_name
        for finding in findings:
            if finding.at_root:
                path = root_path
            else:
                steps = list(finding.steps)
                if finding.kid is not None:
                    tag, name, ordinal = finding.kid
                    steps.append(f"{name}[{ordinal}]" if self.tag_counts[tag] > 1 else name)
                path = root_path + "".join("/" + step for step in reversed(steps))
            line, column = finding.line, None
            if finding.ordinal is not None and finding.ordinal in positions:
                line, column = positions[finding.ordinal]
            problems.append(Problem("schema_invalid", f"{path}: {finding.reason}", line, column))
        if total > len(findings):
            more = total - len(findings)
            problems.append(
                Problem(
                    "schema_invalid",
                    f"{more} more schema violation{'s' if more != 1 else ''} not listed "
                    f"(only the first {len(findings)} are reported)",
                )
            )
        return problems


def _parser() -> etree.XMLPullParser:
    parser = etree.XMLPullParser(events=("start",), tag=_ROOT_TAGS, **SAFE_PARSER_OPTIONS)
    parser.resolvers.add(EmptyResolver())
    return parser


def stream_document(data: bytes, *, now: datetime) -> StreamResult | None:
    """Validate a urlset or sitemapindex chunk by chunk; ``None``: use the whole tree.

    ``now`` must be timezone-aware.
    """
    parser = _parser()
    stream: _Stream | None = None

    def started() -> _Stream | None:
        events = cast(Iterable[tuple[str, etree._Element]], parser.read_events())
        for _event, element in events:
            if stream is None and element.getparent() is None:
                if getattr(element.getroottree().docinfo, "doctype", ""):
                    raise _WholeTreeNeededError
                return _Stream(element, data, now)
        return stream

    try:
        for offset in range(0, len(data), SLICE_BYTES):
            parser.feed(data[offset : offset + SLICE_BYTES])
            stream = started()
            if stream is not None:
                stream.take(final=False)
        parser.close()
        stream = started()
        if stream is None:
            return None
        stream.take(final=True)
    except (etree.XMLSyntaxError, ValueError, _WholeTreeNeededError):
        return None
    return StreamResult(
        root=stream.root,
        entries=stream.entries,
        extension_problems=stream.extensions.finish(),
        unknown_problems=[] if stream.validating else stream.namespaces.problems(),
        schema_problems=stream.schema_problems() if stream.validating else [],
        rejudge_after=stream.extensions.rejudge_after,
    )
