"""Google's rules for the image, news, video and hreflang sitemap extensions.

These go beyond what the XSDs can express:

* ``too_many_images``: more than 1,000 ``image:image`` in one ``<url>``.
* ``news_too_many``: more than 1,000 ``news:news`` in one sitemap, or more than one in a
  ``<url>``.
* ``news_too_old``: a ``news:publication_date`` more than two days before ``now`` (a date
  without a time from the end of that day in UTC-12:00, a time without a time zone as in
  UTC-12:00).
* ``news_date_invalid``: a ``news:publication_date`` that the XSD accepts but W3C Datetime
  does not: a time without a time zone, or a date with one.
* ``news_missing_field``: a ``news:name`` or ``news:title`` that is empty (the XSD's
  ``xsd:string`` accepts that; one left out is ``schema_invalid``).
* ``video_missing_field``: a ``video:video`` without ``thumbnail_loc``, ``title``,
  ``description``, or both of ``content_loc`` and ``player_loc`` (absent or empty).
* ``video_url_is_page``: a ``video:content_loc`` or ``video:player_loc`` that is the
  ``<loc>`` of its ``<url>``, the page that shows the video, not the video or its player.
* ``video_duration_invalid``: a ``video:duration`` that is not a whole number of seconds from
  1 to 28800 (8 hours), Google's range; the XSD allows 0.
* ``invalid_url``: an ``image:loc``, ``video:thumbnail_loc``, ``video:content_loc`` or
  ``video:player_loc`` that is not an absolute http(s) URL by the rules of ``<loc>``, empty
  included (the XSD's ``xsd:anyURI`` accepts an empty value), unless ``video_missing_field``
  reports the empty field already; and the ``href`` of an hreflang ``xhtml:link`` that is not
  one (Google requires fully qualified alternate URLs: ``/de``, ``//host/de`` and ``ftp:``
  are reported; an empty or missing href is ``hreflang_invalid``).
* ``video_expired``: a ``video:expiration_date`` before ``now``, read as ``news_too_old`` reads
  dates (a date without a time ends with that day in UTC-12:00).
* ``hreflang_invalid``: an ``xhtml:link rel="alternate"`` whose ``hreflang`` is not a valid
  BCP 47 tag or ``x-default``, or names a language that is not ISO 639-1 (``jp``, ``eng``,
  ``und``, ``i-klingon``) or a region that is not ISO 3166-1 alpha-2 (``en-UK``), or that lacks
  ``hreflang`` or ``href``; and an ``xhtml:link`` with an ``hreflang`` but without
  ``rel="alternate"``, which search engines ignore.
* ``hreflang_unsupported``: a valid ``hreflang`` whose language has three letters and no
  ISO 639-1 code (``fil``), which Google does not document.
* ``hreflang_no_self``: a ``<url>`` with alternates, none of which is its own ``<loc>``.
* ``hreflang_conflict``: a ``<url>`` whose alternates give one hreflang value (compared without
  case: ``en-GB`` and ``en-gb``) several URLs.
* ``unknown_extension``: elements from a namespace no shipped schema covers, once per
  namespace (the XSD's strict wildcards would reject them). The XSD run of
  :mod:`sitemapaudit.validation.xsd` finds these; :func:`unknown_namespaces` is the walk for
  documents it skips.

``news_too_old`` and ``video_expired`` depend on ``now``: the same document judged later can
have more of them. :attr:`ExtensionScan.rejudge_after` is the earliest moment, ``now`` or
later, past which one more would appear (a running minimum over the dates, by the rules
above).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

from lxml import etree

from sitemapaudit.page.dates import DATE_WITH_TIME_ZONE, NO_TIME_ZONE, WIDE_YEAR, wide_year
from sitemapaudit.sitemap.records import ASCII_WHITESPACE, Problem
from sitemapaudit.urls import invalid_url_reason, is_valid_url, normalize_url, same_url
from sitemapaudit.validation.hreflang import hreflang_problem, hreflang_unsupported
from sitemapaudit.validation.messages import (
    element_name,
    local_name,
    namespace_of,
    source_line,
    unknown_extension,
)
from sitemapaudit.validation.schemas import (
    EXTENSION_PREFIXES,
    IMAGE_NS,
    ITEM_TAGS,
    NEWS_NS,
    SITEMAP_NS,
    VIDEO_NS,
    XHTML_NS,
)

MAX_IMAGES_PER_URL: Final = 1000
MAX_NEWS_PER_SITEMAP: Final = 1000
MAX_VIDEO_DURATION: Final = 28800
NEWS_MAX_AGE: Final = timedelta(days=2)
# How many conflicting hreflang values, and URLs of each, a hreflang_conflict message names.
_CONFLICTS_SHOWN: Final = 3

_IMAGE: Final = f"{{{IMAGE_NS}}}image"
_IMAGE_LOC: Final = f"{{{IMAGE_NS}}}loc"
_NEWS: Final = f"{{{NEWS_NS}}}news"
_NEWS_DATE: Final = f"{{{NEWS_NS}}}publication_date"
_NEWS_PUBLICATION: Final = f"{{{NEWS_NS}}}publication"
_NEWS_NAME: Final = f"{{{NEWS_NS}}}name"
_NEWS_TITLE: Final = f"{{{NEWS_NS}}}title"
# What Google needs each of, in its news sitemap documentation.
_NEWS_NEEDS: Final = {"name": "the publication's name", "title": "the article's title"}
_VIDEO: Final = f"{{{VIDEO_NS}}}video"
_VIDEO_PREFIX: Final = f"{{{VIDEO_NS}}}"
_LINK: Final = f"{{{XHTML_NS}}}link"
_VIDEO_REQUIRED: Final = ("thumbnail_loc", "title", "description")
_VIDEO_PLAYABLE: Final = frozenset({"content_loc", "player_loc"})
_VIDEO_URLS: Final = frozenset({"thumbnail_loc", *_VIDEO_PLAYABLE})
_URL_SHOWN: Final = 100
_VIDEO_DURATION: Final = f"{{{VIDEO_NS}}}duration"
_VIDEO_EXPIRATION: Final = f"{{{VIDEO_NS}}}expiration_date"
# An xsd:nonNegativeInteger as written (a sign, then digits); longer than 5 digits once leading
# zeros are gone, it is above 28800 whatever it says.
_WHOLE_NUMBER: Final = re.compile(r"\+?0*(?P<digits>[0-9]{1,5})")

_W3C_DATE: Final = re.compile(
    r"^(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)"
    r"(?:[Tt ](?P<h>\d\d):(?P<mi>\d\d)(?::(?P<s>\d\d)(?:[.,](?P<f>\d+))?)?)?"
    r"\s*(?P<tz>[Zz]|[+-]\d\d(?::?\d\d)?)?$"
)

# The latest moment a datetime holds: a date that ends later (9999-12-31 in UTC-12:00) is
# taken as this moment, which no audit reaches.
_END_OF_TIME: Final = datetime.max.replace(tzinfo=UTC)

# xsd:dateTime's time zones run from -14:00 to +14:00.
_MAX_OFFSET: Final = timedelta(hours=14)

# A date without a time names a day, any moment of it; without a time zone, in any of those in
# use (UTC-12:00 to UTC+14:00). Its latest moment, the end of the day in UTC-12:00, is 36 hours
# after its 00:00 UTC. A time without a time zone is at the latest that time in UTC-12:00, 12
# hours after the same time in UTC.
_DAY: Final = timedelta(days=1)
_LATEST_ZONE: Final = timedelta(hours=12)


def parse_w3c_datetime(value: str) -> datetime | None:
    """Parse a W3C date or date-time leniently (seconds optional); naive values are UTC.

    As in the XSD's ``xsd:dateTime``, ``24:00:00`` is the midnight that ends the day and an
    offset beyond -14:00 to +14:00 is not a time zone (``None``).
    """
    match = _W3C_DATE.match(value.strip())
    if match is None:
        return None
    parts = match.groupdict()
    tz = parts["tz"]
    fraction = (parts["f"] or "0")[:6].ljust(6, "0")
    hour = int(parts["h"] or 0)
    end_of_day = hour == 24
    if end_of_day:
        if parts["s"] is None or (parts["mi"], parts["s"], int(fraction)) != ("00", "00", 0):
            return None
        hour = 0
    try:
        zone: timezone = UTC
        if tz and tz not in "Zz":
            sign = -1 if tz[0] == "-" else 1
            digits = tz[1:].replace(":", "")
            minutes = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0)
            if timedelta(minutes=minutes) > _MAX_OFFSET:
                return None
            zone = timezone(sign * timedelta(minutes=minutes))
        moment = datetime(
            int(parts["y"]),
            int(parts["mo"]),
            int(parts["d"]),
            hour,
            int(parts["mi"] or 0),
            int(parts["s"] or 0),
            int(fraction),
            tzinfo=zone,
        )
        return moment + timedelta(days=1) if end_of_day else moment
    except (ValueError, OverflowError):
        return None


def _age(delta: timedelta) -> str:
    days = delta.days
    if days >= 2:
        return f"{days:,} days"
    hours = int(delta.total_seconds() // 3600)
    if hours >= 2:
        return f"{hours} hours"
    return "1 hour" if hours == 1 else "less than an hour"


def _text(element: etree._Element | None) -> str:
    """An element's text content, as the XSD reads it: comments and processing instructions
    inside it are left out, the text around them is not."""
    if element is None:
        return ""
    if len(element) == 0:
        return (element.text or "").strip(ASCII_WHITESPACE)
    return "".join(str(text) for text in element.itertext()).strip(ASCII_WHITESPACE)


def _check_video(video: etree._Element) -> Iterator[Problem]:
    """video_missing_field, video_url_is_page, and invalid_url for its URLs but a required one
    left empty."""
    present: dict[str, str] = {}
    urls: list[tuple[str, str, etree._Element]] = []
    for child in video:
        tag = child.tag
        if isinstance(tag, str) and tag.startswith(_VIDEO_PREFIX):
            name, value = tag[len(_VIDEO_PREFIX) :], _text(child)
            present.setdefault(name, value)
            if name in _VIDEO_URLS:
                urls.append((name, value, child))
    missing = [f"video:{name}" for name in _VIDEO_REQUIRED if not present.get(name)]
    playable = bool(present.get("content_loc") or present.get("player_loc"))
    if not playable:
        missing.append("one of video:content_loc / video:player_loc")
    if missing:
        yield Problem(
            "video_missing_field",
            f"video:video is missing {', '.join(missing)} (required by Google for video results)",
            source_line(video),
        )
    for name, value, element in urls:
        if not value and (name not in _VIDEO_PLAYABLE or not playable):
            continue  # video_missing_field says so
        problem = _url_problem(f"video:{name}", value, element)
        if problem is not None:
            yield problem
        elif name in _VIDEO_PLAYABLE and (page := _page_of(video)) and same_url(value, page):
            yield Problem(
                "video_url_is_page",
                f"video:{name} {value} is the page's own <loc>: Google needs the URL of the "
                f"video {'file' if name == 'content_loc' else 'player'}, not of the page that "
                "shows it",
                source_line(element),
            )


def _page_of(video: etree._Element) -> str:
    """The ``<loc>`` of the entry a ``video:video`` is in (``""`` when it has none)."""
    entry = video.getparent()
    return "" if entry is None else _loc_of(entry)


def _loc_of(entry: etree._Element) -> str:
    """An entry's ``<loc>`` text (``""`` when it has none)."""
    return _text(entry.find(_child_tag(entry, "loc")))


