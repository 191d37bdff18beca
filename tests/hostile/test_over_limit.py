"""A sitemap past the 50,000-entry limit gets its other findings too.

Such a document is within the 50 MiB limit and is validated like any other: a well-formed
one chunk by chunk, so that fixing the count does not reveal a new set of errors.
"""

from __future__ import annotations

from pathlib import Path

from tests.hostile.support import NS, bounded_resident, intake

COUNT = 50_001
OLD_NS = "http://www.google.com/schemas/sitemap/0.84"
HREFLANG = "http://www.w3.org/1999/xhtml"


def urls(count: int = COUNT, *, special: dict[int, str] | None = None) -> str:
    """``count`` ``<url>`` entries, one per line; entry ``n`` (1-based) replaced by
    ``special[n]``."""
    special = special or {}
    return "\n".join(
        special.get(n, f"<url><loc>http://example.com/p/{n}</loc></url>")
        for n in range(1, count + 1)
    )


def document(root: str, body: str, *, ns: str = NS, encoding: str = "UTF-8") -> bytes:
    head = f'<?xml version="1.0" encoding="{encoding}"?>\n<{root} xmlns="{ns}">\n'
    return f"{head}{body}\n</{root}>\n".encode()


def test_wrong_namespace_is_reported_with_too_many_urls(tmp_path: Path) -> None:
    result = intake(document("urlset", urls(), ns=OLD_NS), tmp_path)
    assert result.codes.count("too_many_urls") == 1
    assert result.codes.count("namespace_invalid") == 1
    assert "0.84" in next(p.message for p in result.facts.problems if p.code == "namespace_invalid")
    assert len(result.urls) == COUNT


def test_declared_encoding_is_reported_with_too_many_urls(tmp_path: Path) -> None:
    result = intake(document("urlset", urls(), encoding="ISO-8859-1"), tmp_path)
    assert result.codes.count("too_many_urls") == 1
    assert result.codes.count("encoding_invalid") == 1


def test_invalid_lastmod_in_entry_3_is_a_schema_finding_on_its_line(tmp_path: Path) -> None:
    bad = "<url><loc>http://example.com/p/3</loc><lastmod>2024-13-01</lastmod></url>"
    result = intake(document("urlset", urls(special={3: bad})), tmp_path)
    assert result.codes.count("too_many_urls") == 1
    schema = [p for p in result.facts.problems if p.code == "schema_invalid"]
    assert len(schema) == 1
    # Line 1 is the declaration, line 2 the root, entry n is on line n + 2.
    assert schema[0].line == 5
    assert "/urlset/url[3]/lastmod" in schema[0].message


def test_invalid_hreflang_is_reported_with_too_many_urls(tmp_path: Path) -> None:
    bad = (
        '<url><loc>http://example.com/p/2</loc><xhtml:link rel="alternate" '
        'hreflang="english" href="http://example.com/en/p/2"/></url>'
    )
    body = document("urlset", urls(special={2: bad})).replace(
        b"<urlset ", f'<urlset xmlns:xhtml="{HREFLANG}" '.encode(), 1
    )
    result = intake(body, tmp_path)
    assert result.codes.count("too_many_urls") == 1
    assert "hreflang_invalid" in result.codes


def test_index_past_the_limit_with_a_bad_lastmod(tmp_path: Path) -> None:
    children = "\n".join(
        f"<sitemap><loc>http://example.com/s/{n}.xml</loc>"
        + ("<lastmod>2024-13-01</lastmod>" if n == 2 else "")
        + "</sitemap>"
        for n in range(1, COUNT + 1)
    )
    result = intake(document("sitemapindex", children), tmp_path)
    assert result.codes.count("index_too_many_sitemaps") == 1
    schema = [p for p in result.facts.problems if p.code == "schema_invalid"]
    assert len(schema) == 1
    assert schema[0].line == 4
    assert "/sitemapindex/sitemap[2]/lastmod" in schema[0].message
    assert len(result.children) == COUNT


def test_not_well_formed_document_past_the_limit_keeps_its_text_findings(
    tmp_path: Path,
) -> None:
    # (The reader stops at the first error: it must come past the limit to be over it.)
    bad = "<url><loc>http://example.com/p/last?a=1&b=2</loc></url>"
    body = document("urlset", urls(COUNT + 1, special={COUNT + 1: bad}), ns=OLD_NS)
    result = intake(body, tmp_path)
    assert result.codes.count("too_many_urls") == 1
    assert result.codes.count("xml_malformed") == 1
    assert result.codes.count("namespace_invalid") == 1
    unescaped = [p for p in result.facts.problems if p.code == "unescaped_characters"]
    assert [p.line for p in unescaped] == [COUNT + 3]


def test_a_valid_document_past_the_limit_gets_only_the_count(tmp_path: Path) -> None:
    result = intake(document("urlset", urls()), tmp_path)
    assert result.codes == ["too_many_urls"]


def test_validation_past_the_limit_holds_one_chunk_at_a_time(tmp_path: Path) -> None:
    # 200,000 entries: a whole tree of them would take well over 100 MiB. Reading them a chunk
    # at a time grows the resident set by some 40 to 70 MiB, by what the allocator of a process
    # that ran other tests first keeps: 80 MiB tells the two apart.
    bad = "<url><loc>http://example.com/p/3</loc><lastmod>2024-13-01</lastmod></url>"
    body = document("urlset", urls(200_000, special={3: bad}), ns=NS)
    with bounded_resident(seconds=120, megabytes=80):
        result = intake(body, tmp_path)
    assert result.codes.count("too_many_urls") == 1
    assert result.codes.count("schema_invalid") == 1


def test_a_doctype_past_the_limit_gets_its_text_findings_without_a_tree(
    tmp_path: Path,
) -> None:
    body = document("urlset", urls(200_000), ns=OLD_NS).replace(
        b"\n<urlset", b"\n<!DOCTYPE urlset>\n<urlset", 1
    )
    # Reading it grows the resident set by about 56 MiB (its text is scanned whole); parsing
    # it into a tree of its 200,000 entries alone grows it by about 107 MiB. 80 MiB tells the
    # two apart, with room for the allocator of a process that ran other tests first.
    with bounded_resident(seconds=120, megabytes=80):
        result = intake(body, tmp_path)
    assert result.codes.count("too_many_urls") == 1
    assert result.codes.count("namespace_invalid") == 1
