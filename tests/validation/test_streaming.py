"""The chunked pass gives exactly the whole-tree pass's findings (and takes what it should)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation import document, validate_document
from sitemapaudit.validation.streaming import stream_document

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE = "http://www.google.com/schemas/sitemap-image/1.1"
NEWS = "http://www.google.com/schemas/sitemap-news/0.9"
VIDEO = "http://www.google.com/schemas/sitemap-video/1.1"
XHTML = "http://www.w3.org/1999/xhtml"


def whole_tree(data: bytes, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> list[Problem]:
    with monkeypatch.context() as patch:
        patch.setattr(document, "stream_document", lambda *_a, **_k: None)
        return validate_document(data, now=NOW, **kwargs)  # type: ignore[arg-type]


def assert_same(data: bytes, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> list[Problem]:
    expected = whole_tree(data, monkeypatch, **kwargs)
    got = validate_document(data, now=NOW, **kwargs)  # type: ignore[arg-type]
    assert got == expected
    return got


def fixture_documents() -> Iterator[Path]:
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and (".xml" in path.name or path.suffix in {".gz", ".txt"}):
            yield path


@pytest.mark.parametrize("path", list(fixture_documents()), ids=lambda p: p.name)
def test_fixtures_match_whole_tree(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            pytest.skip("a broken gzip file")
    assert_same(data, monkeypatch)


def urlset(body: str, *, root_attrs: str = "", head: str = "", extra_ns: str = "") -> bytes:
    namespaces = (
        f'xmlns="{NS}" xmlns:image="{IMAGE}" xmlns:news="{NEWS}" xmlns:video="{VIDEO}" '
        f'xmlns:xhtml="{XHTML}" xmlns:foo="http://example.com/foo" {extra_ns}'
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n{head}<urlset {namespaces} {root_attrs}>'
        f"{body}</urlset>\n"
    ).encode()


def entry(i: int, extra: str = "", *, lastmod: str = "2024-01-01") -> str:
    return f"<url><loc>https://www.example.com/p/{i}</loc><lastmod>{lastmod}</lastmod>{extra}</url>"


def test_many_chunks_with_errors_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = []
    for i in range(3000):
        if i % 7 == 0:
            parts.append(entry(i, lastmod="2024-01-01 10:00"))
        elif i % 11 == 0:
            parts.append(f"<url><lastmod>2024-01-01</lastmod><loc>https://e.com/{i}</loc></url>")
        elif i % 13 == 0:
            parts.append(f"<foo:bar>{i}</foo:bar>")
        elif i % 17 == 0:
            parts.append(f"<!-- c{i} --><junk/>")
        elif i % 19 == 0:
            parts.append(entry(i, "<foo:x/><changefreq>often</changefreq>"))
        else:
            parts.append(entry(i))
    for sep in ("", "\n", "\n  "):
        problems = assert_same(urlset(sep.join(parts)), monkeypatch)
        assert any(p.code == "schema_invalid" for p in problems)


def test_over_the_problem_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    body = "\n".join(entry(i, lastmod="yesterday") for i in range(2600))
    problems = assert_same(urlset(body, root_attrs='bogus="1"'), monkeypatch)
    assert "more schema violations not listed" in problems[-1].message
    misplaced = "\n".join(f"<junk{i % 3}/>" for i in range(1200))
    data = urlset(entry(0) + misplaced + body)
    assert_same(data, monkeypatch)


def test_leading_extensions_root_text_and_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    body = "<foo:lead/><image:image/>" + "".join(entry(i) for i in range(1200)) + "text"
    assert_same(urlset("stray " + body, root_attrs='xml:lang="en" other="x"'), monkeypatch)
    assert_same(urlset(""), monkeypatch)
    assert_same(urlset("<!-- only a comment -->"), monkeypatch)
    assert_same(urlset("<junk/><foo:x/>"), monkeypatch)


def test_extensions(monkeypatch: pytest.MonkeyPatch) -> None:
    images = "".join(
        f"<image:image><image:loc>https://e.com/{i}.png</image:loc></image:image>"
        for i in range(1001)
    )
    news = (
        "<news:news><news:publication><news:name>N</news:name><news:language>en"
        "</news:language></news:publication><news:publication_date>2024-01-01</news:publication_date>"
        "<news:title>T</news:title></news:news>"
    )
    video = "<video:video><video:title>t</video:title></video:video>"
    links = (
        '<xhtml:link rel="alternate" hreflang="en_US" href="https://e.com/en"/>'
        '<xhtml:link rel="alternate" hreflang="de" href="https://e.com/de"/>'
        '<xhtml:link rel="alternate" hreflang="DE" href="https://e.com/de-de"/>'
    )
    body = [entry(0, images)]
    body += [entry(i, news) for i in range(1, 1100)]
    body += [entry(i, video + links) for i in range(1100, 1700)]
    body.append(f"<foo:wrap>{entry(5000, news + links)}</foo:wrap>")
    problems = assert_same(urlset("\n".join(body)), monkeypatch)
    codes = {p.code for p in problems}
    assert {"too_many_images", "news_too_many", "news_too_old", "video_missing_field"} <= codes
    assert {"hreflang_invalid", "hreflang_no_self", "hreflang_conflict"} <= codes


def test_wrong_and_missing_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(entry(i, "<bar:x xmlns:bar='urn:bar'/>") for i in range(1500))
    data = urlset(body).replace(NS.encode(), b"https://www.sitemaps.org/schemas/sitemap/0.9", 1)
    problems = assert_same(data, monkeypatch)
    assert [p.code for p in problems][:1] == ["namespace_invalid"]
    bare = f"<urlset>{body}</urlset>".encode()
    assert_same(bare, monkeypatch)


def test_sitemapindex_and_near_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    kids = "".join(
        f"<sitemap><loc>https://e.com/s{i}.xml</loc><lastmod>2024-13-01</lastmod></sitemap>"
        for i in range(900)
    )
    data = f'<sitemapindex xmlns="{NS}">{kids}</sitemapindex>'.encode()
    assert_same(data, monkeypatch, near_limit_fraction=0.01)


def test_unknown_extensions_first_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    body = entry(0, "<bar:x xmlns:bar='urn:bar'/>") + "\n".join(entry(i) for i in range(1, 1500))
    body += "\n<bar:y xmlns:bar='urn:bar'/><baz:y xmlns:baz='urn:baz'/>" + entry(9999)
    problems = assert_same(urlset(body), monkeypatch)
    unknown = [p.message.split(" has ")[0] for p in problems if p.code == "unknown_extension"]
    # Each namespace is named by its first element in the document, inside an entry or not.
    assert unknown == [
        "extension namespace urn:bar (first element <bar:x>)",
        "extension namespace urn:baz (first element <baz:y>)",
    ]


def test_an_unknown_extension_is_named_by_its_first_element(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(Elements on one line are told apart by their lines only: either may be named.)"""
    body = entry(0, "<foo:a/>") + "\n<foo:b/>\n" + "\n".join(entry(i) for i in range(1, 3))
    (problem,) = [
        p for p in assert_same(urlset(body), monkeypatch) if p.code == "unknown_extension"
    ]
    assert "(first element <foo:a>)" in problem.message
    assert problem.line == 2


