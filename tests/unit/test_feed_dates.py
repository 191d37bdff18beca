"""RSS pubDates as real feeds write them, from the bytes of a feed to the lastmod findings.

``rss_pubdates.xml`` lists one item per variant; each names 2017-01-05 12:34:50 UTC (or that
day), and each page answers with that instant as its Last-Modified.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sitemapaudit.checks.lastmod import listed_lastmod
from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import FetchOutcome, UrlFacts
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import UrlRecord
from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import UrlEntry

from ..sitemap.support import fixture

INSTANT = datetime(2017, 1, 5, 12, 34, 50, tzinfo=UTC)
PREFIX = "https://www.example.com/"

# Read, and no finding.
READ = [
    "rfc822",
    "single-digit-day",
    "no-seconds",
    "no-weekday",
    "wrong-weekday",
    "lowercase",
    "full-names",
    "zone-est",
    "zone-pdt",
    "zone-ut",
    "zone-utc",
    "zone-z",
    "zone-military",
    "offset-zero",
    "offset",
    "offset-colon",
    "offset-comment",
    "javascript",
    "two-digit-year",
]
# A W3C Datetime instead of an RFC 822 date: lastmod_invalid, and read for the other checks.
READ_BUT_INVALID = ["iso-datetime", "iso-date"]
# The instant is in doubt, or there is none: lastmod_invalid, and nothing else is concluded.
UNREAD = [
    "no-zone",
    "zone-cet",
    "zone-gmt-plus-hours",
    "three-digit-year",
    "no-time",
    "no-such-day",
    "trailing-text",
    "iso-without-zone",
    "garbage",
    "empty",
]


def entries() -> dict[str, UrlEntry]:
    reader = SitemapReader(fixture("rss_pubdates.xml"))
    read = {
        entry.loc.removeprefix(PREFIX): entry for entry in reader if isinstance(entry, UrlEntry)
    }
    assert reader.problems == []
    return read


ENTRIES = entries()


def record(entry: UrlEntry) -> UrlRecord:
    config = AuditConfig.from_settings({"SITEMAPAUDIT_LASTMOD_TOLERANCE": 60})
    facts = UrlFacts(
        url=entry.loc,
        sitemaps=[f"{PREFIX}feed.xml"],
        lastmod=entry.lastmod,
        lastmod_format=entry.lastmod_format,
        times_listed=1,
        rules=[],
        robots_blocked=False,
        outcome=FetchOutcome(
            fetched=True,
            status=200,
            final_url=entry.loc,
            last_modified="Thu, 05 Jan 2017 12:34:50 GMT",
            date="Sat, 01 Jun 2024 12:00:00 GMT",
        ),
    )
    return RecordBuilder(config, datetime(2024, 6, 1, 12, tzinfo=UTC)).url_record(facts)


def lastmod_findings(entry: UrlEntry) -> list[str]:
    return [code for code in record(entry).issues if code.startswith("lastmod_")]


def test_the_fixture_holds_every_variant_once() -> None:
    assert sorted(ENTRIES) == sorted(READ + READ_BUT_INVALID + UNREAD)
    assert {entry.lastmod_format for entry in ENTRIES.values()} == {"rfc822"}


@pytest.mark.parametrize("name", READ)
def test_variants_with_a_clear_meaning_are_read(name: str) -> None:
    entry = ENTRIES[name]
    parsed = listed_lastmod(entry.lastmod, entry.lastmod_format)
    assert parsed is not None
    expected = INSTANT.replace(second=0) if name == "no-seconds" else INSTANT
    assert parsed.value == expected
    assert lastmod_findings(entry) == []


@pytest.mark.parametrize("name", READ_BUT_INVALID)
def test_a_w3c_datetime_is_reported_and_still_compared(name: str) -> None:
    entry = ENTRIES[name]
    parsed = listed_lastmod(entry.lastmod, entry.lastmod_format)
    assert parsed is not None
    assert parsed.value == (
        INSTANT if not parsed.date_only else INSTANT.replace(hour=0, minute=0, second=0)
    )
    built = record(entry)
    assert lastmod_findings(entry) == ["lastmod_invalid"]
    assert built.errors == [
        f"lastmod_invalid: pubDate {entry.lastmod!r} is not an RFC 822 date: it is a W3C "
        "Datetime (ISO 8601); RSS 2.0 dates are RFC 822 (it is read as such for the other "
        "lastmod checks)"
    ]


@pytest.mark.parametrize("name", UNREAD)
def test_a_pubdate_without_a_sure_instant_is_invalid(name: str) -> None:
    entry = ENTRIES[name]
    assert listed_lastmod(entry.lastmod, entry.lastmod_format) is None
    assert lastmod_findings(entry) == ["lastmod_invalid"]
    (error,) = record(entry).errors
    assert error.startswith(f"lastmod_invalid: pubDate {entry.lastmod!r} is not an RFC 822 date: ")


def test_the_reason_is_given() -> None:
    errors = {name: record(ENTRIES[name]).errors[0].rpartition(": ")[2] for name in UNREAD}
    assert errors["no-zone"] == "it has no time zone"
    assert errors["no-time"] == "it has no time of day"
    assert errors["zone-cet"].startswith("'CET' is not a time zone RFC 822 defines")
    assert errors["three-digit-year"] == "the year '117' has neither four digits nor two"
    assert errors["no-such-day"] == "that day or time does not exist"
    assert errors["empty"] == "it is empty"


# -- Atom: <updated> is an RFC 3339 date-time (RFC 4287, section 3.3) ----------------------------


def atom_entry(updated: str) -> UrlEntry:
    body = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        f'<link href="{PREFIX}entry"/><updated>{updated}</updated></entry></feed>'
    ).encode()
    reader = SitemapReader(body)
    (entry,) = (entry for entry in reader if isinstance(entry, UrlEntry))
    assert reader.problems == []
    return entry


def atom_errors(updated: str) -> list[str]:
    return [error for error in record(atom_entry(updated)).errors if error.startswith("lastmod_")]


@pytest.mark.parametrize(
    "updated",
    ["2017-01-05T12:34:50Z", "2017-01-05T13:34:50+01:00", "2017-01-05T12:34:50.25Z"],
)
def test_an_rfc_3339_atom_date_is_read_without_a_finding(updated: str) -> None:
    entry = atom_entry(updated)
    parsed = listed_lastmod(entry.lastmod, entry.lastmod_format)
    assert parsed is not None
    assert parsed.value.replace(microsecond=0) == INSTANT
    assert lastmod_findings(entry) == []


@pytest.mark.parametrize(
    ("updated", "why"),
    [
        ("2017-01-05", "it is a date without a time of day"),
        ("2017-01", "it is a date without a time of day"),
        ("2017-01-05T12:34Z", "its time has no seconds"),
    ],
)
def test_an_atom_date_that_is_no_date_time_is_reported_and_still_compared(
    updated: str, why: str
) -> None:
    entry = atom_entry(updated)
    assert listed_lastmod(entry.lastmod, entry.lastmod_format) is not None
    assert lastmod_findings(entry) == ["lastmod_invalid"]
    assert atom_errors(updated) == [
        f"lastmod_invalid: updated {updated!r} is not an RFC 3339 date-time, as Atom requires: "
        f"{why} (it is still read for the other lastmod checks)"
    ]


@pytest.mark.parametrize(
    ("updated", "why"),
    [
        ("2017-01-05T12:34:50", "it has no time zone offset or Z, so its instant is unknown"),
        ("2017-01-05 12:34:50Z", "'T' must separate the date and the time"),
        ("2017-01-05t12:34:50z", "'T' and 'Z' must be uppercase"),
        ("2017-02-30T12:34:50Z", "that day or time does not exist"),
        ("Thu, 05 Jan 2017 12:34:50 GMT", "it is not of the form 2003-12-13T18:30:02Z"),
        ("", "it is empty"),
    ],
)
def test_an_atom_date_without_a_sure_instant_is_invalid(updated: str, why: str) -> None:
    entry = atom_entry(updated)
    assert listed_lastmod(entry.lastmod, entry.lastmod_format) is None
    assert lastmod_findings(entry) == ["lastmod_invalid"]
    (error,) = atom_errors(updated)
    assert error == (
        f"lastmod_invalid: updated {updated!r} is not an RFC 3339 date-time, as Atom requires: "
        f"{why}"
    )
    assert "XSD" not in error