def _url_problem(name: str, value: str, element: etree._Element, note: str = "") -> Problem | None:
    """invalid_url when ``value`` (stripped) is not an absolute http(s) URL; ``note`` ends the
    message."""
    if is_valid_url(value):
        return None
    shown = value if len(value) <= _URL_SHOWN else value[: _URL_SHOWN - 3] + "..."
    return Problem(
        "invalid_url",
        f"{name} {shown!r} is not a valid http(s) URL: {invalid_url_reason(value)}{note}",
        source_line(element),
    )


def _check_durations(video: etree._Element) -> Iterator[Problem]:
    for duration in video.iterchildren(_VIDEO_DURATION):
        value = _text(duration)
        number = _WHOLE_NUMBER.fullmatch(value)
        if number is not None and 1 <= int(number["digits"]) <= MAX_VIDEO_DURATION:
            continue
        shown = value if len(value) <= 40 else value[:37] + "..."
        yield Problem(
            "video_duration_invalid",
            f"video:duration {shown!r} is not a whole number of seconds from 1 to "
            f"{MAX_VIDEO_DURATION} (8 hours), the range Google accepts",
            source_line(duration),
        )


def _latest(value: str) -> tuple[datetime, str] | None:
    """The latest moment a date value can name, and how it was read when the value leaves the
    moment open (``""`` when it names one); ``None`` when it is no date."""
    if (wide := wide_year(value)) is not None:
        if wide["minus"]:
            # Before year 1: as long ago as a date can be (what datetime holds starts there).
            return datetime.min.replace(tzinfo=UTC), "a year before year 1 counts as year 1"
        return _END_OF_TIME, ""
    moment = parse_w3c_datetime(value)
    form = _W3C_DATE.match(value)
    if moment is None or form is None:
        return None
    if form["h"] is None:
        # The benefit of the doubt: an article may be from the last moment of that day, a
        # video may be available until then.
        moment = _later(moment, _DAY)
        if form["tz"] is None:
            note = "a date without a time counts from the end of that day in UTC-12:00"
            return _later(moment, _LATEST_ZONE), note
        return moment, "a date without a time counts from the end of that day"
    if form["tz"] is None:
        note = "a time without a time zone counts as UTC-12:00, the latest it can be"
        return _later(moment, _LATEST_ZONE), note
    return moment, ""


