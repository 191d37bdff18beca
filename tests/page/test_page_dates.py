"""Tests of sitemapaudit.page.dates: strict W3C lastmods, RSS and HTTP dates, comparisons."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapaudit.page.dates import (
    Lastmod,
    earliest_instant,
    lastmod_delta,
    lastmod_matches,
    parse_http_date,
    parse_pubdate,
    parse_rfc822_date,
    parse_w3c_datetime,
    rfc822_date_problem,
    w3c_refusal,
)


def utc(year: int, month: int, day: int, *time: int) -> datetime:
    hour, minute, second, microsecond = (*time, 0, 0, 0, 0)[:4]
    return datetime(year, month, day, hour, minute, second, microsecond, tzinfo=UTC)


# Expectations of crawler-commons AbstractSiteMapTest, as transcribed in the shared corpus
# (expected.json "_lastmod_parsing_cases"), for the forms that are valid W3C Datetime.
CRAWLER_COMMONS_W3C = {
    "2014": (utc(2014, 1, 1), True),
    "2014-06": (utc(2014, 6, 1), True),
    "2014-06-03": (utc(2014, 6, 3), True),
    "2014-06-03T10:30+00:00": (utc(2014, 6, 3, 10, 30), False),
    "2014-06-03T10:30:45+00:00": (utc(2014, 6, 3, 10, 30, 45), False),
    "2014-06-03T10:30:45-05:00": (utc(2014, 6, 3, 15, 30, 45), False),
    "2014-06-03T10:30:45.82+00:00": (utc(2014, 6, 3, 10, 30, 45, 820000), False),
    "1997": (utc(1997, 1, 1), True),
    "1997-07": (utc(1997, 7, 1), True),
    "1997-07-16T19:20+01:00": (utc(1997, 7, 16, 18, 20), False),
}


@pytest.mark.parametrize(("text", "expected"), CRAWLER_COMMONS_W3C.items())
def test_crawler_commons_cases(text: str, expected: tuple[datetime, bool]) -> None:
    parsed = parse_w3c_datetime(text)
    assert parsed is not None
    assert (parsed.value, parsed.date_only) == expected
    assert parsed.value.tzinfo is UTC


@pytest.mark.parametrize(
    ("text", "precision"),
    [("2014", "year"), ("2014-06", "month"), ("2014-06-03", "day"), ("2014-06-03T10:30Z", "time")],
)
def test_precision(text: str, precision: str) -> None:
    parsed = parse_w3c_datetime(text)
    assert parsed is not None
    assert parsed.precision == precision


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2004-12-23T18:00:15Z", utc(2004, 12, 23, 18, 0, 15)),
        ("2004-12-23T18:00:15.123Z", utc(2004, 12, 23, 18, 0, 15, 123000)),
        ("2004-12-23T18:00:15.123456789+00:00", utc(2004, 12, 23, 18, 0, 15, 123456)),
        ("2004-12-23T18:00:15.5-00:30", utc(2004, 12, 23, 18, 30, 15, 500000)),
        ("2004-12-23T23:30:00-05:00", utc(2004, 12, 24, 4, 30)),
        ("2004-12-24T01:00:00+14:00", utc(2004, 12, 23, 11, 0)),
        ("  2004-12-23T18:00Z\n", utc(2004, 12, 23, 18, 0)),
        ("\t2004-12-23 ", utc(2004, 12, 23)),
        ("2000-02-29", utc(2000, 2, 29)),
        ("2004-12-23T00:00:00Z", utc(2004, 12, 23)),
        ("2004-12-23T23:59:59Z", utc(2004, 12, 23, 23, 59, 59)),
        ("2004-12-23T24:00:00Z", utc(2004, 12, 24)),
        ("2004-12-31T24:00:00.000-05:00", utc(2005, 1, 1, 5)),
        ("2004-02-28T24:00:00+01:00", utc(2004, 2, 28, 23)),
        ("2004-12-23T10:00:00-14:00", utc(2004, 12, 24, 0)),
        ("2004-12-23T10:00:00+13:59", utc(2004, 12, 22, 20, 1)),
    ],
)
def test_valid_w3c(text: str, expected: datetime) -> None:
    parsed = parse_w3c_datetime(text)
    assert parsed is not None
    assert parsed.value == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "blah",
        "null",
        "2004-12-23 18:00:15",
        "2004-12-23T18:00:15",
        "2004-12-23T18:00",
        "2004-12-23T18Z",
        "20041223",
        "20041223T180015Z",
        "2004-1-23",
        "2004-12-3",
        "04-12-23",
        "2004-13",
        "2004-00",
        "2004-12-00",
        "2004-02-30",
        "2001-02-29",
        "2004-04-31",
        "2004-12-23T24:00Z",
        "2004-12-23T24:00:01Z",
        "2004-12-23T24:01:00Z",
        "2004-12-23T24:00:00.5Z",
        "2004-12-23T25:00:00Z",
        "2004-12-23T18:60:00Z",
        "2004-12-23T18:00:60Z",
        "2004-12-23T18:00:15.Z",
        "2004-12-23T18:00:15+0100",
        "2004-12-23T18:00:15+01",
        "2004-12-23T18:00:15+24:00",
        "2004-12-23T18:00:15+15:00",
        "2004-12-23T18:00:15+14:01",
        "2004-12-23T18:00:15+14:30",
        "2004-12-23T18:00:15-14:01",
        "2004-12-23T18:00:15-23:59",
        "2004-12-23T24:00:00+15:00",
        "2004-12-23T18:00:15+01:60",
        "2004-12-23T18:00:15 Z",
        "2004-12-23t18:00:15z",
        "2004-12-23T18:00:15Zjunk",
        "x2004-12-23",
        "2004-12-23x",
        "2004-12-23T",
        "0000-01-01",
        "+2004-12-23",
        "\uff12\uff10\uff10\uff14-12-23",
        "Thu, 05 Jan 2017 12:34:50 GMT",
        "2004-12-23T18:00:15.123Z\x00",
    ],
)
def test_invalid_w3c(text: str) -> None:
    assert parse_w3c_datetime(text) is None


def test_w3c_out_of_range_after_utc_conversion() -> None:
    assert parse_w3c_datetime("0001-01-01T00:00:00+01:00") is None
    assert parse_w3c_datetime("9999-12-31T23:59:59-01:00") is None


@settings(max_examples=500, database=None)
@given(st.text())
def test_w3c_never_raises(text: str) -> None:
    parsed = parse_w3c_datetime(text)
    if parsed is not None:
        assert parsed.value.utcoffset() == timedelta(0)


@settings(max_examples=300, database=None)
@given(
    st.from_regex(
        r"\A[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,12})?)?"
        r"(Z|[+-][0-9]{2}:[0-9]{2}))?)?)?\Z"
    )
)
def test_w3c_never_raises_on_near_valid_text(text: str) -> None:
    parse_w3c_datetime(text)


@settings(max_examples=200, database=None)
@given(
    st.datetimes(
        min_value=datetime(2, 1, 1),
        max_value=datetime(9998, 12, 31),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-5)), timezone(timedelta(hours=5, minutes=30))]
        ),
    )
)
def test_w3c_round_trip(moment: datetime) -> None:
    moment = moment.replace(microsecond=0)
    parsed = parse_w3c_datetime(moment.isoformat())
    assert parsed is not None
    assert parsed.value == moment
    assert not parsed.date_only


# --- RFC 822 and HTTP dates ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thu, 05 Jan 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 13:34:51 +0100", utc(2017, 1, 5, 12, 34, 51)),
        ("05 Jan 2017 11:34:52 -0100", utc(2017, 1, 5, 12, 34, 52)),
        ("05 Jan 17 12:34:53 GMT", utc(2017, 1, 5, 12, 34, 53)),
        ("Thu, 05 Jan 17 12:34:54 GMT", utc(2017, 1, 5, 12, 34, 54)),
        ("Thu, 05 Jan 2017 07:34:50 EST", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34:50 -0000", utc(2017, 1, 5, 12, 34, 50)),
        ("  Thu, 05 Jan 2017 12:34:50 GMT  ", utc(2017, 1, 5, 12, 34, 50)),
        # What RFC 822 allows: one-digit day, no seconds, no day name, names in any case.
        ("Thu, 5 Jan 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34 GMT", utc(2017, 1, 5, 12, 34)),
        ("thu, 05 JAN 2017 12:34:50 gmt", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34:50 UT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34:50 Z", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34:50 z", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 04:34:50 PST", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 05:34:50 PDT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 06:34:50 CDT", utc(2017, 1, 5, 11, 34, 50)),
        ("Thu, 05 Jan 2017 2:34:50 -1000", utc(2017, 1, 5, 12, 34, 50)),
        # Military zones other than Z count as -0000 (RFC 5322 4.3): the time is UTC.
        ("Thu, 05 Jan 2017 12:34:50 A", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34:50 y", utc(2017, 1, 5, 12, 34, 50)),
        # Two-digit years as RFC 5322 4.3 reads them.
        ("05 Jan 49 12:34:50 GMT", utc(2049, 1, 5, 12, 34, 50)),
        ("05 Jan 50 12:34:50 GMT", utc(1950, 1, 5, 12, 34, 50)),
        ("05 Jan 99 12:34:50 GMT", utc(1999, 1, 5, 12, 34, 50)),
        ("05 Jan 00 12:34:50 GMT", utc(2000, 1, 5, 12, 34, 50)),
        # A comment after the zone.
        ("Thu, 05 Jan 2017 13:34:50 +0100 (CET)", utc(2017, 1, 5, 12, 34, 50)),
        # Variants outside RFC 822 whose meaning is as clear.
        ("Mon, 05 Jan 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thursday, 05 January 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thurs, 05 Sept 2017 12:34:50 GMT", utc(2017, 9, 5, 12, 34, 50)),
        ("Thu,05 Jan 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu 05 Jan 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05-Jan-2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("Jan 05 2017 12:34:50 GMT", utc(2017, 1, 5, 12, 34, 50)),
        ("January 5, 2017 04:34 PST", utc(2017, 1, 5, 12, 34)),
        ("Thu, 05 Jan 2017 12:34:50 UTC", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 12:34:50 +00:00", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 13:34:50 +01:00", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 07:04:50 -05:30", utc(2017, 1, 5, 12, 34, 50)),
        ("Thu, 05 Jan 2017 13:34:50 GMT+0100", utc(2017, 1, 5, 12, 34, 50)),
        (
            "Thu Jan 05 2017 13:34:50 GMT+0100 (Central European Standard Time)",
            utc(2017, 1, 5, 12, 34, 50),
        ),
    ],
)
def test_rfc822(text: str, expected: datetime) -> None:
    parsed = parse_rfc822_date(text)
    assert parsed == expected
    assert parsed is not None
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "incorrect",
        "",
        "2017-01-05T12:34:50Z",
        "Thu, 31 Feb 2017 12:34:50 GMT",
        "Thu, 05 Jan 2017 25:34:50 GMT",
        "Thu, 05 Jan 2017 12:34:50 +9999",
        "Thu, 30 Feb 2017 12:34:50 GMT",
        "Thu, 05 Jan 2017 12:34:60 GMT",
        "Thu, 05 Jan 2017 24:00:00 GMT",
        "Thu, 00 Jan 2017 12:34:50 GMT",
        "Thu, 05 Jan 0000 12:34:50 GMT",
        "yesterday",
        "1483619690",
        "Thu, 05 Jan 2017 12:34:50 GMT yesterday",
        "Thu, 05 Jan 2017 12.34.50 GMT",
        "Thu, 05 Jan 2017 12:34:50.123 GMT",
        "Thu, 2017 Jan 05 12:34:50 GMT",
        "Th, 05 Jan 2017 12:34:50 GMT",
        "Thu, 05 Ja 2017 12:34:50 GMT",
    ],
)
def test_rfc822_invalid(text: str) -> None:
    assert parse_rfc822_date(text) is None
    assert rfc822_date_problem(text) is not None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "it is empty"),
        ("   ", "it is empty"),
        ("Thu, 05 Jan 2017 12:34:50", "it has no time zone"),
        ("05 Jan 17 13:34:55", "it has no time zone"),
        ("Thu Jan  5 12:34:50 2017", "it is not a date of the form"),
        ("Thu, 05 Jan 2017", "it has no time of day"),
        ("Thu, 05 Jan 2017 12:34:50 CET", "'CET' is not a time zone RFC 822 defines"),
        ("Thu, 05 Jan 2017 12:34:50 IST", "'IST' is not a time zone RFC 822 defines"),
        ("Thu, 05 Jan 2017 12:34:50 J", "'J' is not a time zone RFC 822 defines"),
        ("Thu, 05 Jan 2017 12:34:50 GMT+1", "'GMT+1' is not a time zone RFC 822 defines"),
        ("Thu, 05 Jan 2017 12:34:50 +01", "'+01' is not a time zone RFC 822 defines"),
        ("Thu, 05 Jan 2017 12:34:50 +0160", "the offset '+0160' is out of range"),
        ("Thu, 05 Jan 2017 12:34:50 -0500 EST", "it has text after the date: 'EST'"),
        ("Thu, 05 Jan 017 12:34:50 GMT", "the year '017' has neither four digits nor two"),
        ("Thu, 05 Jan 20017 12:34:50 GMT", "the year '20017' has neither four digits nor two"),
        ("Thx, 05 Jan 2017 12:34:50 GMT", "'Thx' is not a day name"),
        ("Thu, 05 Foo 2017 12:34:50 GMT", "'Foo' is not a month name"),
        ("Thu, 31 Feb 2017 12:34:50 GMT", "that day or time does not exist"),
        ("2017-01-05T12:34:50Z", "it is a W3C Datetime (ISO 8601); RSS 2.0 dates are RFC 822"),
        ("2017-01-05", "it is a W3C Datetime (ISO 8601)"),
    ],
)
def test_rfc822_problem_says_what_is_wrong(text: str, problem: str) -> None:
    said = rfc822_date_problem(text)
    assert said is not None
    assert said.startswith(problem)
    assert parse_rfc822_date(text) is None


def test_rfc822_problem_is_none_for_a_date() -> None:
    assert rfc822_date_problem("Thu, 05 Jan 2017 12:34:50 GMT") is None


def test_pubdate_reads_rfc822_and_else_a_w3c_datetime() -> None:
    rfc = parse_pubdate("Thu, 05 Jan 2017 13:34:50 +0100")
    assert rfc == Lastmod(utc(2017, 1, 5, 12, 34, 50), date_only=False, precision="time")
    assert parse_pubdate("2017-01-05T13:34:50+01:00") == rfc
    assert parse_pubdate("2017-01-05") == Lastmod(utc(2017, 1, 5), date_only=True)
    assert parse_pubdate("Thu, 05 Jan 2017 12:34:50") is None
    assert parse_pubdate("2017-01-05 12:34:50") is None


@pytest.mark.parametrize(
    "text",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 -0000",
        "Sun, 06 Nov 1994 09:49:37 +0100",
    ],
)
def test_http_date_forms(text: str) -> None:
    parsed = parse_http_date(text)
    assert parsed == utc(1994, 11, 6, 8, 49, 37)
    assert parsed is not None
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 UT",
        "sun, 06 nov 1994 08:49:37 gmt",
        "  Sun, 06 Nov 1994 08:49:37 GMT  ",
    ],
)
def test_http_date_in_utc_by_another_name(text: str) -> None:
    assert parse_http_date(text) == utc(1994, 11, 6, 8, 49, 37)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "0",
        "Sun, 06 Nov 1994",
        "Sun, 27 Oct 2024 03:30:00 GMT+0200",
        "Sun, 27 Oct 2024 10:30:00 JST",
        "Sun, 27 Oct 2024 10:30:00 CET",
        "Sun, 27 Oct 2024 10:30:00 EST",
        "Sun, 27 Oct 2024 10:30:00",
        "Sunday, 27-Oct-24 10:30:00",
        "Sun, 27 Oct 2024 10:30:00 GMT (CET)",
        "Sun Oct 27 10:30:00 2024 CET",
        "2024-10-27T10:30:00Z",
    ],
)
def test_http_date_invalid(text: str) -> None:
    assert parse_http_date(text) is None


@settings(max_examples=300, database=None)
@given(st.text())
def test_email_dates_never_raise(text: str) -> None:
    for parsed in (parse_http_date(text), parse_rfc822_date(text)):
        assert parsed is None or parsed.tzinfo is UTC


# --- comparing a lastmod with Last-Modified -----------------------------------------------


def lastmod(text: str) -> Lastmod:
    parsed = parse_w3c_datetime(text)
    assert parsed is not None
    return parsed


def test_delta_sign_and_size() -> None:
    assert lastmod_delta(lastmod("2024-03-10T12:00:00Z"), utc(2024, 3, 10, 12, 0, 30)) == 30.0
    assert lastmod_delta(lastmod("2024-03-10T12:00:00Z"), utc(2024, 3, 10, 11, 59)) == -60.0
    assert lastmod_delta(lastmod("2024-03-10"), utc(2024, 3, 10, 1)) == 3600.0


def test_delta_reads_naive_as_utc() -> None:
    assert lastmod_delta(lastmod("2024-03-10T12:00:00Z"), datetime(2024, 3, 10, 12, 0, 5)) == 5.0


def test_same_instant_in_another_time_zone_matches() -> None:
    entry = lastmod("2024-03-10T18:30:00+01:00")
    header = parse_http_date("Sun, 10 Mar 2024 17:30:00 GMT")
    assert header is not None
    assert lastmod_delta(entry, header) == 0.0
    assert lastmod_matches(entry, header, tolerance_s=0)
    other_zone = datetime(2024, 3, 10, 12, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert lastmod_matches(entry, other_zone, tolerance_s=0)


def test_tolerance() -> None:
    entry = lastmod("2024-03-10T12:00:00Z")
    assert lastmod_matches(entry, utc(2024, 3, 10, 12, 0, 59), tolerance_s=60)
    assert lastmod_matches(entry, utc(2024, 3, 10, 11, 59, 0), tolerance_s=60)
    assert not lastmod_matches(entry, utc(2024, 3, 10, 12, 1, 1), tolerance_s=60)
    assert not lastmod_matches(entry, utc(2024, 3, 10, 11, 58, 59), tolerance_s=60)
    fractional = lastmod("2024-03-10T12:00:00.900Z")
    assert lastmod_matches(fractional, utc(2024, 3, 10, 12, 0, 0), tolerance_s=1)


@pytest.mark.parametrize("tolerance", [1e14, 1e300, float("inf")])
def test_a_tolerance_wider_than_all_dates_matches_every_date(tolerance: float) -> None:
    """A huge SITEMAPAUDIT_LASTMOD_TOLERANCE (a valid float) means any date matches, not an
    overflow in the middle of an audit."""
    assert lastmod_matches(lastmod("2024-03-10"), utc(1990, 1, 1), tolerance_s=tolerance)
    assert lastmod_matches(lastmod("2024-03-10T12:00:00Z"), utc(1990, 1, 1), tolerance_s=tolerance)


def test_date_only_vs_late_in_the_day_in_utc_minus_5() -> None:
    # 22:30 on 10 March in New York (UTC-5) is 03:30 UTC on 11 March.
    entry = lastmod("2024-03-10")
    header = parse_http_date("Mon, 11 Mar 2024 03:30:00 GMT")
    assert header is not None
    assert lastmod_matches(entry, header, tolerance_s=0)


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (utc(2024, 3, 9, 9, 59, 59), False),
        (utc(2024, 3, 9, 10, 0, 0), True),  # 00:00 on the 10th at UTC+14
        (utc(2024, 3, 10, 0, 0, 0), True),
        (utc(2024, 3, 10, 23, 59, 59), True),
        (utc(2024, 3, 11, 11, 59, 59), True),  # 23:59:59 on the 10th at UTC-12
        (utc(2024, 3, 11, 12, 0, 0), False),
        (utc(2024, 3, 12, 13, 0, 0), False),
    ],
)
def test_date_only_window(moment: datetime, expected: bool) -> None:
    assert lastmod_matches(lastmod("2024-03-10"), moment, tolerance_s=0) is expected


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (utc(2024, 3, 9, 8, 59, 59), False),
        (utc(2024, 3, 9, 9, 0, 0), True),  # an hour before 00:00 on the 10th at UTC+14
        (utc(2024, 3, 11, 12, 59, 0), True),  # 59 minutes after the 10th ends at UTC-12
        (utc(2024, 3, 11, 13, 0, 0), False),
        (utc(2024, 3, 20), False),
    ],
)
def test_date_only_gets_the_tolerance_on_top_of_the_day(moment: datetime, expected: bool) -> None:
    assert lastmod_matches(lastmod("2024-03-10"), moment, tolerance_s=3600) is expected


def test_date_only_tolerance_at_the_ends_of_the_calendar() -> None:
    assert lastmod_matches(lastmod("0001-01-01"), utc(1, 1, 1), tolerance_s=3600)
    assert lastmod_matches(lastmod("9999-12-31"), utc(9999, 12, 31, 23), tolerance_s=3600)
    assert not lastmod_matches(lastmod("9999-12-30"), utc(9999, 12, 31, 23), tolerance_s=3600)


@pytest.mark.parametrize(
    ("text", "moment", "expected"),
    [
        ("2024-02", utc(2024, 2, 29, 23), True),
        ("2024-02", utc(2024, 3, 1, 11), True),
        ("2024-02", utc(2024, 3, 1, 12), False),
        ("2024-02", utc(2024, 1, 31, 10), True),
        ("2024-02", utc(2024, 1, 31, 9), False),
        ("2024-12", utc(2025, 1, 1, 11), True),
        ("2024", utc(2024, 7, 1), True),
        ("2024", utc(2025, 1, 1, 11, 59), True),
        ("2024", utc(2025, 1, 2), False),
        ("2024", utc(2023, 12, 31, 9), False),
    ],
)
def test_month_and_year_windows(text: str, moment: datetime, expected: bool) -> None:
    assert lastmod_matches(lastmod(text), moment, tolerance_s=0) is expected


def test_date_only_at_the_end_of_the_calendar() -> None:
    assert lastmod_matches(lastmod("9999"), utc(9999, 12, 31), tolerance_s=0)
    assert lastmod_matches(lastmod("9999-12-31"), utc(9999, 12, 31, 23), tolerance_s=0)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Thu, 05 Jan 2017 12:34:50 GMT updated", "it has text after the date: 'updated'"),
        ("Thu, 05 Jan 2017 12:34:50 +0100 (CET) extra", "it has text after the date: 'extra'"),
        (
            "2017-01-05T12:34:50",
            "it is an ISO 8601 date and time without a time zone; RSS 2.0 dates are RFC 822",
        ),
        (
            "Thu, 05 Jan 2017 12:34:50 +2400",
            "the offset '+2400' is out of range (hours up to 23, minutes up to 59)",
        ),
        ("garbage", "it is not a date of the form Thu, 05 Jan 2017 12:34:50 GMT"),
    ],
)
def test_a_pubdate_that_is_not_read_says_why(text: str, problem: str) -> None:
    assert parse_rfc822_date(text) is None
    assert rfc822_date_problem(text) == problem


def test_the_earliest_instant_of_the_first_day_there_is_has_no_overflow() -> None:
    lastmod = parse_w3c_datetime("0001-01-01")
    assert lastmod is not None
    assert earliest_instant(lastmod) == datetime.min.replace(tzinfo=UTC)


@pytest.mark.parametrize("value", ["-2024-05-01", "12024-05-01", "-0044-03-15T12:00:00Z"])
def test_a_year_w3c_datetime_cannot_write_is_said(value: str) -> None:
    assert parse_w3c_datetime(value) is None
    assert w3c_refusal(value) == ": W3C Datetime writes a year with four digits and no sign"