def test_broken_and_doctype_documents_take_the_whole_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = urlset(entry(1) + "<url><loc>a & b</loc></url>")
    assert stream_document(broken, now=NOW) is None
    assert_same(broken, monkeypatch)
    doctype = urlset(
        entry(1) + "<url><loc>&e;</loc></url>", head='<!DOCTYPE urlset [<!ENTITY e "x">]>'
    )
    assert stream_document(doctype, now=NOW) is None
    assert_same(doctype, monkeypatch)
    rss = b"<rss><channel><item><link>https://e.com/</link></item></channel></rss>"
    assert stream_document(rss, now=NOW) is None
    assert_same(rss, monkeypatch)
    assert_same(b"", monkeypatch)
    latin = urlset(entry(1)).replace(b"UTF-8", b"ISO-8859-1") + b"<!-- \xe9 -->"
    assert_same(latin, monkeypatch)
    bad_utf8 = urlset(entry(1) + "<!-- x -->").replace(b" x ", b"\xff\xfe")
    assert_same(bad_utf8, monkeypatch)


def test_well_formed_urlset_is_streamed() -> None:
    data = urlset("".join(entry(i) for i in range(2000)))
    result = stream_document(data, now=NOW)
    assert result is not None
    assert result.entries == 2000
    assert len(result.root) == 0


def test_past_line_65535(monkeypatch: pytest.MonkeyPatch) -> None:
    """libxml2 keeps 16-bit line numbers; lines and columns still match past them."""
    parts = []
    for i in range(17_000):
        lastmod = "2024-01-01 10:00" if i % 997 == 0 or i > 16_990 else "2024-01-01"
        extra = "\n    <changefreq>often</changefreq>" if i % 1499 == 0 else ""
        if i > 16_500 and i % 7 == 0:
            extra += (
                "\n    <video:video>\n<video:title>t</video:title></video:video>"
                '<bar:z xmlns:bar="urn:bar"/>'
            )
        if i == 16_600:
            parts.append("<junk/>")
        parts.append(
            f"  <url>\n    <loc>https://www.example.com/p/{i}</loc>\n"
            f"    <lastmod>{lastmod}</lastmod>{extra}\n  </url>"
        )
    data = urlset("\n" + "\n".join(parts) + "\n")
    assert data.count(b"\n") > 65_535
    assert stream_document(data, now=NOW) is not None
    problems = assert_same(data, monkeypatch)
    assert max(p.line or 0 for p in problems) > 65_535


def test_elements_and_a_root_with_absurdly_many_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crowd = " ".join(f'a{i}="1"' for i in range(300))
    body = [entry(i) for i in range(1200)]
    body[3] = f"<url {crowd}><loc>https://e.com/3</loc><lastmod {crowd}>2024-01-01</lastmod></url>"
    body[900] = f"<url {crowd}><loc>https://e.com/900</loc></url>"
    problems = assert_same(urlset("\n".join(body), root_attrs=crowd), monkeypatch)
    crowded = [p.message for p in problems if "more than any sitemap element" in p.message]
    assert [message.split(":")[0] for message in crowded] == [
        "/urlset",
        "/urlset/url[4]",
        "/urlset/url[4]/lastmod",
        "/urlset/url[901]",
    ]
