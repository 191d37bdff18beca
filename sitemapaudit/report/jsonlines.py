"""The JSON Lines report writer: Scrapy's exporter, with a fast path for the report records."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from scrapy.exporters import JsonLinesItemExporter

from sitemapaudit.report.records import SitemapRecord, SummaryRecord, UrlRecord

_RECORDS = (SitemapRecord, UrlRecord, SummaryRecord)
_FIELDS = {cls: tuple(f.name for f in dataclasses.fields(cls)) for cls in _RECORDS}


class ReportJsonLinesItemExporter(JsonLinesItemExporter):
    """Writes report records (and ``diff`` dicts) one JSON object per line, fields in order.

    Scrapy's generic path goes through ItemAdapter field by field; for an audit of millions of
    URLs that is most of the cost of writing the report. Records are flat dataclasses of JSON
    types, so they are serialised directly; anything else, or an export with explicit
    ``fields_to_export``, takes Scrapy's path.
    """

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._dumps = json.JSONEncoder(ensure_ascii=False).encode

    def export_item(self, item: Any) -> None:
        fields = _FIELDS.get(type(item))
        if fields is None or self.fields_to_export is not None:
            if isinstance(item, dict) and self.fields_to_export is None:
                self.file.write(self._encode(item))
                return
            super().export_item(item)
            return
        self.file.write(self._encode({name: getattr(item, name) for name in fields}))

    def _encode(self, data: dict[str, Any]) -> bytes:
        return (self._dumps(data) + "\n").encode(self.encoding or "utf-8")
