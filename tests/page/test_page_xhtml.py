"""Tests of sitemapaudit.page.xhtml: the head of a page served as XHTML, read as XML."""

from __future__ import annotations

import gzip
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.crawl.pages import page_head_bytes
from sitemapaudit.page import page_facts
from sitemapaudit.page.head import HeadFacts
from sitemapaudit.page.stream import HeadWatcher
from sitemapaudit.page.xhtml import (
    XhtmlRoot,
    XmlHeadEnd,
    parse_xhtml_head,
    xml_head_end_offset,
)

URL = "https://example.com/dir/page"
NS = 'xmlns="http://www.w3.org/1999/xhtml"'
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
DOCTYPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"'
    ' "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
)
NOINDEX = '<meta name="robots" content="noindex"/>'
CANONICAL = '<link rel="canonical" href="/c"/>'


def page(head: str, body: str = "<p>text</p>", *, prolog: str = DECLARATION + DOCTYPE) -> str:
    return f"{prolog}<html {NS}><head>{head}</head><body>{body}</body></html>"


def xhtml(text: str | bytes, **kwargs: str) -> HeadFacts:
    body = text.encode() if isinstance(text, str) else text
    facts = parse_xhtml_head(body, URL, **kwargs)
    assert facts is not None
    return facts


def _error_at(detail: str, message: str, text: str, offending: str) -> None:
    """Check an XML error's detail: its message, and its line and column (from 1) at the
    ``offending`` text of ``text`` (libxml2 points at it or a few characters after it)."""
    match = re.fullmatch(r"an XML error at line (\d+), column (\d+): (.*)", detail)
    assert match is not None, detail
    assert match[3] == message
    line = text.split("\n")[int(match[1]) - 1]
    assert offending in line
    assert 0 <= int(match[2]) - (line.index(offending) + 1) <= len(offending), detail


def served(content_type: str, text: str | bytes) -> tuple[tuple[str, ...], str | None]:
    body = text.encode() if isinstance(text, str) else text
    facts = page_facts(URL, {"content-type": [content_type]}, body)
    return facts.noindex, facts.canonical


# --- what an XML parser reads differently from the HTML one -------------------------------


def test_a_self_closing_script_ends_where_it_is_written() -> None:
    # The HTML tokenizer reads "<script/>" as a start tag whose text runs to </script>.
    text = page(f'<title>t</title><script src="/a.js"/>{NOINDEX}', "<script>go()</script>")
    assert xhtml(text).noindex == ("meta:robots",)
    assert served("application/xhtml+xml", text)[0] == ("meta:robots",)


def test_a_self_closing_title_ends_where_it_is_written() -> None:
    assert xhtml(page(f"<title/>{CANONICAL}")).canonical == "https://example.com/c"


def test_an_end_of_head_in_a_cdata_section_does_not_end_the_head() -> None:
    script = '<script>//<![CDATA[\nvar s = "</script></head><body>";\n//]]></script>'
    text = page(f"<title>t</title>{script}{NOINDEX}")
    assert xml_head_end_offset(text.encode()) == text.rindex("</head>") + len("</head>")
    facts = xhtml(text)
    assert facts.noindex == ("meta:robots",)
    assert facts.head_complete
    assert facts.broken is None


def test_a_well_formed_page() -> None:
    text = page(
        "<title>t</title><base href='/base/'/>"
        '<meta name="googlebot" content="noindex, follow"/>'
        '<link rel="canonical" href="c"/><meta http-equiv="refresh" content="5; url=next"/>'
    )
    assert xhtml(text) == HeadFacts(
        ("meta:googlebot",),
        "https://example.com/base/c",
        True,
        canonicals=("https://example.com/base/c",),
        refresh=(5, "https://example.com/base/next"),
    )


def test_prefixed_elements_count_by_their_namespace() -> None:
    text = (
        '<h:html xmlns:h="http://www.w3.org/1999/xhtml"><h:head><h:title>t</h:title>'
        '<h:meta name="robots" content="noindex"/></h:head><h:body/></h:html>'
    )
    assert xhtml(text).noindex == ("meta:robots",)
    assert xml_head_end_offset(text.encode()) == text.index("<h:body")


