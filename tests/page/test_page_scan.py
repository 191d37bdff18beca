"""The head scan gives what lxml gives, or hands the document over to lxml."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemapaudit.page import head as head_module
from sitemapaudit.page.head import HeadFacts, _elements, _parse_text, document_head, parse_head
from sitemapaudit.page.scan import scan_attributes, scan_head

HeadTag = tuple[str, dict[str, str]]


def lxml_tags(text: str) -> list[HeadTag]:
    root = _parse_text(text)
    head = document_head(root) if root is not None else None
    if head is None:
        return []
    return [(str(el.tag), dict(el.attrib)) for el in _elements(head, "meta", "link", "base")]


def assert_same_as_lxml(text: str) -> list[HeadTag] | None:
    found = scan_head(text)
    if found is None:
        return None
    scanned = [(tag, scan_attributes(source)) for tag, source in found]
    assert scanned == lxml_tags(text), text
    return scanned


BENCH_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Item 3</title>
<meta name="description" content="Benchmark page 3">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="og:tag:0" content="Lorem ipsum dolor sit amet">
<link rel="canonical" href="http://127.0.0.1:8772/p/000003.html">
<meta name="robots" content="noindex, follow">
</head>"""


@pytest.mark.parametrize(
    "text",
    [
        BENCH_PAGE,
        BENCH_PAGE[: -len("</head>")],
        "<head>",
        "<HTML><HEAD><META CONTENT=NONE NAME=GoogleBot></HEAD >",
        "<head><meta content='noindex' name='robots'/><link rel=canonical href=/c/></head>",
        '<head><meta\n  content = "noindex"\n  name = "ROBOTS" /></head>',
        "<head><meta name=a name=b><meta NAME=x Name=y><link rel href></head>",
        "<head><title>a &lt;b&gt; > c</TITLE><base href=/b/><base href=/c/></head>",
        '<head><script async src="/a.js"></script><script>if (a<b) x = "<meta name=x>"</script>',
        "<head><style>a > b { color: red }</style><meta name=z>",
        "<!--a--><!doctype html><!-- b --><html><!---c--><head><!--[if IE]><x><![endif]-->",
        "\n \t<html>\r\n<head>\r\n<meta name=robots content=noindex>\r\n</head>",
        "<head><link rel=canonical href='/café'><meta name=robots content='\ufdd0\uffff'>",
    ],
)
def test_plain_heads_are_scanned(text: str) -> None:
    assert assert_same_as_lxml(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "<html>",
        "<meta name=robots content=noindex>",  # no <head>: lxml makes one up
        "<head><meta name=robots content=noindex",  # cut inside a tag
        "<head><meta name='a&amp;b'></head>",
        "<head><meta name=a&b></head>",
        "<head><meta name=robots content='\x01noindex'></head>",
        "<head><meta name='a\rb'></head>",
        "<head><meta name=a\x00></head>",
        "<head><meta name=robots/content=noindex></head>",
        "<head><meta name='a'content='b'></head>",
        "<head><meta name=a / ></head>",
        "<head><meta/ name=a></head>",
        "<head>text<meta name=robots content=noindex></head>",
        "<head><div></div><meta name=robots content=noindex></head>",
        "<head><noscript><meta name=robots content=noindex></noscript></head>",
        "<head><template><meta name=robots content=noindex></template></head>",
        "<head></meta><meta name=x></head>",
        "<head><title>a</title ></head><body>",
        "<head><title>a</b></title></head>",
        "<head><title>a <b>c</b></title></head>",
        "<head>\f<meta name=x></head>",
        "<head><meta\fname=x></head>",
        "<head><script>document.write('</p>')</script></head>",
        "<head><script><!-- x --></script></head>",
        "<head><!--></head>",
        "<head><!--a--!></head>",
        "<head><!--a--->",
        "<head><title/>x</title></head>",
        "<head></head><meta name=x>",
        "<head></head\x0b>",
        "<?xml version='1.0'?><html><head></head>",
        "<head><META\u017f name=x></head>",
    ],
)
def test_other_heads_are_left_to_lxml(text: str) -> None:
    assert scan_head(text) is None
    assert_same_as_lxml(text)


