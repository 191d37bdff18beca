"""Tests of sitemapaudit.page.links.parse_link_header (RFC 8288)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.page.links import parse_link_header


def test_single_canonical() -> None:
    assert parse_link_header(['<https://ex.com/a>; rel="canonical"']) == [
        ("https://ex.com/a", frozenset({"canonical"}))
    ]


def test_several_links_in_one_header_and_several_headers() -> None:
    links = parse_link_header(
        [
            '<https://ex.com/a>; rel="canonical", </b>; rel=preload; as=style',
            "<https://ex.com/sitemap.xml>; rel=sitemap",
        ]
    )
    assert links == [
        ("https://ex.com/a", frozenset({"canonical"})),
        ("/b", frozenset({"preload"})),
        ("https://ex.com/sitemap.xml", frozenset({"sitemap"})),
    ]


def test_rel_values_are_lowercased_and_split() -> None:
    assert parse_link_header(['</x>; REL="Alternate Canonical"']) == [
        ("/x", frozenset({"alternate", "canonical"}))
    ]


def test_commas_and_semicolons_inside_targets_and_quotes_do_not_split() -> None:
    links = parse_link_header(
        ['<https://ex.com/a,b;c>; title="x, y; z"; rel="canonical", <https://ex.com/d>; rel=next']
    )
    assert links == [
        ("https://ex.com/a,b;c", frozenset({"canonical"})),
        ("https://ex.com/d", frozenset({"next"})),
    ]


def test_escaped_quote_in_parameter() -> None:
    links = parse_link_header(['</a>; title="say \\"hi\\", ok"; rel=canonical'])
    assert links == [("/a", frozenset({"canonical"}))]


def test_only_the_first_rel_counts() -> None:
    assert parse_link_header(["</a>; rel=next; rel=canonical"]) == [("/a", frozenset({"next"}))]


def test_whitespace_around_parts() -> None:
    assert parse_link_header(['  < /a >  ;  rel = "canonical"  ,  ']) == [
        ("/a", frozenset({"canonical"}))
    ]


def test_link_without_rel() -> None:
    assert parse_link_header(["</a>", "</b>; rel"]) == [
        ("/a", frozenset()),
        ("/b", frozenset()),
    ]


def test_malformed_parts_are_skipped() -> None:
    links = parse_link_header(
        ["garbage; rel=canonical, </ok>; rel=canonical", "<unclosed; rel=canonical", ";;;", ""]
    )
    assert links == [("/ok", frozenset({"canonical"}))]


def test_a_single_string_is_read_as_one_value() -> None:
    assert parse_link_header("</a>; rel=canonical") == [("/a", frozenset({"canonical"}))]


@settings(max_examples=500, database=None)
@given(st.lists(st.text()))
def test_never_raises(values: list[str]) -> None:
    for target, rels in parse_link_header(values):
        assert isinstance(target, str)
        assert all(rel == rel.lower() for rel in rels)


@settings(max_examples=300, database=None)
@given(st.lists(st.text(alphabet='<>;,="\\ relcanonical/x', max_size=60)))
def test_never_raises_on_link_like_text(values: list[str]) -> None:
    parse_link_header(values)
