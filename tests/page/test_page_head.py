"""Tests of sitemapaudit.page.head: robots metas, canonical and the end of the head."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.crawl.pages import outcome_from_response
from sitemapaudit.facts import FetchOutcome
from sitemapaudit.page.head import HeadEnd, HeadFacts, decode_html, head_end_offset, parse_head
from sitemapaudit.page.scan import scan_head
from sitemapaudit.page.stream import HeadWatcher

URL = "https://example.com/dir/page"


def head(html: str | bytes, url: str = URL, **kwargs: str) -> HeadFacts:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return parse_head(body, url, **kwargs)


# --- head_end_offset ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html><head><title>x</title></head><body>", len(b"<html><head><title>x</title></head>")),
        (b"<HTML><HEAD></HEAD >", len(b"<HTML><HEAD></HEAD >")),
        (b"<head><title>x</title><body class=a>", len(b"<head><title>x</title>")),
        (b"<head><title>x</title><BODY>", len(b"<head><title>x</title>")),
        (b"<head><title>x</title><body/>", len(b"<head><title>x</title>")),
        (b"<head><title>x</title>", None),
        (b"<head><title>x</title></he", None),
        (b"<head><bodyguard>", None),
        (b"", None),
    ],
)
def test_head_end_offset(body: bytes, expected: int | None) -> None:
    assert head_end_offset(body) == expected


def test_head_end_offset_takes_the_first() -> None:
    body = b"<head></head><body><p>x</p></head>"
    assert head_end_offset(body) == len(b"<head></head>")


def test_head_end_offset_is_fast_on_big_bodies() -> None:
    body = b"<html><head>" + b"<meta name=x content=y>" * 200_000
    assert head_end_offset(body) is None
    assert head_end_offset(body + b"</head>") == len(body) + len(b"</head>")


# Where "</head>" or "<body" is text, as the HTML tokenizer reads it: not the end of the head.
HIDDEN_ENDS = [
    b'<title>t</title><script>document.write("</head>");</script>',
    b"<!-- moved the closing </head> tag -->",
    b"<script>var tpl = '<body class=\"x\">';</script>",
    b"<title>Why </head> matters</title>",
    b"<style>/* <body> */</style>",
    b"<noframes></head></noframes>",
    b"<SCRIPT type=module>let a = 1 </head> 2</Script >",
    b"<!-- a -- b </head> --!>",
    b'<meta name="description" content="a </head> b">',
    b"<meta name='description' content='use <body> tag'>",
    b'<meta property="og:title" content = "x </HEAD>" >',
    b'<link rel=preload href="/a" data-x="</head><body>">',
    b'<script data-tpl="</script></head>">var a = 1;</script>',
]


@pytest.mark.parametrize("text", HIDDEN_ENDS)
def test_an_end_of_head_in_text_does_not_end_the_head(text: bytes) -> None:
    body = b"<html><head>" + text + b'<meta name="robots" content="noindex"></head><body>x'
    assert head_end_offset(body) == body.rindex(b"</head><body") + len(b"</head>")
    facts = parse_head(body, URL)
    assert facts.noindex == ("meta:robots",)
    assert facts.head_complete


@pytest.mark.parametrize(
    "body",
    [b"<head><!--></head>", b"<head><!---></head>", b"<head><script src=a.js></script></head>"],
)
def test_empty_comments_and_scripts_end_at_once(body: bytes) -> None:
    assert head_end_offset(body) == len(body)


@pytest.mark.parametrize(
    "body", [b"<head><script>x </head>", b"<head><!-- x </head>", b"<head><title>x </head>"]
)
def test_an_open_comment_or_script_holds_the_rest(body: bytes) -> None:
    assert head_end_offset(body) is None


@pytest.mark.parametrize(
    "body", [b'<head><meta content="x </head>', b"<head><link href='</head><body>"]
)
def test_a_tag_whose_quoted_value_has_not_ended_holds_the_rest(body: bytes) -> None:
    assert head_end_offset(body) is None


def test_an_end_of_head_in_a_quoted_value_cut_by_a_chunk_border() -> None:
    body = (
        b'<html><head><meta name="d" content="a </head> b">'
        b"<meta name=robots content=noindex></head><body>"
    )
    for cut in range(1, len(body)):
        scanner = HeadEnd()
        found = scanner.feed(body[:cut])
        if found is None:
            found = scanner.feed(body[cut:])
        assert found == len(body) - len(b"<body>"), cut


_PIECES = [
    b"<head>",
    b"</head>",
    b"</HEAD >",
    b"<body>",
    b"<body class=a>",
    b"<bodyguard>",
    b"<script>",
    b"</script>",
    b"<script src='x'>",
    b"</ScRiPt>",
    b"<style>",
    b"</style>",
    b"<title>",
    b"</title>",
    b"<!--",
    b"-->",
    b"--!>",
    b"<!-->",
    b"<",
    b">",
    b"x",
    b" ",
    b"</",
    b"-",
    b"<noframes>",
    b"</noframes>",
    b"<meta name=robots content=noindex>",
    b"<div>",
    b"<noscript>",
    b"</p>",
    b"</body>",
    b'<meta content="',
    b"<link href='",
    b'"',
    b"'",
    b"=",
    b" x=",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=30),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=10),
)
def test_chunked_scanning_finds_what_one_scan_finds(pieces: list[bytes], sizes: list[int]) -> None:
    body = b"".join(pieces)
    scanner, found, position, turn = HeadEnd(), None, 0, 0
    while position < len(body) and found is None:
        size = sizes[turn % len(sizes)]
        found = scanner.feed(body[position : position + size])
        position, turn = position + size, turn + 1
    if found is None:
        # More may come that belongs in the head: what ends it is in the next chunk.
        body += b"<p>"
        found = scanner.feed(b"<p>")
    if found is None:  # an element, comment or tag still open takes the rest
        assert head_end_offset(body) in (None, len(body), scanner._dropped)
    else:
        assert found == head_end_offset(body)


def test_chunked_scanning_keeps_little_of_a_long_script() -> None:
    scanner = HeadEnd()
    assert scanner.feed(b"<html><head><script>") is None
    for _ in range(1000):
        assert scanner.feed(b"var x = a < b && c > d; // </head> \n" * 30) is None
        assert len(scanner._pending) <= 16
    assert scanner.feed(b"</script></head>") is None
    assert scanner.feed(b"<body>") is not None


# --- a head that ends early ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (
            "<img src=/p.gif><meta name=robots content=noindex><link rel=canonical href=/c>",
            ("<img>", ("a robots meta", "a canonical link")),
        ),
        ("<div>x</div><meta name=googlebot content=none>", ("<div>", ("a googlebot meta",))),
        (
            "stray text <meta name=robots content=noindex>",
            ("the text 'stray text'", ("a robots meta",)),
        ),
        (
            "<span></span><link rel=alternate hreflang=de href=/de>"
            "<meta http-equiv=refresh content='0;url=/n'>",
            ("<span>", ("hreflang links", "a refresh meta")),
        ),
    ],
)
def test_an_element_that_does_not_belong_ends_the_head(
    head: str, expected: tuple[str, tuple[str, ...]]
) -> None:
    facts = parse_head(f"<html><head><title>t</title>{head}</head><body>x".encode(), URL)
    assert facts.broken == expected
    assert facts.noindex == ()  # what came after it is body content
    assert facts.canonical is None


@pytest.mark.parametrize(
    "html",
    [
        # nothing that matters after the element
        "<html><head><title>t</title><meta name=robots content=noindex><img src=/p></head>",
        # no </head> nor <body>: the body may start anywhere (both tags are optional)
        "<!DOCTYPE html><title>t</title><meta name=robots content=noindex><p>x<meta name=robots>",
        # inside <noscript>, as a browser running scripts reads it: text
        "<html><head><noscript><img src=/p></noscript><meta name=robots content=noindex></head>",
        # a robots meta in the real body
        "<html><head><title>t</title></head><body><img><meta name=robots content=noindex>",
    ],
)
def test_a_head_that_is_not_broken(html: str) -> None:
    assert parse_head(html.encode(), URL).broken is None


# Every start tag but those of base, basefont, bgsound, link, meta, title, noscript, noframes,
# style, script, template (and head and html, ignored there) ends the head in the HTML
# Standard's "in head" insertion mode, as do text and the end tags of body, html and br.
_HEAD_ENDERS = [
    ("<svg></svg>", "<svg>"),
    ("<svg><title>x</title></svg>", "<svg>"),
    ("<math><mi>x</mi></math>", "<math>"),
    ("<my-widget></my-widget>", "<my-widget>"),
    ("<custom></custom>", "<custom>"),
    ("<input type=hidden name=a value=b>", "<input>"),
    ("<object data=/x></object>", "<object>"),
    ("<picture></picture>", "<picture>"),
    ("<video></video>", "<video>"),
    ("<button>b</button>", "<button>"),
    ("<label>l</label>", "<label>"),
    ("<Custom-Element a='>'></Custom-Element>", "<custom-element>"),
    ("<img src=/p.gif>", "<img>"),
    ("<p>x</p>", "<p>"),
    ("<span></span>", "<span>"),
    ("<br>", "<br>"),
    ("<iframe></iframe>", "<iframe>"),
    ("<table></table>", "<table>"),
    ("</br>", "</br>"),
    ("</body>", "</body>"),
]


def _broken_page(element: str) -> bytes:
    return (
        f"<html><head><title>t</title>{element}"
        '<meta name="robots" content="noindex"></head><body>x</body></html>'
    ).encode()


@pytest.mark.parametrize(("element", "name"), _HEAD_ENDERS)
def test_any_element_that_does_not_belong_ends_the_head(element: str, name: str) -> None:
    facts = parse_head(_broken_page(element), URL)
    assert facts.noindex == ()
    assert facts.broken == (name, ("a robots meta",))


@pytest.mark.parametrize(("element", "name"), _HEAD_ENDERS)
def test_the_fast_scanner_leaves_a_head_with_such_an_element_to_the_parser(
    element: str, name: str
) -> None:
    assert scan_head(_broken_page(element).decode()) is None


@pytest.mark.parametrize(("element", "name"), _HEAD_ENDERS)
def test_a_head_only_read_sees_the_same_broken_head(element: str, name: str) -> None:
    body = _broken_page(element).replace(b"<body>x", b"<body>" + b"<p>lorem ipsum</p>" * 5000)
    watcher, received = HeadWatcher(), 0
    while received < len(body) and not watcher.feed(body[received : received + 100]):
        received += 100
    assert received < 1000  # stopped after the head
    assert parse_head(body[: received + 100], URL) == parse_head(body, URL)
    assert parse_head(body, URL).broken == (name, ("a robots meta",))


@pytest.mark.parametrize(
    "element",
    [
        "<base href=/b/>",
        "<basefont>",
        "<bgsound src=/s>",
        "<link rel=stylesheet href=/s.css>",
        "<meta charset=utf-8>",
        "<title>a <b> c</title>",
        "<noscript><img src=/p><div>x</div></noscript>",
        "<noframes><p>x</p></noframes>",
        "<style>p > a {}</style>",
        "<script>if (a < b) document.write('<p>')</script>",
        "<script src=/a.js/><p></script>",
        "<template><div>x</div><template><p></p></template>text</template>",
        "<head><html lang=en>",
        "<!-- <p> --><!DOCTYPE html><?php x ?>",
        " \t\n\r\f",
        "</p></div></template></noscript>",
    ],
)
def test_what_belongs_in_a_head_does_not_end_it(element: str) -> None:
    facts = parse_head(_broken_page(element), URL)
    assert facts.broken is None
    assert facts.noindex == ("meta:robots",)


def test_a_no_break_space_is_text_that_ends_the_head() -> None:
    # HTML's whitespace is tab, line feed, form feed, carriage return and space only.
    facts = parse_head(_broken_page("\n&nbsp; <!-- x -->"), URL)
    assert facts.noindex == ()
    assert facts.broken == ("the text '\\xa0'", ("a robots meta",))
    facts = parse_head(_broken_page("\u00a0"), URL)
    assert facts.broken == ("the text '\\xa0'", ("a robots meta",))


# --- robots metas -------------------------------------------------------------------------


def test_meta_robots_noindex() -> None:
    facts = head('<html><head><meta name="robots" content="noindex"></head><body></body></html>')
    assert facts == HeadFacts(noindex=("meta:robots",), canonical=None, head_complete=True)


def test_meta_googlebot_none_uppercase_tags_and_attributes() -> None:
    facts = head('<HTML><HEAD><META CONTENT="NONE" NAME="GoogleBot"></HEAD>')
    assert facts.noindex == ("meta:googlebot",)


def test_both_sources_listed_once_each() -> None:
    facts = head(
        "<head><meta name=robots content=noindex><meta name=googlebot content=noindex>"
        "<meta name=robots content='noindex, nofollow'></head>"
    )
    assert facts.noindex == ("meta:robots", "meta:googlebot")


def test_nofollow_only_is_not_noindex() -> None:
    assert head("<head><meta name=robots content='nofollow'></head>").noindex == ()
    assert head("<head><meta name=robots content='nofollow, noarchive'></head>").noindex == ()


def test_other_crawlers_metas_do_not_count() -> None:
    html = "<head><meta name=bingbot content=noindex><meta name=description content=noindex>"
    assert head(html).noindex == ()
    assert head(html, user_agent="bingbot").noindex == ("meta:bingbot",)


def test_meta_without_content_or_name() -> None:
    assert head("<head><meta name=robots><meta content=noindex></head>").noindex == ()


def test_noindex_in_body_text_does_not_count() -> None:
    facts = head("<html><head><title>noindex</title></head><body><p>noindex none</p></body>")
    assert facts.noindex == ()


def test_noindex_in_a_script_does_not_count() -> None:
    html = (
        '<html><head><script>var m = \'<meta name="robots" content="noindex">\';'
        "document.write(m);</script></head><body></body>"
    )
    assert head(html).noindex == ()


@pytest.mark.parametrize(
    ("start", "closer", "noindex"),
    [
        # In HTML the "/" of a self-closing <script/>, <style/> or <title/> means nothing: its
        # text runs on to its end tag, and a meta before that is text, as browsers read it.
        ('<script src="/a.js"/>', "</script>", False),
        ('<SCRIPT src="/a.js" />', "</script>", False),
        ("<style/>", "</style>", False),
        ("<title/>", "</title>", False),
        ('<script src="/a.js"/></script>', "", True),
        ("<title/>t</title>", "", True),
    ],
)
def test_a_self_closing_script_style_or_title_holds_what_follows(
    start: str, closer: str, noindex: bool
) -> None:
    html = (
        f"<!DOCTYPE html><html><head>{start}<meta name=robots content=noindex>"
        f'<link rel=canonical href="/c">{closer}</head><body>x</body></html>'
    )
    facts = head(html)
    assert facts.noindex == (("meta:robots",) if noindex else ())
    assert (facts.canonical is not None) is noindex
    # With no end tag after it, the element's text runs to the end of the document.
    assert head(f"<html><head>{start}<meta name=robots content=noindex>").noindex == (
        ("meta:robots",) if noindex else ()
    )


def test_meta_in_the_body_does_not_count() -> None:
    html = "<html><head><title>t</title></head><body><meta name=robots content=noindex></body>"
    assert head(html).noindex == ()


def test_meta_after_an_element_that_closes_the_head_does_not_count() -> None:
    html = "<html><head><title>t</title><div>x</div><meta name=robots content=noindex></head>"
    assert head(html).noindex == ()


def test_meta_in_a_comment_or_template_does_not_count() -> None:
    assert head("<head><!-- <meta name=robots content=noindex> --></head>").noindex == ()
    assert head("<head><template><meta name=robots content=noindex></template>").noindex == ()


def test_head_without_head_tags() -> None:
    assert head("<meta name=robots content=noindex><title>x</title>").noindex == ("meta:robots",)


def test_attribute_quoting_and_order() -> None:
    for html in (
        "<head><meta content=noindex name=robots></head>",
        "<head><meta content='noindex' name='robots'></head>",
        '<head><meta\n  content = "noindex"\n  name = "ROBOTS" /></head>',
    ):
        assert head(html).noindex == ("meta:robots",), html


# --- canonical ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ('<link rel="canonical" href="https://example.com/c">', "https://example.com/c"),
        ('<link rel="Canonical" href="/c">', "https://example.com/c"),
        ('<link rel="alternate canonical" href="c">', "https://example.com/dir/c"),
        ("<LINK HREF=//cdn.example.com/c REL=CANONICAL>", "https://cdn.example.com/c"),
        ("<link href='  /c  ' rel='canonical'>", "https://example.com/c"),
        ('<link rel="canonical" href="">', None),
        ('<link rel="canonical">', None),
        ('<link rel="alternate" href="/c">', None),
        ('<link rel="canonicalx" href="/c">', None),
    ],
)
def test_canonical(link: str, expected: str | None) -> None:
    assert head(f"<html><head>{link}</head><body></body>").canonical == expected


def test_first_canonical_wins() -> None:
    html = "<head><link rel=canonical href=/first><link rel=canonical href=/second></head>"
    assert head(html).canonical == "https://example.com/first"


def test_empty_canonical_is_skipped_for_the_next() -> None:
    html = "<head><link rel=canonical href=''><link rel=canonical href=/second></head>"
    assert head(html).canonical == "https://example.com/second"


def test_canonical_honours_base_href() -> None:
    html = '<head><base href="https://other.example/base/"><link rel=canonical href="c"></head>'
    assert head(html).canonical == "https://other.example/base/c"
    relative_base = '<head><base href="/b/"><link rel=canonical href="c"></head>'
    assert head(relative_base).canonical == "https://example.com/b/c"


def test_canonical_in_the_body_does_not_count() -> None:
    assert head("<head></head><body><link rel=canonical href=/c></body>").canonical is None


# --- partial bodies and encodings ---------------------------------------------------------


def test_partial_download_stopped_after_head() -> None:
    body = (
        b"<!DOCTYPE html><html><head><meta name=robots content=noindex>"
        b"<link rel=canonical href=/c></head><body><p>some text that was cut o"
    )
    facts = parse_head(body, URL)
    assert facts == HeadFacts(
        ("meta:robots",),
        "https://example.com/c",
        head_complete=True,
        canonicals=("https://example.com/c",),
    )


def test_partial_download_inside_the_head() -> None:
    facts = parse_head(b"<html><head><meta name=robots content=noindex><link rel=can", URL)
    assert facts.noindex == ("meta:robots",)
    assert not facts.head_complete


def test_body_after_head_end_is_not_parsed() -> None:
    body = b"<head><title>x</title></head><p>x</p><meta name=robots content=noindex>"
    assert parse_head(body, URL).noindex == ()


def test_meta_charset() -> None:
    body = "<head><meta charset='iso-8859-1'><link rel=canonical href='/café'></head>".encode(
        "latin-1"
    )
    assert parse_head(body, URL).canonical == "https://example.com/caf%C3%A9"


def test_http_equiv_charset() -> None:
    body = (
        '<head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
        "<link rel=canonical href='/тест'></head>"
    ).encode("cp1251")
    assert parse_head(body, URL).canonical == "https://example.com/%D1%82%D0%B5%D1%81%D1%82"


@pytest.mark.parametrize(
    ("label", "codec", "text"),
    [
        ("Shift_JIS", "cp932", "\uff5e①"),
        ("x-sjis", "cp932", "\uff5e①"),
        ("windows-31j", "cp932", "\uff5e①"),
        ("gb2312", "gb18030", "丂€"),
        ("GBK", "gb18030", "丂€"),
        ("euc-kr", "cp949", "똠"),
        ("ks_c_5601-1987", "cp949", "똠"),
        ("iso-8859-9", "cp1254", "€ş"),
        ("tis-620", "cp874", "€ก"),
        ("iso-8859-11", "cp874", "€ก"),
        ("big5", "big5hkscs", "丄"),
        ("us-ascii", "cp1252", "€é"),
        ("iso-8859-1", "cp1252", "€é"),
        ("latin-1", "cp1252", "€é"),
        ("koi8-r", "koi8-r", "тест"),
    ],
)
def test_charset_labels_decode_as_browsers_do(label: str, codec: str, text: str) -> None:
    expected = "https://example.com/" + quote(text.encode())
    html = f"<head><link rel=canonical href='/{text}'></head>"
    assert parse_head(html.encode(codec), URL, encoding=label).canonical == expected
    meta = f"<head><meta charset='{label}'><link rel=canonical href='/{text}'></head>"
    assert parse_head(meta.encode(codec), URL).canonical == expected


@pytest.mark.parametrize("label", ["cp500", "utf-32", "utf-7", "x-nonsense"])
def test_a_label_browsers_do_not_know_is_ignored(label: str) -> None:
    """Browsers (and Google's renderer) ignore a charset label the Encoding Standard lacks:
    an EBCDIC page labelled cp500 shows them no robots meta, and a UTF-8 page is read as
    UTF-8 whatever the unknown label."""
    ebcdic = "<head><meta name=robots content=noindex></head>".encode("cp500")
    assert parse_head(ebcdic, URL, encoding=label).noindex == ()
    plain = "<head><link rel=canonical href='/café'></head>".encode()
    assert parse_head(plain, URL, encoding=label).canonical == "https://example.com/caf%C3%A9"


@pytest.mark.parametrize(
    ("label", "codec", "expected_query"),
    [
        ("Shift_JIS", "cp932", "q=%93%FA%96%7B&r=%26%238364%3B"),
        ("windows-1251", "cp1251", "q=%26%2326085%3B%26%2326412%3B&r=%88"),
        ("utf-8", "utf-8", "q=%E6%97%A5%E6%9C%AC&r=%E2%82%AC"),
    ],
)
def test_canonical_query_is_percent_encoded_in_the_page_encoding(
    label: str, codec: str, expected_query: str
) -> None:
    # Characters the page's encoding lacks are written as character references in the HTML.
    html = f"<head><meta charset={label}><link rel=canonical href='/日本?q=日本&r=€#日本'></head>"
    facts = parse_head(html.encode(codec, "xmlcharrefreplace"), URL)
    assert facts.canonical == (
        f"https://example.com/%E6%97%A5%E6%9C%AC?{expected_query}#%E6%97%A5%E6%9C%AC"
    )


def test_canonical_query_of_an_undeclared_windows_1252_page() -> None:
    body = "<head><link rel=canonical href='/café?q=café'></head>".encode("cp1252")
    assert parse_head(body, URL).canonical == "https://example.com/caf%C3%A9?q=caf%E9"


def test_declared_encoding_wins_over_meta() -> None:
    body = "<head><meta charset=utf-8><link rel=canonical href='/é'></head>".encode("latin-1")
    assert parse_head(body, URL, encoding="iso-8859-1").canonical == "https://example.com/%C3%A9"


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16", "utf-16-be"])
def test_bom(codec: str) -> None:
    html = "<head><meta name=robots content=noindex><link rel=canonical href='/ü'></head>"
    body = html.encode(codec)
    if codec == "utf-16-be":
        body = b"\xfe\xff" + body
    facts = parse_head(body, URL)
    assert facts.noindex == ("meta:robots",)
    assert facts.canonical == "https://example.com/%C3%BC"


def test_undeclared_non_utf8_falls_back_to_windows_1252() -> None:
    body = "<head><link rel=canonical href='/café'></head>".encode("cp1252")
    assert parse_head(body, URL).canonical == "https://example.com/caf%C3%A9"


def test_character_cut_at_the_end_of_a_partial_body() -> None:
    body = "<head><link rel=canonical href='/é'><title>€".encode()[:-1]
    assert decode_html(body).endswith("<title>")
    assert parse_head(body, URL).canonical == "https://example.com/%C3%A9"


def test_xhtml_with_xml_declaration() -> None:
    body = (
        b'<?xml version="1.0" encoding="utf-8"?>\n'
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        b'<meta name="robots" content="noindex"/><link rel="canonical" href="/c"/></head></html>'
    )
    assert parse_head(body, URL) == HeadFacts(
        ("meta:robots",), "https://example.com/c", True, canonicals=("https://example.com/c",)
    )


@pytest.mark.parametrize(
    "body", [b"", b"   ", b"\x00\x00\x00", b"\xff\xfe", b"<", b"<html", b"%PDF-1.4\n\x00\xff"]
)
def test_empty_and_junk_bodies(body: bytes) -> None:
    assert parse_head(body, URL).noindex == ()


@settings(max_examples=300, database=None)
@given(st.binary())
def test_parse_head_never_raises_on_bytes(body: bytes) -> None:
    parse_head(body, URL)


@settings(max_examples=300, database=None)
@given(st.text())
def test_parse_head_never_raises_on_text(text: str) -> None:
    parse_head(f"<html><head>{text}</head>".encode("utf-8", "surrogatepass"), URL)


@settings(max_examples=200, database=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<head>",
                "</head>",
                "<body>",
                "<meta name=robots content=noindex>",
                "<link ",
                "rel=canonical ",
                "href=",
                "'",
                '"',
                ">",
                "<base href=",
                "//",
                "<script>",
                "</script>",
                "<!--",
                "-->",
                "\x00",
                "é",
                "<template>",
                "noindex",
                "http://[",
            ]
        )
    )
)
def test_parse_head_never_raises_on_tag_soup(parts: list[str]) -> None:
    parse_head("".join(parts).encode(), URL)


# --- refresh ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<meta http-equiv="refresh" content="0; url=/next">', (0, "https://example.com/next")),
        ("<meta HTTP-EQUIV=Refresh content='5;URL=\"n x\"'>", (5, "https://example.com/dir/n%20x")),
        (
            '<base href="/b/"><meta http-equiv=refresh content="1, x">',
            (1, "https://example.com/b/x"),
        ),
        ('<meta http-equiv="refresh" content="30">', None),
        ('<meta http-equiv="refresh" content="soon; url=/n">', None),
        # Only the first refresh counts, as in a browser, even when it names no URL.
        ('<meta http-equiv=refresh content=9><meta http-equiv=refresh content="0;url=/n">', None),
        ('<meta name=refresh content="0; url=/n">', None),
        # A refresh for browsers without scripts only, which Google's renderer runs.
        ('<noscript><meta http-equiv=refresh content="0; url=/nojs"></noscript>', None),
        (
            '<noscript><meta http-equiv=refresh content="0;url=/a"></noscript>'
            '<meta http-equiv=refresh content="2;url=/b">',
            (2, "https://example.com/b"),
        ),
    ],
)
def test_the_first_refresh_meta(html: str, expected: tuple[int, str] | None) -> None:
    assert head(f"<html><head>{html}</head><body>").refresh == expected


def test_a_robots_meta_inside_noscript_still_counts() -> None:
    html = "<html><head><noscript><meta name=robots content=noindex></noscript></head><body>"
    assert head(html).noindex == ("meta:robots",)


def test_a_base_href_that_is_no_url_does_not_raise() -> None:
    # Found by the tag-soup property above: an unterminated IPv6 host with a non-ASCII tail.
    head = parse_head(
        "<head><base href=http://[é><link rel=canonical href=/a></head>".encode(), URL
    )
    assert head.canonical is not None


# The WHATWG Encoding Standard's labels of UTF-16LE and UTF-16BE: a charset that names them
# decodes a body without a byte order mark in that byte order, as browsers decode it.
@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("utf-16", "utf-16-le"),
        ("UTF-16", "utf-16-le"),
        ("unicode", "utf-16-le"),
        ("ucs-2", "utf-16-le"),
        ("csunicode", "utf-16-le"),
        ("iso-10646-ucs-2", "utf-16-le"),
        ("unicodefeff", "utf-16-le"),
        ("utf-16le", "utf-16-le"),
        ("utf-16be", "utf-16-be"),
        ("unicodefffe", "utf-16-be"),
    ],
)
def test_a_declared_utf_16_label_decodes_a_body_without_a_bom(label: str, codec: str) -> None:
    html = "<head><meta name=robots content=noindex><link rel=canonical href='/ü'></head>"
    facts = parse_head(html.encode(codec), URL, encoding=label)
    assert facts.noindex == ("meta:robots",)
    assert facts.canonical == "https://example.com/%C3%BC"


def test_a_page_declared_utf_16_without_a_bom_is_read_as_browsers_read_it() -> None:
    body = '<html><head><meta name="robots" content="noindex"></head></html>'.encode("utf-16-le")
    outcome = outcome_from_response(
        url=URL,
        status=200,
        headers={"content-type": ["text/html; charset=utf-16"]},
        body=body,
        outcome=FetchOutcome(),
        user_agent="Googlebot",
    )
    assert outcome.noindex == ["meta:robots"]


# --- what follows </head> ---------------------------------------------------------------
# The HTML Standard's "after head" insertion mode puts the elements of a head that come after
# </head> (before anything else) back in the head, where browsers and Google's renderer see
# them.


@pytest.mark.parametrize(
    "between",
    [
        b"<meta name=robots content=noindex>",
        b"\n  <!-- injected -->\n<META NAME='robots' CONTENT='noindex'>\n",
        b'<script>var t = "<body>";</script><meta name="robots" content="noindex">',
        b"</div><title>again</title><meta name=robots content=noindex>",
        b'<link rel="stylesheet" href="/a.css"><meta name=robots content=noindex >',
    ],
)
def test_a_robots_meta_right_after_the_head_counts(between: bytes) -> None:
    body = b"<html><head><title>t</title></head>" + between + b"<body><p>x</p></body></html>"
    assert head_end_offset(body) == body.rindex(b"<body>")
    facts = parse_head(body, URL)
    assert facts.noindex == ("meta:robots",)
    assert facts.head_complete
    assert facts.broken is None


@pytest.mark.parametrize(
    "between",
    [
        b"<div></div>",
        b"text",
        b"<noscript></noscript>",
        b"</body>",
        b"<p>",
        b"&nbsp;",
    ],
)
def test_a_robots_meta_after_what_starts_the_body_does_not_count(between: bytes) -> None:
    body = (
        b"<html><head><title>t</title></head>"
        + between
        + b"<meta name=robots content=noindex><body>x"
    )
    assert head_end_offset(body) == len(b"<html><head><title>t</title></head>")
    assert parse_head(body, URL).noindex == ()


def test_a_canonical_right_after_the_head_counts_after_the_heads_own() -> None:
    body = (
        b"<html><head><link rel=canonical href=/first></head>\n"
        b"<link rel=canonical href=/second>\n<body>"
    )
    facts = parse_head(body, URL)
    assert facts.canonical == "https://example.com/first"
    assert facts.canonicals == ("https://example.com/first", "https://example.com/second")


def test_after_a_head_broken_early_a_meta_after_its_end_tag_is_in_the_body() -> None:
    body = b"<html><head><div>x</div></head><meta name=robots content=noindex><body>"
    facts = parse_head(body, URL)
    assert facts.noindex == ()


def test_a_head_only_read_waits_for_what_follows_the_head() -> None:
    scanner = HeadEnd()
    assert scanner.feed(b"<html><head><title>t</title></head>") is None
    assert scanner.feed(b"\n<meta name=robots content=noindex>\n<bo") is None
    assert scanner.feed(b"dy>") == len(
        b"<html><head><title>t</title></head>\n<meta name=robots content=noindex>\n"
    )


def test_a_document_that_ends_after_its_head_has_a_complete_head() -> None:
    body = b"<html><head></head><meta name=robots content=noindex>"
    assert head_end_offset(body) == len(body)
    facts = parse_head(body, URL)
    assert facts.noindex == ("meta:robots",)
    assert facts.head_complete