def test_parse_head_takes_the_scan_or_lxml_alike() -> None:
    plain = b"<head><meta name=robots content=noindex><link rel=canonical href=/c></head>"
    odd = b"<head><meta name=robots content=noindex><link rel=canonical href=/c?a&amp;b></head>"
    url = "https://example.com/x"
    assert parse_head(plain, url).canonical == "https://example.com/c"
    assert parse_head(odd, url).canonical == "https://example.com/c?a&b"
    assert parse_head(plain, url).noindex == parse_head(odd, url).noindex == ("meta:robots",)


def test_scan_is_linear_on_hostile_runs() -> None:
    for text in (
        "<head><meta" + " " * 50_000 + "x",
        "<head><meta a" + "=" * 50_000,
        "<head>" + "<!--" + "-a" * 50_000,
        "<head><script>" + "<a" * 50_000,
        "<head>" + "<meta name=a>" * 20_000 + "<",
        "<head><meta " + "a " * 50_000 + "=",
    ):
        assert_same_as_lxml(text)


# --- generated heads ------------------------------------------------------------------------
# Plain heads (the scan must read them) and heads with odd parts in them (the scan may give
# up; when it does not, it must agree with lxml).

_PLAIN_CHARS = [
    *"aZ09-_./:?#,;é€\ufdd0",
    *("robots", "GoogleBot", "canonical", "noindex", "none", "refresh", "Refresh", "0;url", "url"),
]
_ODD_CHARS = [*"'\"<>`&!= \t\n\f\r\x0b\x01\x7f\x85\ufffe", "&amp;", "\x00"]
_NAMES = [
    *("name", "NAME", "content", "rel", "href", "HREF", "charset", "property", "data-x", "a:b"),
    *("http-equiv", "HTTP-EQUIV"),
]
_ODD_NAMES = ['a"b', "=a", "é", "a<b"]


@st.composite
def _attribute(draw: st.DrawFn, plain: bool) -> str:
    name = draw(st.sampled_from(_NAMES if plain else _NAMES + _ODD_NAMES))
    quote = draw(st.sampled_from(['"', "'", "", None]))
    if quote is None:
        return name
    chars = list(_PLAIN_CHARS)
    if quote:
        chars += [c for c in "'\" <>/=`" if c != quote]
    value = "".join(draw(st.lists(st.sampled_from(chars if plain else chars + _ODD_CHARS))))
    if not quote and not value:
        value = "v"
    around = draw(st.sampled_from(["", " ", "\n ", "\r\n"]))
    return f"{name}{around}={around}{quote}{value}{quote}"


@st.composite
def _void(draw: st.DrawFn, plain: bool) -> str:
    tags = ["meta", "link", "base", "META", "Link"]
    spaces = [" ", "\n", "\t", "\r\n", "  "]
    tag = draw(st.sampled_from(tags if plain else [*tags, "metax"]))
    attributes = "".join(
        draw(st.sampled_from(spaces if plain else [*spaces, "/", "", "\x0b", "\f"]))
        + draw(_attribute(plain))
        for _ in range(draw(st.integers(0, 4)))
    )
    ends = ["", " ", " /"] if plain else ["", " ", "/", " /", "/ ", "\x0b"]
    end = draw(st.sampled_from(ends))
    if end == "" and attributes.endswith(("=", "/")):  # an unquoted value would take the "/"
        end = " "
    return f"<{tag}{attributes}{end}>"