@pytest.mark.parametrize(
    "element",
    [
        '<META name="robots" content="noindex"/>',  # XML names are case-sensitive
        '<x:meta xmlns:x="urn:other" name="robots" content="noindex"/>',
        '<meta xmlns="" name="robots" content="noindex"/>',
        '<template><meta name="robots" content="noindex"/></template>',
        '<!-- <meta name="robots" content="noindex"/> -->',
        '<script><![CDATA[<meta name="robots" content="noindex"/>]]></script>',
    ],
)
def test_what_is_not_an_xhtml_meta_of_the_head(element: str) -> None:
    facts = xhtml(page(f"<title>t</title>{element}"))
    assert facts.noindex == ()
    assert facts.broken is None


def test_a_meta_in_the_body_does_not_count() -> None:
    assert xhtml(page("<title>t</title>", NOINDEX)).noindex == ()


def test_a_refresh_in_noscript_counts() -> None:
    # XML has no scripting-dependent parsing: the meta is an element of the document.
    text = page('<noscript><meta http-equiv="refresh" content="0; url=/x"/></noscript>')
    assert xhtml(text).refresh == (0, "https://example.com/x")


def test_an_undeclared_entity_with_an_xhtml_doctype_is_no_error() -> None:
    text = page(f"<title>a&nbsp;b</title>{NOINDEX}")
    assert xhtml(text).noindex == ("meta:robots",)
    assert xhtml(text).broken is None


# --- documents that are not well-formed -----------------------------------------------------


def test_an_unescaped_ampersand_stops_the_document() -> None:
    text = page(f'<title>t</title><link rel="canonical" href="/p?a=1&b=2"/>{NOINDEX}')
    facts = xhtml(text)
    assert facts.noindex == ()
    assert facts.canonical is None
    assert facts.broken is not None
    _error_at(facts.broken[0], "EntityRef: expecting ';'", text, "&b")
    assert facts.broken[1] == ("a canonical link", "a robots meta")


def test_signals_before_the_error_still_count() -> None:
    text = page(f"{NOINDEX}<title>Fish & chips</title>{CANONICAL}")
    facts = xhtml(text)
    assert facts.noindex == ("meta:robots",)
    assert facts.canonical is None
    assert facts.broken is not None
    assert facts.broken[0].startswith("an XML error at line 3, column ")
    assert facts.broken[1] == ("a canonical link",)


def test_an_error_in_text_held_back_by_the_parser_is_found() -> None:
    # No ";" follows the "&": a push parser waits for one until the document ends.
    facts = xhtml(page(f"<title>a&b</title>{NOINDEX}"))
    assert facts.broken is not None
    assert facts.broken[1] == ("a robots meta",)


def test_an_error_with_nothing_after_it_is_not_reported() -> None:
    facts = xhtml(page(f'{NOINDEX}<meta charset="utf-8"><title>t</title>'))
    assert facts.noindex == ("meta:robots",)
    assert facts.broken is None


def test_unclosed_metas_nest_and_still_count() -> None:
    # The error comes at </head>; the robots meta is a child of the charset meta, in the head.
    facts = xhtml(page('<meta charset="utf-8"><meta name="robots" content="noindex">'))
    assert facts.noindex == ("meta:robots",)
    assert facts.broken is None


def test_an_undeclared_entity_without_a_doctype_stops_the_document() -> None:
    text = page(f"<title>a&nbsp;b</title>{NOINDEX}", prolog="<!DOCTYPE html>")
    facts = xhtml(text)
    assert facts.noindex == ()
    assert facts.broken is not None
    _error_at(facts.broken[0], "Entity 'nbsp' not defined", text, "&nbsp;")
    assert facts.broken[1] == ("a robots meta",)


def test_whitespace_before_the_xml_declaration_loses_everything() -> None:
    facts = xhtml(page(f"{NOINDEX}{CANONICAL}", prolog="\n" + DECLARATION))
    assert facts.noindex == ()
    assert facts.broken is not None
    assert facts.broken[0].startswith("an XML error at line 2, column ")
    assert facts.broken[1] == ("a robots meta", "a canonical link")


@pytest.mark.parametrize(
    "head",
    [f"<title>caf\xe9</title>{NOINDEX}", f'<link rel="canonical" href="/caf\xe9"/>{NOINDEX}'],
)
def test_bytes_that_do_not_decode_stop_the_document(head: str) -> None:
    text = page(head)
    facts = xhtml(text.encode("latin-1"))
    assert facts.noindex == ()
    assert facts.canonical is None
    column = len(text.split("\n")[2].split("\xe9")[0]) + 1
    assert facts.broken is not None
    assert facts.broken[0] == f"bytes that are not utf-8 at line 3, column {column}"
    assert facts.broken[1][-1] == "a robots meta"


