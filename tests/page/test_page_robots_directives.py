"""Tests of sitemapaudit.page.robots_directives: meta robots content and X-Robots-Tag."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.page.robots_directives import (
    directives_noindex,
    unavailable_after,
    x_robots_tag_noindex,
)


@pytest.mark.parametrize(
    "content",
    [
        "noindex",
        "NOINDEX",
        "NoIndex",
        "none",
        "NONE",
        " noindex ",
        "noindex,nofollow",
        "nofollow, noindex",
        "index, noindex",
        "max-snippet:-1, noindex",
        "noarchive,  NONE ,nosnippet",
        "googlebot: noindex",
    ],
)
def test_meta_content_noindex(content: str) -> None:
    assert directives_noindex(content)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "nofollow",
        "NOFOLLOW",
        "noarchive",
        "nofollow, noarchive, nosnippet",
        "index, follow",
        "all",
        "no index",
        "noindexing",
        "max-image-preview:large",
        "unavailable_after: 2030-01-01",
        "bingbot: noindex",
    ],
)
def test_meta_content_not_noindex(content: str) -> None:
    assert not directives_noindex(content)


def test_meta_content_user_agent_scope() -> None:
    assert directives_noindex("bingbot: noindex", user_agent="bingbot")
    assert not directives_noindex("googlebot: noindex", user_agent="bingbot")


@pytest.mark.parametrize(
    "values",
    [
        ["noindex"],
        ["NONE"],
        ["noindex, nofollow"],
        ["googlebot: noindex"],
        ["GoogleBot: NoIndex"],
        ["googlebot: none"],
        ["nofollow", "noindex"],
        ["bingbot: noindex", "googlebot: noindex"],
        ["bingbot: nofollow, googlebot: noindex"],
        ["unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"],
    ],
)
def test_x_robots_tag_noindex(values: list[str]) -> None:
    assert x_robots_tag_noindex(values)


@pytest.mark.parametrize(
    "values",
    [
        [],
        [""],
        ["nofollow"],
        ["noarchive, nosnippet"],
        ["bingbot: noindex"],
        ["otherbot: noindex, nofollow"],
        ["otherbot: noindex", "googlebot: nofollow"],
        ["googlebot-news: noindex"],
        ["360Spider: noindex"],
        ["googlebot: nofollow, 360Spider: noindex"],
        ["googlebot: nofollow, 1-bot: noindex"],
        ["googlebot-news/1.0: noindex"],
        ["unavailable_after: 25/06/2010 15:00:00 GMT"],
        ["unavailable_after: 25 Jun 2010 15:00:00 PST"],
        ["unavailable_after: Friday, 25-Jun-2010 15:00:00 PST"],
        ["max-snippet: 20, max-image-preview: large"],
    ],
)
def test_x_robots_tag_not_noindex(values: list[str]) -> None:
    assert not x_robots_tag_noindex(values)


def test_x_robots_tag_scope_stays_within_one_header_value() -> None:
    assert x_robots_tag_noindex(["bingbot: nofollow", "noindex"])
    assert not x_robots_tag_noindex(["bingbot: nofollow, noindex"])


def test_x_robots_tag_user_agent_starting_with_a_digit() -> None:
    assert x_robots_tag_noindex(["360Spider: noindex"], user_agent="360spider")
    assert x_robots_tag_noindex(["360Spider: nofollow, googlebot: noindex"])


def test_x_robots_tag_time_after_a_comma_is_no_user_agent() -> None:
    assert x_robots_tag_noindex(["unavailable_after: 25 Jun 2010, 15:00:00 GMT, noindex"])


def test_x_robots_tag_other_user_agent() -> None:
    assert x_robots_tag_noindex(["bingbot: noindex"], user_agent="BingBot")
    assert not x_robots_tag_noindex(["googlebot: noindex"], user_agent="bingbot")
    assert x_robots_tag_noindex(["noindex"], user_agent="bingbot")


def test_x_robots_tag_user_agent_with_a_version_is_that_user_agent() -> None:
    assert x_robots_tag_noindex(["Googlebot/2.1: noindex"])
    assert x_robots_tag_noindex(["googlebot/2.1 : none"], user_agent="Googlebot/2.1")
    assert not x_robots_tag_noindex(["Googlebot/2.1: noindex"], user_agent="bingbot")
    assert not x_robots_tag_noindex(["googlebot: nofollow, bingbot/2.0: noindex"])
    assert x_robots_tag_noindex(["googlebot: nofollow, bingbot/2.0: noindex"], user_agent="bingbot")


def test_unavailable_after_for_a_user_agent_with_a_version() -> None:
    value = "Googlebot/2.1: unavailable_after: 2010-06-25"
    assert unavailable_after(value) == datetime(2010, 6, 26, 12, tzinfo=UTC)
    assert unavailable_after(value, user_agent="bingbot") is None


@settings(max_examples=500, database=None)
@given(st.text(), st.lists(st.text()))
def test_never_raise(content: str, values: list[str]) -> None:
    directives_noindex(content)
    x_robots_tag_noindex(values)


# -- unavailable_after --------------------------------------------------------------------------
def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("unavailable_after: 25 Jun 2010 15:00:00 PST", _utc("2010-06-25T23:00:00")),
        ("unavailable_after: Sat, 25 Jun 2010 15:00:00 GMT", _utc("2010-06-25T15:00:00")),
        ("unavailable_after: Saturday, 25-Jun-10 15:00:00 GMT", _utc("2010-06-25T15:00:00")),
        ("UNAVAILABLE_AFTER : 2010-06-25T15:00:00+02:00", _utc("2010-06-25T13:00:00")),
        ("unavailable_after: 2010-06-25T15:00:00", _utc("2010-06-25T15:00:00")),
        # A day in an unknown zone is over everywhere at 12:00 UTC of the next day.
        ("unavailable_after: 2010-06-25", _utc("2010-06-26T12:00:00")),
        ("noindex, unavailable_after: 2010-06-25T00:00:00Z, nofollow", _utc("2010-06-25T00:00:00")),
        ("googlebot: unavailable_after: 2010-06-25T00:00:00Z", _utc("2010-06-25T00:00:00")),
        # The earliest of several dates.
        (
            "unavailable_after: 2030-01-01T00:00:00Z, unavailable_after: 2011-01-01T00:00:00Z",
            _utc("2011-01-01T00:00:00"),
        ),
    ],
)
def test_unavailable_after_dates(value: str, expected: datetime) -> None:
    assert unavailable_after(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "noindex",
        "unavailable_after:",
        "unavailable_after: soon",
        "unavailable_after: 2010-13-45",
        "otherbot: unavailable_after: 2010-06-25T00:00:00Z",
        "max-snippet: 2010",
    ],
)
def test_unavailable_after_absent_unreadable_or_for_another_bot(value: str) -> None:
    assert unavailable_after(value) is None


def test_unavailable_after_is_not_noindex_by_itself() -> None:
    assert not directives_noindex("unavailable_after: 2010-06-25")
    assert not x_robots_tag_noindex(["unavailable_after: 2010-06-25"])


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_unavailable_after_never_raises(value: str) -> None:
    when = unavailable_after("unavailable_after: " + value)
    assert when is None or when.tzinfo is not None
