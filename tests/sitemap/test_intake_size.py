"""The protocol's size limit on a document read whole: past it by a byte is too_large, also
when the reader stops early at an error."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import pytest

from sitemapaudit.crawl import intake
from sitemapaudit.facts import SitemapFacts
from sitemapaudit.inventory import NewEntry

HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    b"<url><loc>https://e.com/a</loc></url>\n"
)
LIMIT = 2_000


class _Sink:
    def add_entries(self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = 0) -> int:
        return sum(1 for _ in entries)


def _read(body: bytes) -> SitemapFacts:
    return intake.read_sitemap(
        body,
        SitemapFacts(url="https://e.com/s.xml", found_via="argument"),
        inventory=_Sink(),
        rules=lambda loc: (),
        on_child=lambda loc, lastmod: None,
        read_limit=60_000_000,
        now=datetime.now(UTC),
        near_limit_fraction=0.9,
    )


@pytest.mark.parametrize(
    "stop",
    [b"<url><loc>x</loc></wrong>", b"<!--"],
    ids=["tag-mismatch", "unended-comment"],
)
def test_a_document_a_byte_past_the_limit_is_too_large_where_the_reader_stopped(
    monkeypatch: pytest.MonkeyPatch, stop: bytes
) -> None:
    monkeypatch.setattr(intake, "PROTOCOL_MAX_BYTES", LIMIT)
    body = (HEAD + stop + b" " * LIMIT)[: LIMIT + 1]
    facts = _read(body)
    assert [p.code for p in facts.problems].count("too_large") == 1
    assert facts.bytes == LIMIT + 1
    at_limit = _read(body[:LIMIT])
    assert "too_large" not in [p.code for p in at_limit.problems]