def test_a_root_outside_the_xhtml_namespace() -> None:
    text = f"<html><head><title>t</title>{NOINDEX}</head><body/></html>"
    facts = xhtml(text)
    assert facts.noindex == ()
    assert facts.broken == (
        "the root element <html>, outside the XHTML namespace",
        ("a robots meta",),
    )


def test_a_body_cut_inside_a_tag_is_not_an_error() -> None:
    text = page("<title>t</title>" + NOINDEX + CANONICAL)
    cut = text[: text.index(CANONICAL) + 20].encode()
    facts = xhtml(cut)
    assert facts.noindex == ("meta:robots",)
    assert facts.broken is None
    assert not facts.head_complete


# --- encodings --------------------------------------------------------------------------------


def test_the_content_type_charset_wins_over_the_xml_declaration() -> None:
    text = page("<link rel='canonical' href='/café'/>").replace("UTF-8", "windows-1252")
    body = text.encode("utf-8")
    assert xhtml(body).canonical == "https://example.com/caf%C3%83%C2%A9"  # "cafÃ©"
    assert xhtml(body, encoding="utf-8").canonical == "https://example.com/caf%C3%A9"
    assert xhtml(text.encode("cp1252")).canonical == "https://example.com/caf%C3%A9"


def test_a_meta_charset_does_not_count() -> None:
    text = page('<meta charset="windows-1252"/><link rel="canonical" href="/café"/>')
    assert xhtml(text.encode()).canonical == "https://example.com/caf%C3%A9"


def test_utf16_with_a_bom() -> None:
    text = page(f"{NOINDEX}{CANONICAL}", prolog="")
    assert xhtml(text.encode("utf-16")).noindex == ("meta:robots",)


# --- which responses are read as XHTML --------------------------------------------------------


@pytest.mark.parametrize("content_type", ["application/xml", "text/xml; charset=utf-8"])
def test_xml_types_with_an_xhtml_root_are_read(content_type: str) -> None:
    text = page(f"<title/>{NOINDEX}{CANONICAL}")
    assert served(content_type, text) == (("meta:robots",), "https://example.com/c")


@pytest.mark.parametrize(
    "text",
    [
        f"<html><head>{NOINDEX}</head></html>",
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{NOINDEX}</urlset>',
        f"  {DECLARATION}<html {NS}><head>{NOINDEX}</head></html>",
        "",
    ],
)
def test_xml_types_without_an_xhtml_root_are_not_pages(text: str) -> None:
    assert parse_xhtml_head(text.encode(), URL, xhtml=False) is None
    assert served("application/xml", text) == ((), None)


# --- the end of the head, as bytes arrive -----------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html><head></head>", 19),
        (b"<html><head><body>", 12),
        (b"<h:head></h:head>", 17),
        (b"<head></HEAD></head>", 20),
        (b"<head></header></head>", 22),
        (b"<head><bodyguard/><body>", 18),
        (b"<head><!-- </head> --></head>", 29),
        (b"<head><?pi </head> ?></head>", 28),
        (b"<head><![CDATA[</head>]]></head>", 32),
        (b'<!DOCTYPE html [<!ENTITY e "</head>">]><head></head>', 52),
        (b"<!DOCTYPE html><head></head >", 29),
        (b"<head><!-- </head>", None),
        (b"<head><![CDATA[ </head>", None),
        (b"<head><?pi </head>", None),
        (b'<!DOCTYPE html [<!ENTITY e "</head>">', None),
        (b"<head></hea", None),
    ],
)
def test_xml_head_end_offset(body: bytes, expected: int | None) -> None:
    assert xml_head_end_offset(body) == expected