def _later(moment: datetime, delta: timedelta) -> datetime:
    """``moment + delta``, or the end of time past the last moment a datetime holds."""
    try:
        return moment + delta
    except OverflowError:
        return _END_OF_TIME


class NextChange:
    """A running minimum: the earliest moment at which a finding that depends on the time
    would appear, of those that have not appeared by ``now``."""

    __slots__ = ("moment", "now")

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.moment: datetime | None = None

    def at(self, moment: datetime) -> None:
        """A finding appears once the time is past ``moment`` (``moment >= now``). One past
        every time a datetime holds never appears."""
        if moment < _END_OF_TIME and (self.moment is None or moment < self.moment):
            self.moment = moment


def _check_expiration(video: etree._Element, clock: NextChange) -> Problem | None:
    element = video.find(_VIDEO_EXPIRATION)
    value = _text(element)
    latest = _latest(value) if value else None
    if element is None or latest is None:
        return None
    expired, how = latest
    now = clock.now
    if expired >= now:
        clock.at(expired)
        return None
    return Problem(
        "video_expired",
        f"video:expiration_date {value} passed {'at least ' if how else ''}{_age(now - expired)} "
        f"ago{f' ({how})' if how else ''}; Google does not show a video after its expiration "
        "date: remove the video:video, or its expiration_date if the video is still available",
        source_line(element),
    )


