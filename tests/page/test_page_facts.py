"""Tests of sitemapaudit.page.page_facts: head and headers together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.page import PageFacts, content_type_of, is_html, page_facts

URL = "https://example.com/a/page"
HTML = b"<html><head><title>t</title></head><body>hello</body></html>"


def facts(
    headers: Mapping[str, Sequence[str]], body: bytes = HTML, *, user_agent: str = "googlebot"
) -> PageFacts:
    return page_facts(URL, headers, body, user_agent=user_agent)


def test_plain_page() -> None:
    assert facts({"content-type": ["text/html; charset=utf-8"]}) == PageFacts(
        noindex=(),
        canonical=None,
        canonical_source=None,
        last_modified=None,
        date=None,
        content_type="text/html; charset=utf-8",
    )


def test_raw_header_values() -> None:
    result = facts(
        {
            "content-type": ["text/html"],
            "last-modified": ["Sun, 10 Mar 2024 17:30:00 GMT"],
            "date": ["Mon, 11 Mar 2024 08:00:00 GMT", "ignored"],
        }
    )
    assert result.last_modified == "Sun, 10 Mar 2024 17:30:00 GMT"
    assert result.date == "Mon, 11 Mar 2024 08:00:00 GMT"


def test_meta_and_header_noindex_in_order() -> None:
    body = b"<html><head><meta name=robots content=noindex></head><body></body>"
    result = facts({"content-type": ["text/html"], "x-robots-tag": ["noindex"]}, body)
    assert result.noindex == ("meta:robots", "header:x-robots-tag")


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["googlebot: noindex"], ("header:x-robots-tag",)),
        (["bingbot: noindex"], ()),
        (["NONE"], ("header:x-robots-tag",)),
        (["nofollow"], ()),
        (["unavailable_after: 25 Jun 2030 15:00:00 PST"], ()),
        (["nofollow", "noindex"], ("header:x-robots-tag",)),
    ],
)
def test_x_robots_tag(values: list[str], expected: tuple[str, ...]) -> None:
    assert facts({"content-type": ["text/html"], "x-robots-tag": values}).noindex == expected


def test_user_agent_is_passed_through() -> None:
    body = b"<head><meta name=bingbot content=noindex></head>"
    headers = {"content-type": ["text/html"], "x-robots-tag": ["bingbot: noindex"]}
    assert facts(headers, body).noindex == ()
    assert facts(headers, body, user_agent="bingbot").noindex == (
        "meta:bingbot",
        "header:x-robots-tag",
    )


def test_noindex_in_body_text_and_script_is_not_noindex() -> None:
    body = (
        b"<html><head><script>if (x) { meta.content = 'noindex'; }</script></head>"
        b"<body><p>Add noindex to hide a page.</p><meta name=robots content=noindex></body>"
    )
    assert facts({"content-type": ["text/html"]}, body).noindex == ()


def test_canonical_from_link_element_first() -> None:
    body = b"<head><link rel=canonical href=/from-html></head>"
    result = facts(
        {"content-type": ["text/html"], "link": ['</from-header>; rel="canonical"']}, body
    )
    assert (result.canonical, result.canonical_source) == (
        "https://example.com/from-html",
        "link",
    )


def test_canonical_from_link_header() -> None:
    result = facts(
        {
            "content-type": ["text/html"],
            "link": ["</style.css>; rel=preload", '<other>; rel="Canonical"'],
        }
    )
    assert (result.canonical, result.canonical_source) == ("https://example.com/a/other", "header")


def test_non_html_is_judged_by_headers_only() -> None:
    pdf = b"%PDF-1.7\n<meta name=robots content=noindex><link rel=canonical href=/x>"
    result = facts(
        {
            "content-type": ["application/pdf"],
            "x-robots-tag": ["noindex"],
            "link": ['<https://example.com/doc.pdf>; rel="canonical"'],
        },
        pdf,
    )
    assert result.noindex == ("header:x-robots-tag",)
    assert (result.canonical, result.canonical_source) == ("https://example.com/doc.pdf", "header")


@pytest.mark.parametrize(
    "content_type", ["application/json", "image/png", "application/xml", "text/plain", "text/xml"]
)
def test_non_html_types_do_not_parse_the_body(content_type: str) -> None:
    body = b"<html><head><meta name=robots content=noindex></head>"
    assert facts({"content-type": [content_type]}, body).noindex == ()


def test_xhtml_is_parsed() -> None:
    body = b'<html xmlns="http://www.w3.org/1999/xhtml"><head><meta name="robots" content="none"/>'
    assert facts({"content-type": ["application/xhtml+xml"]}, body).noindex == ("meta:robots",)


def test_missing_content_type_is_sniffed() -> None:
    body = b"\n  <!DOCTYPE html><html><head><meta name=robots content=noindex></head>"
    assert facts({}, body).noindex == ("meta:robots",)
    assert facts({}, b'{"meta": "<meta name=robots content=noindex>"}').noindex == ()


def test_charset_of_the_content_type_is_used() -> None:
    body = "<head><link rel=canonical href='/café'></head>".encode("latin-1")
    result = facts({"content-type": ['text/html; charset="ISO-8859-1"']}, body)
    assert result.canonical == "https://example.com/caf%C3%A9"


def test_single_string_header_values_are_tolerated() -> None:
    headers: dict[str, str] = {"content-type": "text/html", "x-robots-tag": "noindex"}
    result = page_facts(URL, headers, HTML)
    assert result.noindex == ("header:x-robots-tag",)
    assert result.content_type == "text/html"


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/html", b"", True),
        ("TEXT/HTML; charset=utf-8", b"", True),
        ("application/xhtml+xml", b"", True),
        ("application/pdf", b"<html>", False),
        (None, b"<html><body>", True),
        (None, b"\xef\xbb\xbf<!doctype html>", True),
        (None, b"<p>hi</p>", True),
        (None, b"<?xml version='1.0'?><urlset>", False),
        (None, b"%PDF", False),
        ("", b"<html>", True),
    ],
)
def test_is_html(content_type: str | None, body: bytes, expected: bool) -> None:
    assert is_html(content_type, body) is expected


header_values = st.lists(st.text(max_size=80), max_size=3)


@settings(max_examples=300, database=None)
@given(
    st.binary(max_size=2000),
    st.dictionaries(
        st.sampled_from(["content-type", "x-robots-tag", "link", "last-modified", "date"]),
        header_values,
    ),
)
def test_page_facts_never_raises(body: bytes, headers: dict[str, list[str]]) -> None:
    page_facts(URL, headers, body)
    page_facts(URL, {**headers, "content-type": ["text/html"]}, body)


@settings(max_examples=200, database=None)
@given(st.text(max_size=500), st.text(max_size=100))
def test_page_facts_never_raises_on_html_text(text: str, url: str) -> None:
    body = text.encode("utf-8", "surrogatepass")
    page_facts(url, {"content-type": ["text/html"], "link": [text[:80]]}, body)


def test_unavailable_after_dates_of_metas_and_header() -> None:
    body = (
        b'<html><head><meta name="robots" content="unavailable_after: 2010-06-25T00:00:00Z">'
        b'<meta name="googlebot" content="nofollow, unavailable_after: 25 Jun 2011 10:00:00 GMT">'
        b'<meta name="otherbot" content="unavailable_after: 2001-01-01T00:00:00Z">'
        b"</head><body></body></html>"
    )
    result = facts(
        {
            "content-type": ["text/html"],
            "x-robots-tag": [
                "unavailable_after: 2030-01-01T00:00:00Z",
                "googlebot: unavailable_after: 2020-01-01T00:00:00Z",
            ],
        },
        body,
    )
    assert result.noindex == ()
    assert result.unavailable_after == (
        ("meta:robots", datetime(2010, 6, 25, tzinfo=UTC)),
        ("meta:googlebot", datetime(2011, 6, 25, 10, tzinfo=UTC)),
        ("header:x-robots-tag", datetime(2020, 1, 1, tzinfo=UTC)),
    )


def test_unavailable_after_in_the_body_does_not_count() -> None:
    body = (
        b"<html><head><title>t</title></head><body>"
        b'<meta name="robots" content="unavailable_after: 2010-06-25"></body></html>'
    )
    assert facts({"content-type": ["text/html"]}, body).unavailable_after == ()


def test_the_earliest_unavailable_after_of_a_source_counts() -> None:
    body = (
        b'<html><head><meta name="robots" content="unavailable_after: 2015-01-01T00:00:00Z">'
        b'<meta name="robots" content="unavailable_after: 2010-01-01T00:00:00Z">'
        b"</head><body></body></html>"
    )
    result = facts({"content-type": ["text/html"]}, body)
    assert result.unavailable_after == (("meta:robots", datetime(2010, 1, 1, tzinfo=UTC)),)


# --- several canonicals, refreshes -----------------------------------------------------------


def test_every_other_canonical_url_is_kept_once() -> None:
    body = (
        b"<html><head><link rel=canonical href=/a/page><link rel=canonical href=/b>"
        b"<link rel=canonical href=/b><link rel=canonical href='HTTPS://EXAMPLE.COM:443/a/page'>"
        b"</head>"
    )
    link = ['<https://example.com/c>; rel="canonical"']
    result = facts({"content-type": ["text/html"], "link": link}, body)
    assert result.canonical == URL
    assert result.canonical_source == "link"
    assert result.canonical_others == ("https://example.com/b", "https://example.com/c")


def test_a_link_header_naming_the_same_canonical_is_no_conflict() -> None:
    body = b"<html><head><link rel=canonical href=/a/page></head>"
    link = [f'<{URL}#x>; rel="canonical"']
    result = facts({"content-type": ["text/html"], "link": link}, body)
    assert (result.canonical, result.canonical_others) == (URL, ())


def test_a_canonical_that_is_not_http_does_not_conflict() -> None:
    """Search engines ignore a ``javascript:`` or ``mailto:`` canonical: it names no other
    URL, and one that comes first does not hide those after it."""
    body = (
        b"<html><head><link rel=canonical href=/a/page>"
        b"<link rel=canonical href='javascript:void(0)'></head>"
    )
    result = facts({"content-type": ["text/html"]}, body)
    assert (result.canonical, result.canonical_others) == (URL, ())
    body = (
        b"<html><head><link rel=canonical href='mailto:x@example.com'>"
        b"<link rel=canonical href=/b></head>"
    )
    result = facts({"content-type": ["text/html"]}, body)
    assert (result.canonical, result.canonical_source) == ("https://example.com/b", "link")
    assert result.canonical_others == ()


@pytest.mark.parametrize(
    ("head", "link", "expected"),
    [
        # Ignored first: the usable ones after it are the page's, and conflict.
        (
            "<link rel=canonical href='javascript:void(0)'><link rel=canonical href=/other>"
            "<link rel=canonical href=/third>",
            [],
            ("https://example.com/other", "link", ("https://example.com/third",)),
        ),
        # An ignored link element and a usable Link header: the header's.
        (
            "<link rel=canonical href='javascript:void(0)'>",
            ['</other>; rel="canonical"'],
            ("https://example.com/other", "header", ()),
        ),
        # A canonical browsers cannot parse names no URL either.
        (
            "<link rel=canonical href='http://[bad'><link rel=canonical href=/other>",
            [],
            ("https://example.com/other", "link", ()),
        ),
        (
            "<link rel=canonical href=/other><link rel=canonical href='https://exa mple.com/t'>",
            [],
            ("https://example.com/other", "link", ()),
        ),
        # None usable: the first, which canonical_mismatch reports as unusable.
        (
            "<link rel=canonical href='https://exa mple.com/t'>"
            "<link rel=canonical href='javascript:void(0)'>",
            [],
            ("https://exa mple.com/t", "link", ()),
        ),
    ],
)
def test_the_canonical_is_the_first_search_engines_can_use(
    head: str, link: list[str], expected: tuple[str, str, tuple[str, ...]]
) -> None:
    headers = {"content-type": ["text/html"], "link": link}
    result = facts(headers, f"<html><head>{head}</head><body></body></html>".encode())
    assert (result.canonical, result.canonical_source, result.canonical_others) == expected


def test_link_header_canonical_alone() -> None:
    link = ['</one>; rel="canonical", </two>; rel="canonical"']
    result = facts({"content-type": ["application/pdf"], "link": link}, b"%PDF")
    assert result.canonical == "https://example.com/one"
    assert result.canonical_source == "header"
    assert result.canonical_others == ("https://example.com/two",)


def test_meta_refresh_comes_before_a_refresh_header() -> None:
    body = b'<html><head><meta http-equiv="refresh" content="0; url=next"></head>'
    headers = {"content-type": ["text/html"], "refresh": ["5; url=/other"]}
    assert facts(headers, body).refresh == ("meta", 0, "https://example.com/a/next")
    assert facts(headers).refresh == ("header", 5, "https://example.com/other")


def test_a_refresh_without_a_url_is_no_redirect() -> None:
    body = b'<html><head><meta http-equiv="refresh" content="300"></head>'
    assert facts({"content-type": ["text/html"], "refresh": ["60"]}, body).refresh is None


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["text/html"], "text/html"),
        ([" Text/HTML ; Charset=UTF-8"], "text/html; charset=UTF-8"),
        (["text/plain", "text/html"], "text/html"),
        (["application/pdf, text/html"], "text/html"),
        (["text/html; charset=latin1", "text/html"], "text/html; charset=latin1"),
        (["text/html; charset=latin1", "text/plain"], "text/plain"),
        (["text/html", "*/*"], "text/html"),
        (['text/html; a="x,y"'], "text/html"),
        (["text/html", "nonsense"], "text/html"),
        (["html"], None),
        (["text/html charset=utf-8"], None),
        ([], None),
    ],
)
def test_the_content_type_is_read_as_browsers_read_several(
    values: list[str], expected: str | None
) -> None:
    # The Fetch standard's "extract a MIME type": the last valid media type wins.
    assert content_type_of(values) == expected


def test_two_content_type_lines_are_read_as_browsers_read_them() -> None:
    body = b"<html><head><meta name=robots content=noindex></head>"
    assert facts({"content-type": ["text/plain", "text/html"]}, body).noindex == ("meta:robots",)
    assert facts({"content-type": ["text/html", "application/pdf"]}, body).noindex == ()
    # A value that is no media type is no Content-Type: the body is sniffed.
    assert facts({"content-type": ["html"]}, b"<!DOCTYPE html>" + body).noindex == ("meta:robots",)