_PIECES = [
    b"<head>",
    b"</head>",
    b"<body>",
    b"<h:body ",
    b"<!--",
    b"-->",
    b"<![CDATA[",
    b"]]>",
    b"<?",
    b"?>",
    b"<!DOCTYPE x [",
    b"]>",
    b"<",
    b">",
    b"x",
    b"-",
    b"]",
    b"?",
    NOINDEX.encode(),
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=30),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=10),
)
def test_chunked_scanning_finds_what_one_scan_finds(pieces: list[bytes], sizes: list[int]) -> None:
    body = b"".join(pieces)
    scanner, found, position, turn = XmlHeadEnd(), None, 0, 0
    while position < len(body) and found is None:
        size = sizes[turn % len(sizes)]
        found = scanner.feed(body[position : position + size])
        position, turn = position + size, turn + 1
    assert found == xml_head_end_offset(body)


def test_the_root_is_known_from_the_first_bytes() -> None:
    root = XhtmlRoot()
    assert root.feed(DECLARATION.encode()) is None
    assert root.feed(f"<html {NS}".encode()) is None
    assert root.feed(b"><head>") is True
    for text, known in [
        ("<h:html xmlns:h='http://www.w3.org/1999/xhtml'><h:head>", True),
        ("<html><head>", False),
        ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url>', False),
        (" <?xml version='1.0'?><html>", False),
    ]:
        assert XhtmlRoot().feed(text.encode()) is known, text


FILLER = "<p>" + "lorem ipsum " * 100 + "</p>"


def _stop(watcher: HeadWatcher, body: bytes, size: int = 512) -> int:
    """How many bytes ``watcher`` takes before it says stop."""
    for start in range(0, len(body), size):
        if watcher.feed(body[start : start + size]):
            return start + size
    return len(body)


def test_the_head_watcher_reads_an_xhtml_head_by_xml_rules() -> None:
    script = '<script>//<![CDATA[\nvar s = "</script></head><body>";\n//]]></script>'
    padding = '<meta name="x" content="y"/>' * 100
    text = page(f"<title/>{script}{padding}{NOINDEX}")
    body = (text.replace("<p>text</p>", FILLER * 200)).encode()
    end = text.rindex("</head>")
    assert end < _stop(HeadWatcher(xml=True), body) < end + 1024
    # By the HTML tokenizer's rules, <title/> opens a title that runs to the end of the body.
    assert _stop(HeadWatcher(), body) == len(body)


def test_the_head_watcher_stops_an_xml_response_that_is_no_page_at_once() -> None:
    body = b'<?xml version="1.0"?><urlset>' + b"<url><loc>x</loc></url>" * 10_000
    assert _stop(HeadWatcher(xml=True, xhtml_root=True), body) == 512
    text = page(NOINDEX, FILLER * 200)
    assert _stop(HeadWatcher(xml=True, xhtml_root=True), text.encode()) < 1024


def test_a_gzip_xhtml_page_is_decompressed_to_its_xml_head_end() -> None:
    script = '<script>//<![CDATA[\nvar s = "</head>";\n//]]></script>'
    text = page(f"{script}{NOINDEX}", FILLER * 2000)
    head, problem = page_head_bytes(gzip.compress(text.encode()), coding="gzip", xml=True)
    assert problem is None
    assert head.startswith(text[: text.index("</head>") + 7].encode())
    facts = page_facts(URL, {"content-type": ["application/xhtml+xml"]}, head)
    assert facts.noindex == ("meta:robots",)


# --- robustness -------------------------------------------------------------------------------


@settings(max_examples=300, database=None)
@given(st.binary())
def test_never_raises_on_bytes(body: bytes) -> None:
    parse_xhtml_head(body, URL)
    parse_xhtml_head(body, URL, xhtml=False)


_TAG_SOUP = [
    f"<html {NS}>",
    "<head>",
    "</head>",
    "<body>",
    NOINDEX,
    CANONICAL,
    "<meta name='robots' content='noindex'>",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<?pi ",
    "?>",
    "&",
    "&amp;",
    "&nbsp;",
    "<",
    ">",
    "é",
    "\r",
    "\n",
    "\x00",
    "\ufffe",
    DOCTYPE,
    DECLARATION,
]


@settings(max_examples=300, database=None)
@given(st.lists(st.sampled_from(_TAG_SOUP), max_size=25), st.sampled_from([None, "utf-8", "x"]))
def test_never_raises_on_tag_soup(parts: list[str], encoding: str | None) -> None:
    body = "".join(parts).encode("utf-8", "surrogatepass")
    facts = parse_xhtml_head(body, URL, encoding=encoding)
    assert facts is not None
    if facts.broken is not None:
        assert facts.broken[1]
