"""validate_document over the conformance corpus copy in tests/fixtures/corpus.

Every file (gzip files inflated here with a size cap, truncated ones as far as they go) must
validate without raising, quickly, with known codes and sane positions. Provenance of the
files: tests/fixtures/corpus/PROVENANCE.md and expected.json.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from sitemapaudit.validation import CODES, validate_document
from tests.validation.conftest import NOW, REPO

CORPUS = REPO / "tests" / "fixtures" / "corpus"
CAP = 60 * 1024 * 1024


def _files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        path
        for path in CORPUS.rglob("*")
        if path.is_file() and path.name not in {"expected.json", "PROVENANCE.md", "README.md"}
    )


def _inflate(data: bytes) -> bytes:
    if not data.startswith(b"\x1f\x8b"):
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        return inflater.decompress(data, CAP)
    except zlib.error:
        return b""


FILES = _files()


@pytest.mark.skipif(not FILES, reason="no corpus copy in tests/fixtures/corpus")
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES] or None)
def test_corpus_file_validates_without_error(path: Path) -> None:
    data = _inflate(path.read_bytes())
    problems = validate_document(data, now=NOW)
    for problem in problems:
        assert problem.code in CODES
        assert problem.message
        assert problem.line is None or problem.line >= 1
        assert problem.column is None or problem.column >= 1
        assert "root:x:0:0" not in problem.message


def _codes(relative: str) -> list[str]:
    path = CORPUS / relative
    if not path.is_file():
        pytest.skip(f"{relative} is not in the corpus copy")
    return [p.code for p in validate_document(_inflate(path.read_bytes()), now=NOW)]


def test_known_corpus_outcomes() -> None:
    if not FILES:
        pytest.skip("no corpus copy in tests/fixtures/corpus")
    checks = {
        "sitemapjs/mock__unescaped-lt.xml": ["unescaped_characters"],
        "scrapy/test_sitemap_wrong_ns.xml": ["namespace_invalid"],
        "scrapy/test_sitemap_wrong_ns2.xml": ["namespace_invalid"],
        "scrapy/test_xml_entity_expansion.xml": ["entity_reference"],
        "crawler-commons/SiteMapParserExtensionTest__testXHTMLLinksSitemap__sitemap-links.xml": [],
    }
    present = {name: expected for name, expected in checks.items() if (CORPUS / name).is_file()}
    if not present:
        pytest.skip("none of the checked files is in the corpus copy")
    for name, expected in present.items():
        assert _codes(name) == expected, name
