"""Plain-language schema messages, and the CODES table."""

from __future__ import annotations

import pytest

from sitemapaudit.validation import CODES, validate_document
from sitemapaudit.validation.messages import date_reason, explain
from tests.validation.conftest import NOW, url, urlset

VIDEO_HEAD = (
    "<video:thumbnail_loc>https://www.example.com/t.jpg</video:thumbnail_loc>"
    "<video:title>t</video:title><video:description>d</video:description>"
    "<video:content_loc>https://www.example.com/v.mp4</video:content_loc>"
)


def _messages(inner: str) -> list[str]:
    problems = validate_document(urlset(url("https://www.example.com/a", inner)), now=NOW)
    return [p.message for p in problems if p.code == "schema_invalid"]


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        (
            "<changefreq> daily</changefreq>",
            "/urlset/url/changefreq: changefreq ' daily' is not one of "
            "always/hourly/daily/weekly/monthly/yearly/never (remove the surrounding "
            "whitespace: 'daily')",
        ),
        ("<changefreq>often</changefreq>", "changefreq 'often' is not one of always/hourly"),
        (
            "<priority>high</priority>",
            "priority 'high' is not a decimal number between 0.0 and 1.0",
        ),
        ("<priority>-0.1</priority>", "priority -0.1 is outside 0.0-1.0"),
        ("<lastmod>2024-01-01T10:00:00+0100</lastmod>", "write the time zone as +hh:mm"),
        ("<lastmod>2024-01-01T10:00:00+01</lastmod>", "with minutes"),
        ("<lastmod>yesterday</lastmod>", "lastmod 'yesterday' is not a W3C/XSD date"),
        ("<lastmod>2024-01-01</lastmod><lastmod>2024-01-02</lastmod>", "duplicate <lastmod>"),
        ("<loc>https://www.example.com/b</loc>", "duplicate <loc>"),
        (
            f"<video:video>{VIDEO_HEAD}<video:duration>99999</video:duration></video:video>",
            "/urlset/url/video:video/video:duration: video:duration 99999 is greater than the "
            "maximum 28800",
        ),
        (
            f"<video:video>{VIDEO_HEAD}<video:duration>-1</video:duration></video:video>",
            "video:duration '-1' is not a non-negative whole number of seconds, at most 28800",
        ),
        (
            f"<video:video>{VIDEO_HEAD}<video:rating>lots</video:rating></video:video>",
            "video:rating 'lots' is not a number from 0.0 to 5.0",
        ),
        (
            f"<video:video>{VIDEO_HEAD}<video:family_friendly>maybe</video:family_friendly>"
            "</video:video>",
            "video:family_friendly 'maybe' is not one of yes/Yes/YES/no/No/NO",
        ),
        (
            f"<video:video>{VIDEO_HEAD}<video:restriction>US</video:restriction></video:video>",
            "<video:restriction> needs the attribute relationship",
        ),
        (
            f'<video:video>{VIDEO_HEAD}<video:price currency="usd">1</video:price></video:video>',
            "attribute currency of <video:price> 'usd' does not match the pattern [A-Z]{3}",
        ),
        (
            f"<video:video>{VIDEO_HEAD}<video:bogus/></video:video>",
            "<video:bogus> is not allowed in <video:video>",
        ),
        (
            "<video:video><video:thumbnail_loc>https://www.example.com/t.jpg</video:thumbnail_loc>"
            f"<video:title>{'x' * 101}</video:title><video:description>d</video:description>"
            "<video:content_loc>https://www.example.com/v.mp4</video:content_loc></video:video>",
            "video:title is 101 characters long, longer than the maximum of 100",
        ),
        ("<image:picture/>", "<image:picture> is not an element of the image extension schema"),
        (
            '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/a" foo="1"/>',
            "attribute foo is not allowed on <xhtml:link>",
        ),
        ("text<lastmod>2024-01-01</lastmod>", "text is not allowed directly inside <url>"),
        (
            "<image:image><image:loc>https://www.example.com/i.jpg</image:loc></image:image>"
            "<lastmod>2024-01-01</lastmod>",
            "wrong element order: <lastmod> cannot come after <image:image> in <url>",
        ),
        (
            "<news:news><news:publication><news:language>en</news:language></news:publication>"
            "<news:publication_date>2024-06-05</news:publication_date><news:title>t</news:title>"
            "</news:news>",
            "<news:publication> has no <news:name> before <news:language>",
        ),
    ],
)
def test_schema_messages(inner: str, expected: str) -> None:
    messages = _messages(inner)
    assert any(expected in message for message in messages), messages


