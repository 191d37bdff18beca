"""Dates a sitemap or a server states: W3C Datetime lastmods, RSS and HTTP dates.

All parsers return ``None`` for anything they cannot read and never raise; every datetime
returned is timezone-aware and in UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_tz
from typing import Literal

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
_EARLIEST_OFFSET = timedelta(hours=14)
_LATEST_OFFSET = timedelta(hours=12)


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
    required whenever a time is given. Surrounding whitespace is allowed; anything else
    (a space instead of ``T``, basic format ``20041223``, impossible dates, hour 24, lowercase
    ``t``/``z``) gives ``None``.
    """
    if not isinstance(text, str):
        return None
    match = _W3C_RE.fullmatch(text.strip())
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
        local = datetime(
            year,
            month,
            day,
            int(match["hour"]),
            int(match["minute"]),
            int(match["second"] or 0),
            int(fraction),
            tzinfo=_tz(match["tzd"]),
        )
        return Lastmod(value=local.astimezone(UTC), date_only=False, precision="time")
    except (ValueError, OverflowError):
        return None


def _tz(tzd: str) -> timezone:
    if tzd == "Z":
        return UTC
    hours, minutes = int(tzd[1:3]), int(tzd[4:6])
    if hours > 23 or minutes > 59:
        raise ValueError(tzd)
    offset = timedelta(hours=hours, minutes=minutes)
    return timezone(-offset if tzd[0] == "-" else offset)


def parse_rfc822_date(text: str) -> datetime | None:
    """Read an RSS ``pubDate`` (RFC 822/2822), e.g. ``Thu, 05 Jan 2017 12:34:50 GMT``.

    Numeric offsets (``+0100``), zone names (``GMT``, ``EST``...) and two-digit years are
    understood; a missing or unknown zone is read as UTC.
    """
    return _parse_email_date(text)


def parse_http_date(text: str) -> datetime | None:
    """Read an HTTP date (``Last-Modified``, ``Date``): IMF-fixdate, RFC 850 or asctime."""
    return _parse_email_date(text)


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
            return period_end(lastmod) + _LATEST_OFFSET
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


def lastmod_matches(lastmod: Lastmod, last_modified: datetime, *, tolerance_s: float) -> bool:
    """Whether a lastmod agrees with a ``Last-Modified`` instant.

    A lastmod with a time matches when the two are at most ``tolerance_s`` seconds apart. A
    date-only lastmod names a calendar day (or month, or year) in an unknown time zone, so it
    matches when the instant falls on that day in some UTC offset from -12:00 to +14:00: in
    ``[day 00:00 - 14h, next day 00:00 + 12h)`` UTC.
    """
    if not lastmod.date_only:
        return abs(lastmod_delta(lastmod, last_modified)) <= tolerance_s
    instant = _aware(last_modified)
    try:
        end = period_end(lastmod)
    except (ValueError, OverflowError):
        return instant >= lastmod.value - _EARLIEST_OFFSET
    try:
        return lastmod.value - _EARLIEST_OFFSET <= instant < end + _LATEST_OFFSET
    except OverflowError:
        return lastmod.value - _EARLIEST_OFFSET <= instant
