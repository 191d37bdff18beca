"""Tests of sitemapaudit.discovery.homepage.homepage_sitemaps."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.discovery.homepage import homepage_sitemaps

HOME = "https://example.com/"


def test_link_element_in_the_head() -> None:
    body = b'<html><head><link rel="sitemap" type="application/xml" href="/sitemap.xml"></head>'
    assert homepage_sitemaps(body, HOME, []) == [("https://example.com/sitemap.xml", "html-link")]


@pytest.mark.parametrize(
    "link",
    [
        '<link rel="sitemap" href="/s.xml">',
        '<link rel="Sitemap" href="/s.xml">',
        "<LINK REL=SITEMAP HREF=/s.xml>",
        '<link rel="alternate sitemap" href="/s.xml">',
        '<link href="/s.xml" rel=" sitemap ">',
        "<link href='https://example.com/s.xml' rel='sitemap'>",
        '<link rel="sitemap" href="//example.com/s.xml">',
        '<link rel="sitemap" href="  s.xml  ">',
    ],
)
def test_link_element_forms(link: str) -> None:
    body = f"<html><head>{link}</head><body></body></html>".encode()
    assert homepage_sitemaps(body, HOME, []) == [("https://example.com/s.xml", "html-link")]


@pytest.mark.parametrize(
    "link",
    [
        '<link rel="sitemaps" href="/s.xml">',
        '<link rel="alternate" href="/s.xml">',
        '<link rel="sitemap">',
        '<link rel="sitemap" href="">',
        '<a rel="sitemap" href="/s.xml">sitemap</a>',
        "<!-- <link rel=sitemap href=/s.xml> -->",
        "<script>var l = '<link rel=sitemap href=/s.xml>';</script>",
    ],
)
def test_not_sitemap_links(link: str) -> None:
    body = f"<html><head>{link}</head><body></body></html>".encode()
    assert homepage_sitemaps(body, HOME, []) == []


def test_link_element_in_the_body_counts() -> None:
    body = b"<html><head></head><body><link rel=sitemap href=/late.xml></body></html>"
    assert homepage_sitemaps(body, HOME, []) == [("https://example.com/late.xml", "html-link")]


def test_base_href_is_honoured_for_html_links_only() -> None:
    body = (
        b'<head><base href="https://cdn.example.com/maps/"><link rel=sitemap href="a.xml"></head>'
    )
    assert homepage_sitemaps(body, HOME, ["<b.xml>; rel=sitemap"]) == [
        ("https://cdn.example.com/maps/a.xml", "html-link"),
        ("https://example.com/b.xml", "link-header"),
    ]


def test_relative_to_a_home_page_in_a_directory() -> None:
    body = b"<head><link rel=sitemap href=sitemap.xml></head>"
    assert homepage_sitemaps(body, "https://example.com/en/", []) == [
        ("https://example.com/en/sitemap.xml", "html-link")
    ]


def test_link_headers() -> None:
    headers = [
        '</style.css>; rel=preload, </sitemap.xml>; rel="sitemap"',
        '<https://example.com/news-sitemap.xml>; rel="Sitemap alternate"',
    ]
    assert homepage_sitemaps(b"", HOME, headers) == [
        ("https://example.com/sitemap.xml", "link-header"),
        ("https://example.com/news-sitemap.xml", "link-header"),
    ]


def test_deduplicated_in_order() -> None:
    body = (
        b"<head><link rel=sitemap href=/b.xml><link rel=sitemap href=/a.xml>"
        b"<link rel=sitemap href=https://example.com/b.xml></head>"
        b"<link rel=sitemap href=/./b.xml><link rel=sitemap href=HTTPS://EXAMPLE.COM/a.xml?>"
    )
    headers = ["</a.xml>; rel=sitemap, </c.xml>; rel=sitemap, </c.xml#x>; rel=sitemap"]
    assert homepage_sitemaps(body, HOME, headers) == [
        ("https://example.com/b.xml", "html-link"),
        ("https://example.com/a.xml", "html-link"),
        ("https://example.com/c.xml", "link-header"),
    ]


def test_encodings() -> None:
    body = "<head><meta charset=windows-1252><link rel=sitemap href='/carte-é.xml'></head>"
    assert homepage_sitemaps(body.encode("cp1252"), HOME, []) == [
        ("https://example.com/carte-é.xml", "html-link")
    ]
    utf16 = "<head><link rel=sitemap href='/ü.xml'></head>".encode("utf-16")
    assert homepage_sitemaps(utf16, HOME, []) == [("https://example.com/ü.xml", "html-link")]


@pytest.mark.parametrize("body", [b"", b"   ", b"\x00", b"%PDF-1.4\n\xff\xfe", b"{}", b"<"])
def test_empty_and_junk_bodies(body: bytes) -> None:
    assert homepage_sitemaps(body, HOME, []) == []


@settings(max_examples=300, database=None)
@given(st.binary(max_size=2000), st.lists(st.text(max_size=100), max_size=3))
def test_never_raises(body: bytes, headers: list[str]) -> None:
    for url, via in homepage_sitemaps(body, HOME, headers):
        assert via in ("html-link", "link-header")
        assert url


@settings(max_examples=200, database=None)
@given(st.text(max_size=300))
def test_never_raises_on_html_text(text: str) -> None:
    body = f"<html><head><link rel=sitemap href='{text}'>{text}</head>".encode("utf-8", "replace")
    homepage_sitemaps(body, HOME, [text])