NEWS_PUBLICATION = (
    "<news:publication><news:name>Example</news:name><news:language>en</news:language>"
    "</news:publication>"
)
DATE_REQUIRED = (
    "Google requires the article's publication date (YYYY-MM-DD, or with a time such as "
    "2024-06-01T09:30:00+02:00)"
)


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        (
            f"<news:news>{NEWS_PUBLICATION}<news:title>t</news:title></news:news>",
            "/urlset/url/news:news/news:title: <news:news> has no <news:publication_date> "
            f"before <news:title>: {DATE_REQUIRED}",
        ),
        (
            f"<news:news>{NEWS_PUBLICATION}<news:genres>Blog</news:genres>"
            "<news:title>t</news:title></news:news>",
            "/urlset/url/news:news/news:title: <news:news> has no <news:publication_date> "
            f"before <news:title>: {DATE_REQUIRED}",
        ),
        (
            f"<news:news>{NEWS_PUBLICATION}</news:news>",
            f"/urlset/url/news:news: <news:news> has no <news:publication_date>: {DATE_REQUIRED}",
        ),
        (
            f"<news:news>{NEWS_PUBLICATION}<news:publication_date>2024-06-05"
            "</news:publication_date></news:news>",
            "/urlset/url/news:news: <news:news> has no <news:title>: Google requires the "
            "article's title",
        ),
        (
            "<news:news><news:publication><news:name>Example</news:name></news:publication>"
            "<news:publication_date>2024-06-05</news:publication_date><news:title>t</news:title>"
            "</news:news>",
            "/urlset/url/news:news/news:publication: <news:publication> has no "
            "<news:language>: Google requires the publication's language",
        ),
        (
            "<video:video><video:thumbnail_loc>https://www.example.com/t.jpg"
            "</video:thumbnail_loc><video:title>t</video:title>"
            "<video:content_loc>https://www.example.com/v.mp4</video:content_loc></video:video>",
            "/urlset/url/video:video/video:content_loc: <video:video> has no "
            "<video:description> before <video:content_loc>: Google requires the video's "
            "description",
        ),
        (
            f"<video:video>{VIDEO_HEAD}<video:tvshow><video:show_title>s</video:show_title>"
            "<video:episode_title>e</video:episode_title></video:tvshow></video:video>",
            "/urlset/url/video:video/video:tvshow/video:episode_title: <video:tvshow> has no "
            "<video:video_type> before <video:episode_title>: <video:video_type> is required",
        ),
    ],
)
def test_a_missing_required_child_is_named(inner: str, expected: str) -> None:
    assert _messages(inner) == [expected]


def test_a_required_child_out_of_order_is_an_order_problem() -> None:
    inner = (
        f"<news:news>{NEWS_PUBLICATION}<news:title>t</news:title>"
        "<news:publication_date>2024-06-05</news:publication_date></news:news>"
    )
    (message,) = _messages(inner)
    assert "element order only: <news:title> comes after <news:publication>" in message


def test_xhtml_link_before_loc() -> None:
    inner = '<xhtml:link rel="alternate" hreflang="en" href="https://www.example.com/a"/>'
    data = urlset(f"<url>{inner}<loc>https://www.example.com/a</loc></url>")
    messages = [p.message for p in validate_document(data, now=NOW)]
    assert messages == [
        "/urlset/url/xhtml:link: wrong element order: extension element <xhtml:link> cannot come "
        "before <url>'s own elements; expected <loc>; the children of <url> must follow the "
        "sequence loc, lastmod, changefreq, priority, then extension elements"
    ]


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("2004-12-23T18:00+00:00", "seconds are required"),
        ("2004-12-23T18:00Z", "seconds are required"),
        ("2004-12-23T18:00", "seconds are required"),
        ("2004", "a year or a year-month alone"),
        ("2004-12", "a year or a year-month alone"),
        ("2004-12-23 18:00:00", "not a space"),
        ("2004-12-23T18:00:00+0000", "+hh:mm"),
        ("2004-12-23T18:00:00+15:00", "offsets run from -14:00 to +14:00"),
        ("2004-12-23T18:00:00-14:30", "offsets run from -14:00 to +14:00"),
        ("2004-12-23-14:01", "offsets run from -14:00 to +14:00"),
        ("23/12/2004", "YYYY-MM-DD"),
    ],
)
def test_date_reasons(value: str, hint: str) -> None:
    assert hint in date_reason("lastmod", value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2024-13-01", "there is no month 13"),
        ("2024-00-10", "there is no month 00"),
        ("2024-01-00", "there is no day 00"),
        ("2024-04-31", "April has 30 days, not 31"),
        ("2023-02-29", "February 2023 has 28 days (2023 is not a leap year)"),
        ("2024-02-30T10:00:00Z", "February 2024 has 29 days, not 30"),
        ("2024-06-01T25:00:00Z", "there is no hour 25"),
        ("2024-06-01T24:00:01", "hour 24 has only 24:00:00"),
        ("2024-06-01T23:60:00+02:00", "there is no minute 60"),
        ("2024-06-01T23:59:60Z", "there is no second 60"),
        ("2024-06-01T12:00:00+01:60", "a time zone has no minute 60"),
        ("0000-01-01", "there is no year 0000"),
    ],
)
def test_a_date_of_the_right_form_that_names_no_real_day_or_time_says_why(
    value: str, reason: str
) -> None:
    [message] = _messages(f"<lastmod>{value}</lastmod>")
    assert message.startswith(
        f"/urlset/url/lastmod: lastmod '{value}' is not a W3C/XSD date: it has the right "
        f"form, but {reason}"
    )
    assert "the XSD accepts" not in message


