"""What a sitemap index's `<lastmod>` for a sitemap says: a date (W3C Datetime), not after the
audit, and as recent as what that sitemap lists.

A sitemap holds a `<lastmod>` only once it has been written with it, so the time the sitemap
was modified is at least its newest (past) URL lastmod. An index that gives an older lastmod
for it tells crawlers the sitemap has not changed when it has: they may skip reading it again.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from sitemapaudit.page.dates import (
    EARLIEST_OFFSET,
    Lastmod,
    earliest_instant,
    latest_instant,
    parse_pubdate,
    parse_w3c_datetime,
    w3c_refusal,
)
from sitemapaudit.sitemap.records import Problem

# The codes of a sitemap record that its index's lastmod gives it.
CODES = frozenset({"index_lastmod_stale", "lastmod_invalid", "lastmod_future"})


class NewestLastmod:
    """The newest lastmod of a sitemap's URLs that is not after ``now``, fed one at a time.

    Most sitemaps write every lastmod in one shape (``YYYY-MM-DD``, or
    ``YYYY-MM-DDThh:mm:ss`` with ``Z`` or one offset): within a shape and offset, the string
    order is the time order, so those are compared as strings and only each shape's newest is
    parsed at the end. Other values are parsed as they come.
    """

    def __init__(self, now: datetime) -> None:
        self.now = now.astimezone(UTC)
        # Per shape (the zone designator, or "date"): the newest value, and the newest a value
        # of that shape may be without being after ``now``.
        self._newest: dict[str, str] = {}
        self._bounds: dict[str, str] = {}
        self._parsed: tuple[datetime, str, str] | None = None

    def add(self, lastmod: str, lastmod_format: str) -> None:
        if lastmod_format == "w3c":
            size = len(lastmod)
            if size < 10 or lastmod[4] != "-" or lastmod[7] != "-":
                key = ""
            elif size == 10:
                key = "date"
            elif (size == 25 or (size == 20 and lastmod[19] == "Z")) and lastmod[10] == "T":
                key = lastmod[19:]
            else:
                key = ""
            if not key:
                self._consider(lastmod, lastmod_format)
                return
            bound = self._bounds.get(key)
            if bound is None:
                bound = self._bounds[key] = self._bound(key)
            if bound:
                if lastmod <= bound and lastmod > self._newest.get(key, ""):
                    if _plainly_valid(lastmod, key):
                        self._newest[key] = lastmod
                    else:  # (an impossible day or time must not hide the valid newest)
                        self._consider(lastmod, lastmod_format)
                return
        self._consider(lastmod, lastmod_format)

    def _bound(self, key: str) -> str:
        """The newest string of this shape at or before ``now`` (``""``: no such shape)."""
        if key == "date":
            # The latest calendar day anywhere on Earth right now.
            return f"{self.now + EARLIEST_OFFSET:%Y-%m-%d}"
        if key == "Z":
            return f"{self.now:%Y-%m-%dT%H:%M:%S}Z"
        lastmod = parse_w3c_datetime(f"2000-01-01T00:00:00{key}")
        if lastmod is None:
            return ""
        offset = datetime(2000, 1, 1) - lastmod.value.replace(tzinfo=None)
        return f"{self.now + offset:%Y-%m-%dT%H:%M:%S}{key}"

    def _consider(self, lastmod: str, lastmod_format: str) -> None:
        parsed = _parse(lastmod, lastmod_format)
        if parsed is None:
            return
        earliest = earliest_instant(parsed)
        if earliest > self.now:
            return
        if self._parsed is None or earliest > self._parsed[0]:
            self._parsed = (earliest, lastmod, lastmod_format)

    def newest(self) -> tuple[datetime, str, str] | None:
        """The newest lastmod seen: the earliest instant it may name, as listed, its format."""
        for value in self._newest.values():
            self._consider(value, "w3c")
        self._newest.clear()
        return self._parsed


def _plainly_valid(lastmod: str, key: str) -> bool:
    """Whether a value of one of the shapes compared as strings names a day (and a time)
    that exists; one that does not is judged by the full parser instead (which also knows the
    XSD's ``24:00:00``)."""
    try:
        if key == "date":
            date.fromisoformat(lastmod)
        else:
            datetime.fromisoformat(lastmod[:19])
    except ValueError:
        return False
    return True


def index_lastmod_problems(
    index_lastmod: str,
    index_url: str | None,
    newest: tuple[datetime, str, str] | None,
    *,
    now: datetime,
    tolerance_s: float,
) -> list[Problem]:
    """The findings of the lastmod an index gives a sitemap: ``lastmod_invalid`` (not a W3C
    Datetime), ``lastmod_future`` (after ``now``), or ``index_lastmod_stale`` (older than the
    sitemap's newest URL lastmod, ``newest``, by more than ``tolerance_s``)."""
    listed = parse_w3c_datetime(index_lastmod)
    given = f"the index {index_url} gives lastmod {index_lastmod!r} for this sitemap"
    if listed is None:
        return [
            Problem("lastmod_invalid", f"{given}: not a valid date{w3c_refusal(index_lastmod)}")
        ]
    if earliest_instant(listed) > now:
        return [
            Problem(
                "lastmod_future",
                f"{given}, after {now:%Y-%m-%dT%H:%M:%SZ}, when the audit read the index",
            )
        ]
    if newest is None:
        return []
    try:
        latest = latest_instant(listed)
    except (ValueError, OverflowError):
        return []
    earliest, value, _ = newest
    if (earliest - latest).total_seconds() <= tolerance_s:
        return []
    return [
        Problem(
            "index_lastmod_stale",
            f"the index {index_url} gives lastmod {index_lastmod} for this sitemap, but it "
            f"lists a URL with lastmod {value}: a sitemap changes when its lastmods do, so the "
            "index tells crawlers it is unchanged when it is not",
        )
    ]


def _parse(lastmod: str, lastmod_format: str) -> Lastmod | None:
    if lastmod_format == "rfc822":
        return parse_pubdate(lastmod)
    return parse_w3c_datetime(lastmod)
