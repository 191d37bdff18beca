"""The newest lastmod of a sitemap, and what the lastmod its index gives it says."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from sitemapaudit.page.dates import parse_pubdate, parse_w3c_datetime
from sitemapaudit.validation.freshness import NewestLastmod, index_lastmod_problems

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def newest(values: list[tuple[str, str]], now: datetime = NOW) -> str | None:
    tracker = NewestLastmod(now)
    for value, fmt in values:
        tracker.add(value, fmt)
    found = tracker.newest()
    return None if found is None else found[1]


def w3c(*values: str) -> list[tuple[str, str]]:
    return [(value, "w3c") for value in values]


def test_one_shape_is_compared_as_written() -> None:
    assert newest(w3c("2024-01-02T00:00:00Z", "2024-03-01T10:00:00Z", "2024-02-01T00:00:00Z")) == (
        "2024-03-01T10:00:00Z"
    )
    assert newest(w3c("2023-12-31", "2024-01-05", "2024-01-04")) == "2024-01-05"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (w3c("2024-05-01", "2024-05-31", "2024-05-32", "2024-13-01"), "2024-05-31"),
        (w3c("2024-05-01", "2024-02-30"), "2024-05-01"),
        (w3c("2024-05-01T10:00:00Z", "2024-05-01T25:00:00Z"), "2024-05-01T10:00:00Z"),
        (
            w3c("2024-05-01T10:00:00+02:00", "2024-05-01T10:61:00+02:00"),
            "2024-05-01T10:00:00+02:00",
        ),
        # The XSD's 24:00:00 is the end of that day: valid.
        (w3c("2024-05-01T10:00:00Z", "2024-05-01T24:00:00Z"), "2024-05-01T24:00:00Z"),
    ],
)
def test_an_impossible_date_does_not_hide_the_newest_valid_one(
    values: list[tuple[str, str]], expected: str
) -> None:
    assert newest(values) == expected


def test_offsets_are_compared_as_instants() -> None:
    # 09:00+02:00 is 07:00Z; 08:00Z is later.
    assert newest(w3c("2024-03-01T09:00:00+02:00", "2024-03-01T08:00:00Z")) == (
        "2024-03-01T08:00:00Z"
    )
    assert newest(w3c("2024-03-01T09:00:00-02:00", "2024-03-01T08:00:00Z")) == (
        "2024-03-01T09:00:00-02:00"
    )


def test_a_date_counts_from_the_earliest_instant_it_names() -> None:
    # 2024-03-02 starts at 2024-03-01T10:00Z in UTC+14: before 11:00Z.
    assert newest(w3c("2024-03-02", "2024-03-01T11:00:00Z")) == "2024-03-01T11:00:00Z"
    assert newest(w3c("2024-03-02", "2024-03-01T09:00:00Z")) == "2024-03-02"


def test_values_after_now_do_not_count() -> None:
    values = w3c(
        "2024-06-01T12:00:01Z",
        "2024-06-01T13:30:00+01:00",  # 12:30Z
        "2024-06-03",  # starts 2024-06-02T10:00Z
        "2999-01-01T00:00:00.5Z",
        "2024-05-01T00:00:00Z",
    )
    assert newest(values) == "2024-05-01T00:00:00Z"
    # At the bound itself: now is not after now.
    assert newest(w3c("2024-06-01T14:00:00+02:00")) == "2024-06-01T14:00:00+02:00"
    # The latest calendar day anywhere (UTC+14) is 2024-06-02 at 12:00Z.
    assert newest(w3c("2024-06-02")) == "2024-06-02"


def test_other_forms_and_invalid_values() -> None:
    assert newest(
        w3c("2024-03-01T10:00Z", "2024-03-01T09:00:00.25Z", "not a date", "2024-13-01")
    ) == ("2024-03-01T10:00Z")
    assert newest(w3c("2024", "2023-12")) == "2024"
    assert newest(
        [("Fri, 01 Mar 2024 10:00:00 GMT", "rfc822"), ("Thu, 29 Feb 2024 10:00:00 GMT", "rfc822")]
    ) == ("Fri, 01 Mar 2024 10:00:00 GMT")
    # Not in the shape: parsed (and refused) on its own, never compared as a string.
    assert newest(w3c("2024-05-01", "2024/06/01", "2024-05-01 10:00:00+00:00")) == "2024-05-01"
    assert newest(w3c("nonsense", "2024-02-30T00:00:00Z")) is None
    assert newest([]) is None


def _earliest(value: str, fmt: str) -> datetime | None:
    parsed = parse_pubdate(value) if fmt == "rfc822" else parse_w3c_datetime(value)
    if parsed is None:
        return None
    return parsed.value - timedelta(hours=14) if parsed.date_only else parsed.value


def test_the_fast_path_agrees_with_parsing_every_value() -> None:
    rng = random.Random(7)
    zones = ["Z", "+00:00", "+02:00", "-05:00", "+14:00", "-12:00", "+05:30"]
    for _ in range(200):
        values = []
        for _ in range(rng.randint(1, 30)):
            moment = NOW + timedelta(seconds=rng.randint(-(10**7), 10**6))
            zone = rng.choice(zones)
            if rng.random() < 0.2:
                values.append((f"{moment:%Y-%m-%d}", "w3c"))
                continue
            parsed = parse_w3c_datetime(f"2000-01-01T00:00:00{zone}")
            assert parsed is not None
            offset = datetime(2000, 1, 1) - parsed.value.replace(tzinfo=None)
            values.append((f"{moment + offset:%Y-%m-%dT%H:%M:%S}{zone}", "w3c"))
        expected = [
            (earliest, value)
            for value, fmt in values
            if (earliest := _earliest(value, fmt)) is not None and earliest <= NOW
        ]
        found = newest(values)
        if not expected:
            assert found is None
        else:
            assert found is not None
            assert _earliest(found, "w3c") == max(expected)[0]


@pytest.mark.parametrize(
    ("index_lastmod", "newest_value", "stale"),
    [
        ("2024-03-01T10:00:00Z", "2024-03-01T10:00:00Z", False),
        ("2024-03-01T10:00:00Z", "2024-03-01T11:00:00Z", False),  # within the tolerance
        ("2024-03-01T10:00:00Z", "2024-03-01T11:00:01Z", True),
        ("2024-03-01T12:00:00+02:00", "2024-03-01T11:30:00Z", True),  # 10:00Z
        # A date-only index lastmod may end at 2024-03-02T12:00Z (UTC-12).
        ("2024-03-01", "2024-03-02T13:00:00Z", False),
        ("2024-03-01", "2024-03-02T13:00:01Z", True),
        ("2024-03-01", "2024-03-04", True),
        ("2024-03-01", "2024-03-03", False),
    ],
)
def test_an_index_lastmod_older_than_the_newest_is_stale(
    index_lastmod: str, newest_value: str, stale: bool
) -> None:
    tracker = NewestLastmod(NOW)
    tracker.add(newest_value, "w3c")
    problems = index_lastmod_problems(
        index_lastmod,
        "http://example.com/index.xml",
        tracker.newest(),
        now=NOW,
        tolerance_s=3600.0,
    )
    assert bool(problems) is stale
    if problems:
        (problem,) = problems
        assert problem.code == "index_lastmod_stale"
        assert "http://example.com/index.xml" in problem.message
        assert index_lastmod in problem.message
        assert newest_value in problem.message


def _index_findings(index_lastmod: str) -> list[tuple[str, str]]:
    tracker = NewestLastmod(NOW)
    tracker.add("2024-05-01T00:00:00Z", "w3c")
    problems = index_lastmod_problems(
        index_lastmod, "http://example.com/i.xml", tracker.newest(), now=NOW, tolerance_s=0
    )
    return [(p.code, p.message) for p in problems]


def test_an_index_lastmod_that_is_no_date_is_invalid() -> None:
    given = "the index http://example.com/i.xml gives lastmod"
    assert _index_findings("2024-05-01T10:00:00") == [
        (
            "lastmod_invalid",
            f"{given} '2024-05-01T10:00:00' for this sitemap: not a valid date: a time needs a "
            "time zone (Z or +hh:mm) in W3C Datetime, or its instant is unknown (the XSD "
            "accepts it without one)",
        )
    ]
    assert [code for code, _ in _index_findings("yesterday")] == ["lastmod_invalid"]
    assert [code for code, _ in _index_findings("2024-05-01+02:00")] == ["lastmod_invalid"]


def test_an_index_lastmod_after_the_audit_is_in_the_future() -> None:
    assert _index_findings("2024-06-01T12:00:01Z") == [
        (
            "lastmod_future",
            "the index http://example.com/i.xml gives lastmod '2024-06-01T12:00:01Z' for this "
            "sitemap, after 2024-06-01T12:00:00Z, when the audit read the index",
        )
    ]
    # A date names its day in any time zone: 2024-06-02 has begun in UTC+14.
    assert _index_findings("2024-06-02") == []
    assert [code for code, _ in _index_findings("2024-06-03")] == ["lastmod_future"]


def test_nothing_to_compare_is_no_finding() -> None:
    assert index_lastmod_problems("2024-01-01", "i", None, now=NOW, tolerance_s=0) == []
    assert _index_findings("2024-05-01T00:00:00Z") == []


def test_lastmods_on_the_first_day_of_the_year_1_are_read_without_an_overflow() -> None:
    # A date-only value there starts "in UTC+14", before the earliest instant Python has.
    tracker = NewestLastmod(NOW)
    tracker.add("0001-01-01", "w3c")
    newest = tracker.newest()
    assert newest is not None
    assert newest[1] == "0001-01-01"
    tracker.add("2024-05-01", "w3c")
    problems = index_lastmod_problems(
        "0001-01-01", "http://example.com/i.xml", tracker.newest(), now=NOW, tolerance_s=0
    )
    assert [p.code for p in problems] == ["index_lastmod_stale"]