@pytest.mark.parametrize("value", ["2024-02-29", "2000-02-29", "2024-06-01T24:00:00Z"])
def test_the_real_days_and_times_near_those_are_valid(value: str) -> None:
    assert _messages(f"<lastmod>{value}</lastmod>") == []


def test_news_and_video_publication_dates_say_why_they_name_no_real_day() -> None:
    news = (
        "<news:news><news:publication><news:name>N</news:name><news:language>en</news:language>"
        "</news:publication><news:publication_date>2024-04-31</news:publication_date>"
        "<news:title>T</news:title></news:news>"
    )
    video = (
        f"<video:video>{VIDEO_HEAD}<video:publication_date>2023-02-29T10:00:00+01:00"
        "</video:publication_date></video:video>"
    )
    assert _messages(news + video) == [
        "/urlset/url/news:news/news:publication_date: news:publication_date '2024-04-31' is "
        "not a W3C/XSD date: it has the right form, but April has 30 days, not 31",
        "/urlset/url/video:video/video:publication_date: video:publication_date "
        "'2023-02-29T10:00:00+01:00' is not a W3C/XSD date: it has the right form, but "
        "February 2023 has 28 days (2023 is not a leap year)",
    ]


def test_a_time_zone_within_the_xsd_range_gets_no_offset_hint() -> None:
    assert "offsets" not in date_reason("lastmod", "2004-12-23T18:00:00+14:00 x")
    assert "offsets" not in date_reason("lastmod", "2004-12-23T18:00:00-14:00")


def test_explain_keeps_unknown_messages_readable() -> None:
    message = (
        "Element '{http://www.sitemaps.org/schemas/sitemap/0.9}url': Something new happened "
        "with '{http://www.google.com/schemas/sitemap-image/1.1}image'."
    )
    assert explain(message, None) == "<url>: Something new happened with 'image:image'."
    assert explain("no element prefix at all", None) == "no element prefix at all"


def test_codes_table() -> None:
    for code, (severity, meaning) in CODES.items():
        assert code.islower()
        assert " " not in code
        assert severity in {"error", "warning", "notice"}
        assert meaning.endswith(".")
        assert "\n" not in meaning
    assert CODES["unknown_extension"][0] == "warning"
    assert CODES["near_limit"][0] == "warning"
    assert CODES["schema_invalid"][0] == "error"


def _video(inner: str) -> list[str]:
    return _messages(f"<video:video>{VIDEO_HEAD}{inner}</video:video>")


def test_video_tags_up_to_the_xsd_maximum() -> None:
    assert _video("<video:tag>t</video:tag>" * 32) == []
    assert _video("<video:tag>t</video:tag>" * 34) == [
        "/urlset/url/video:video/video:tag[33]: 34 <video:tag> elements in <video:video>; "
        "at most 32 are allowed"
    ]
    # More than once, where only once is allowed: still a duplicate.
    assert _video(
        "<video:tag>t</video:tag><video:tag>u</video:tag><video:live>no</video:live>"
        "<video:live>no</video:live>"
    ) == [
        "/urlset/url/video:video/video:live[2]: duplicate <video:live>: <video:video> allows it "
        "only once here; expected <video:id>"
    ]