def _check_news_date(value: str, element: etree._Element) -> Problem | None:
    """news_date_invalid: a date the XSD accepts in a form W3C Datetime does not have (a date
    the XSD refuses is schema_invalid, which says why)."""
    if wide_year(value) is not None:
        return Problem(
            "news_date_invalid",
            f"news:publication_date {value!r} is not a valid date: {WIDE_YEAR}",
            source_line(element),
        )
    form = _W3C_DATE.match(value)
    if form is None or parse_w3c_datetime(value) is None:
        return None
    if form["h"] is not None and form["tz"] is None:
        reason = NO_TIME_ZONE
    elif form["h"] is None and form["tz"] is not None:
        reason = DATE_WITH_TIME_ZONE
    else:
        return None
    return Problem(
        "news_date_invalid",
        f"news:publication_date {value!r} is not a valid date: {reason}",
        source_line(element),
    )


def _check_news_fields(news: etree._Element) -> Problem | None:
    """news_missing_field: a news:name or news:title given empty (one left out is
    schema_invalid, which says Google requires it)."""
    publication = news.find(_NEWS_PUBLICATION)
    fields = {
        "name": None if publication is None else publication.find(_NEWS_NAME),
        "title": news.find(_NEWS_TITLE),
    }
    empty = [name for name, element in fields.items() if element is not None and not _text(element)]
    if not empty:
        return None
    return Problem(
        "news_missing_field",
        f"news:news has an empty {' and '.join(f'news:{name}' for name in empty)} (Google "
        f"requires {' and '.join(_NEWS_NEEDS[name] for name in empty)})",
        source_line(news),
    )


