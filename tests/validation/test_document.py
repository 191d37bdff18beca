"""validate_document: generated documents, limits, caps, speed and odd input."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest

from sitemapaudit.sitemap.records import PROTOCOL_MAX_ENTRIES
from sitemapaudit.validation import load_schema, validate_document
from sitemapaudit.validation.document import scan_unescaped
from tests.validation.conftest import NOW, SITEMAP_NS, big_urlset, url, urlset

IMAGE = "<image:image><image:loc>https://www.example.com/i/{n}.jpg</image:loc></image:image>"


def _news(date: str = "2024-06-05T08:00:00Z") -> str:
    return (
        "<news:news><news:publication><news:name>Example</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:publication_date>{date}</news:publication_date>"
        "<news:title>Headline</news:title></news:news>"
    )


def _codes(data: bytes, **kwargs: object) -> list[str]:
    return [problem.code for problem in validate_document(data, now=NOW, **kwargs)]  # type: ignore[arg-type]


# --- near_limit ---------------------------------------------------------------------------


def test_near_limit_entries_twins() -> None:
    # The fraction is where the warning starts: 45,000 URLs are 90 % of the limit.
    near = int(PROTOCOL_MAX_ENTRIES * 0.9)
    problems = validate_document(big_urlset(near), now=NOW)
    assert [p.code for p in problems] == ["near_limit"]
    assert "45,000 URLs is 90%" in problems[0].message
    assert validate_document(big_urlset(near - 1), now=NOW) == []


def test_near_limit_never_says_100_percent_within_the_limit() -> None:
    (problem,) = validate_document(big_urlset(PROTOCOL_MAX_ENTRIES - 1), now=NOW)
    assert "49,999 URLs is 99%" in problem.message
    (problem,) = validate_document(big_urlset(PROTOCOL_MAX_ENTRIES), now=NOW)
    assert "50,000 URLs is 100%" in problem.message


def test_near_limit_not_repeated_above_the_limit() -> None:
    assert validate_document(big_urlset(PROTOCOL_MAX_ENTRIES + 1), now=NOW) == []


def test_near_limit_fraction_is_configurable() -> None:
    data = urlset(*(url(f"https://www.example.com/{n}") for n in range(6)))
    assert _codes(data, near_limit_fraction=0.0001).count("near_limit") == 1
    assert _codes(data, near_limit_fraction=0.5) == []


def test_near_limit_bytes() -> None:
    data = urlset(url("https://www.example.com/" + "a" * 1900))
    problems = validate_document(data, now=NOW, near_limit_fraction=len(data) / 52_428_800 / 1.01)
    assert [p.code for p in problems] == ["near_limit"]
    assert "bytes uncompressed" in problems[0].message


def test_near_limit_sitemapindex_and_broken_documents() -> None:
    index = (
        f'<sitemapindex xmlns="{SITEMAP_NS}">'
        + "".join(
            f"<sitemap><loc>https://www.example.com/s{n}.xml</loc></sitemap>" for n in range(6)
        )
        + "</sitemapindex>"
    ).encode()
    problems = validate_document(index, now=NOW, near_limit_fraction=0.0001)
    assert [p.code for p in problems] == ["near_limit"]
    assert "child sitemaps" in problems[0].message
    broken = urlset(*(url(f"https://www.example.com/{n}") for n in range(6)))[:-12]
    assert _codes(broken, near_limit_fraction=0.0001) == ["near_limit"]


@pytest.mark.parametrize("fraction", [0, -0.5, 1.5])
def test_near_limit_fraction_must_be_a_fraction(fraction: float) -> None:
    with pytest.raises(ValueError, match="near_limit_fraction"):
        validate_document(urlset(url("https://www.example.com/")), near_limit_fraction=fraction)


# --- generated extension twins ------------------------------------------------------------


def test_too_many_images_twins() -> None:
    ok = urlset(url("https://www.example.com/", "".join(IMAGE.format(n=n) for n in range(1000))))
    bad = urlset(url("https://www.example.com/", "".join(IMAGE.format(n=n) for n in range(1001))))
    assert validate_document(ok, now=NOW) == []
    problems = validate_document(bad, now=NOW)
    assert [p.code for p in problems] == ["too_many_images"]
    assert "has 1001 image:image elements" in problems[0].message
    assert problems[0].line == 3


def test_images_spread_over_urls_are_fine() -> None:
    urls = [
        url(f"https://www.example.com/{u}", "".join(IMAGE.format(n=n) for n in range(600)))
        for u in range(2)
    ]
    assert validate_document(urlset(*urls), now=NOW) == []


def test_news_too_many_twins() -> None:
    ok = urlset(*(url(f"https://www.example.com/{n}", _news()) for n in range(1000)))
    bad = urlset(*(url(f"https://www.example.com/{n}", _news()) for n in range(1001)))
    assert validate_document(ok, now=NOW) == []
    problems = validate_document(bad, now=NOW)
    assert [p.code for p in problems] == ["news_too_many"]
    assert "1001 news:news" in problems[0].message
    assert problems[0].line == 3


@pytest.mark.parametrize(
    ("date", "old"),
    [
        ("2024-06-03T12:00:01Z", False),
        ("2024-06-03T11:59:59Z", True),
        ("2024-06-04", False),
        # A date alone counts from the end of that day in UTC-12:00 (2024-06-03T12:00:00Z).
        ("2024-06-02", False),
        ("2024-06-01", True),
        ("2024-06-02+14:00", True),
        ("2024-06-02-12:00", False),
        ("2024-06-03T13:30+02:00", True),
        ("2024-06-03T16:30:00+02:00", False),
    ],
)
def test_news_age_boundary(date: str, old: bool) -> None:
    codes = _codes(urlset(url("https://www.example.com/a", _news(date))))
    assert ("news_too_old" in codes) is old


def test_news_date_only_message() -> None:
    data = urlset(url("https://www.example.com/a", _news("2024-06-01")))
    problems = validate_document(data, now=NOW)
    assert [p.message for p in problems] == [
        "news:publication_date 2024-06-01 is at least 3 days old (a date without a time counts "
        "from the end of that day in UTC-12:00); Google News sitemaps should only list articles "
        "published in the last 2 days"
    ]


def test_news_age_uses_now_and_naive_now_is_utc() -> None:
    data = urlset(url("https://www.example.com/a", _news("2024-06-01T00:00:00Z")))
    assert _codes(data) == ["news_too_old"]
    later = validate_document(data, now=datetime(2024, 6, 2, 12, 0))
    assert later == []
    assert "news_too_old" in [p.code for p in validate_document(data)]
    assert validate_document(data, now=NOW - timedelta(days=4)) == []


@pytest.mark.parametrize(
    ("date", "codes"),
    [
        ("2024-06-03T24:00:00Z", []),
        ("2024-06-02T24:00:00Z", ["news_too_old"]),
        ("2024-06-03T10:00:00+14:00", ["news_too_old"]),
        ("2024-06-03T10:00:00+15:00", ["schema_invalid"]),
        ("2020-01-01T10:00:00-14:30", ["schema_invalid"]),
        ("2024-06-02T24:00:01Z", ["schema_invalid"]),
    ],
)
def test_news_dates_keep_to_the_xsd_ranges(date: str, codes: list[str]) -> None:
    # NOW is 2024-06-05T12:00Z: two days before it is 2024-06-03T12:00Z.
    assert _codes(urlset(url("https://www.example.com/a", _news(date)))) == codes


@pytest.mark.parametrize("offset", ["+24:00", "-25:00", "+99:99"])
def test_news_date_with_an_impossible_offset_is_a_schema_finding_not_a_crash(
    offset: str,
) -> None:
    data = urlset(url("https://www.example.com/a", _news(f"2020-01-01T10:00:00{offset}")))
    assert _codes(data) == ["schema_invalid"]


@pytest.mark.parametrize(
    ("date", "codes"),
    [
        ("2024-06-05T08:00:00Z", []),
        ("2024-06-05T08:00:00.250+02:00", []),
        ("2024-06-05", []),
        ("2024-06-05T08:00:00", ["news_date_invalid"]),
        ("2024-06-05T08:00:00.250", ["news_date_invalid"]),
        ("2024-06-05+02:00", ["news_date_invalid"]),
        ("2024-06-05Z", ["news_date_invalid"]),
        # Each fault once: no seconds (the XSD's), no time zone (W3C Datetime's).
        ("2024-06-05T08:00", ["news_date_invalid", "schema_invalid"]),
        ("2024-06-05T08:00+02:00", ["schema_invalid"]),
        # A date the XSD refuses is schema_invalid alone, which says why.
        ("2024-06-31T08:00:00", ["schema_invalid"]),
        ("2024-06-05T08:00:00+0200", ["schema_invalid"]),
        ("yesterday", ["schema_invalid"]),
        # The XSD's years that W3C Datetime cannot write: more digits, or before year 1.
        ("12024-06-05", ["news_date_invalid"]),
        ("-2024-06-05", ["news_date_invalid", "news_too_old"]),
        ("-0001-06-05T08:00:00Z", ["news_date_invalid", "news_too_old"]),
        ("+2024-06-05", ["schema_invalid"]),
    ],
)
def test_news_date_is_a_w3c_datetime(date: str, codes: list[str]) -> None:
    assert _codes(urlset(url("https://www.example.com/a", _news(date)))) == codes


def test_news_date_without_a_time_zone_message() -> None:
    data = urlset(url("https://www.example.com/a", _news("2024-06-05T08:00:00")))
    (problem,) = validate_document(data, now=NOW)
    assert problem.message == (
        "news:publication_date '2024-06-05T08:00:00' is not a valid date: a time needs a time "
        "zone (Z or +hh:mm) in W3C Datetime, or its instant is unknown (the XSD accepts it "
        "without one)"
    )
    assert problem.line == 3
    (problem,) = validate_document(
        urlset(url("https://www.example.com/a", _news("2024-06-05+02:00"))), now=NOW
    )
    assert problem.message.endswith(
        "is not a valid date: a date with a time zone is no W3C Datetime form (the XSD "
        "accepts it); give the date alone, or a time with its zone"
    )


@pytest.mark.parametrize(
    ("date", "old"),
    [
        # As in UTC-12:00, the latest it can be: 2024-06-03T12:00:00Z, two days before NOW.
        ("2024-06-03T00:00:00", False),
        ("2024-06-02T23:59:59", True),
    ],
)
def test_news_age_of_a_time_without_a_time_zone(date: str, old: bool) -> None:
    codes = _codes(urlset(url("https://www.example.com/a", _news(date))))
    assert codes == (["news_date_invalid", "news_too_old"] if old else ["news_date_invalid"])


def test_news_age_message_of_a_time_without_a_time_zone() -> None:
    data = urlset(url("https://www.example.com/a", _news("2024-06-01T10:00:00")))
    messages = [p.message for p in validate_document(data, now=NOW) if p.code == "news_too_old"]
    assert messages == [
        "news:publication_date 2024-06-01T10:00:00 is at least 3 days old (a time without a "
        "time zone counts as UTC-12:00, the latest it can be); Google News sitemaps should "
        "only list articles published in the last 2 days"
    ]


def test_news_too_old_per_article_is_capped() -> None:
    old = [url(f"https://www.example.com/{n}", _news("2020-01-01")) for n in range(1005)]
    problems = validate_document(urlset(*old), now=NOW)
    codes = [p.code for p in problems]
    assert codes.count("news_too_old") == 1001
    assert codes.count("news_too_many") == 1
    assert problems[-1].message == "5 more news_too_old findings not listed"


def _video(duration: str) -> str:
    return (
        "<video:video><video:thumbnail_loc>https://www.example.com/t.jpg</video:thumbnail_loc>"
        "<video:title>t</video:title><video:description>d</video:description>"
        "<video:content_loc>https://www.example.com/v.mp4</video:content_loc>"
        f"<video:duration>{duration}</video:duration></video:video>"
    )


@pytest.mark.parametrize(
    ("duration", "codes"),
    [
        ("1", []),
        ("28800", []),
        (" 600 ", []),
        ("+5", []),
        ("0007", []),
        ("0", ["video_duration_invalid"]),
        ("00", ["video_duration_invalid"]),
        ("-0", ["video_duration_invalid"]),
        ("-1", ["video_duration_invalid", "schema_invalid"]),
        ("28801", ["video_duration_invalid", "schema_invalid"]),
        ("3.5", ["video_duration_invalid", "schema_invalid"]),
        ("9" * 5000, ["video_duration_invalid", "schema_invalid"]),
    ],
)
def test_video_duration_is_within_googles_range(duration: str, codes: list[str]) -> None:
    assert _codes(urlset(url("https://www.example.com/", _video(duration)))) == codes


def test_video_duration_message() -> None:
    data = urlset(url("https://www.example.com/", _video("0")))
    (problem,) = validate_document(data, now=NOW)
    assert problem.message == (
        "video:duration '0' is not a whole number of seconds from 1 to 28800 (8 hours), the "
        "range Google accepts"
    )
    assert problem.line == 3


def _expiring(date: str) -> str:
    return _video("600").replace(
        "</video:video>", f"<video:expiration_date>{date}</video:expiration_date></video:video>"
    )


@pytest.mark.parametrize(
    ("date", "expired"),
    [
        # NOW is 2024-06-05T12:00Z; the video is no longer available after the date.
        ("2024-06-05T12:00:01Z", False),
        ("2024-06-05T12:00:00Z", False),
        ("2024-06-05T11:59:59Z", True),
        ("2024-06-05T14:00:00+02:00", False),
        ("2024-06-05T13:59:59+02:00", True),
        # A date alone ends with that day in UTC-12:00 (2024-06-04: at 2024-06-05T12:00Z).
        ("2024-06-05", False),
        ("2024-06-04", False),
        ("2024-06-03", True),
        ("2024-06-04-12:00", False),
        ("2024-06-04+14:00", True),
        # A time without a time zone, as in UTC-12:00.
        ("2024-06-05T00:00:00", False),
        ("2024-06-04T23:59:59", True),
        ("2020-01-01T00:00:00.5Z", True),
        # A year before year 1 is long past; one of five digits is not yet.
        ("-2024-06-05", True),
        ("12024-06-05", False),
    ],
)
def test_video_expiration_date_in_the_past(date: str, expired: bool) -> None:
    codes = _codes(urlset(url("https://www.example.com/", _expiring(date))))
    assert codes == (["video_expired"] if expired else [])


@pytest.mark.parametrize(
    ("date", "message"),
    [
        (
            "2024-06-01T10:00:00+02:00",
            "video:expiration_date 2024-06-01T10:00:00+02:00 passed 4 days ago; Google does not "
            "show a video after its expiration date: remove the video:video, or its "
            "expiration_date if the video is still available",
        ),
        ("2024-06-04T09:00:00Z", "passed 27 hours ago;"),
        ("2024-06-05T10:30:00Z", "passed 1 hour ago;"),
        ("2024-06-05T11:30:00Z", "passed less than an hour ago;"),
        (
            "2024-06-01",
            "passed at least 3 days ago (a date without a time counts from the end of that day "
            "in UTC-12:00);",
        ),
        (
            "2024-06-01T10:00:00",
            "passed at least 3 days ago (a time without a time zone counts as UTC-12:00, the "
            "latest it can be);",
        ),
    ],
)
def test_video_expired_message(date: str, message: str) -> None:
    data = urlset(url("https://www.example.com/", _expiring(date)))
    (problem,) = validate_document(data, now=NOW)
    assert message in problem.message
    assert problem.line == 3


def test_video_expired_for_each_video_and_dated_by_now() -> None:
    videos = _expiring("2024-06-01") + _expiring("2024-06-10") + _expiring("2024-06-02")
    data = urlset(url("https://www.example.com/", videos))
    problems = validate_document(data, now=NOW)
    assert [(p.code, p.message.split(" passed")[0]) for p in problems] == [
        ("video_expired", "video:expiration_date 2024-06-01"),
        ("video_expired", "video:expiration_date 2024-06-02"),
    ]
    assert validate_document(data, now=NOW - timedelta(days=10)) == []
    assert [p.code for p in validate_document(data)] == ["video_expired"] * 3


def test_video_fields_reported_by_name() -> None:
    video = (
        "<video:video><video:thumbnail_loc>https://www.example.com/t.jpg</video:thumbnail_loc>"
        "<video:title> </video:title><video:description>d</video:description>"
        "<video:player_loc>https://www.example.com/player</video:player_loc></video:video>"
    )
    problems = validate_document(urlset(url("https://www.example.com/", video)), now=NOW)
    assert [p.code for p in problems] == ["video_missing_field"]
    assert "video:title" in problems[0].message


@pytest.mark.parametrize(
    ("loc", "codes"),
    [
        ("https://www.example.com/i.jpg", []),
        ("  https://cdn.example.net/i.jpg\n  ", []),
        ("<![CDATA[https://www.example.com/i.jpg?a=1&b=2]]>", []),
        ("https://www.example.com/caf\u00e9.jpg", []),
        ("", ["invalid_url"]),
        ("   ", ["invalid_url"]),
        ("<![CDATA[ ]]>", ["invalid_url"]),
        ("/images/i.jpg", ["invalid_url"]),
        ("None", ["invalid_url"]),
        ("ftp://www.example.com/i.jpg", ["invalid_url"]),
        ("https://www.example.com/a b.jpg", ["invalid_url"]),
    ],
)
def test_image_loc_is_an_http_url(loc: str, codes: list[str]) -> None:
    image = f"<image:image><image:loc>{loc}</image:loc></image:image>"
    assert _codes(urlset(url("https://www.example.com/", image))) == codes


def test_image_loc_messages() -> None:
    images = "".join(
        f"<image:image><image:loc>{loc}</image:loc></image:image>\n"
        for loc in ("", "/i.jpg", "https://www.example.com/" + "x" * 200)
    )
    problems = validate_document(urlset(url("https://www.example.com/", images)), now=NOW)
    assert [(p.code, p.message, p.line) for p in problems] == [
        ("invalid_url", "image:loc '' is not a valid http(s) URL: it is empty", 3),
        (
            "invalid_url",
            "image:loc '/i.jpg' is not a valid http(s) URL: it is relative: it has no scheme "
            "(http:// or https://)",
            4,
        ),
    ]


def _urls_of_video(thumbnail: str | None, content: str | None, player: str | None) -> str:
    fields = [
        f"<video:thumbnail_loc>{thumbnail}</video:thumbnail_loc>" if thumbnail is not None else "",
        "<video:title>t</video:title><video:description>d</video:description>",
        f"<video:content_loc>{content}</video:content_loc>" if content is not None else "",
        f"<video:player_loc>{player}</video:player_loc>" if player is not None else "",
    ]
    return f"<video:video>{''.join(fields)}</video:video>"


T = "https://www.example.com/t.jpg"
V = "https://www.example.com/v.mp4"
P = "https://www.example.com/player?v=1"


@pytest.mark.parametrize(
    ("thumbnail", "content", "player", "codes"),
    [
        (T, V, None, []),
        (T, None, P, []),
        (T, V, P, []),
        # An empty field Google requires is video_missing_field, once.
        (" ", V, None, ["video_missing_field"]),
        (T, "", None, ["video_missing_field"]),
        (T, "", " ", ["video_missing_field"]),
        # An empty or broken URL beside a good one is invalid_url.
        (T, "", P, ["invalid_url"]),
        (T, V, "", ["invalid_url"]),
        (T, "None", None, ["invalid_url"]),
        (T, V, "//www.example.com/player", ["invalid_url"]),
        ("thumbs/1.jpg", V, None, ["invalid_url"]),
        ("", "None", "", ["video_missing_field", "invalid_url", "invalid_url"]),
    ],
)
def test_video_urls_are_http_urls(
    thumbnail: str | None, content: str | None, player: str | None, codes: list[str]
) -> None:
    video = _urls_of_video(thumbnail, content, player)
    assert _codes(urlset(url("https://www.example.com/", video))) == codes


def test_video_url_message() -> None:
    video = _urls_of_video(T, "None", "")
    problems = validate_document(urlset(url("https://www.example.com/", video)), now=NOW)
    assert [p.message for p in problems] == [
        "video:content_loc 'None' is not a valid http(s) URL: it is relative: it has no scheme "
        "(http:// or https://)",
        "video:player_loc '' is not a valid http(s) URL: it is empty",
    ]


def test_two_news_in_one_url_are_too_many() -> None:
    """Google reads one news:news per <url>: one finding for each <url> with more, wherever
    the chunks of a large document end."""
    twice = url("https://www.example.com/a", _news() + _news() + _news())
    once = url("https://www.example.com/b", _news())
    problems = validate_document(urlset(twice, once, twice.replace("/a<", "/c<")), now=NOW)
    assert [(p.code, p.message) for p in problems] == [
        (
            "news_too_many",
            "<url> https://www.example.com/a has more than one news:news; Google reads one "
            "per <url>",
        ),
        (
            "news_too_many",
            "<url> https://www.example.com/c has more than one news:news; Google reads one "
            "per <url>",
        ),
    ]


def _news_named(name: str, title: str) -> str:
    return (
        f"<news:news><news:publication><news:name>{name}</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:publication_date>2024-06-05T08:00:00Z</news:publication_date>"
        f"<news:title>{title}</news:title></news:news>"
    )


@pytest.mark.parametrize(
    ("name", "title", "message"),
    [
        ("Example", "Headline", None),
        ("<![CDATA[Example]]>", " Headline ", None),
        # A comment or processing instruction inside is no text, the text around it is.
        ("<!-- the name -->Example", "Head<?pi x?>line", None),
        (
            "<!-- no name -->",
            "Headline",
            "news:news has an empty news:name (Google requires the publication's name)",
        ),
        (
            "",
            "Headline",
            "news:news has an empty news:name (Google requires the publication's name)",
        ),
        (
            "Example",
            " \n ",
            "news:news has an empty news:title (Google requires the article's title)",
        ),
        (
            "<![CDATA[ ]]>",
            "",
            "news:news has an empty news:name and news:title (Google requires the publication's "
            "name and the article's title)",
        ),
    ],
)
def test_news_name_and_title_are_not_empty(name: str, title: str, message: str | None) -> None:
    problems = validate_document(
        urlset(url("https://www.example.com/a", _news_named(name, title))), now=NOW
    )
    assert [(p.code, p.message, p.line) for p in problems] == (
        [] if message is None else [("news_missing_field", message, 3)]
    )


def test_news_name_or_title_left_out_is_a_schema_finding_only() -> None:
    news = _news_named("Example", "Headline").replace("<news:title>Headline</news:title>", "")
    assert _codes(urlset(url("https://www.example.com/a", news))) == ["schema_invalid"]


def test_hreflang_rel_must_be_alternate() -> None:
    """Google reads only rel="alternate" links as hreflang annotations: one without it is
    ignored, which a whole hreflang set-up written that way would be, silently."""
    links = (
        '<xhtml:link rel="canonical" hreflang="e" href="https://www.example.com/b"/>'
        '<xhtml:link hreflang="en" href="https://www.example.com/a"/>'
        '<xhtml:link rel="canonical" href="https://www.example.com/c"/>'
    )
    problems = validate_document(urlset(url("https://www.example.com/a", links)), now=NOW)
    assert [(p.code, p.message) for p in problems] == [
        (
            "hreflang_invalid",
            'xhtml:link hreflang="e" has rel="canonical", not rel="alternate": search engines '
            "read only alternate links as hreflang annotations, so they ignore it",
        ),
        (
            "hreflang_invalid",
            'xhtml:link hreflang="en" has no rel attribute, not rel="alternate": search engines '
            "read only alternate links as hreflang annotations, so they ignore it",
        ),
    ]


def test_hreflang_rel_tokens_and_whitespace() -> None:
    links = (
        '<xhtml:link rel=" ALTERNATE  " hreflang="de" href=" https://www.example.com/b "/>'
        '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/a"/>'
    )
    assert validate_document(urlset(url("https://www.example.com/a", links)), now=NOW) == []


def test_hreflang_self_link_compares_urls_not_spellings() -> None:
    links = (
        '<xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de/über"/>'
        '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/en"/>'
    )
    data = urlset(url("https://www.example.com/de/%C3%BCber", links))
    assert [p.code for p in validate_document(data, now=NOW)] == []


def test_an_alternate_without_hreflang_is_no_hreflang_annotation() -> None:
    # Google's markup for separate mobile URLs, and an app link: no hreflang, no finding.
    links = (
        '<xhtml:link rel="alternate" media="only screen and (max-width: 640px)" '
        'href="https://m.example.com/a"/>'
        '<xhtml:link rel="alternate" href="android-app://com.example/https/example.com/a"/>'
    )
    assert validate_document(urlset(url("https://www.example.com/a", links)), now=NOW) == []
    empty = '<xhtml:link rel="alternate" hreflang=" " href="https://www.example.com/b"/>'
    problems = validate_document(urlset(url("https://www.example.com/a", empty)), now=NOW)
    assert [(p.code, p.message) for p in problems if p.code == "hreflang_invalid"] == [
        ("hreflang_invalid", 'xhtml:link rel="alternate" has an empty hreflang attribute')
    ]


def _alternates(*pairs: tuple[str, str]) -> str:
    return "".join(
        f'<xhtml:link rel="alternate" hreflang="{value}" href="https://www.example.com/{path}"/>'
        for value, path in pairs
    )


def test_one_hreflang_value_for_two_urls_is_a_conflict() -> None:
    links = _alternates(("en", "en"), ("x-default", "en"), ("de", "de"), ("X-DEFAULT", "int"))
    problems = validate_document(urlset(url("https://www.example.com/en", links)), now=NOW)
    assert [(p.code, p.message) for p in problems] == [
        (
            "hreflang_conflict",
            "<url> https://www.example.com/en lists several URLs for one hreflang value: "
            "'x-default' (https://www.example.com/en, https://www.example.com/int as "
            "'X-DEFAULT'); each value must name one URL, or search engines cannot tell which "
            "page is meant and may ignore the annotation",
        )
    ]


@pytest.mark.parametrize(
    "pairs",
    [
        # One URL under several values: a generic and a regional version, the fallback.
        (("en", "en"), ("en-GB", "en"), ("x-default", "en"), ("de", "de")),
        # The same value and URL twice, in other spellings of both.
        (("de", "de"), ("DE", "de#top"), ("en", "en")),
        # The same value on two <url> entries (two clusters) is not one entry's conflict.
        (("en", "en"),),
    ],
)
def test_no_hreflang_conflict(pairs: tuple[tuple[str, str], ...]) -> None:
    data = urlset(
        url("https://www.example.com/en", _alternates(*pairs)),
        url("https://www.example.com/other", _alternates(("en", "other"))),
    )
    assert validate_document(data, now=NOW) == []


def test_hreflang_conflicts_are_one_finding_per_entry() -> None:
    regions = ("DE", "AT", "CH", "LU", "BE")
    twice = [(f"de-{region}", f"{region}-{n}") for region in regions for n in (1, 2)]
    crowded = [("fr", f"fr-{n}") for n in range(6)]
    data = urlset(
        url("https://www.example.com/DE-1", _alternates(*twice)),
        url("https://www.example.com/fr-0", _alternates(*crowded)),
    )
    problems = validate_document(data, now=NOW)
    assert [(p.code, p.line) for p in problems] == [
        ("hreflang_conflict", 3),
        ("hreflang_conflict", 4),
    ]
    assert (
        ": 'de-DE' (https://www.example.com/DE-1, https://www.example.com/DE-2), 'de-AT' "
        "(https://www.example.com/AT-1, https://www.example.com/AT-2), 'de-CH' "
        "(https://www.example.com/CH-1, https://www.example.com/CH-2), and 2 more values; "
    ) in problems[0].message
    assert (
        ": 'fr' (https://www.example.com/fr-0, https://www.example.com/fr-1, "
        "https://www.example.com/fr-2, and 3 more); "
    ) in problems[1].message


def test_an_invalid_hreflang_is_not_compared() -> None:
    # Google ignores an annotation it cannot read: only hreflang_invalid is said of it.
    links = _alternates(("en", "en"), ("en-UK", "uk"), ("en-uk", "gb"), ("jp", "ja"), ("jp", "jp"))
    data = urlset(url("https://www.example.com/en", links))
    assert [p.code for p in validate_document(data, now=NOW)] == ["hreflang_invalid"] * 4


# --- schema problems: cap, speed, structure -----------------------------------------------


def test_schema_problems_are_capped_at_1000() -> None:
    problems = validate_document(big_urlset(1500, changefreq="Daily"), now=NOW)
    schema = [p for p in problems if p.code == "schema_invalid"]
    assert len(schema) == 1001
    assert schema[999].message.startswith("/urlset/url[1000]/changefreq:")
    assert schema[999].line == 1002
    assert (
        schema[-1].message
        == "500 more schema violations not listed (only the first 1000 are reported)"
    )
    assert schema[-1].line is None


def test_paths_and_lines_are_right_across_chunks() -> None:
    data = big_urlset(3000).replace(
        b"page-2345.html</loc><lastmod>2024-05-01T12:00:00+00:00</lastmod><changefreq>daily",
        b"page-2345.html</loc><lastmod>2024-05-01T12:00:00+00:00</lastmod><changefreq>Daily",
    )
    problems = validate_document(data, now=NOW)
    assert len(problems) == 1
    assert problems[0].message.startswith("/urlset/url[2346]/changefreq: changefreq 'Daily'")
    assert (problems[0].line, problems[0].column) == (2348, 109)


def test_minified_document_columns() -> None:
    data = urlset(
        url("https://www.example.com/a", "<priority>0.3</priority>"),
        url("https://www.example.com/b", "<priority>7</priority>"),
    ).replace(b"\n", b"")
    problems = validate_document(data, now=NOW)
    assert [(p.line, p.column) for p in problems] == [(1, data.decode().index("<priority>7") + 1)]


def test_misplaced_root_element_does_not_hide_later_errors() -> None:
    data = urlset(
        url("https://www.example.com/a"),
        "<image:image><image:loc>https://www.example.com/i.jpg</image:loc></image:image>",
        "<sitemap><loc>https://www.example.com/s.xml</loc></sitemap>",
        url("https://www.example.com/b", "<priority>9</priority>"),
        url("https://www.example.com/c", "<changefreq>sometimes</changefreq>"),
    )
    messages = [p.message for p in validate_document(data, now=NOW)]
    assert len(messages) == 4
    assert messages[0].startswith("/urlset/image:image:")
    assert messages[1].startswith("/urlset/sitemap: <sitemap> is not allowed in <urlset>")
    assert messages[2].startswith("/urlset/url[2]/priority: priority 9 is outside")
    assert messages[3].startswith("/urlset/url[3]/changefreq: changefreq 'sometimes'")


def test_leading_extension_elements_in_urlset_are_validated() -> None:
    leading = "<image:image><image:loc>https://www.example.com/i.jpg</image:loc></image:image>"
    assert validate_document(urlset(leading, url("https://www.example.com/a")), now=NOW) == []
    bad = "<image:image><image:title>t</image:title></image:image>"
    problems = validate_document(urlset(bad, url("https://www.example.com/a")), now=NOW)
    assert [p.code for p in problems] == ["schema_invalid"]
    assert problems[0].message.startswith("/urlset/image:image/image:title:")


def test_empty_urlset_and_root_attributes() -> None:
    problems = validate_document(urlset(), now=NOW)
    assert [p.message for p in problems] == [
        "/urlset: <urlset> lists no <url>: at least one is required"
    ]
    many = urlset(*(url(f"https://www.example.com/{n}") for n in range(1200)))
    with_attr = many.replace(b"<urlset ", b'<urlset version="2" ', 1)
    problems = validate_document(with_attr, now=NOW)
    assert [p.message for p in problems] == [
        "/urlset: attribute version is not allowed on <urlset>"
    ]
    assert (problems[0].line, problems[0].column) == (2, 1)


def test_text_directly_in_urlset() -> None:
    data = urlset(url("https://www.example.com/a")).replace(b"</url>", b"</url>stray text", 1)
    messages = [p.message for p in validate_document(data, now=NOW)]
    assert messages == [
        "/urlset: text is not allowed directly inside <urlset>, only child elements"
    ]


def test_unknown_extension_misplaced_after_url() -> None:
    data = urlset(url("https://www.example.com/a"), '<foo:bar xmlns:foo="urn:example:foo"/>')
    problems = validate_document(data, now=NOW)
    assert sorted(p.code for p in problems) == ["schema_invalid", "unknown_extension"]


@pytest.mark.parametrize(
    ("written", "known", "how"),
    [
        (
            "https://www.google.com/schemas/sitemap-image/1.1",
            "image sitemap namespace http://www.google.com/schemas/sitemap-image/1.1",
            "https:// instead of http://",
        ),
        (
            "http://www.w3.org/1999/xhtml/",
            "XHTML (hreflang) namespace http://www.w3.org/1999/xhtml",
            "a trailing /",
        ),
        (
            "http://google.com/schemas/sitemap-video/1.1",
            "video sitemap namespace http://www.google.com/schemas/sitemap-video/1.1",
            "without www.",
        ),
    ],
)
def test_a_known_extension_namespace_written_another_way_is_named(
    written: str, known: str, how: str
) -> None:
    """Every image (or hreflang...) annotation in such a file is lost to search engines: the
    finding says which namespace was meant, not only that this one is unknown."""
    data = urlset(url("https://www.example.com/a", f'<x:thing xmlns:x="{written}"/>'))
    (problem,) = [p for p in validate_document(data, now=NOW) if p.code == "unknown_extension"]
    assert problem.message == (
        f"extension namespace {written} (first element <x:thing>) is not the {known} ({how}): "
        f"search engines read {known.partition(' namespace')[0]} elements only in that namespace, "
        "so they ignore these; they were not validated"
    )


def test_unknown_extension_is_reported_when_namespace_is_wrong() -> None:
    data = urlset(
        url("https://www.example.com/a", '<foo:bar xmlns:foo="urn:example:foo"/>'),
        namespaces='xmlns="https://www.sitemaps.org/schemas/sitemap/0.9"',
    )
    assert sorted(_codes(data)) == ["namespace_invalid", "unknown_extension"]


def test_extension_checks_run_when_namespace_is_wrong() -> None:
    links = '<xhtml:link rel="alternate" hreflang="en_GB" href="https://www.example.com/b"/>'
    data = urlset(
        url("https://www.example.com/a", links),
        namespaces='xmlns:xhtml="http://www.w3.org/1999/xhtml"',
    )
    # (Its one alternate is invalid, so Google reads no annotation: no hreflang_no_self.)
    assert sorted(_codes(data)) == ["hreflang_invalid", "namespace_invalid"]


def test_prefixed_root() -> None:
    data = (
        f'<sm:urlset xmlns:sm="{SITEMAP_NS}"><sm:url><sm:loc>https://www.example.com/</sm:loc>'
        "<sm:priority>3</sm:priority></sm:url></sm:urlset>"
    ).encode()
    problems = validate_document(data, now=NOW)
    assert [p.message for p in problems] == ["/urlset/url/priority: priority 3 is outside 0.0-1.0"]


def test_valid_50k_document() -> None:
    load_schema()
    data = big_urlset(PROTOCOL_MAX_ENTRIES)
    problems = validate_document(data, now=NOW)
    assert [p.code for p in problems] == ["near_limit"]


def test_invalid_50k_document_reports_the_first_violations_and_counts_the_rest() -> None:
    load_schema()
    data = big_urlset(PROTOCOL_MAX_ENTRIES, changefreq="Daily", lastmod="2004-12-23T18:00+00:00")
    problems = validate_document(data, now=NOW)
    assert problems[-1].message.startswith("99000 more schema violations")


# --- which documents are checked ----------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"\x00\x01\x02",
        b"https://www.example.com/a\nhttps://www.example.com/b\n",
        b'<?xml version="1.0"?><rss version="2.0"><channel><item/></channel></rss>',
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry/></feed>',
        b"<!DOCTYPE html><html><body>Not a sitemap & <b>broken</body></html>",
        b"<html><body><p>a & b</p></body></html>",
        b"<urlsetx><url/></urlsetx>",
    ],
)
def test_other_documents_give_nothing(data: bytes) -> None:
    assert validate_document(data, now=NOW) == []


def test_broken_document_reports_only_document_level_findings() -> None:
    data = urlset(
        url("https://www.example.com/?a=1&b=2", "<priority>5</priority>"),
        url("https://www.example.com/x", "<changefreq>always<</changefreq>"),
    )
    problems = validate_document(data, now=NOW)
    assert [p.code for p in problems] == ["unescaped_characters", "unescaped_characters"]
    assert [(p.line, p.column) for p in problems] == [(3, 39), (4, 60)]


def test_truncated_document_has_no_false_unescaped_report() -> None:
    data = urlset(url("https://www.example.com/a"), url("https://www.example.com/b"))[:-25]
    assert validate_document(data, now=NOW) == []


def test_broken_tag_is_not_reported_as_unescaped() -> None:
    data = b'<?xml version="1.0"?>\n<urlset><url does not close</urlset>\n'
    assert _codes(data) == ["namespace_invalid"]


# --- the unescaped-character scanner ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("<a>x &amp; y &lt; z &#38; &#x26; &quot;</a>", 0),
        ("<a><![CDATA[a & b < c]]></a>", 0),
        ("<a><!-- a & b < c --></a>", 0),
        ("<?pi a & b < c?><a/>", 0),
        ("<a>x & y</a>", 1),
        ("<a>x &y z;</a>", 1),
        ("<a>x &nbsp; y</a>", 1),
        ('<!DOCTYPE a [<!ENTITY nbsp "&#160;">]><a>x &nbsp; y</a>', 0),
        ("<a>1 < 2</a>", 1),
        ("<a>a<b</a>", 1),
        ("<a>x ]]> y</a>", 1),
        ("<a>x > y</a>", 0),
        ('<a href="x?a=1&b=2">t</a>', 1),
        ('<a href="x<y">t</a>', 1),
        ("<a>x &amp y</a>", 1),
    ],
)
def test_scan_unescaped(text: str, count: int) -> None:
    problems = scan_unescaped(text)
    assert len(problems) == count, problems
    assert all(p.code == "unescaped_characters" for p in problems)


def test_scan_unescaped_positions_with_multibyte_text() -> None:
    problems = scan_unescaped("<a>\n  <b>caf\u00e9 & cr\u00e8me</b>\n</a>")
    assert [(p.line, p.column) for p in problems] == [(2, 11)]


def test_unescaped_in_utf16_document() -> None:
    data = (
        '<?xml version="1.0" encoding="UTF-16"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}"><url><loc>https://www.example.com/?a&b</loc></url></urlset>'
    ).encode("utf-16")
    assert sorted(_codes(data)) == ["encoding_invalid", "unescaped_characters"]


def test_encoding_declared_utf8_variants_are_accepted() -> None:
    for declared in ("utf-8", "UTF8", "Utf-8"):
        data = urlset(url("https://www.example.com/")).replace(b"UTF-8", declared.encode(), 1)
        assert validate_document(data, now=NOW) == [], declared


def test_encoding_invalid_counts_bad_sequences() -> None:
    data = urlset(url("https://www.example.com/\xe9\xe8", "<lastmod>2024-01-01</lastmod>")).replace(
        b"\xc3\xa9\xc3\xa8", b"\xe9\xe8"
    )
    problems = validate_document(data, now=NOW)
    assert [p.code for p in problems] == ["encoding_invalid"]
    assert "2 invalid sequences" in problems[0].message


def test_concurrent_validation_keeps_results_apart() -> None:
    documents = [
        big_urlset(2000, changefreq=changefreq)
        for changefreq in ("Daily", "daily", "Weekly", "often", "never", "Monthly")
    ]
    expected = [validate_document(data, now=NOW) for data in documents]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _round in range(3):
            results = list(pool.map(lambda data: validate_document(data, now=NOW), documents))
            assert results == expected


def test_invisible_whitespace_in_a_value_is_shown_escaped() -> None:
    data = urlset(url("\u00a0https://www.example.com/nbsp\u200b"))
    problems = validate_document(data, now=NOW)
    assert [p.code for p in problems] == ["schema_invalid"]
    assert "loc '\\xa0https://www.example.com/nbsp\\u200b' is not" in problems[0].message


# --- line ends ----------------------------------------------------------------------------

_LINE_ENDS = {
    "lf": (b"\n",),
    "crlf": (b"\r\n",),
    "cr": (b"\r",),
    "mixed": (b"\r", b"\r\n", b"\n"),
}


def _joined(lines: list[str], ends: tuple[bytes, ...]) -> bytes:
    """``lines``, each ended by the next of ``ends`` in turn."""
    return b"".join(line.encode() + ends[n % len(ends)] for n, line in enumerate(lines))


def _positions(data: bytes) -> list[tuple[str, int | None, int | None]]:
    return [(p.code, p.line, p.column) for p in validate_document(data, now=NOW)]


@pytest.mark.parametrize("ends", _LINE_ENDS.values(), ids=_LINE_ENDS.keys())
def test_unescaped_characters_lines_with_every_kind_of_line_end(ends: tuple[bytes, ...]) -> None:
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<urlset xmlns="{SITEMAP_NS}">',
        "<url>",
        "<loc>https://www.example.com/?a=1&b=2</loc>",
        "</url>",
        "<url><loc>https://www.example.com/x</loc><changefreq>a < b</changefreq></url>",
        "</urlset>",
    ]
    assert _positions(_joined(lines, ends)) == [
        ("unescaped_characters", 4, 34),
        ("unescaped_characters", 6, 56),
    ]


@pytest.mark.parametrize("ends", _LINE_ENDS.values(), ids=_LINE_ENDS.keys())
def test_schema_and_encoding_lines_with_every_kind_of_line_end(ends: tuple[bytes, ...]) -> None:
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<urlset xmlns="{SITEMAP_NS}">',
        "<url>",
        "<loc>https://www.example.com/a</loc>",
        "</url>",
        "<url>",
        "<loc>https://www.example.com/b</loc>",
        "<changefreq>sometimes</changefreq>",
        "</url>",
        "</urlset>",
    ]
    data = _joined(lines, ends)
    assert _positions(data) == [("schema_invalid", 8, 1)]
    broken = data.replace(b"/b<", b"/\xe9<")
    assert _positions(broken) == [("encoding_invalid", 7, 30)]


# --- a byte order mark against the XML declaration ------------------------------------------


def test_a_utf8_byte_order_mark_against_the_declaration_is_encoding_invalid() -> None:
    data = b"\xef\xbb\xbf" + urlset(url("https://www.example.com/caf\u00e9")).replace(
        b'encoding="UTF-8"', b'encoding="ISO-8859-1"'
    )
    (problem,) = validate_document(data, now=NOW)
    assert (problem.code, problem.line, problem.column) == ("encoding_invalid", 1, 31)
    assert problem.message == (
        "the byte order mark says UTF-8 but the XML declaration says "
        "encoding='ISO-8859-1'; the byte order mark wins (as in XML parsers and browsers) "
        "and the document is read as UTF-8. Sitemaps must be UTF-8: declare "
        'encoding="UTF-8", or nothing'
    )


def test_a_utf8_byte_order_mark_against_the_declaration_decodes_the_text_as_utf8() -> None:
    data = b"\xef\xbb\xbf" + urlset(url("https://www.example.com/caf\u00e9?a&b")).replace(
        b'encoding="UTF-8"', b'encoding="ISO-8859-1"'
    )
    problems = validate_document(data, now=NOW)
    assert [(p.code, p.line, p.column) for p in problems] == [
        ("encoding_invalid", 1, 31),
        ("unescaped_characters", 3, 41),
    ]
    assert "caf\u00e9?a&b" in problems[1].message


def test_a_utf16_byte_order_mark_against_the_declaration_is_encoding_invalid() -> None:
    text = urlset(url("https://www.example.com/caf\u00e9")).decode()
    (problem,) = validate_document(text.encode("utf-16"), now=NOW)
    assert (problem.code, problem.line, problem.column) == ("encoding_invalid", 1, 1)
    assert "UTF-16 (detected from its byte order mark)" in problem.message


def test_an_index_entry_s_extension_elements_are_not_judged_as_a_page_s() -> None:
    """Google reads no hreflang, news, image or video annotation in a sitemap index: its
    entries are sitemaps, not pages, so none gets a page's finding."""
    data = (
        f'<sitemapindex xmlns="{SITEMAP_NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml" '
        'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
        "<sitemap><loc>https://e.com/s1.xml</loc>"
        '<xhtml:link rel="alternate" hreflang="en_US" href="https://e.com/x"/></sitemap>'
        "<sitemap><loc>https://e.com/s2.xml</loc><news:news><news:publication>"
        "<news:name>N</news:name><news:language>en</news:language></news:publication>"
        "<news:publication_date>2020-01-01</news:publication_date><news:title>T</news:title>"
        "</news:news></sitemap></sitemapindex>"
    ).encode()
    codes = {problem.code for problem in validate_document(data, now=NOW)}
    assert not codes & {"hreflang_no_self", "hreflang_invalid", "news_too_old"}, codes


def test_a_self_link_with_an_invalid_hreflang_is_no_self_reference() -> None:
    """Google ignores an annotation whose hreflang is invalid: the page lists no usable
    alternate for itself."""
    data = urlset(
        "<url><loc>https://e.com/a</loc>"
        '<xhtml:link rel="alternate" hreflang="en_US" href="https://e.com/a"/>'
        '<xhtml:link rel="alternate" hreflang="de" href="https://e.com/b"/></url>'
    )
    codes = sorted(problem.code for problem in validate_document(data, now=NOW))
    assert codes == ["hreflang_invalid", "hreflang_no_self", "schema_invalid"]


def test_a_year_w3c_datetime_cannot_write_is_named() -> None:
    data = urlset(url("https://www.example.com/a", _news("-2024-06-05")))
    messages = {p.code: p.message for p in validate_document(data, now=NOW)}
    assert messages["news_date_invalid"] == (
        "news:publication_date '-2024-06-05' is not a valid date: W3C Datetime writes a year "
        "with four digits and no sign"
    )
    assert messages["news_too_old"].startswith("news:publication_date -2024-06-05 is at least 739,")
    assert "(a year before year 1 counts as year 1)" in messages["news_too_old"]
