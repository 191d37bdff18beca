"""Lastmod ages and ``Last-Modified`` deltas in the buckets people read, and a histogram of
timestamps whose memory stays bounded however many URLs a report holds."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator

from sitemapaudit.page.dates import parse_rfc822_date, parse_w3c_datetime

DAY = 86_400.0
HOUR = 3_600.0

AGE_BUCKETS: tuple[str, ...] = (
    "in the future",
    "< 1 day",
    "< 1 week",
    "< 1 month",
    "< 1 year",
    "older",
    "invalid",
    "none",
)
"""Buckets of the lastmod-age histogram; a month is 30 days and a year 365 days."""

_AGE_LIMITS: tuple[tuple[float, str], ...] = (
    (DAY, "< 1 day"),
    (7 * DAY, "< 1 week"),
    (30 * DAY, "< 1 month"),
    (365 * DAY, "< 1 year"),
)

DELTA_BUCKETS: tuple[str, ...] = (
    "lastmod ahead > 30 d",
    "lastmod ahead 1\u201330 d",
    "lastmod ahead 1 h\u20131 d",
    "within \u00b11 h",
    "lastmod behind 1 h\u20131 d",
    "lastmod behind 1\u201330 d",
    "lastmod behind > 30 d",
)
"""Buckets of ``lastmod_delta_s`` (``Last-Modified`` minus ``<lastmod>``), most negative first."""


def lastmod_timestamp(text: str) -> float | None:
    """A lastmod (W3C Datetime, or an RSS date) as a POSIX timestamp; ``None`` if unreadable."""
    parsed = parse_w3c_datetime(text)
    if parsed is not None:
        return parsed.value.timestamp()
    rfc = parse_rfc822_date(text)
    return rfc.timestamp() if rfc is not None else None


def age_bucket(age_s: float) -> str:
    """The :data:`AGE_BUCKETS` label of a lastmod ``age_s`` seconds old (negative: future)."""
    if age_s < 0:
        return "in the future"
    for limit, label in _AGE_LIMITS:
        if age_s < limit:
            return label
    return "older"


def delta_bucket(delta_s: float) -> str:
    """The :data:`DELTA_BUCKETS` label of a ``lastmod_delta_s``."""
    size = abs(delta_s)
    if size <= HOUR:
        return "within \u00b11 h"
    side = "behind" if delta_s > 0 else "ahead"
    if size <= DAY:
        return f"lastmod {side} 1 h\u20131 d"
    if size <= 30 * DAY:
        return f"lastmod {side} 1\u201330 d"
    return f"lastmod {side} > 30 d"


def human_seconds(seconds: float) -> str:
    """A signed duration for people: ``+42 s``, ``-3 min``, ``+5.5 h``, ``+12.0 d``, ``+2.1 y``."""
    if not math.isfinite(seconds):
        return str(seconds)
    sign = "-" if seconds < 0 else "+" if seconds > 0 else ""
    size = abs(seconds)
    if size < 60:
        text = f"{size:.0f} s"
    elif size < HOUR:
        text = f"{size / 60:.0f} min"
    elif size < DAY:
        text = f"{size / HOUR:.1f} h"
    elif size < 365 * DAY:
        text = f"{size / DAY:.1f} d"
    else:
        text = f"{size / (365 * DAY):.1f} y"
    return sign + text


class TimeHistogram:
    """Counts timestamps in bins as fine as one second, widened when bins get too many.

    The bin width starts at one second and grows to a minute, an hour, then a day whenever
    more than ``max_bins`` distinct bins are in use, so memory stays bounded while ages near
    bucket edges stay exact for all but huge, widely spread reports.
    """

    WIDTHS: tuple[float, ...] = (1.0, 60.0, HOUR, DAY)

    def __init__(self, max_bins: int = 50_000) -> None:
        self.max_bins = max_bins
        self.level = 0
        self.bins: Counter[int] = Counter()
        self.total = 0

    @property
    def width(self) -> float:
        return self.WIDTHS[self.level]

    def add(self, timestamp: float) -> None:
        self.bins[math.floor(timestamp / self.width)] += 1
        self.total += 1
        while len(self.bins) > self.max_bins and self.level + 1 < len(self.WIDTHS):
            old, self.level = self.width, self.level + 1
            merged: Counter[int] = Counter()
            for key, count in self.bins.items():
                merged[math.floor(key * old / self.width)] += count
            self.bins = merged

    def ages(self, reference: float) -> Iterator[tuple[float, int]]:
        """``(age in seconds, count)`` per bin, the age taken at the bin's start."""
        for key, count in self.bins.items():
            yield reference - key * self.width, count
