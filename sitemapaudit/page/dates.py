"""Dates a sitemap or a server states: W3C Datetime lastmods, RSS, Atom and HTTP dates.

All parsers return ``None`` for anything they cannot read and never raise; every datetime
returned is timezone-aware and in UTC.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_tz
from typing import Literal

from sitemapaudit.sitemap.records import ASCII_WHITESPACE

Precision = Literal["year", "month", "day", "time"]

_W3C_RE = re.compile(
    r"""
    (?P<year>[0-9]{4})
    (?:-(?P<month>[0-9]{2})
      (?:-(?P<day>[0-9]{2})
        (?:T(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})
          (?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]+))?)?
          (?P<tzd>Z|[+-][0-9]{2}:[0-9]{2})
        )?
      )?
    )?
    """,
    re.VERBOSE,
)

# The UTC offsets in use around the world span -12:00 to +14:00.
EARLIEST_OFFSET = timedelta(hours=14)
LATEST_OFFSET = timedelta(hours=12)

# The sitemap XSDs type lastmod (and news:publication_date) as xsd:date | xsd:dateTime, whose
# time zones run from -14:00 to +14:00 (XML Schema 1.0, 3.2.7.3).
_MAX_XSD_OFFSET = timedelta(hours=14)

# Why a value of those XSD types is no W3C Datetime, for the two forms the XSD accepts and W3C
# Datetime does not.
NO_TIME_ZONE = (
    "a time needs a time zone (Z or +hh:mm) in W3C Datetime, or its instant is unknown "
    "(the XSD accepts it without one)"
)
DATE_WITH_TIME_ZONE = (
    "a date with a time zone is no W3C Datetime form (the XSD accepts it); give the date "
    "alone, or a time with its zone"
)


# A date, and a date with a time zone (an xsd:date form W3C Datetime lacks), for saying why
# one was refused.
_DATE_RE = re.compile(r"\s*[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2})?)?\s*")
_DATE_ZONE_RE = re.compile(
    r"\s*[0-9]{4}-[0-9]{2}-[0-9]{2}(?P<tzd>Z|[+-](?P<hours>[0-9]{2}):(?P<minutes>[0-9]{2}))\s*"
)
# A time of day as W3C Datetime writes it, for saying why one was refused.
_TIME_RE = re.compile(
    r"\s*[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?P<tzd>Z|[+-](?P<hours>[0-9]{2}):(?P<minutes>[0-9]{2}))?\s*"
)


# A date and a time separated by spaces, as SQL and PHP's ``Y-m-d H:i:s`` write them.
_SPACED_TIME_RE = re.compile(r"\s*(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})\s+(?P<time>[0-9]{2}:.*)")
SPACED_TIME = "a time is separated from its date by 'T', not a space"
# A year as XML Schema's date types may write it (more than four digits, or a minus sign for
# a year before year 1), which W3C Datetime does not.
_WIDE_YEAR_RE = re.compile(
    r"(?P<minus>-?)(?P<y>[1-9][0-9]{4,}|[0-9]{4})-[0-9]{2}-[0-9]{2}(?:T.*)?", re.DOTALL
)
WIDE_YEAR = "W3C Datetime writes a year with four digits and no sign"


def wide_year(value: str) -> re.Match[str] | None:
    """The match of a date whose year W3C Datetime cannot write (XML Schema's date types write
    more than four digits, and years before year 1 with a minus sign), else ``None``."""
    match = _WIDE_YEAR_RE.fullmatch(value.strip(ASCII_WHITESPACE))
    return match if match is not None and (match["minus"] or len(match["y"]) > 4) else None


def w3c_refusal(lastmod: str) -> str:
    """Why a value that is no W3C Datetime is refused, when its shape tells: ``": "`` and the
    reason, or ``""``."""
    inner = lastmod.strip(ASCII_WHITESPACE)
    edge = next((c for c in (inner[:1], inner[-1:]) if c.isspace()), None)
    if edge is not None:
        name = unicodedata.name(edge, "space").lower()
        return f": it has a {name} (U+{ord(edge):04X}) around it, which XML Schema does not strip"
    if wide_year(lastmod) is not None:
        return f": {WIDE_YEAR}"
    spaced = _SPACED_TIME_RE.fullmatch(lastmod)
    if spaced is not None:
        written = f"{spaced['date']}T{spaced['time']}"
        if parse_w3c_datetime(written) is not None:
            return f": {SPACED_TIME}"
        more = w3c_refusal(written)
        # Said only when it is all that is wrong, or with what else is.
        return f": {SPACED_TIME}; and {more[2:]}" if more else ""
    dated = _DATE_ZONE_RE.fullmatch(lastmod)
    if dated is not None:
        return _offset_beyond(dated) or f": {DATE_WITH_TIME_ZONE}"
    if _DATE_RE.fullmatch(lastmod):
        return ": no such day"
    time = _TIME_RE.fullmatch(lastmod)
    if time is None:
        return ""
    if time["tzd"] is None:
        return f": {NO_TIME_ZONE}"
    return _offset_beyond(time) or (
        ": no such time, or one outside the range of dates (years 1 to 9999 in UTC)"
    )


def _offset_beyond(match: re.Match[str]) -> str:
    """What is wrong with a time zone offset past the XSD's -14:00..+14:00, or ``""``."""
    if match["hours"] is not None and (int(match["hours"]), int(match["minutes"])) > (14, 0):
        return f": its time zone offset {match['tzd']} is outside -14:00 to +14:00"
    return ""


