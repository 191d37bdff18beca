"""Valid and invalid twins for every finding code (tests/fixtures/validation/{valid,invalid}).

Each invalid fixture is named ``<code>__<case>.xml``; its valid twin has the same name. The
valid twin must produce no problem at all; the invalid one exactly the codes listed here,
with the listed message fragments, lines and columns.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation import CODES, validate_document
from tests.validation.conftest import FIXTURES, NOW

EXPECTED: dict[str, dict[str, int]] = {
    "schema_invalid__changefreq_case": {"schema_invalid": 1},
    "schema_invalid__priority_range": {"schema_invalid": 1},
    "schema_invalid__lastmod_without_seconds": {"schema_invalid": 1},
    "schema_invalid__lastmod_year_month": {"schema_invalid": 1},
    "schema_invalid__missing_loc": {"schema_invalid": 1},
    "schema_invalid__element_order": {"schema_invalid": 1},
    "schema_invalid__xhtml_link_before_lastmod": {"schema_invalid": 1},
    "schema_invalid__video_sequence": {"schema_invalid": 1},
    "schema_invalid__news_language": {"schema_invalid": 1},
    "schema_invalid__news_title_missing": {"schema_invalid": 1},
    "schema_invalid__image_order": {"schema_invalid": 1},
    "schema_invalid__extension_outside_url": {"schema_invalid": 2},
    "schema_invalid__loc_too_short": {"schema_invalid": 1},
    "schema_invalid__unnamespaced_child": {"schema_invalid": 1},
    "schema_invalid__sitemapindex": {"schema_invalid": 2},
    "namespace_invalid__https": {"namespace_invalid": 1},
    "namespace_invalid__trailing_slash": {"namespace_invalid": 1},
    "namespace_invalid__no_version": {"namespace_invalid": 1},
    "namespace_invalid__missing": {"namespace_invalid": 1},
    "encoding_invalid__declared_latin1": {"encoding_invalid": 1},
    "encoding_invalid__utf16": {"encoding_invalid": 1},
    "encoding_invalid__bad_bytes": {"encoding_invalid": 1},
    "unescaped_characters__ampersand": {"unescaped_characters": 1},
    "unescaped_characters__less_than": {"unescaped_characters": 1},
    "unescaped_characters__attribute": {"unescaped_characters": 1},
    "entity_reference__internal_entity": {"entity_reference": 1},
    "unknown_extension__mobile_and_pagemap": {"unknown_extension": 2},
    "news_too_old__three_days": {"news_too_old": 1},
    "news_date_invalid__no_time_zone": {"news_date_invalid": 1},
    "news_missing_field__empty_title": {"news_missing_field": 1},
    "invalid_url__empty_image_loc": {"invalid_url": 1},
    "video_missing_field__no_content_or_player": {"video_missing_field": 1},
    "video_url_is_page__player_is_the_page": {"video_url_is_page": 1},
    "video_duration_invalid__zero": {"video_duration_invalid": 1},
    "video_expired__past_date": {"video_expired": 1},
    # Its self-link is the invalid one, which Google ignores: no self-reference either.
    "hreflang_invalid__underscore": {
        "hreflang_invalid": 1,
        "schema_invalid": 1,
        "hreflang_no_self": 1,
    },
    "hreflang_invalid__not_bcp47": {"hreflang_invalid": 1},
    "hreflang_invalid__missing_href": {"hreflang_invalid": 1},
    "hreflang_invalid__not_a_language": {"hreflang_invalid": 4},
    "hreflang_unsupported__three_letters": {"hreflang_unsupported": 1},
    "hreflang_no_self__missing_self_link": {"hreflang_no_self": 1},
    "hreflang_conflict__same_value_two_urls": {"hreflang_conflict": 1},
}

DETAILS: dict[str, list[tuple[str, int | None, int | None]]] = {
    "schema_invalid__changefreq_case": [
        (
            "/urlset/url[3]/changefreq: changefreq 'Daily' is not one of "
            "always/hourly/daily/weekly/monthly/yearly/never",
            15,
            5,
        )
    ],
    "schema_invalid__priority_range": [
        ("/urlset/url/priority: priority 1.5 is outside 0.0-1.0", 9, 5)
    ],
    "schema_invalid__lastmod_without_seconds": [
        ("lastmod '2004-12-23T18:00+00:00' is not a W3C/XSD date", 9, 5),
        ("seconds are required by the XSD", 9, 5),
    ],
    "schema_invalid__lastmod_year_month": [("a year or a year-month alone", 9, 5)],
    "schema_invalid__missing_loc": [("/urlset/url[2]/lastmod: <url> has no <loc>", 11, 5)],
    "schema_invalid__element_order": [("/urlset/url/lastmod: wrong element order", 10, 5)],
    "schema_invalid__xhtml_link_before_lastmod": [
        (
            "/urlset/url/lastmod: wrong element order: <lastmod> cannot come after <xhtml:link>",
            12,
            5,
        )
    ],
    "schema_invalid__video_sequence": [
        (
            "/urlset/url/video:video/video:title: element order only: <video:title> comes "
            "first in <video:video>",
            10,
            7,
        )
    ],
    "schema_invalid__news_language": [
        ("/urlset/url[2]/news:news/news:publication/news:language: news:language 'en-US'", 23, 9)
    ],
    "schema_invalid__news_title_missing": [
        ("<news:news> has no <news:title>: Google requires the article's title", 9, 5)
    ],
    "schema_invalid__image_order": [("/urlset/url/image:image/image:caption", 10, 7)],
    "schema_invalid__extension_outside_url": [
        ("/urlset/image:image: <image:image> directly inside <urlset> after a <url>", 10, 3),
        ("/urlset/url[2]/priority: priority 2 is outside 0.0-1.0", 15, 5),
    ],
    "schema_invalid__loc_too_short": [("loc is 11 characters long", 8, 5)],
    "schema_invalid__unnamespaced_child": [("/urlset/url/foo: <foo> has no namespace", 9, 5)],
    "schema_invalid__sitemapindex": [
        ("/sitemapindex/sitemap[1]/lastmod: lastmod '2024-01-01 10:00'", 5, 5),
        ("/sitemapindex/sitemap[2]/lastmod: <sitemap> has no <loc>", 8, 5),
    ],
    "namespace_invalid__https": [("uses https:// instead of http://", 2, 1)],
    "namespace_invalid__trailing_slash": [("has a trailing '/'", 2, 1)],
    "namespace_invalid__no_version": [("lacks the trailing '/0.9'", 2, 1)],
    "namespace_invalid__missing": [("<urlset> has no namespace", 2, 1)],
    "encoding_invalid__declared_latin1": [("encoding='ISO-8859-1'", 1, 31)],
    "encoding_invalid__utf16": [("UTF-16", 1, 1)],
    "encoding_invalid__bad_bytes": [("bytes at offset 403 are not valid UTF-8 (e9 3c", 8, 37)],
    "unescaped_characters__ampersand": [("raw '&'", 8, 38)],
    "unescaped_characters__less_than": [("raw '<' in text", 8, 35)],
    "unescaped_characters__attribute": [("raw '&'", 10, 85)],
    "entity_reference__internal_entity": [("&host;", 11, None)],
    "unknown_extension__mobile_and_pagemap": [
        (
            "http://www.google.com/schemas/sitemap-mobile/1.0 (first element <mobile:mobile>)",
            10,
            None,
        ),
        ("http://www.google.com/schemas/sitemap-pagemap/1.0", 14, None),
    ],
    "news_too_old__three_days": [("2024-06-02T10:00:00+02:00 is 3 days old", 14, None)],
    "news_date_invalid__no_time_zone": [
        (
            "news:publication_date '2024-06-05T08:00:00' is not a valid date: a time needs a time "
            "zone (Z or +hh:mm) in W3C Datetime",
            14,
            None,
        )
    ],
    "news_missing_field__empty_title": [
        ("news:news has an empty news:title (Google requires the article's title)", 9, None)
    ],
    "invalid_url__empty_image_loc": [
        ("image:loc '' is not a valid http(s) URL: it is empty", 13, None)
    ],
    "video_missing_field__no_content_or_player": [
        ("one of video:content_loc / video:player_loc", 9, None)
    ],
    "video_url_is_page__player_is_the_page": [
        ("video:player_loc https://www.example.com/a is the page's own <loc>", 13, None)
    ],
    "video_duration_invalid__zero": [("video:duration '0' is not a whole number", 14, None)],
    "video_expired__past_date": [
        ("video:expiration_date 2024-06-01T10:00:00+02:00 passed 4 days ago", 15, None)
    ],
    "hreflang_invalid__underscore": [("'en_US'", 9, None), ("separate subtags with '-'", 9, None)],
    "hreflang_invalid__not_bcp47": [("'zh-Hans-x' is not a valid BCP 47 language tag", 10, None)],
    "hreflang_invalid__missing_href": [('hreflang="de" has no href', 10, None)],
    "hreflang_invalid__not_a_language": [
        (
            "'eng-GB': language 'eng' is not an ISO 639-1 code (a language tag writes it 'en'",
            10,
            None,
        ),
        ("'und': language 'und' means \"undetermined\" and names no language", 11, None),
        ("'i-navajo': a grandfathered tag, whose 'i-' names no ISO 639-1 language", 12, None),
        ("(BCP 47 prefers 'nv')", 12, None),
        ("'x-defualt': a private-use tag, which names no language", 13, None),
    ],
    "hreflang_unsupported__three_letters": [
        (
            "hreflang 'fil-PH': language 'fil' has three letters and no two-letter ISO 639-1 "
            "code; Google documents only ISO 639-1 languages for hreflang",
            10,
            None,
        )
    ],
    "hreflang_no_self__missing_self_link": [
        ("https://www.example.com/a lists 2 hreflang alternates", 7, None)
    ],
    "hreflang_conflict__same_value_two_urls": [
        (
            "<url> https://www.example.com/uk/ lists several URLs for one hreflang value: "
            "'en-GB' (https://www.example.com/uk/, https://www.example.com/gb/ as 'en-gb'); ",
            12,
            None,
        )
    ],
}


def _names() -> list[str]:
    return sorted(path.stem for path in (FIXTURES / "invalid").glob("*.xml"))


def _run(kind: str, name: str) -> list[Problem]:
    return validate_document((FIXTURES / kind / f"{name}.xml").read_bytes(), now=NOW)


def test_every_fixture_has_a_twin_and_an_expectation() -> None:
    invalid = {path.name for path in (FIXTURES / "invalid").glob("*.xml")}
    valid = {path.name for path in (FIXTURES / "valid").glob("*.xml")}
    assert invalid == valid
    assert set(_names()) == set(EXPECTED) == set(DETAILS)


@pytest.mark.parametrize("name", _names())
def test_valid_twin_is_clean(name: str) -> None:
    assert _run("valid", name) == []


@pytest.mark.parametrize("name", _names())
def test_invalid_twin_has_exactly_the_expected_codes(name: str) -> None:
    problems = _run("invalid", name)
    assert Counter(problem.code for problem in problems) == Counter(EXPECTED[name])
    assert name.partition("__")[0] in {problem.code for problem in problems}


@pytest.mark.parametrize("name", _names())
def test_invalid_twin_messages_and_positions(name: str) -> None:
    problems = _run("invalid", name)
    for fragment, line, column in DETAILS[name]:
        matching = [problem for problem in problems if fragment in problem.message]
        assert matching, f"{fragment!r} not in {[p.message for p in problems]}"
        assert (matching[0].line, matching[0].column) == (line, column)


def test_every_code_is_covered_by_a_fixture() -> None:
    covered = {code for expected in EXPECTED.values() for code in expected}
    generated = {"near_limit", "too_many_images", "news_too_many", "hreflang_not_reciprocal"}
    assert covered | generated == set(CODES)


def test_fixture_directory_layout() -> None:
    for path in (FIXTURES / "invalid").glob("*.xml"):
        code = path.stem.partition("__")[0]
        assert code in CODES, path
        assert Path(FIXTURES / "valid" / path.name).is_file()