def _check_news(news: etree._Element, clock: NextChange) -> Iterator[Problem]:
    date_element = news.find(_NEWS_DATE)
    value = _text(date_element)
    if date_element is None or not value:
        return
    invalid = _check_news_date(value, date_element)
    if invalid is not None:
        yield invalid
    latest = _latest(value)
    if latest is None:
        return
    published, how = latest
    now = clock.now
    age = now - published
    if age <= NEWS_MAX_AGE:
        clock.at(_later(published, NEWS_MAX_AGE))
        return
    yield Problem(
        "news_too_old",
        f"news:publication_date {value} is {'at least ' if how else ''}{_age(age)} "
        f"old{f' ({how})' if how else ''}; Google News sitemaps should only list articles "
        "published in the last 2 days",
        source_line(date_element),
    )


def _images(root: etree._Element, item_tag: str) -> Iterator[Problem]:
    """invalid_url for each image:loc, then too_many_images."""
    entries: list[etree._Element] = []
    for image in root.iter(_IMAGE):
        parent = image.getparent()
        if parent is None or parent.tag != item_tag:
            continue
        entries.append(parent)
        for loc in image.iterchildren(_IMAGE_LOC):
            problem = _url_problem("image:loc", _text(loc), loc)
            if problem is not None:
                yield problem
    if len(entries) <= MAX_IMAGES_PER_URL:
        return
    counts: dict[etree._Element, int] = {}
    for entry in entries:
        counts[entry] = counts.get(entry, 0) + 1
    for entry, count in counts.items():
        if count > MAX_IMAGES_PER_URL:
            yield Problem(
                "too_many_images",
                f"<url> {_loc_of(entry)} has {count} image:image "
                f"elements; Google reads at most {MAX_IMAGES_PER_URL} per <url>",
                source_line(entry),
            )


def _news(
    root: etree._Element, item_tag: str, clock: NextChange, seen: list[int | None]
) -> Iterator[Problem]:
    """news_missing_field, news_date_invalid and news_too_old findings; ``seen`` is [count,
    first line] so far, updated in place, and ``clock`` is told when an article turns too
    old."""
    previous: etree._Element | None = None
    reported: etree._Element | None = None
    for news in root.iter(_NEWS):
        parent = news.getparent()
        if parent is None or parent.tag != item_tag:
            continue
        if parent is previous and parent is not reported:
            reported = parent
            yield Problem(
                "news_too_many",
                f"<url> {_loc_of(parent)} has more than one news:news; Google reads one per <url>",
                source_line(news),
            )
        previous = parent
        seen[0] = (seen[0] or 0) + 1
        if seen[1] is None:
            seen[1] = source_line(news)
        fields = _check_news_fields(news)
        if fields is not None:
            yield fields
        yield from _check_news(news, clock)