# An Atom date: an RFC 3339 date-time with an uppercase T and Z (RFC 4287, section 3.3).
_RFC3339_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?P<hour>[0-9]{2}):[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"(?P<tzd>Z|[+-](?P<hours>[0-9]{2}):(?P<minutes>[0-9]{2}))"
)
# A date and a time written some other way, for saying why it is no RFC 3339 date-time.
_LOOSE_DATE_TIME_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?P<sep>[Tt ])[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?P<tzd>[Zz]|[+-][0-9]{2}:[0-9]{2})?"
)


def rfc3339_problem(text: str) -> str | None:
    """Why an Atom date (``updated``) is not the RFC 3339 date-time RFC 4287 (3.3) requires,
    such as ``2003-12-13T18:30:02Z`` or ``2003-12-13T18:30:02.25+01:00``, or ``None``.

    A value :func:`parse_w3c_datetime` reads (a date alone, a time without seconds) is still
    refused here; what it reads, the lastmod checks use.
    """
    stripped = text.strip(ASCII_WHITESPACE)
    if not stripped:
        return "it is empty"
    readable = parse_w3c_datetime(stripped) is not None
    match = _RFC3339_RE.fullmatch(stripped)
    if match is not None:
        if match["hour"] == "24":
            return "hour 24 is no RFC 3339 time (hours run from 00 to 23)"
        if readable:
            return None
        return _offset_beyond(match)[2:] or "that day or time does not exist"
    if _DATE_RE.fullmatch(stripped):
        return "it is a date without a time of day" + ("" if readable else ", and no such day")
    loose = _LOOSE_DATE_TIME_RE.fullmatch(stripped)
    if loose is None:
        return "it is not of the form 2003-12-13T18:30:02Z"
    if loose["tzd"] is None:
        return "it has no time zone offset or Z, so its instant is unknown"
    if loose["sep"] == " ":
        return "'T' must separate the date and the time"
    if loose["sep"] == "t" or loose["tzd"] == "z":
        return "'T' and 'Z' must be uppercase"
    return "its time has no seconds"


@dataclass(frozen=True, slots=True)
class Lastmod:
    """A parsed W3C Datetime.

    ``value`` is aware and in UTC; a date-only form (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``)
    is read as 00:00 UTC of its first day and has ``date_only`` set. ``precision`` names the
    finest field written: ``"year"``, ``"month"``, ``"day"`` or ``"time"``; it is consulted
    only for date-only values, whose period it sets, and defaults to ``"day"``.
    """

    value: datetime
    date_only: bool
    precision: Precision = "day"


