"""hreflang: the BCP 47 check, iter_alternates and HreflangGraph."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from sitemapaudit.validation import (
    HreflangGraph,
    is_valid_hreflang,
    iter_alternates,
    validate_document,
)
from sitemapaudit.validation.hreflang import hreflang_hint, hreflang_problem, hreflang_unsupported
from sitemapaudit.validation.isocodes import ISO_639_1, ISO_639_2_TO_1, ISO_3166_1_ALPHA_2, REGIONS
from tests.validation.conftest import NOW, url, urlset


@pytest.mark.parametrize(
    "tag",
    [
        "en",
        "EN",
        "en-GB",
        "en-gb",
        "zh-Hant",
        "zh-Hant-TW",
        "es-419",
        "sr-Latn-RS",
        "de-CH-1996",
        "sl-rozaj-biske",
        "yue",
        "gsw",
        "ar-afb",
        "zh-yue-HK",
        "zh-Hans-CN",
        "sr-Latn-XK",
        "sq-XK",
        "es-LA",
        "en-US-x-UK",
        "iw-IL",
        "en-GB-oed",
        "x-default",
        "X-Default",
        "en-US-x-twain",
        "en-a-bbb-x-a-ccc",
        "sgn-BE-FR",
        "zh-min-nan",
        "no-bok",
        "art-lojban",
        "fil",
        "fil-PH",
        "tlh",
    ],
)
def test_valid_hreflang(tag: str) -> None:
    assert is_valid_hreflang(tag)


@pytest.mark.parametrize(
    "tag",
    [
        "",
        " en",
        "en ",
        "en_US",
        "en-",
        "-en",
        "en--GB",
        "e",
        "123",
        "en-GB-",
        "zh-Hans-x",
        "en-GB-a",
        "en-abcdefghi",
        "abcdefghi",
        "x_default",
        "en-GB-1",
        "en.GB",
        "fr-FR-é",
        "en-UK",
        "en-uk",
        "en-EU",
        "es-EU",
        "en-ZZ",
        "en-AN",
        "zh-Hant-UK",
        "jp",
        "jp-JP",
        "cz",
        "xx-GB",
        "abcd",
        "english",
        "eng",
        "ENG-GB",
        "ger",
        "deu-DE",
        "fre",
        "zho-Hant",
        "und",
        "und-US",
        "mul",
        "mis",
        "zxx",
        "qaa",
        "qtz-x-klingon",
        "i-klingon",
        "i-default",
        "i-navajo",
        "I-Mingo",
        "fil-UK",
        "en-USA",
        "de-DEU",
        "en-gbr-GB",
        "x-whatever",
        "x-defualt",
        "x-default-en",
        "X-EN",
    ],
)
def test_invalid_hreflang(tag: str) -> None:
    assert not is_valid_hreflang(tag)


@pytest.mark.parametrize(
    ("tag", "message"),
    [
        (
            "en-USA",
            "hreflang 'en-USA': 'USA' is no region but an extended language subtag, which only "
            "follows ar, kok, lv, ms, sgn, sw, uz or zh (a region is an ISO 3166-1 alpha-2 code "
            "of two letters, such as 'US'), so Google ignores this annotation",
        ),
        (
            "en-UK",
            "hreflang 'en-UK': region 'UK' is not an ISO 3166-1 alpha-2 country code (the United "
            "Kingdom is 'GB'), so Google ignores this annotation",
        ),
        (
            "en-ZZ",
            "hreflang 'en-ZZ': region 'ZZ' is not an ISO 3166-1 alpha-2 country code, so Google "
            "ignores this annotation",
        ),
        (
            "jp",
            "hreflang 'jp': language 'jp' is not an ISO 639-1 code (Japanese is 'ja'), so Google "
            "ignores this annotation",
        ),
        (
            "en_GB",
            "hreflang 'en_GB' is not a valid BCP 47 language tag or 'x-default': separate "
            "subtags with '-', not '_'",
        ),
        (
            "eng",
            "hreflang 'eng': language 'eng' is not an ISO 639-1 code (a language tag writes it "
            "'en', its two-letter code), so Google ignores this annotation",
        ),
        (
            "Ger-DE",
            "hreflang 'Ger-DE': language 'Ger' is not an ISO 639-1 code (a language tag writes "
            "it 'de', its two-letter code), so Google ignores this annotation",
        ),
        (
            "und",
            "hreflang 'und': language 'und' means \"undetermined\" and names no language (a "
            "page for any language is 'x-default'), so Google ignores this annotation",
        ),
        (
            "zxx",
            "hreflang 'zxx': language 'zxx' means \"no linguistic content\" and names no "
            "language, so Google ignores this annotation",
        ),
        (
            "qab",
            "hreflang 'qab': language 'qab' is reserved for local use and names no language, so "
            "Google ignores this annotation",
        ),
        (
            "i-klingon",
            "hreflang 'i-klingon': a grandfathered tag, whose 'i-' names no ISO 639-1 language "
            "(BCP 47 prefers 'tlh'), so Google ignores this annotation",
        ),
        (
            "i-default",
            "hreflang 'i-default': a grandfathered tag, whose 'i-' names no ISO 639-1 language "
            "(the fallback value is written 'x-default'), so Google ignores this annotation",
        ),
        (
            "i-mingo",
            "hreflang 'i-mingo': a grandfathered tag, whose 'i-' names no ISO 639-1 language, "
            "so Google ignores this annotation",
        ),
        (
            "x-default-en",
            "hreflang 'x-default-en': a private-use tag, which names no language (the one Google "
            "reads is 'x-default'), so Google ignores this annotation",
        ),
        ("en-GB", None),
        ("X-Default", None),
        ("fil", None),
    ],
)
def test_hreflang_problem_messages(tag: str, message: str | None) -> None:
    assert hreflang_problem(tag) == message


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("fil", "fil"),
        ("fil-PH", "fil"),
        ("yue-Hant-HK", "yue"),
        ("gsw", "gsw"),
        ("tlh", "tlh"),
        ("sgn-BE-FR", "sgn"),
        ("art-lojban", "art"),
        ("abc", "abc"),
    ],
)
def test_a_three_letter_language_without_a_two_letter_code_is_unsupported(
    tag: str, language: str
) -> None:
    assert hreflang_unsupported(tag) == (
        f"hreflang {tag!r}: language '{language}' has three letters and no two-letter ISO 639-1 "
        "code; Google documents only ISO 639-1 languages for hreflang, so it may ignore this "
        "annotation"
    )


@pytest.mark.parametrize(
    "tag",
    [
        "en",
        "en-GB",
        "zh-yue-HK",
        "ar-afb",
        "zh-min-nan",
        "no-bok",
        "en-GB-oed",
        "x-default",
        "en-US-x-twain",
        # Wrong, and reported as hreflang_invalid instead.
        "x-whatever",
        "eng",
        "und",
        "i-klingon",
        "fil-UK",
        "fil_PH",
        "",
    ],
)
def test_what_is_not_unsupported(tag: str) -> None:
    assert hreflang_unsupported(tag) is None


def test_the_three_letter_codes_of_iso_639_1_languages() -> None:
    assert len(ISO_639_2_TO_1) == 204
    assert set(ISO_639_2_TO_1.values()) == ISO_639_1
    assert all(re.fullmatch("[a-z]{3}", code) for code in ISO_639_2_TO_1)
    assert {
        "eng": "en",
        "deu": "de",
        "ger": "de",
        "fra": "fr",
        "fre": "fr",
        "tgl": "tl",
    }.items() <= (ISO_639_2_TO_1.items())
    assert not {"fil", "yue", "gsw", "tlh", "und", "mul"} & set(ISO_639_2_TO_1)


def test_three_letter_languages_in_a_sitemap() -> None:
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{tag}" href="https://www.example.com/{tag}/"/>'
        for tag in ("en", "fil", "eng", "yue-HK", "und", "i-klingon", "zh-yue-HK", "fil")
    )
    data = urlset(url("https://www.example.com/en/", links))
    problems = validate_document(data, now=NOW)
    assert [(p.code, p.message.split(":")[0]) for p in problems] == [
        ("hreflang_unsupported", "hreflang 'fil'"),
        ("hreflang_invalid", "hreflang 'eng'"),
        ("hreflang_unsupported", "hreflang 'yue-HK'"),
        ("hreflang_invalid", "hreflang 'und'"),
        ("hreflang_invalid", "hreflang 'i-klingon'"),
        ("hreflang_unsupported", "hreflang 'fil'"),
    ]


def test_unassigned_region_in_a_sitemap_is_hreflang_invalid() -> None:
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{tag}" href="https://www.example.com/{tag}/"/>'
        for tag in ("en-GB", "en-UK", "zh-Hant", "x-default", "es-EU")
    )
    data = urlset(url("https://www.example.com/en-GB/", links))
    problems = validate_document(data, now=NOW)
    assert [(p.code, p.message.split(":")[0]) for p in problems] == [
        ("hreflang_invalid", "hreflang 'en-UK'"),
        ("hreflang_invalid", "hreflang 'es-EU'"),
    ]


def test_the_code_tables_are_complete() -> None:
    assert len(ISO_3166_1_ALPHA_2) == 249
    assert len(ISO_639_1) == 184
    assert all(re.fullmatch("[a-z]{2}", code) for code in ISO_3166_1_ALPHA_2 | ISO_639_1)
    beyond_iso = REGIONS - ISO_3166_1_ALPHA_2
    assert beyond_iso == {"xk"}
    reserved = {"uk", "eu", "un", "ez", "ac", "cp", "dg", "ea", "ic", "ta", "an", "yu", "cs"}
    assert not reserved & REGIONS
    assert {"gb", "ss", "sx", "cw", "bq", "la"} <= REGIONS


@pytest.mark.parametrize(
    ("tag", "hint"),
    [
        ("", "empty"),
        (" en", "whitespace"),
        ("en_US", "'-', not '_'"),
        ("x_default", "'x-default'"),
        ("e", "such as"),
    ],
)
def test_hreflang_hints(tag: str, hint: str) -> None:
    assert hint in hreflang_hint(tag)


LINKS = (
    '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en/"/>'
    '<xhtml:link rel="alternate" hreflang="de" href=" https://www.example.com/de/ "/>'
    '<xhtml:link rel="canonical" href="https://www.example.com/c/"/>'
    '<xhtml:link rel="alternate" hreflang="fr"/>'
)


def test_iter_alternates() -> None:
    data = urlset(
        url("https://www.example.com/en/", LINKS),
        url("https://www.example.com/plain/"),
        url(" https://www.example.com/de/ ", LINKS),
    )
    assert list(iter_alternates(data)) == [
        (
            "https://www.example.com/en/",
            [("en", "https://www.example.com/en/"), ("de", "https://www.example.com/de/")],
        ),
        (
            "https://www.example.com/de/",
            [("en", "https://www.example.com/en/"), ("de", "https://www.example.com/de/")],
        ),
    ]


@pytest.mark.parametrize(
    ("codec", "declared", "prefix"),
    [
        ("utf-16", "UTF-16", b""),  # with a byte order mark
        ("utf-16-le", "UTF-16", b""),
        ("utf-16-be", "UTF-16", b""),
        ("utf-8", "UTF-8", b"\xef\xbb\xbf"),
    ],
)
def test_iter_alternates_in_any_encoding(codec: str, declared: str, prefix: bytes) -> None:
    """Skipping a document without the bytes ``hreflang`` must not skip one whose encoding
    spells them otherwise."""
    text = urlset(url("https://www.example.com/en/", LINKS)).decode()
    data = prefix + text.replace('encoding="UTF-8"', f'encoding="{declared}"').encode(codec)
    assert [loc for loc, _ in iter_alternates(data)] == ["https://www.example.com/en/"]


def test_iter_alternates_without_any() -> None:
    data = urlset(url("https://www.example.com/plain/"), url("https://www.example.com/b/"))
    assert list(iter_alternates(data)) == []


def test_iter_alternates_wrong_namespace_and_other_roots() -> None:
    wrong = urlset(
        url("https://www.example.com/en/", LINKS),
        namespaces='xmlns="https://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml"',
    )
    assert [loc for loc, _ in iter_alternates(wrong)] == ["https://www.example.com/en/"]
    rss = b'<rss xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>x</loc></url></rss>'
    assert list(iter_alternates(rss)) == []
    assert list(iter_alternates(b"")) == []
    assert list(iter_alternates(b"not xml at all")) == []


def test_iter_alternates_stops_at_broken_xml() -> None:
    data = urlset(
        url("https://www.example.com/en/", LINKS),
        url("https://www.example.com/de/?a&b", LINKS),
        url("https://www.example.com/fr/", LINKS),
    )
    assert [loc for loc, _ in iter_alternates(data)] == ["https://www.example.com/en/"]


def test_iter_alternates_never_expands_entities() -> None:
    data = (
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        b'xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>https://e.com/&x;</loc>'
        b'<xhtml:link rel="alternate" hreflang="en" href="https://e.com/"/></url></urlset>'
    )
    [(loc, _alternates)] = list(iter_alternates(data))
    assert "root:" not in loc


def _pairs(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
    return list(pairs)


A, B, C, D = (f"https://www.example.com/{x}/" for x in "abcd")


def test_graph_reciprocal_is_quiet() -> None:
    with HreflangGraph() as graph:
        graph.add(A, _pairs(("en", A), ("de", B)), "s1.xml")
        graph.add(B, _pairs(("en", A), ("de", B)), "s2.xml")
        assert list(graph.not_reciprocal()) == []
        assert len(graph) == 2


def test_graph_reports_missing_return_links() -> None:
    with HreflangGraph() as graph:
        graph.add(A, _pairs(("en", A), ("de", B), ("fr", C), ("x-default", C)), "s1.xml")
        graph.add(B, _pairs(("de", B)), "s2.xml")
        found = list(graph.not_reciprocal())
    assert [(page, href) for page, href, _ in found] == [(A, B), (A, C)]
    assert f"does not list {A} back" in found[0][2]
    assert "(de)" in found[0][2]
    assert "s1.xml" in found[0][2]
    assert "is not listed with alternates in any audited sitemap" in found[1][2]
    assert "(fr, x-default)" in found[1][2] or "(x-default, fr)" in found[1][2]


def test_graph_compares_urls_not_spellings() -> None:
    # An IRI and its percent-encoded form, the case of escapes and of the host, a fragment:
    # the same URL, as browsers and search engines read them.
    de, de_iri, en = (
        "https://www.example.com/de/%C3%BCber",
        "https://WWW.example.com/de/über",
        "https://www.example.com/en/about",
    )
    with HreflangGraph() as graph:
        graph.add(de, _pairs(("de", de_iri), ("en", en)), "s1.xml")
        graph.add(
            en, _pairs(("en", en + "#main"), ("de", de.replace("%C3%BC", "%c3%bc"))), "s2.xml"
        )
        assert list(graph.not_reciprocal()) == []


def test_graph_leaves_alternates_on_other_sites_alone() -> None:
    other = "https://www.example.de/"
    with HreflangGraph() as graph:
        graph.add(A, _pairs(("en", A), ("de", other), ("fr", B)), "s1.xml")
        found = list(graph.not_reciprocal(lambda url: url.startswith("https://www.example.com")))
        assert [(page, href) for page, href, _ in found] == [(A, B)]
        assert len(list(graph.not_reciprocal())) == 2


def test_graph_accumulates_across_sitemaps_and_dedupes() -> None:
    with HreflangGraph() as graph:
        graph.add(A, _pairs(("en", A), ("de", B)), "s1.xml")
        graph.add(A, _pairs(("en", A), ("de", B)), "s3.xml")
        graph.add(" " + B + " ", _pairs(("de", B)), "s2.xml")
        graph.add(B, _pairs(("en", A)), "s4.xml")
        graph.add("", _pairs(("en", A)), "s5.xml")
        graph.add(D, _pairs(("en", " "), ("", C)), "s5.xml")
        assert list(graph.not_reciprocal()) == []
        assert len(graph) == 3


def test_graph_on_disk_and_at_scale(tmp_path: Path) -> None:
    store = tmp_path / "hreflang.sqlite"
    pages = 20_000
    with HreflangGraph(store, cache_kib=1024) as graph:
        for number in range(pages):
            en = f"https://www.example.com/en/{number}"
            de = f"https://www.example.com/de/{number}"
            graph.add(en, [("en", en), ("de", de)], "en.xml")
            if number % 1000:
                graph.add(de, [("en", en), ("de", de)], "de.xml")
        found = list(graph.not_reciprocal())
        assert store.stat().st_size > 1_000_000
    assert len(found) == pages // 1000
    assert all("is not listed with alternates" in message for _, _, message in found)


def test_graph_from_threads() -> None:
    with HreflangGraph() as graph:

        def worker(lang: str) -> None:
            for number in range(500):
                page = f"https://www.example.com/{lang}/{number}"
                other = "de" if lang == "en" else "en"
                graph.add(page, [(other, f"https://www.example.com/{other}/{number}")], lang)

        threads = [threading.Thread(target=worker, args=(lang,)) for lang in ("en", "de")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert list(graph.not_reciprocal()) == []
        assert len(graph) == 1000


def test_graph_with_iter_alternates() -> None:
    en = urlset(
        url(
            A,
            f'<xhtml:link rel="alternate" hreflang="en" href="{A}"/>'
            f'<xhtml:link rel="alternate" hreflang="de" href="{B}"/>',
        )
    )
    de = urlset(url(B, f'<xhtml:link rel="alternate" hreflang="de" href="{B}"/>'))
    with HreflangGraph() as graph:
        for name, data in (("en.xml", en), ("de.xml", de)):
            for loc, alternates in iter_alternates(data):
                graph.add(loc, alternates, name)
        assert [(page, href) for page, href, _ in graph.not_reciprocal()] == [(A, B)]


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 16])
def test_iter_alternates_of_chunks_is_that_of_the_whole(size: int) -> None:
    data = urlset(*(url(f"https://www.example.com/{i}/", LINKS) for i in range(20)))
    assert len(list(iter_alternates(data))) == 20
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    assert list(iter_alternates(iter(chunks))) == list(iter_alternates(data))
    assert list(iter_alternates(iter(chunks[: len(chunks) // 2]))) == list(
        iter_alternates(data[: (len(chunks) // 2) * size])
    )


GOOGLE_NEEDS_ABSOLUTE = (
    "; Google requires hreflang alternate URLs to be fully qualified, with the http or https "
    "scheme, and ignores this annotation (the reciprocity check leaves it out)"
)


@pytest.mark.parametrize(
    ("href", "reason"),
    [
        ("https://www.example.com/de/", None),
        ("  https://www.example.com/de/\n", None),
        ("https://www.example.com/caf\u00e9/", None),
        ("/de/", "it is relative: it has no scheme (http:// or https://)"),
        ("de/", "it is relative: it has no scheme (http:// or https://)"),
        ("//www.example.com/de/", "it is relative: it has no scheme (http:// or https://)"),
        ("ftp://www.example.com/de/", "its scheme 'ftp' is not http or https"),
        (
            "https://www.example.com/es page",
            "it contains a space at character 27, which a URL writes percent-encoded (%20)",
        ),
        ("https:///de/", "it has no host"),
    ],
)
def test_an_alternate_href_must_be_an_absolute_http_url(href: str, reason: str | None) -> None:
    links = (
        f'<xhtml:link rel="alternate" hreflang="en" href="{A}"/>\n'
        f'<xhtml:link rel="alternate" hreflang="de" href="{href}"/>'
    )
    problems = validate_document(urlset(url(A, links)), now=NOW)
    found = [(p.code, p.message, p.line) for p in problems]
    if reason is None:
        assert found == []
    else:
        assert found == [
            (
                "invalid_url",
                f'xhtml:link hreflang="de" href {href.strip()!r} is not a valid http(s) URL: '
                f"{reason}{GOOGLE_NEEDS_ABSOLUTE}",
                4,
            )
        ]


def test_an_invalid_hreflang_with_an_invalid_href_gets_both_findings() -> None:
    links = (
        f'<xhtml:link rel="alternate" hreflang="en" href="{A}"/>'
        '<xhtml:link rel="alternate" hreflang="jp" href="/ja/"/>'
    )
    problems = validate_document(urlset(url(A, links)), now=NOW)
    assert [p.code for p in problems] == ["hreflang_invalid", "invalid_url"]


def test_graph_does_not_blame_a_page_for_an_alternate_href_that_is_no_absolute_url() -> None:
    # A lists B as "/b/" (and C with another scheme): that is invalid_url in A's sitemap, and
    # is no link for the reciprocity check, so B, whose alternate A does not list B back by a
    # usable URL, is not blamed for it; nor does A's "/b/" make A look unanswered.
    with HreflangGraph() as graph:
        graph.add(A, _pairs(("en", A), ("de", "/b/"), ("fr", "ftp://www.example.com/c/")), "s.xml")
        graph.add(B, _pairs(("de", B), ("en", A)), "s.xml")
        graph.add(C, _pairs(("fr", C), ("en", A), ("es", D)), "s.xml")
        graph.add(D, _pairs(("es", D), ("en", f"{A} page")), "s.xml")
        assert list(graph.not_reciprocal()) == []
        # An alternate with a usable href is still judged.
        graph.add(D, _pairs(("it", B)), "t.xml")
        assert [(page, href) for page, href, _ in graph.not_reciprocal()] == [(D, B)]


def test_graph_leaves_out_an_annotation_google_ignores() -> None:
    """B links back to A only with an invalid hreflang, which Google ignores: for Google, B
    does not link back."""
    with HreflangGraph() as graph:
        graph.add(A, _pairs(("en", A), ("de", B)), "s1.xml")
        graph.add(B, _pairs(("en_US", A), ("de", B)), "s2.xml")
        found = list(graph.not_reciprocal())
    assert [(page, href) for page, href, _ in found] == [(A, B)]