@st.composite
def _text_element(draw: st.DrawFn, plain: bool) -> str:
    tag = draw(st.sampled_from(["title", "script", "style", "TITLE"]))
    chars = [*"a <>/!-&é\n", "<a>", "<meta name=a>", "-->"]
    if not plain:
        tag = draw(st.sampled_from([tag, "noscript", "textarea"]))
        chars += ["</", "<!--", "</a>", "<!"]
    content = "".join(draw(st.lists(st.sampled_from(chars), max_size=8)))
    if plain:
        content = content.replace("</", "< /").replace("<!", "< !")
        if tag.lower() == "title":
            content = content.replace("<", "&lt;")
    ends = [tag, tag.upper(), tag + " "] if plain else [tag, tag + "x", "", tag + " a"]
    return f"<{tag}>{content}</{draw(st.sampled_from(ends))}>"


@st.composite
def _comment(draw: st.DrawFn, plain: bool) -> str:
    chars = ["a", "-a", "!", ">", " ", "<", "<meta name=a>"]
    content = "".join(draw(st.lists(st.sampled_from(chars if plain else [*chars, "--"]))))
    if plain:
        return f"<!-- {content}-->"
    return f"<!--{content}{draw(st.sampled_from(['-->', '--->', '--!>', '']))}"


_JUNK = [
    "text",
    "&amp;",
    "<div>",
    "</div>",
    "</meta>",
    "<template>",
    "</template>",
    "<body>",
    "<html>",
    "<head>",
    "</head>",
    "<!doctype html>",
    "<?php x ?>",
    "<![CDATA[x]]>",
    "<svg><meta name=a></svg>",
    "<",
    "\x00",
]


@st.composite
def _document(draw: st.DrawFn, plain: bool) -> str:
    starts = ["", " \n", "<!DOCTYPE html>", "<!-- x -->", "<html lang=en>"]
    heads = ["<head>", "<HEAD id=h>", "<head >"]
    ends = ["</head>", "</HEAD >", ""]
    if plain:
        prologue = [draw(st.sampled_from(["", "<!DOCTYPE html>\n"])), "<html lang=en>"]
    else:
        prologue = draw(st.lists(st.sampled_from(starts), max_size=3))
        heads.append("")
        ends.append("</head")
    parts = [_void(plain), _text_element(plain), _comment(plain), st.sampled_from([" ", "\n"])]
    if not plain:
        parts.append(st.sampled_from(_JUNK))
    head = draw(st.sampled_from(heads))
    items = draw(st.lists(st.one_of(*parts), max_size=10))
    return "".join([*prologue, head, *items, draw(st.sampled_from(ends))])


@settings(max_examples=1000, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document(plain=True))
def test_generated_plain_heads(text: str) -> None:
    assert assert_same_as_lxml(text) is not None


@settings(max_examples=1000, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document(plain=False))
def test_generated_odd_heads(text: str) -> None:
    assert_same_as_lxml(text)


def lxml_facts(body: bytes, url: str, user_agent: str) -> HeadFacts:
    with mock.patch.object(head_module, "scan_head", return_value=None):
        return parse_head(body, url, user_agent=user_agent)


@settings(max_examples=1000, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(_document(plain=True), _document(plain=False)),
    st.sampled_from(["googlebot", "GoogleBot ", "bingbot", "", "\u03c3bot"]),
)
def test_generated_heads_give_the_facts_lxml_gives(text: str, user_agent: str) -> None:
    body = text.encode()
    url = "https://example.com/a/b"
    assert parse_head(body, url, user_agent=user_agent) == lxml_facts(body, url, user_agent)


@settings(max_examples=500, database=None)
@given(st.text(max_size=40))
def test_any_attribute_value(value: str) -> None:
    for quoted in (f'"{value}"', f"'{value}'", value):
        assert_same_as_lxml(f"<head><meta name={quoted} content=x><link href={quoted}></head>")


@settings(max_examples=500, database=None)
@given(st.text(max_size=60))
def test_any_text_after_a_head_tag(text: str) -> None:
    assert_same_as_lxml(f"<head>{text}")