def parse_w3c_datetime(text: str) -> Lastmod | None:
    """Read a strict W3C Datetime (https://www.w3.org/TR/NOTE-datetime).

    Accepted forms: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, ``YYYY-MM-DDThh:mmTZD``,
    ``YYYY-MM-DDThh:mm:ssTZD`` and ``YYYY-MM-DDThh:mm:ss.sTZD`` with any number of fraction
    digits (read to the microsecond), where TZD is ``Z`` or ``+hh:mm``/``-hh:mm`` and is
    required whenever a time is given. Values keep to the ranges of the sitemap XSD's
    ``xsd:dateTime``: a TZD from ``-14:00`` to ``+14:00``, and ``24:00:00`` (with seconds, and
    any fraction zero) as the midnight that ends the day, read as 00:00:00 of the next day.
    Surrounding ASCII whitespace is allowed (a no-break space is not); anything else (a space
    instead of ``T``, basic format ``20041223``, impossible dates, an offset of ``+15:00``,
    lowercase ``t``/``z``) gives ``None``.
    """
    if not isinstance(text, str):
        return None
    match = _W3C_RE.fullmatch(text.strip(ASCII_WHITESPACE))
    if match is None:
        return None
    year = int(match["year"])
    month = int(match["month"] or 1)
    day = int(match["day"] or 1)
    try:
        if match["hour"] is None:
            value = datetime(year, month, day, tzinfo=UTC)
            precision: Precision = "day" if match["day"] else "month" if match["month"] else "year"
            return Lastmod(value=value, date_only=True, precision=precision)
        fraction = (match["fraction"] or "")[:6].ljust(6, "0")
        hour = int(match["hour"])
        end_of_day = hour == 24
        if end_of_day:
            # xsd:dateTime's 24:00:00 ends the day; W3C Datetime's hh stops at 23, and the
            # XSD wants the seconds, so 24:00 without them is refused by both.
            if match["second"] is None or match["minute"] != "00" or match["second"] != "00":
                return None
            if (match["fraction"] or "").strip("0"):
                return None
            hour = 0
        local = datetime(
            year,
            month,
            day,
            hour,
            int(match["minute"]),
            int(match["second"] or 0),
            int(fraction),
            tzinfo=_tz(match["tzd"]),
        )
        if end_of_day:
            local += timedelta(days=1)
        return Lastmod(value=local.astimezone(UTC), date_only=False, precision="time")
    except (ValueError, OverflowError):
        return None


def _tz(tzd: str) -> timezone:
    if tzd == "Z":
        return UTC
    hours, minutes = int(tzd[1:3]), int(tzd[4:6])
    offset = timedelta(hours=hours, minutes=minutes)
    if minutes > 59 or offset > _MAX_XSD_OFFSET:
        raise ValueError(tzd)
    return timezone(-offset if tzd[0] == "-" else offset)


# An RSS pubDate: RFC 822 (section 5), which RSS 2.0 uses with four-digit years preferred,
# written loosely. The pattern takes any candidate for each part; the parts are checked one by
# one afterwards, so that a value that is not a date can be told what is wrong with it.
_RFC822_RE = re.compile(
    r"""
    (?:(?P<weekday>[A-Za-z]+)\b\s*,?\s*)?
    (?:
      (?P<day>[0-9]{1,2})(?:\s+|-)(?P<month>[A-Za-z]+)
      | (?P<month_first>[A-Za-z]+)\s+(?P<day_second>[0-9]{1,2}),?
    )
    (?:\s+|-)(?P<year>[0-9]+)
    (?:
      \s+(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2}))?
      (?:\s*(?P<zone>[A-Za-z]+(?:[+-][0-9:]+)?|[+-][0-9:]+))?
    )?
    (?:\s*\([^()]*\))?
    """,
    re.VERBOSE,
)
# A numeric offset: RFC 822's +hhmm, and the +hh:mm and GMT+hhmm forms of ISO 8601 and of
# JavaScript's Date.toString().
_RFC822_OFFSET_RE = re.compile(r"(?:GMT|UTC|UT)?([+-])([0-9]{2}):?([0-9]{2})", re.IGNORECASE)
# An ISO 8601 date and time without a zone, as feeds write one by mistake.
_ISO_NO_ZONE_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
)
# The zone names of RFC 822 (section 5.1), and UTC.
_RFC822_ZONES = {
    "ut": 0,
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "est": -5,
    "edt": -4,
    "cst": -6,
    "cdt": -5,
    "mst": -7,
    "mdt": -6,
    "pst": -8,
    "pdt": -7,
}
# RFC 822's military zones other than Z: RFC 1123 (5.2.14) found their signs reversed, and
# RFC 5322 (4.3) says to read them as -0000, a time in UTC with no local zone.
_MILITARY_ZONES = frozenset("abcdefghiklmnopqrstuvwxy")
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
# A day or month is named by its English name or any abbreviation of it of three letters or
# more (``Thu``, ``Thurs``, ``Sept``): the first three letters tell every one apart.
_MIN_ABBREVIATION = 3