GOOGLE_ORDER = (
    '<video:restriction relationship="allow">IE GB US CA</video:restriction>'
    '<video:platform relationship="allow">web tv</video:platform>'
    "<video:requires_subscription>yes</video:requires_subscription><video:live>no</video:live>"
)


def test_an_extension_element_order_only_xsd_validators_refuse_is_said_so() -> None:
    assert _video(GOOGLE_ORDER) == [
        "/urlset/url/video:video/video:requires_subscription: element order only: "
        "<video:requires_subscription> comes after <video:platform> in <video:video>, which the "
        "sequence of the video extension's XSD does not allow (video:thumbnail_loc, video:title, "
        "video:description, video:content_loc, video:player_loc, video:duration, "
        "video:expiration_date, video:rating, video:content_segment_loc, video:view_count, "
        "video:publication_date, video:tag, video:category, video:family_friendly, "
        "video:restriction, video:gallery_loc, video:price, video:requires_subscription, "
        "video:uploader, video:tvshow, video:platform, video:live, video:id); Google's "
        "documentation does not require this order, so only XSD validators refuse it"
    ]
    (tags_last,) = _video(GOOGLE_ORDER + "<video:tag>a</video:tag><video:tag>b</video:tag>")
    assert "element order only: <video:requires_subscription> comes after" in tags_last
    image = (
        "<image:image><image:title>t</image:title>"
        "<image:loc>https://www.example.com/i.jpg</image:loc></image:image>"
    )
    (message,) = _messages(image)
    assert "element order only: <image:title> comes first in <image:image>" in message


@pytest.mark.parametrize(
    "inner",
    [
        # A child twice that the XSD allows once, or one the XSD does not know: more than order.
        GOOGLE_ORDER + "<video:live>no</video:live>",
        GOOGLE_ORDER + "<video:bogus/>",
        "<video:tag>t</video:tag>" * 33 + '<video:restriction relationship="allow">US'
        "</video:restriction><video:tag>t</video:tag>",
    ],
)
def test_an_order_error_with_more_wrong_is_not_order_only(inner: str) -> None:
    (message,) = _video(inner)
    assert "element order only" not in message
    assert "wrong element order" in message or "at most 32" in message


def test_the_order_of_a_url_s_own_elements_is_still_required() -> None:
    (message,) = _messages("<priority>0.5</priority><lastmod>2024-01-01</lastmod>")
    assert "wrong element order: <lastmod> cannot come after <priority> in <url>" in message


def test_after_a_content_model_error_the_rest_of_that_element_waits_for_its_fix() -> None:
    rest = "<video:restriction>US</video:restriction><video:live>true</video:live>"
    (message,) = _video("<video:tag>t</video:tag>" * 33 + rest)
    assert "33 <video:tag> elements" in message
    assert [m.split(": ", 1)[1] for m in _video("<video:tag>t</video:tag>" * 32 + rest)] == [
        "<video:restriction> needs the attribute relationship",
        "video:live 'true' is not one of yes/Yes/YES/no/No/NO",
    ]


def _attributes(count: int, start: int = 0) -> str:
    return " ".join(f'a{i}="1"' for i in range(start, start + count))


def test_an_element_with_absurdly_many_attributes_is_validated_with_its_first_hundred() -> None:
    data = urlset(f"<url {_attributes(5000)}><loc>https://www.example.com/a</loc></url>")
    messages = [p.message for p in validate_document(data, now=NOW)]
    assert messages[0] == (
        "/urlset/url: 5,000 attributes, more than any sitemap element allows: "
        "only the first 100 were validated"
    )
    assert messages[1:] == [
        f"/urlset/url: attribute a{i} is not allowed on <url>" for i in range(100)
    ]


def test_an_element_with_a_hundred_attributes_is_validated_whole() -> None:
    data = urlset(f"<url {_attributes(100)}><loc>https://www.example.com/a</loc></url>")
    messages = [p.message for p in validate_document(data, now=NOW)]
    assert messages == [f"/urlset/url: attribute a{i} is not allowed on <url>" for i in range(100)]


def test_a_required_attribute_past_the_hundredth_is_still_validated() -> None:
    restriction = (
        f'<video:restriction {_attributes(150)} relationship="allow">US</video:restriction>'
    )
    messages = _video(restriction)
    assert messages[0].endswith(
        "video:restriction: 151 attributes, more than any sitemap element allows: "
        "only the first 100 were validated"
    )
    assert len(messages) == 101
    assert not any("needs the attribute" in message for message in messages)