def _videos(root: etree._Element, item_tag: str, clock: NextChange) -> Iterator[Problem]:
    for video in root.iter(_VIDEO):
        parent = video.getparent()
        if parent is None or parent.tag != item_tag:
            continue
        yield from _check_video(video)
        yield from _check_durations(video)
        expired = _check_expiration(video, clock)
        if expired is not None:
            yield expired


def _verdict(hreflang: str) -> tuple[str, str] | None:
    """``(code, message)`` of what is wrong with a non-empty hreflang value, or ``None``."""
    problem = hreflang_problem(hreflang)
    if problem is not None:
        return "hreflang_invalid", problem
    unsupported = hreflang_unsupported(hreflang)
    if unsupported is not None:
        return "hreflang_unsupported", unsupported
    return None


_NOT_ABSOLUTE: Final = (
    "; Google requires hreflang alternate URLs to be fully qualified, with the http or https "
    "scheme, and ignores this annotation (the reciprocity check leaves it out)"
)
_NO_PROBLEM: Final[tuple[Problem, ...]] = ()


def _check_link(
    link: etree._Element, verdicts: dict[str, tuple[str, str] | None]
) -> tuple[tuple[Problem, ...], str | None, str | None]:
    """Check one ``xhtml:link``; return its problems, its stripped href if given, and its
    hreflang if that and the href are valid too (a usable annotation). ``verdicts`` caches
    what :func:`_verdict` said of each value."""
    rel = link.get("rel")
    if rel is None or "alternate" not in rel.lower().split():
        hreflang = link.get("hreflang")
        if hreflang is None or not hreflang.strip():
            return _NO_PROBLEM, None, None
        shown = hreflang if len(hreflang) <= 40 else hreflang[:37] + "..."
        how = "no rel attribute" if rel is None else f'rel="{rel}"'
        message = (
            f'xhtml:link hreflang="{shown}" has {how}, not rel="alternate": search engines '
            "read only alternate links as hreflang annotations, so they ignore it"
        )
        return (Problem("hreflang_invalid", message, source_line(link)),), None, None
    hreflang = link.get("hreflang")
    if hreflang is None:
        # Not an hreflang annotation: an alternate for mobile (``media``), an app link...
        return _NO_PROBLEM, None, None
    href = (link.get("href") or "").strip(ASCII_WHITESPACE)
    if not hreflang.strip():
        message = 'xhtml:link rel="alternate" has an empty hreflang attribute'
        return (Problem("hreflang_invalid", message, source_line(link)),), None, None
    try:
        verdict = verdicts[hreflang]
    except KeyError:
        verdict = verdicts[hreflang] = _verdict(hreflang)
    if not href:
        if verdict is not None and verdict[0] == "hreflang_invalid":
            return (Problem(*verdict, source_line(link)),), None, None
        message = f'xhtml:link rel="alternate" hreflang="{hreflang}" has no href'
        return (Problem("hreflang_invalid", message, source_line(link)),), None, None
    problems = _NO_PROBLEM if verdict is None else (Problem(*verdict, source_line(link)),)
    usable = verdict is None or verdict[0] != "hreflang_invalid"
    if not is_valid_url(href):
        shown = hreflang if len(hreflang) <= 40 else hreflang[:37] + "..."
        invalid = _url_problem(f'xhtml:link hreflang="{shown}" href', href, link, _NOT_ABSOLUTE)
        if invalid is not None:
            problems = (*problems, invalid)
        usable = False
    return problems, href, hreflang if usable else None


def _no_self(entry: etree._Element, hrefs: list[str]) -> Problem | None:
    loc = _loc_of(entry)
    if not loc or loc in hrefs or normalize_url(loc) in {normalize_url(h) for h in hrefs}:
        return None
    count = len(hrefs)
    return Problem(
        "hreflang_no_self",
        f"<url> {loc} lists {count} hreflang alternate{'s' if count != 1 else ''} but none "
        "for the page itself; each <url> must also list its own URL among its xhtml:link "
        "alternates",
        source_line(entry),
    )