def _named(word: str, names: tuple[str, ...]) -> int | None:
    """The 1-based position in ``names`` of the name ``word`` abbreviates, or ``None``."""
    word = word.lower()
    if len(word) < _MIN_ABBREVIATION:
        return None
    for number, name in enumerate(names, 1):
        if name.startswith(word):
            return number
    return None


def parse_rfc822_date(text: str) -> datetime | None:
    """Read an RSS ``pubDate`` (RFC 822), e.g. ``Thu, 05 Jan 2017 12:34:50 GMT``.

    Read as RFC 822 (and RFC 5322 for what it left open) has it: names in any case, the day
    name optional, a one- or two-digit day, seconds optional, a two-digit year as RFC 5322
    (4.3) reads it (00-49 are 2000-2049, 50-99 are 1950-1999), a numeric offset (``+0100``)
    or one of RFC 822's zone names (``UT``, ``GMT``, ``Z``, ``EST``, ``PDT``...; ``UTC`` too;
    the other military letters are UTC, RFC 5322 4.3), and a trailing comment (``(CET)``).
    Variants whose meaning is as clear are read too: full day and month names and their
    abbreviations of three letters or more (``Thurs``, ``Sept``), a wrong day name (the date
    decides), the month before the day (``Jan 05 2017``), dashes between day, month and year
    (``05-Jan-2017``), ``+01:00`` and ``GMT+0100`` offsets. Anything that
    leaves the instant in doubt gives ``None``: no time zone, a zone name RFC 822 does not
    define (``CET``, ``IST``: several zones share some), an offset that is not four digits
    (``GMT+1``), a year of three digits or more than four, a date that does not exist, or
    any other text. :func:`rfc822_date_problem` says which.
    """
    parsed = _read_rfc822(text)
    return parsed if isinstance(parsed, datetime) else None


def rfc822_date_problem(text: str) -> str | None:
    """Why ``text`` is not an RSS ``pubDate`` :func:`parse_rfc822_date` reads, or ``None``."""
    parsed = _read_rfc822(text)
    return None if isinstance(parsed, datetime) else parsed


def parse_pubdate(text: str) -> Lastmod | None:
    """An RSS ``pubDate`` as the lastmod checks read it: an RFC 822 date, or a W3C Datetime
    written there instead (its meaning is as clear, but it is not what RSS 2.0 asks for, and
    :func:`rfc822_date_problem` says so)."""
    parsed = parse_rfc822_date(text)
    if parsed is not None:
        return Lastmod(value=parsed, date_only=False, precision="time")
    return parse_w3c_datetime(text)


