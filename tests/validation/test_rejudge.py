"""When the findings of an unchanged document that depend on the time would change.

``news_too_old`` and ``video_expired`` are judged against ``now``: the same bytes validated
later can have more of them. :func:`judge_document` gives, with the findings, the earliest
moment after ``now`` at which one would appear (``rejudge_after``); until then, validating
the same bytes gives the same findings.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sitemapaudit.validation import judge_document, validate_document
from tests.validation.conftest import NOW, url, urlset

TIMED = ("news_too_old", "video_expired")
EARLIEST = timedelta(microseconds=1)


def _news(date: str) -> str:
    return (
        "<news:news><news:publication><news:name>Example</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:publication_date>{date}</news:publication_date>"
        "<news:title>Headline</news:title></news:news>"
    )


def _video(expiration: str | None) -> str:
    expires = (
        "" if expiration is None else f"<video:expiration_date>{expiration}</video:expiration_date>"
    )
    return (
        "<video:video><video:thumbnail_loc>https://www.example.com/t.jpg</video:thumbnail_loc>"
        "<video:title>A video</video:title><video:description>About it</video:description>"
        "<video:content_loc>https://www.example.com/v.mp4</video:content_loc>"
        f"{expires}</video:video>"
    )


def _news_sitemap(*dates: str) -> bytes:
    return urlset(*(url(f"https://www.example.com/n{i}", _news(d)) for i, d in enumerate(dates)))


def _video_sitemap(*dates: str | None) -> bytes:
    return urlset(*(url(f"https://www.example.com/v{i}", _video(d)) for i, d in enumerate(dates)))


def _timed(data: bytes, now: datetime) -> list[tuple[str, int | None]]:
    return [(p.code, p.line) for p in validate_document(data, now=now) if p.code in TIMED]


def _holds_until(data: bytes, moment: datetime) -> None:
    """The time-dependent findings at NOW are those at ``moment``, and change just after it."""
    at_now = _timed(data, NOW)
    assert _timed(data, moment) == at_now
    assert _timed(data, moment + EARLIEST) != at_now


@pytest.mark.parametrize(
    ("dates", "expected"),
    [
        # NOW is 2024-06-05T12:00Z; an article is too old two days after its date.
        (["2024-06-05T08:00:00Z"], datetime(2024, 6, 7, 8, 0, tzinfo=UTC)),
        # The earliest of the fresh ones; an article too old already, or with no date W3C
        # Datetime or the XSD reads, changes nothing.
        (
            [
                "2024-06-05T08:00:00Z",
                "2024-06-01T00:00:00Z",
                "yesterday",
                "2024-06-04T10:00:00+02:00",
                "2024-13-01T00:00:00Z",
                "2024-06-05T11:00:00Z",
            ],
            datetime(2024, 6, 6, 8, 0, tzinfo=UTC),
        ),
        # A date alone counts from the end of that day in UTC-12:00, as news_too_old reads it.
        (["2024-06-04"], datetime(2024, 6, 7, 12, 0, tzinfo=UTC)),
        # A time without a time zone counts as UTC-12:00.
        (["2024-06-05T00:00:00"], datetime(2024, 6, 7, 12, 0, tzinfo=UTC)),
        # Exactly two days old is not too old yet: it is, a moment later.
        (["2024-06-03T12:00:00Z"], NOW),
    ],
)
def test_news_articles_become_too_old_at_the_earliest_fresh_date_plus_two_days(
    dates: list[str], expected: datetime
) -> None:
    data = _news_sitemap(*dates)
    verdict = judge_document(data, now=NOW)
    assert verdict.rejudge_after == expected
    assert verdict.problems == validate_document(data, now=NOW)
    _holds_until(data, expected)


@pytest.mark.parametrize(
    ("dates", "expected"),
    [
        (["2024-06-10T00:00:00Z"], datetime(2024, 6, 10, tzinfo=UTC)),
        (
            ["2024-06-10T00:00:00Z", "2024-06-01", None, "soon", "2024-06-08", "2024-06-09Z"],
            # 2024-06-08 ends at 2024-06-09T12:00Z (UTC-12:00); 2024-06-09Z at 06-10T00:00Z.
            datetime(2024, 6, 9, 12, 0, tzinfo=UTC),
        ),
        (["2024-06-06T10:00:00+02:00"], datetime(2024, 6, 6, 8, 0, tzinfo=UTC)),
        # Expiring right now is not expired yet.
        (["2024-06-05T12:00:00Z"], NOW),
    ],
)
def test_videos_expire_at_the_earliest_expiration_date_to_come(
    dates: list[str | None], expected: datetime
) -> None:
    data = _video_sitemap(*dates)
    assert judge_document(data, now=NOW).rejudge_after == expected
    _holds_until(data, expected)


def test_news_and_videos_of_one_sitemap_give_the_earliest_of_both() -> None:
    data = urlset(
        url("https://www.example.com/a", _news("2024-06-05T08:00:00Z")),
        url("https://www.example.com/b", _video("2024-06-06T00:00:00Z")),
        url("https://www.example.com/c", _news("2024-06-05T11:00:00Z")),
    )
    expected = datetime(2024, 6, 6, tzinfo=UTC)
    assert judge_document(data, now=NOW).rejudge_after == expected
    _holds_until(data, expected)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(urlset(url("https://www.example.com/")), id="no extension"),
        pytest.param(_video_sitemap(None, None), id="videos that never expire"),
        pytest.param(_news_sitemap("2024-06-01T00:00:00Z", "2020-01-01"), id="all too old"),
        pytest.param(_video_sitemap("2024-06-01", "2024-06-05T11:59:59Z"), id="all expired"),
        pytest.param(_news_sitemap("not a date", "2024-02-30T00:00:00Z"), id="no dates"),
        # The last day datetime holds: nothing that could change before then is given.
        pytest.param(_news_sitemap("9999-12-31"), id="news at the end of time"),
        pytest.param(_video_sitemap("9999-12-31T23:59:59"), id="video at the end of time"),
    ],
)
def test_nothing_changes_with_the_time(data: bytes) -> None:
    assert judge_document(data, now=NOW).rejudge_after is None
    assert _timed(data, datetime(9999, 12, 30, tzinfo=UTC)) == _timed(data, NOW)


def test_the_whole_tree_path_gives_the_same_moment() -> None:
    """A document with a DOCTYPE is parsed whole, not streamed: the moment is the same."""
    data = _news_sitemap("2024-06-05T08:00:00Z", "2024-06-04T20:00:00Z").replace(
        b"<urlset", b'<!DOCTYPE urlset [<!ENTITY e "x">]>\n<urlset', 1
    )
    assert judge_document(data, now=NOW).rejudge_after == datetime(2024, 6, 6, 20, tzinfo=UTC)


def test_the_moment_is_a_running_minimum_over_every_chunk() -> None:
    """A streamed document goes by in chunks of 500 entries: the earliest date may be in any."""
    dates = ["2024-06-05T11:00:00Z"] * 1200
    dates[1100] = "2024-06-04T13:00:00Z"
    data = _news_sitemap(*dates)
    assert judge_document(data, now=NOW).rejudge_after == datetime(2024, 6, 6, 13, tzinfo=UTC)


def test_a_broken_document_has_no_moment() -> None:
    """A document that is not well-formed has no extension findings at all."""
    data = _news_sitemap("2024-06-05T08:00:00Z").replace(b"</urlset>", b"")
    verdict = judge_document(data, now=NOW)
    assert verdict.rejudge_after is None
    assert not [p for p in verdict.problems if p.code in TIMED]