def _conflict(entry: etree._Element, verdicts: dict[str, tuple[str, str] | None]) -> Problem | None:
    """``hreflang_conflict`` when one hreflang value (compared without case) of an entry's
    alternates names several URLs (compared as ``normalize_url`` makes them). One URL under
    several values (``en`` and ``x-default``) is no conflict; an invalid value is not
    compared."""
    urls: dict[str, dict[str, tuple[str, str]]] = {}
    line: int | None = None
    for link in entry.iterchildren(_LINK):
        _problems, href, value = _check_link(link, verdicts)
        if href is None or value is None:
            continue
        seen = urls.setdefault(value.lower(), {})
        key = normalize_url(href)
        if key not in seen:
            seen[key] = (value, href)
            if len(seen) == 2 and line is None:
                line = source_line(link)
    conflicts = [list(seen.values()) for seen in urls.values() if len(seen) > 1]
    if not conflicts:
        return None
    parts = [_conflict_part(alternates) for alternates in conflicts[:_CONFLICTS_SHOWN]]
    if len(conflicts) > _CONFLICTS_SHOWN:
        parts.append(f"and {len(conflicts) - _CONFLICTS_SHOWN} more values")
    loc = _loc_of(entry)
    return Problem(
        "hreflang_conflict",
        f"<url> {loc} lists several URLs for one hreflang value: {', '.join(parts)}; each "
        "value must name one URL, or search engines cannot tell which page is meant and may "
        "ignore the annotation",
        line,
    )


def _conflict_part(alternates: list[tuple[str, str]]) -> str:
    """``'en-GB' (https://a/, https://b/ as 'en-gb')``: a value and the URLs it names."""
    value = alternates[0][0]
    shown = [
        href if spelled == value else f"{href} as '{spelled}'"
        for spelled, href in alternates[:_CONFLICTS_SHOWN]
    ]
    if len(alternates) > _CONFLICTS_SHOWN:
        shown.append(f"and {len(alternates) - _CONFLICTS_SHOWN} more")
    return f"'{value}' ({', '.join(shown)})"


class _Entry:
    """The alternates of one entry seen so far."""

    __slots__ = ("element", "hrefs", "named", "suspect")

    def __init__(self, element: etree._Element) -> None:
        self.element = element
        self.hrefs: list[str] = []
        # Each value (lowercased) with the first href it names, as written: nearly every entry
        # gives each value one href, and only when two differ are URLs normalized and compared.
        self.named: dict[str, str] = {}
        self.suspect = False

    def add(self, href: str, value: str | None) -> None:
        """One alternate; ``value`` ``None`` for one Google ignores (an invalid hreflang or
        href), which names no alternate, the page itself included."""
        if value is None:
            return
        self.hrefs.append(href)
        if self.named.setdefault(value.lower(), href) != href:
            self.suspect = True

    def problems(self, verdicts: dict[str, tuple[str, str] | None]) -> Iterator[Problem]:
        """The findings of the entry's alternates as a whole."""
        if not self.hrefs:
            return
        problem = _no_self(self.element, self.hrefs)
        if problem is not None:
            yield problem
        if self.suspect:
            problem = _conflict(self.element, verdicts)
            if problem is not None:
                yield problem


def _links(root: etree._Element, item_tag: str) -> Iterator[Problem]:
    verdicts: dict[str, tuple[str, str] | None] = {}
    entry: _Entry | None = None
    for link in root.iter(_LINK):
        parent = link.getparent()
        if parent is None or parent.tag != item_tag:
            continue
        if entry is None or parent is not entry.element:
            if entry is not None:
                yield from entry.problems(verdicts)
            entry = _Entry(parent)
        problems, href, value = _check_link(link, verdicts)
        yield from problems
        if href is not None:
            entry.add(href, value)
    if entry is not None:
        yield from entry.problems(verdicts)