def _read_rfc822(text: str) -> datetime | str:
    """The instant an RSS ``pubDate`` names, or why it names none."""
    if not isinstance(text, str) or not text.strip():
        return "it is empty"
    stripped = text.strip()
    match = _RFC822_RE.fullmatch(stripped)
    if match is None:
        if parse_w3c_datetime(stripped) is not None:
            return "it is a W3C Datetime (ISO 8601); RSS 2.0 dates are RFC 822"
        if _ISO_NO_ZONE_RE.fullmatch(stripped):
            return "it is an ISO 8601 date and time without a time zone; RSS 2.0 dates are RFC 822"
        prefix = _RFC822_RE.match(stripped)
        if prefix is not None and prefix["zone"] is not None:
            return f"it has text after the date: {stripped[prefix.end() :].strip()!r}"
        return "it is not a date of the form Thu, 05 Jan 2017 12:34:50 GMT"
    weekday = match["weekday"]
    if weekday is not None and _named(weekday, _DAY_NAMES) is None:
        return f"{weekday!r} is not a day name"
    month_word = match["month"] or match["month_first"]
    month = _named(month_word, _MONTH_NAMES)
    if month is None:
        return f"{month_word!r} is not a month name"
    digits = match["year"]
    if len(digits) == 4:
        year = int(digits)
    elif len(digits) == 2:
        year = int(digits) + (2000 if int(digits) < 50 else 1900)
    else:
        return f"the year {digits!r} has neither four digits nor two"
    if match["hour"] is None:
        return "it has no time of day"
    zone = match["zone"]
    if zone is None:
        return "it has no time zone"
    offset = _rfc822_offset(zone)
    if offset is None and _RFC822_OFFSET_RE.fullmatch(zone):
        return f"the offset {zone!r} is out of range (hours up to 23, minutes up to 59)"
    if offset is None:
        return (
            f"{zone!r} is not a time zone RFC 822 defines (UT, GMT, Z, EST, EDT, CST, CDT, "
            "MST, MDT, PST, PDT) nor an offset such as +0100"
        )
    day = int(match["day"] or match["day_second"])
    try:
        local = datetime(
            year,
            month,
            day,
            int(match["hour"]),
            int(match["minute"]),
            int(match["second"] or 0),
            tzinfo=timezone(offset),
        )
        return local.astimezone(UTC)
    except (ValueError, OverflowError):
        return "that day or time does not exist"


def _rfc822_offset(zone: str) -> timedelta | None:
    """The UTC offset of an RFC 822 zone, or ``None`` if it is not one."""
    numeric = _RFC822_OFFSET_RE.fullmatch(zone)
    if numeric is not None:
        sign, hours, minutes = numeric.groups()
        if int(hours) > 23 or int(minutes) > 59:
            return None
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        return -offset if sign == "-" else offset
    name = zone.lower()
    if name in _RFC822_ZONES:
        return timedelta(hours=_RFC822_ZONES[name])
    if name in _MILITARY_ZONES:
        return timedelta(0)
    return None


def parse_http_date(text: str) -> datetime | None:
    """Read an HTTP date (``Last-Modified``, ``Date``): IMF-fixdate, RFC 850 or asctime.

    RFC 9110 (5.6.7) dates are in GMT: IMF-fixdate and RFC 850 dates end with ``GMT``, and
    asctime dates have no zone and are GMT by definition. ``UTC`` and ``UT``, which mean the
    same, and an explicit offset (``+0100``), which names an instant as plainly, are read too.
    Any other zone or none (``CET``, ``JST``, ``GMT+0200``, whose sign POSIX reads the other
    way) leaves the instant in doubt: ``None``, as for anything that is no date.
    """
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    if _ASCTIME_RE.fullmatch(stripped) is None:
        zone = stripped.rpartition(" ")[2]
        if _HTTP_ZONE_RE.fullmatch(zone) is None:
            return None
    return _parse_email_date(stripped)


_HTTP_ZONE_RE = re.compile(r"GMT|UTC|UT|[+-][0-9]{4}", re.IGNORECASE)
_ASCTIME_RE = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +"
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]{1,2} "
    r"[0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}",
    re.IGNORECASE,
)


# The form servers send (RFC 9110's IMF-fixdate), read without email.utils' general parser;
# anything else, or a date that does not exist, takes the general path.
_IMF_FIXDATE_RE = re.compile(
    r"\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT\s*"
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


def _parse_email_date(text: str) -> datetime | None:
    if not isinstance(text, str) or not text.strip():
        return None
    fixdate = _IMF_FIXDATE_RE.fullmatch(text)
    if fixdate is not None:
        day, month, year, hour, minute, second = fixdate.groups()
        try:
            return datetime(
                int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second), tzinfo=UTC
            )
        except ValueError:
            pass
    try:
        parsed = parsedate_tz(text.strip())
        if parsed is None:
            return None
        year, month, day, hour, minute, second = parsed[:6]
        offset = parsed[9] or 0
        zone = timezone(timedelta(seconds=offset))
        return datetime(year, month, day, hour, minute, second, tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError, TypeError, IndexError):
        return None


