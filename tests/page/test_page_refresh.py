"""Tests of sitemapaudit.page.refresh: refresh values read as the HTML standard reads them."""

from __future__ import annotations

import pytest

from sitemapaudit.page.refresh import Refresh, parse_refresh


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("5", Refresh(5, None)),
        ("  5  ", Refresh(5, None)),
        ("0; url=/next", Refresh(0, "/next")),
        ("0;URL=/next", Refresh(0, "/next")),
        ("0; url = /next", Refresh(0, "/next")),
        ("3,URL='/a b'", Refresh(3, "/a b")),
        ('3; url="/a" trailing', Refresh(3, "/a")),
        ("3; url='/unclosed", Refresh(3, "/unclosed")),
        ("0 /next", Refresh(0, "/next")),
        ("0; '/quoted'", Refresh(0, "/quoted")),
        ("0; uri=/n", Refresh(0, "uri=/n")),
        ("0; urlish", Refresh(0, "urlish")),
        ("1.5; url=/x", Refresh(1, "/x")),
        (".5; url=/x", Refresh(0, "/x")),
        ("0;", Refresh(0, None)),
        ("0; url=", Refresh(0, None)),
        ("", None),
        ("soon", None),
        ("5x; url=/n", None),
        ("-1; url=/n", None),
        ("\u0665; url=/n", None),  # an Arabic-Indic digit is not an ASCII digit
    ],
)
def test_parse_refresh(value: str, expected: Refresh | None) -> None:
    assert parse_refresh(value) == expected


def test_target_is_absolute_and_trimmed() -> None:
    assert Refresh(0, " /n\t").target("https://e.com/a/b") == "https://e.com/n"
    assert Refresh(0, "x").target("https://e.com/a/b") == "https://e.com/a/x"
    assert Refresh(0, None).target("https://e.com/") is None