def _child_tag(entry: etree._Element, local: str) -> str:
    tag = entry.tag
    assert isinstance(tag, str)
    ns = namespace_of(tag)
    return f"{{{ns}}}{local}" if ns else local


class ExtensionScan:
    """The image, news, video and hreflang findings of a document, given whole or piece by
    piece.

    Feed the parsed root, or containers whose children are consecutive element children of
    the root, in document order (each is searched like the root would be); :meth:`finish`
    returns the findings, ordered by line. Entries are the root's children named ``url`` in
    the root's own namespace, whatever that namespace is; extension elements count only as
    direct children of an entry. The ``sitemap`` entries of an index are sitemaps, not pages:
    Google reads no annotation there, and none is judged as a page's (the XSD says what does
    not belong). ``now`` must be timezone-aware.
    """

    def __init__(self, root_tag: str, *, now: datetime) -> None:
        self._index = local_name(root_tag) == "sitemapindex"
        ns = namespace_of(root_tag)
        self._item_tag = ("{" + ns + "}" if ns else "") + ITEM_TAGS.get(local_name(root_tag), "url")
        self._clock = NextChange(now)
        self._images: list[Problem] = []
        self._news: list[Problem] = []
        self._videos: list[Problem] = []
        self._links: list[Problem] = []
        self._news_seen: list[int | None] = [0, None]

    def feed(self, container: etree._Element) -> None:
        if self._index:
            return
        item_tag = self._item_tag
        self._images.extend(_images(container, item_tag))
        self._news.extend(_news(container, item_tag, self._clock, self._news_seen))
        self._videos.extend(_videos(container, item_tag, self._clock))
        self._links.extend(_links(container, item_tag))

    @property
    def rejudge_after(self) -> datetime | None:
        """The earliest moment after ``now`` past which judging the containers fed so far
        again would give one more ``news_too_old`` or ``video_expired``; ``None`` when none
        can appear (no date still to come)."""
        return self._clock.moment

    def finish(self) -> list[Problem]:
        count, first_line = self._news_seen
        news = list(self._news)
        if count is not None and count > MAX_NEWS_PER_SITEMAP:
            news.append(
                Problem(
                    "news_too_many",
                    f"the sitemap has {count} news:news entries; a news sitemap may list at "
                    f"most {MAX_NEWS_PER_SITEMAP}",
                    first_line,
                )
            )
        problems = [*self._images, *news, *self._videos, *self._links]
        problems.sort(key=lambda problem: problem.line or 0)
        return problems


class NamespaceScan:
    """:func:`unknown_namespaces` over the root's element children given a few at a time."""

    def __init__(self, root_tag: str) -> None:
        self._own = {namespace_of(root_tag), SITEMAP_NS, None, *EXTENSION_PREFIXES}
        self._seen: dict[str, tuple[str, int | None]] = {}

    def feed(self, kids: Iterable[etree._Element]) -> None:
        own, seen = self._own, self._seen
        for kid in kids:
            for element in (kid, *kid):
                tag = element.tag
                if not isinstance(tag, str):
                    continue
                ns = namespace_of(tag)
                if ns not in own and ns is not None and ns not in seen:
                    seen[ns] = (element_name(element), source_line(element))

    def problems(self) -> list[Problem]:
        return [unknown_extension(ns, name, line) for ns, (name, line) in self._seen.items()]


def unknown_namespaces(root: etree._Element) -> list[Problem]:
    """``unknown_extension`` for each namespace without a shipped schema, by a full walk.

    Looks at the root's children and the entries' children. The XSD run reports these
    namespaces itself; this walk is for documents whose XSD run is skipped.
    """
    root_tag = root.tag
    if not isinstance(root_tag, str):
        return []
    scan = NamespaceScan(root_tag)
    scan.feed(root)
    return scan.problems()