def expiry_instant(text: str) -> datetime | None:
    """The instant after which a robots ``unavailable_after`` date has surely passed.

    Google reads "widely adopted" formats: RFC 822 (``25 Jun 2010 15:00:00 PST``), RFC 850
    and ISO 8601 (``2010-06-25``, ``2010-06-25T15:00:00+02:00``, or without a zone, read as
    UTC). A date without a time names a day in an unknown time zone: it has passed once that
    day is over everywhere (12:00 UTC of the next day). Anything else gives ``None``.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    lastmod = parse_w3c_datetime(text)
    if lastmod is not None:
        if not lastmod.date_only:
            return lastmod.value
        try:
            return period_end(lastmod) + LATEST_OFFSET
        except (ValueError, OverflowError):
            return None
    parsed = _parse_email_date(text)
    if parsed is not None:
        return parsed
    try:
        return _aware(datetime.fromisoformat(text.strip())).astimezone(UTC)
    except ValueError:
        return None


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def lastmod_delta(lastmod: Lastmod, last_modified: datetime) -> float:
    """Seconds from the lastmod to ``last_modified`` (positive when the server's is later).

    A naive ``last_modified`` is read as UTC.
    """
    return (_aware(last_modified) - lastmod.value).total_seconds()


def period_end(lastmod: Lastmod) -> datetime:
    """The end of the period a lastmod names (the next day, month or year; a datetime: +1 day)."""
    start = lastmod.value
    if lastmod.precision == "year":
        return start.replace(year=start.year + 1, month=1, day=1)
    if lastmod.precision == "month":
        if start.month == 12:
            return start.replace(year=start.year + 1, month=1, day=1)
        return start.replace(month=start.month + 1, day=1)
    return start + timedelta(days=1)


def earliest_instant(lastmod: Lastmod) -> datetime:
    """The earliest instant a lastmod may name: a date-only one starts in UTC+14 (on the
    first day of the year 1, the earliest instant there is)."""
    if not lastmod.date_only:
        return lastmod.value
    try:
        return lastmod.value - EARLIEST_OFFSET
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)


def latest_instant(lastmod: Lastmod) -> datetime:
    """The latest instant a lastmod may name: a date-only one ends in UTC-12 (``ValueError``
    or ``OverflowError`` when that is past the year 9999)."""
    return period_end(lastmod) + LATEST_OFFSET if lastmod.date_only else lastmod.value


# More seconds than there are between the years 1 and 9999 (and fewer than timedelta holds).
_ALL_TIME_S = 366 * 86_400 * 10_000


def lastmod_matches(lastmod: Lastmod, last_modified: datetime, *, tolerance_s: float) -> bool:
    """Whether a lastmod agrees with a ``Last-Modified`` instant.

    A lastmod with a time matches when the two are at most ``tolerance_s`` seconds apart. A
    date-only lastmod names a calendar day (or month, or year) in an unknown time zone, so it
    matches when the instant falls on that day in some UTC offset from -12:00 to +14:00, give
    or take ``tolerance_s`` as any time that day would: in
    ``[day 00:00 - 14h - tolerance, next day 00:00 + 12h + tolerance)`` UTC.
    """
    if not lastmod.date_only:
        return abs(lastmod_delta(lastmod, last_modified)) <= tolerance_s
    instant = _aware(last_modified)
    if tolerance_s >= _ALL_TIME_S:
        return True  # a window wider than every date there is (a huge tolerance setting)
    tolerance = timedelta(seconds=tolerance_s)
    try:
        if instant < earliest_instant(lastmod) - tolerance:
            return False
    except OverflowError:
        pass  # the window starts before the year 1
    try:
        return instant < latest_instant(lastmod) + tolerance
    except (ValueError, OverflowError):
        return True  # the window ends after the year 9999
