"""The fast path of loc_problems never accepts what the full check rejects."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.urls import _COMMON_URL_RE, _valid_loc

PIECES = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTP://",
        "a",
        "b-",
        "-",
        ".",
        "1",
        "x",
        "/",
        "?",
        "#",
        "%",
        "@",
        ":",
        "80",
        "0",
        "255",
        "256",
        "01",
        "65535",
        "65536",
        "99999",
        "[",
        "]",
        " ",
        "\\",
        "é",
        "_",
        "~",
        "&",
        "=",
        "com",
        "..",
        "\t",
    ]
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=12).map("".join))
def test_fast_path_is_a_subset_of_the_full_check(candidate: str) -> None:
    if _COMMON_URL_RE.fullmatch(candidate):
        assert _valid_loc(candidate), candidate


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.integers(0, 300).map(str), min_size=1, max_size=5).map(".".join),
    st.one_of(st.just(""), st.integers(0, 99999).map(lambda port: f":{port}")),
)
def test_fast_path_ip_hosts_and_ports_are_valid(host: str, port: str) -> None:
    candidate = f"http://{host}{port}/p"
    if _COMMON_URL_RE.fullmatch(candidate):
        assert _valid_loc(candidate), candidate


def test_common_urls_take_the_fast_path() -> None:
    for url in [
        "https://example.com/",
        "https://www.example.co.uk/a/b?c=d&e=f#g",
        "http://localhost/x",
        "https://e.com",
        "https://e.com:8080/",
        "http://127.0.0.1:65535/p/1",
        "https://1.2.3.4/",
    ]:
        assert _COMMON_URL_RE.fullmatch(url), url
    for url in [
        "https://e.com/%zz",
        "https://u@e.com/",
        "https://e.com:65536/",
        "https://1.2.3.256/",
        "https://01.2.3.4/",
    ]:
        assert not _COMMON_URL_RE.fullmatch(url), url
