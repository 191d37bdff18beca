"""The JSON Lines report writer: Scrapy's exporter, with a fast path for the report records."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from json.encoder import encode_basestring
from operator import attrgetter
from typing import Any

from scrapy.exporters import JsonLinesItemExporter

from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord

_RECORDS = (SitemapRecord, UrlRecord, SummaryRecord)
_FIELDS = {cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in _RECORDS}

_dumps = json.JSONEncoder(ensure_ascii=False).encode

# A URL that was not requested has every other field at its default: its line is constant text
# around these fields, which are the only ones encoded for it.
_LISTING_FIELDS = ("url", "sitemaps", "lastmod", "robots_blocked", "issues", "errors")
_RESPONSE_DEFAULTS = {
    f.name: f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    for f in dataclasses.fields(UrlRecord)
    if f.name not in _LISTING_FIELDS
}
_response_values = attrgetter(*_RESPONSE_DEFAULTS)
_listing_values = attrgetter(*_LISTING_FIELDS)
_DEFAULT_VALUES = tuple(_RESPONSE_DEFAULTS.values())


def unrequested_line(record: object) -> str | None:
    """The JSON line (with its newline) of a URL record that was not requested, as the
    encoder writes it with the fields in their declared order; ``None`` for any other record,
    or when a listing field holds a value other than a string, None, a bool or a list of
    strings."""
    if type(record) is not UrlRecord or _response_values(record) != _DEFAULT_VALUES:
        return None
    url, sitemaps, lastmod, robots_blocked, issues, errors = _listing_values(record)
    if type(url) is not str or type(sitemaps) is not list:
        return None
    s0, s1, s2, s3, s4, s5, s6 = _SEGMENTS
    try:
        return "".join(
            (
                s0,
                encode_basestring(url),
                s1,
                _strings(sitemaps),
                s2,
                encode_basestring(lastmod) if type(lastmod) is str else _simple(lastmod),
                s3,
                "false" if robots_blocked is False else _simple(robots_blocked),
                s4,
                _strings(issues) if issues else _simple(issues),
                s5,
                _strings(errors) if errors else _simple(errors),
                s6,
            )
        )
    except TypeError:
        return None


def _strings(value: object) -> str:
    """JSON of a list of str; TypeError for anything else."""
    if type(value) is not list:
        raise TypeError(type(value).__name__)
    if len(value) == 1 and type(value[0]) is str:
        return "[" + encode_basestring(value[0]) + "]"
    return "[" + ", ".join(map(encode_basestring, value)) + "]"


def _simple(value: object) -> str:
    """JSON of a str, None, a bool or a list of str; TypeError for anything else."""
    if type(value) is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return _strings(value)


def _unrequested_segments(dumps: Callable[[Any], str]) -> tuple[str, ...]:
    """The constant text before each listing field of an unrequested URL's line, and after
    the last one."""
    segments: list[str] = []
    text = "{"
    for index, name in enumerate(_FIELDS[UrlRecord]):
        text += ("" if index == 0 else ", ") + encode_basestring(name) + ": "
        if name in _LISTING_FIELDS:
            segments.append(text)
            text = ""
        else:
            text += dumps(_RESPONSE_DEFAULTS[name])
    segments.append(text + "}\n")
    return tuple(segments)


_SEGMENTS = _unrequested_segments(_dumps)


class ReportJsonLinesItemExporter(JsonLinesItemExporter):
    """Writes report records (and ``diff`` dicts) one JSON object per line, fields in order.

    Scrapy's generic path goes through ItemAdapter field by field; for an audit of millions of
    URLs that is most of the cost of writing the report. Records are flat dataclasses of JSON
    types, so they are serialised directly; anything else, or an export with explicit
    ``fields_to_export``, takes Scrapy's path.

    Lines are always UTF-8, whatever ``FEED_EXPORT_ENCODING`` (the feed's ``encoding``) says:
    JSON exchanged between systems is UTF-8 without a byte order mark (RFC 8259, section 8.1),
    and each line is encoded on its own, so ``utf-8-sig``, which suits the CSV files, would
    start every line with a BOM.
    """

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.encoding = "utf-8"
        self._dumps = _dumps

    def export_item(self, item: Any) -> None:
        fields = _FIELDS.get(type(item))
        if fields is None or self.fields_to_export is not None:
            if isinstance(item, dict) and self.fields_to_export is None:
                self.file.write(self._encode(item))
                return
            super().export_item(item)
            return
        line = unrequested_line(item)
        if line is not None:
            self.file.write(line.encode("utf-8"))
            return
        self.file.write(self._encode({name: getattr(item, name) for name in fields}))

    def _encode(self, data: dict[str, Any]) -> bytes:
        return (self._dumps(data) + "\n").encode("utf-8")
