"""The encoding rule (sitemaps are UTF-8) through the sitemap intake, for every XML kind:
sitemaps, feeds, and documents that could not be read because of their encoding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.support import NS, intake

URLSET = f'<urlset xmlns="{NS}">\n<url><loc>http://example.com/a</loc></url>\n</urlset>\n'
RSS = (
    '<rss version="2.0"><channel><title>t</title><link>http://example.com/</link>'
    "<description>d</description><item><link>http://example.com/caf\u00e9</link></item>"
    "</channel></rss>\n"
)
ATOM = (
    '<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
    '<entry><link href="http://example.com/caf\u00e9"/></entry></feed>\n'
)


def declared(encoding: str, body: str) -> str:
    return f'<?xml version="1.0" encoding="{encoding}"?>\n{body}'


@pytest.mark.parametrize("body", [RSS, ATOM], ids=["rss", "atom"])
@pytest.mark.parametrize(
    ("data", "said"),
    [
        pytest.param(
            lambda b: declared("ISO-8859-1", b).encode("latin-1"),
            "encoding='ISO-8859-1'",
            id="declared-latin1",
        ),
        pytest.param(
            lambda b: declared("UTF-8", b).encode("latin-1"),
            "are not valid UTF-8",
            id="bytes-not-utf8",
        ),
        pytest.param(
            lambda b: declared("UTF-16", b).encode("utf-16"), "encoded as UTF-16", id="utf16"
        ),
    ],
)
def test_a_feed_that_is_not_utf8_is_encoding_invalid(
    tmp_path: Path, body: str, data: object, said: str
) -> None:
    found = intake(data(body), tmp_path)  # type: ignore[operator]
    (problem,) = [p for p in found.facts.problems if p.code == "encoding_invalid"]
    assert said in problem.message


@pytest.mark.parametrize("body", [RSS, ATOM], ids=["rss", "atom"])
def test_a_utf8_feed_is_not(tmp_path: Path, body: str) -> None:
    found = intake(declared("UTF-8", body).encode(), tmp_path)
    assert "encoding_invalid" not in found.codes
    assert found.urls == ["http://example.com/caf\u00e9"]


def test_a_utf32_sitemap_says_why_it_could_not_be_read(tmp_path: Path) -> None:
    found = intake(URLSET.encode("utf-32"), tmp_path)
    (problem,) = [p for p in found.facts.problems if p.code == "encoding_invalid"]
    assert "encoded as UTF-32" in problem.message
    assert "xml_malformed" in found.codes


def test_an_encoding_the_parser_does_not_know_says_why(tmp_path: Path) -> None:
    found = intake(declared("bogus-enc", URLSET).encode(), tmp_path)
    (problem,) = [p for p in found.facts.problems if p.code == "encoding_invalid"]
    assert "encoding='bogus-enc'" in problem.message


def test_an_html_page_in_latin1_is_only_not_a_sitemap(tmp_path: Path) -> None:
    page = "<!DOCTYPE html><html><head><title>caf\u00e9</title></head><body></body></html>"
    found = intake(page.encode("latin-1"), tmp_path)
    assert "not_a_sitemap" in found.codes
    assert "encoding_invalid" not in found.codes


def test_a_document_over_50_mib_is_too_large_where_its_reading_stopped(tmp_path: Path) -> None:
    """Broken early, 51 MiB in all: the reader stops at the error, yet the document's size is
    known from its decompression, which went past the protocol's limit."""
    head = f'<urlset xmlns="{NS}"><url><loc>http://example.com/a</loc></url><bad & </urlset>'
    found = intake((head + " " * (51 * 1024 * 1024)).encode(), tmp_path)
    assert found.codes.count("too_large") == 1
    assert "xml_malformed" in found.codes
