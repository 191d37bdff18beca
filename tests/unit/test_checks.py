"""Each check on facts built by hand: the finding applies, and its false-alarm twin does not."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from typing import Any

import pytest

from sitemapaudit.checks.base import Check, UrlCheck
from sitemapaudit.checks.lastmod import listed_lastmod
from sitemapaudit.checks.registry import ALL_CHECKS
from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import FetchOutcome, SitemapFacts, UrlFacts
from sitemapaudit.page.dates import parse_w3c_datetime
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import UrlRecord
from sitemapaudit.sitemap.records import Problem
from sitemapaudit.validation import validate_document

AUDIT_TIME = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
U = "https://e.com/p"


def builder(**settings: Any) -> RecordBuilder:
    return RecordBuilder(AuditConfig.from_settings(settings), AUDIT_TIME)


def url_issues(**kwargs: Any) -> list[str]:
    return url_record(**kwargs).issues


def url_record(
    *,
    lastmod: str | None = None,
    fmt: str = "w3c",
    rules: list[str] | None = None,
    blocked: bool = False,
    listed: int = 1,
    hreflang: list[str] | None = None,
    **outcome: Any,
) -> UrlRecord:
    outcome.setdefault("fetched", True)
    outcome.setdefault("status", 200)
    facts = UrlFacts(
        url=U,
        sitemaps=["https://e.com/s.xml"],
        lastmod=lastmod,
        lastmod_format=fmt,
        times_listed=listed,
        rules=rules or [],
        robots_blocked=blocked,
        outcome=FetchOutcome(final_url=outcome.pop("final_url", U), **outcome),
        hreflang=hreflang or [],
    )
    return builder().url_record(facts)


def test_a_clean_page_has_no_findings() -> None:
    assert url_issues() == []


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"status": 404}, "http_error"),
        ({"status": 503}, "http_error"),
        ({"status": 204}, "non_200"),
        ({"status": 304}, "non_200"),
        ({"status": 300}, "non_200"),
        ({"fetched": False, "status": None, "error": "TimeoutError"}, "fetch_failed"),
        (
            {"redirect_chain": [{"url": U, "status": 301}], "final_url": "https://e.com/q"},
            "redirect",
        ),
        ({"redirect_chain": [{"url": U, "status": 302}], "redirect_loop": True}, "redirect_loop"),
        (
            {"status": 301, "redirect_chain": [{"url": U, "status": 301}], "redirect_broken": "x"},
            "redirect_broken",
        ),
        (
            {"status": 301, "redirect_blocked": "https://e.com/private/p"},
            "redirect_blocked",
        ),
        ({"noindex": ["meta:robots"]}, "noindex"),
        ({"canonical": "https://e.com/other", "canonical_source": "link"}, "canonical_mismatch"),
        (
            {"canonical": U, "canonical_source": "link", "canonical_others": ["https://e.com/o"]},
            "canonical_conflict",
        ),
        ({"refresh": {"source": "meta", "delay": 0, "url": "https://e.com/next"}}, "meta_refresh"),
        ({"head_broken": {"start": "<img>", "ignored": ["a robots meta"]}}, "head_broken"),
        ({"head_too_large": 2097152}, "head_too_large"),
        ({"refresh": {"source": "header", "delay": 5, "url": "https://e.com/"}}, "meta_refresh"),
        ({"rules": ["invalid_url"], "fetched": False, "status": None}, "invalid_url"),
        ({"rules": ["url_too_long"], "fetched": False, "status": None}, "url_too_long"),
        ({"rules": ["off_host"], "fetched": False, "status": None}, "off_host"),
        ({"rules": ["out_of_scope"]}, "out_of_scope"),
        ({"blocked": True, "fetched": False, "status": None}, "robots_blocked"),
        ({"listed": 2}, "duplicate"),
        ({"lastmod": "2024-02-30"}, "lastmod_invalid"),
        ({"lastmod": "2024-06-01T10:00"}, "lastmod_invalid"),
        (
            {"lastmod": "2025-01-01", "last_modified": "Sat, 01 Jun 2024 10:00:00 GMT"},
            "lastmod_future",
        ),
        (
            {"lastmod": "2024-01-01T00:00:00Z", "last_modified": "Wed, 01 May 2024 10:00:00 GMT"},
            "lastmod_mismatch",
        ),
        ({"lastmod": "2024-05-01"}, "lastmod_unverifiable"),
        (
            {
                "lastmod": "2024-05-01",
                "last_modified": "Sat, 01 Jun 2024 11:59:59 GMT",
                "date": "Sat, 01 Jun 2024 12:00:00 GMT",
            },
            "lastmod_unverifiable",
        ),
    ],
)
def test_each_url_check_fires(kwargs: dict[str, Any], code: str) -> None:
    assert code in url_issues(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"canonical": "HTTPS://E.COM:443/p#frag", "canonical_source": "link"},
        {"canonical": "https://e.com/%70", "canonical_source": "link"},
        {"refresh": {"source": "meta", "delay": 30, "url": "HTTPS://e.com/p#top"}},
        {"lastmod": "2024-05-01T12:00:00+02:00", "last_modified": "Wed, 01 May 2024 10:00:00 GMT"},
        {"lastmod": "2024-05-01", "last_modified": "Thu, 02 May 2024 03:00:00 GMT"},
        # 59 minutes after 1 May ends at UTC-12, within the default tolerance of an hour.
        {"lastmod": "2024-05-01", "last_modified": "Thu, 02 May 2024 12:59:00 GMT"},
        {"lastmod": "2024-05-01", "last_modified": "Tue, 30 Apr 2024 09:00:00 GMT"},
        {
            "lastmod": "Wed, 01 May 2024 10:00:00 GMT",
            "fmt": "rfc822",
            "last_modified": "Wed, 01 May 2024 10:00:00 GMT",
        },
        {"lastmod": "2024-05-01T10:30:00Z", "last_modified": "Wed, 01 May 2024 10:00:00 GMT"},
    ],
)
def test_false_alarm_twins_stay_clean(kwargs: dict[str, Any]) -> None:
    assert url_issues(**kwargs) == []


def test_a_date_only_lastmod_is_a_mismatch_beyond_the_tolerance_past_its_day() -> None:
    late = "Thu, 02 May 2024 13:30:00 GMT"
    assert url_issues(lastmod="2024-05-01", last_modified=late) == ["lastmod_mismatch"]
    record = builder(SITEMAPAUDIT_LASTMOD_TOLERANCE=7200).url_record(
        UrlFacts(
            url=U,
            sitemaps=["https://e.com/s.xml"],
            lastmod="2024-05-01",
            lastmod_format="w3c",
            times_listed=1,
            rules=[],
            robots_blocked=False,
            outcome=FetchOutcome(final_url=U, fetched=True, status=200, last_modified=late),
        )
    )
    assert record.issues == []


def test_refresh_and_canonical_conflict_messages_name_the_urls() -> None:
    record = url_record(
        canonical="https://e.com/a",
        canonical_source="link",
        canonical_others=["https://e.com/b"],
        refresh={"source": "meta", "delay": 3, "url": "https://e.com/next"},
    )
    assert record.errors == [
        "meta_refresh: <meta> refresh sends browsers to https://e.com/next after 3 s",
        "canonical_mismatch: canonical (link) is https://e.com/a",
        "canonical_conflict: 2 different canonical URLs: https://e.com/a, https://e.com/b",
    ]


def test_out_of_scope_names_the_sitemap_it_breaks_the_rule_of() -> None:
    facts = UrlFacts(
        url="http://e.com/a/p",
        sitemaps=["https://cdn.e.net/s.xml", "https://e.com/a/s.xml"],
        lastmod=None,
        lastmod_format="w3c",
        times_listed=2,
        rules=["out_of_scope"],
        robots_blocked=False,
        outcome=FetchOutcome(fetched=True, status=200, final_url="http://e.com/a/p"),
    )
    assert builder().url_record(facts).errors == [
        "out_of_scope: uses http: while its sitemap https://e.com/a/s.xml uses https: "
        "(a sitemap lists URLs of its own protocol)",
        "duplicate: listed 2 times in 2 sitemaps",
    ]


def _listed(url: str, rules: list[str] | None = None) -> UrlRecord:
    facts = UrlFacts(
        url=url,
        sitemaps=["https://e.com/s.xml"],
        lastmod=None,
        lastmod_format="w3c",
        times_listed=1,
        rules=rules or [],
        robots_blocked=False,
        outcome=FetchOutcome(),
    )
    return builder().url_record(facts)


@pytest.mark.parametrize(
    ("url", "fragment", "read_as"),
    [
        ("https://e.com/p#reviews", "#reviews", "https://e.com/p"),
        ("https://e.com/p?a=1#", "#", "https://e.com/p?a=1"),
        ("https://e.com/#!/shop/item", "#!/shop/item", "https://e.com/"),
    ],
)
def test_a_fragment_is_named_with_the_url_search_engines_read(
    url: str, fragment: str, read_as: str
) -> None:
    record = _listed(url)
    assert record.issues == ["url_fragment"]
    assert record.errors == [
        f"url_fragment: search engines drop the fragment {fragment!r} and read {read_as!r}"
    ]


@pytest.mark.parametrize("url", ["https://e.com/p", "https://e.com/p?q=%23x", "https://e.com/%23"])
def test_no_fragment_no_finding(url: str) -> None:
    assert _listed(url).issues == []


def test_an_invalid_url_with_a_fragment_is_only_invalid() -> None:
    assert _listed("/relative#x", ["invalid_url"]).issues == ["invalid_url"]


def test_a_canonical_written_as_an_iri_names_the_encoded_page() -> None:
    record = url_record(
        final_url="https://e.com/caf%C3%A9%20menu", canonical="https://e.com/caf\u00e9 menu"
    )
    assert "canonical_mismatch" not in record.issues


def test_redirect_broken_and_blocked_messages() -> None:
    broken = url_record(
        status=301,
        redirect_chain=[{"url": U, "status": 301}],
        redirect_stopped="not followed: it has no Location header",
        redirect_broken="the 301 answer has no Location header",
    )
    assert broken.issues == ["redirect", "redirect_broken"]
    assert broken.errors[1] == (
        f"redirect_broken: {U} redirects, but the 301 answer has no Location header"
    )
    blocked = url_record(
        status=301,
        redirect_chain=[{"url": U, "status": 301}],
        redirect_stopped="not followed: robots.txt disallows https://e.com/private/x",
        redirect_blocked="https://e.com/private/x",
    )
    assert blocked.issues == ["redirect", "redirect_blocked"]
    assert blocked.errors[1] == (
        "redirect_blocked: redirects to https://e.com/private/x, disallowed for Googlebot by "
        "robots.txt"
    )


def test_head_broken_names_what_ended_it_and_what_was_lost() -> None:
    record = url_record(
        head_broken={"start": "<img>", "ignored": ["a robots meta", "a canonical link"]}
    )
    assert record.errors == [
        "head_broken: the head ends early at <img>; ignored after it: a robots meta, "
        "a canonical link"
    ]


def test_head_too_large_names_the_read_limit() -> None:
    record = url_record(head_too_large=2097152)
    assert record.errors == [
        "head_too_large: the head does not end within the first 2 MiB the audit reads; a "
        "robots meta or canonical after that is not seen"
    ]


def test_an_unreadable_last_modified_is_named() -> None:
    record = url_record(lastmod="2024-05-01", last_modified="yesterday")
    assert record.errors == ["lastmod_unverifiable: Last-Modified 'yesterday' is not an HTTP date"]


@pytest.mark.parametrize(
    "last_modified", ["Sun, 05 May 2024 03:30:00 GMT+0200", "Sun, 05 May 2024 10:30:00 JST"]
)
def test_a_last_modified_in_another_zone_is_no_http_date(last_modified: str) -> None:
    # Read as UTC, either would be a mismatch; the instant it names is in doubt.
    record = url_record(lastmod="2024-05-05T01:30:00Z", last_modified=last_modified)
    assert record.errors == [
        f"lastmod_unverifiable: Last-Modified {last_modified!r} is not an HTTP date"
    ]


def test_lastmod_of_an_error_page_is_not_judged() -> None:
    issues = url_issues(
        lastmod="2020-01-01", status=404, last_modified="Wed, 01 May 2024 10:00:00 GMT"
    )
    assert issues == ["http_error"]


def test_disabled_checks_do_not_run() -> None:
    b = RecordBuilder(
        AuditConfig.from_settings({"SITEMAPAUDIT_DISABLED_CHECKS": "duplicate"}), AUDIT_TIME
    )
    facts = UrlFacts(U, ["s"], None, "w3c", 3, [], False, FetchOutcome(fetched=True, status=200))
    assert b.url_record(facts).issues == []


def test_sitemap_checks_turn_problems_into_findings() -> None:
    facts = SitemapFacts(
        url="https://e.com/s.xml",
        found_via="robots.txt",
        fetched=True,
        status=200,
        kind="urlset",
        problems=[Problem("xml_malformed", "bad", 3, 7), Problem("empty", "no entries")],
    )
    record = builder().sitemap_record(facts)
    assert record.issues == ["xml_malformed", "empty"]
    assert record.errors == ["xml_malformed: line 3, column 7: bad", "empty: no entries"]


def test_sitemap_status_and_failure() -> None:
    b = builder()
    failed = b.sitemap_record(SitemapFacts(url="u", found_via="index", error="DNSLookupError"))
    assert failed.issues == ["fetch_failed"]
    gone = b.sitemap_record(SitemapFacts(url="u", found_via="index", fetched=True, status=410))
    assert gone.issues == ["http_error"]


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-06T11:17:00+00:00",
        "2024-05-06T11:17:00Z",
        "2024-05-06T23:59:59-12:00",
        "2024-05-06T00:00:00+14:00",
        "2024-02-29T10:00:00+05:30",
        "2023-02-29T10:00:00Z",
        "2024-04-31T10:00:00Z",
        "0001-01-01T00:00:00+05:30",
        "9999-12-31T23:59:59-01:00",
        "0000-01-01T00:00:00Z",
        "2024-00-10T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T10:60:00Z",
        "2024-01-01T10:00:60Z",
        "2024-01-01T10:00:00+24:00",
        "2024-01-01T10:00:00+14:00",
        "2024-01-01T10:00:00-14:00",
        "2024-01-01T10:00:00+13:59",
        "2024-01-01T10:00:00+14:01",
        "2024-01-01T10:00:00-14:30",
        "2024-01-01T10:00:00+15:00",
        "2024-01-01T24:00:00+14:00",
        "2024-01-01T10:00:00+05:60",
        "2024-01-01T10:00:00z",
        "2024-01-01t10:00:00Z",
        "2024-01-01T10:00:00",
        "2024-01-01T10:00:00+0530",
        "2024-01-01T10:00:00.25Z",
        "2024-01-01T10:00Z",
        " 2024-01-01T10:00:00Z ",
        "2024-01-01T10:00:00Z\n",
        "2024-01-01",
        "\u0662\u0660\u0662\u0664-01-01T10:00:00Z",
    ],
)
def test_listed_lastmod_reads_as_the_w3c_parser_does(text: str) -> None:
    listed_lastmod.cache_clear()
    got, expected = listed_lastmod(text, "w3c"), parse_w3c_datetime(text)
    assert got == expected
    if got is not None and expected is not None:
        assert got.value.tzinfo is expected.value.tzinfo
        assert (got.date_only, got.precision) == (expected.date_only, expected.precision)


def test_a_redirect_not_followed_says_where_it_went_not_where_it_stopped() -> None:
    record = url_record(
        status=302,
        redirect_chain=[{"url": U, "status": 302}],
        redirect_stopped="not followed: 'ftp://e.com/x' is not a valid http(s) URL",
    )
    assert record.issues == ["redirect"]
    assert record.errors == [
        "redirect: redirects 1 time, the last one not followed: "
        "'ftp://e.com/x' is not a valid http(s) URL"
    ]


def test_the_noindex_detail_names_a_passed_unavailable_after() -> None:
    record = url_record(
        noindex=["header:x-robots-tag", "meta:robots"],
        unavailable_after={"meta:robots": "2010-06-25T00:00:00Z"},
    )
    assert record.issues == ["noindex"]
    assert record.errors == [
        "noindex: noindex from header:x-robots-tag, "
        "meta:robots (unavailable_after 2010-06-25T00:00:00Z has passed)"
    ]


def test_a_redirect_loop_says_where_the_chain_went_round_or_stopped() -> None:
    a, b = "https://e.com/a", "https://e.com/b"
    looped = url_record(
        status=302,
        final_url=b,
        redirect_loop=True,
        redirect_chain=[
            {"url": U, "status": 302, "location": a},
            {"url": a, "status": 302, "location": b},
            {"url": b, "status": 302, "location": a},
        ],
    )
    assert looped.issues == ["redirect", "redirect_loop"]
    assert looped.errors == [
        f"redirect: redirects 3 times without reaching a page (a loop: {a} redirects again "
        "after 3 hops)",
        f"redirect_loop: a loop: {a} redirects again after 3 hops",
    ]
    chain = [
        {"url": f"https://e.com/{i}", "status": 301, "location": f"https://e.com/{i + 1}"}
        for i in range(11)
    ]
    too_long = url_record(
        status=301, final_url=chain[-1]["url"], redirect_loop=True, redirect_chain=chain
    )
    assert too_long.errors[-1] == (
        "redirect_loop: more than 10 redirects: https://e.com/11 was not requested"
    )


@pytest.mark.parametrize(
    ("hops", "detail"),
    [
        (1, "redirect: redirects to https://e.com/z in 1 hop"),
        (2, "redirect: redirects to https://e.com/z in 2 hops"),
    ],
)
def test_a_redirect_counts_its_hops_in_the_number_they_take(hops: int, detail: str) -> None:
    chain = [{"url": U if i == 0 else f"https://e.com/{i}", "status": 301} for i in range(hops)]
    record = url_record(final_url="https://e.com/z", redirect_chain=chain)
    assert record.errors == [detail]


def test_a_redirect_that_stopped_or_looped_counts_its_times_in_the_number_they_take() -> None:
    stopped = url_record(
        status=302,
        redirect_chain=[{"url": U, "status": 301}, {"url": "https://e.com/b", "status": 302}],
        redirect_stopped="not followed: it leaves the audited host",
    )
    assert stopped.errors == [
        "redirect: redirects 2 times, the last one not followed: it leaves the audited host"
    ]
    looped = url_record(
        status=302,
        redirect_loop=True,
        redirect_chain=[{"url": U, "status": 302, "location": U}],
    )
    assert looped.errors == [
        f"redirect: redirects 1 time without reaching a page (a loop: {U} redirects again "
        "after 1 hop)",
        f"redirect_loop: a loop: {U} redirects again after 1 hop",
    ]


def test_a_last_modified_later_than_the_date_proves_nothing() -> None:
    record = url_record(
        lastmod="2024-05-01",
        last_modified="Sun, 30 Jun 2024 12:00:00 GMT",
        date="Sat, 01 Jun 2024 12:00:00 GMT",
    )
    assert record.issues == ["lastmod_unverifiable"]
    assert record.errors == [
        "lastmod_unverifiable: Last-Modified Sun, 30 Jun 2024 12:00:00 GMT is later than the "
        "response's Date Sat, 01 Jun 2024 12:00:00 GMT, which servers may not send (RFC 9110)"
    ]
    assert record.lastmod_delta_s is None


def _lastmod_sitemap(lastmod: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"<url><loc>{U}</loc><lastmod>{lastmod}</lastmod></url>\n"
        "</urlset>\n"
    ).encode()


@pytest.mark.parametrize(
    ("lastmod", "xsd_valid"),
    [
        ("2024-05-01T10:00:00+14:00", True),
        ("2024-05-01T10:00:00-14:00", True),
        ("2024-05-01T10:00:00+13:59", True),
        ("2024-05-01T10:00:00+14:30", False),
        ("2024-05-01T10:00:00-14:01", False),
        ("2024-05-01T10:00:00+15:00", False),
        ("2024-05-01T10:00:00-23:00", False),
        ("2024-05-01T24:00:00Z", True),
        ("2024-05-01T24:00:00.000+02:00", True),
        ("2024-05-01T24:00:01Z", False),
        ("2024-05-01T24:00:00+15:00", False),
    ],
)
def test_a_lastmod_is_a_date_exactly_when_the_xsd_accepts_it(lastmod: str, xsd_valid: bool) -> None:
    schema = [p.code for p in validate_document(_lastmod_sitemap(lastmod), now=AUDIT_TIME)]
    assert schema == ([] if xsd_valid else ["schema_invalid"])
    issues = url_issues(lastmod=lastmod, last_modified="Wed, 01 May 2024 10:00:00 GMT")
    assert ("lastmod_invalid" in issues) is not xsd_valid
    if not xsd_valid:
        # A value that is no date is not compared either.
        assert issues == ["lastmod_invalid"]


def test_24_00_00_is_the_midnight_that_ends_the_day() -> None:
    midnight = "Thu, 02 May 2024 00:00:00 GMT"
    assert url_issues(lastmod="2024-05-01T24:00:00Z", last_modified=midnight) == []
    assert url_issues(lastmod="2024-05-01T24:00:00+02:00", last_modified=midnight) == [
        "lastmod_mismatch"
    ]
    assert url_issues(lastmod="2024-05-31T24:00:00Z") == ["lastmod_unverifiable"]
    assert url_issues(lastmod="2024-06-01T24:00:00Z") == [
        "lastmod_future",
        "lastmod_unverifiable",
    ]
    record = url_record(lastmod="2024-05-01T24:00:00Z", last_modified=midnight)
    assert record.lastmod_delta_s == 0


@pytest.mark.parametrize(
    ("lastmod", "why"),
    [
        ("2024-05-01T10:00:00+15:00", ": its time zone offset +15:00 is outside -14:00 to +14:00"),
        ("2024-05-01T10:00:00-14:30", ": its time zone offset -14:30 is outside -14:00 to +14:00"),
        ("2024-05-01T10:00:00", ": a time needs a time zone (Z or +hh:mm) in W3C Datetime"),
        ("2024-05-01T10:00", ": a time needs a time zone (Z or +hh:mm) in W3C Datetime"),
        ("2024-02-30", ": no such day"),
        ("2024-05-01T25:00:00Z", ": no such time, or one outside the range of dates"),
        ("9999-12-31T24:00:00Z", ": no such time, or one outside the range of dates"),
        ("2024-05-01-05:00", ": a date with a time zone is no W3C Datetime form (the XSD"),
        ("2024-05-01+15:00", ": its time zone offset +15:00 is outside -14:00 to +14:00"),
        ("2024-05-01 10:00:00+02:00", ": a time is separated from its date by 'T', not a space"),
        (
            "2024-05-01 10:00:00",
            ": a time is separated from its date by 'T', not a space; and a time needs a time "
            "zone (Z or +hh:mm) in W3C Datetime",
        ),
        ("2024-05-01 10:00:00 GMT", ""),
        ("yesterday", ""),
    ],
)
def test_lastmod_invalid_says_what_is_wrong(lastmod: str, why: str) -> None:
    (error,) = url_record(lastmod=lastmod).errors
    assert error.startswith(f"lastmod_invalid: lastmod {lastmod!r} is not a valid date{why}")
    if not why:
        assert error == f"lastmod_invalid: lastmod {lastmod!r} is not a valid date"


def test_invalid_url_says_why() -> None:
    facts = UrlFacts(
        url="https://e.com/c d",
        sitemaps=[],
        lastmod=None,
        lastmod_format="w3c",
        times_listed=1,
        rules=["invalid_url"],
        robots_blocked=False,
        outcome=FetchOutcome(),
    )
    assert builder().url_record(facts).errors == [
        "invalid_url: 'https://e.com/c d' is not a valid http(s) URL: it contains a space at "
        "character 16, which a URL writes percent-encoded (%20); not requested"
    ]


def test_url_too_long_names_its_length_and_the_limit() -> None:
    long = U + "/" + "x" * 2100
    facts = UrlFacts(
        url=long,
        sitemaps=[],
        lastmod=None,
        lastmod_format="w3c",
        times_listed=1,
        rules=["url_too_long"],
        robots_blocked=False,
        outcome=FetchOutcome(),
    )
    assert builder(SITEMAPAUDIT_MAX_URL_LENGTH=2048).url_record(facts).errors == [
        "url_too_long: 2,116 characters, more than SITEMAPAUDIT_MAX_URL_LENGTH (2,048); "
        "not requested"
    ]


def test_a_url_listed_very_often_says_so_with_separators() -> None:
    facts = UrlFacts(
        url="https://e.com/p",
        sitemaps=["https://e.com/s.xml"],
        lastmod=None,
        lastmod_format="w3c",
        times_listed=30_000,
        rules=[],
        robots_blocked=False,
        outcome=FetchOutcome(),
    )
    assert builder().url_record(facts).errors == ["duplicate: listed 30,000 times in 1 sitemap"]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda check: f"{check.record}-{check.code}")
def test_the_meaning_is_the_whole_first_paragraph_of_the_docstring(check: type[Check[Any]]) -> None:
    paragraph = inspect.cleandoc(check.__doc__ or "").split("\n\n")[0]
    meaning = check.meaning()
    assert meaning.split() == paragraph.split()
    assert "\n" not in meaning
    assert meaning.endswith(".")


def test_the_meaning_stops_at_the_end_of_the_first_paragraph() -> None:
    class Wrapped(UrlCheck):
        """A summary written over
        two lines.

        Details that are not part of it.
        """

    assert Wrapped.meaning() == "A summary written over two lines."


def test_lastmods_at_the_ends_of_the_calendar_are_judged_not_crashed_on() -> None:
    modified = "Wed, 01 May 2024 10:00:00 GMT"
    assert url_issues(lastmod="0001-01-01", last_modified=modified) == ["lastmod_mismatch"]
    assert url_issues(lastmod="0001", last_modified=modified) == ["lastmod_mismatch"]
    assert url_issues(lastmod="9999-12-31", last_modified=modified) == [
        "lastmod_future",
        "lastmod_mismatch",
    ]


def test_the_lastmod_of_a_page_whose_body_cannot_be_read_is_not_called_unverifiable() -> None:
    """A response whose body cannot be decoded is fetch_failed; its Last-Modified is not
    what makes its lastmod unchecked, and it is not "equal to its Date" either."""
    record = url_record(
        lastmod="2024-05-01",
        fetched=False,
        error="the page's gzip-encoded body cannot be decoded: the body is not gzip data",
        last_modified="Wed, 01 May 2024 10:00:00 GMT",
        date="Mon, 23 Nov 2026 12:00:00 GMT",
    )
    assert record.issues == ["fetch_failed"]


@pytest.mark.parametrize("canonical", ["javascript:void(0)", "ftp://e.com/a", "mailto:a@e.com"])
def test_a_canonical_that_is_no_web_address_is_said_to_be_ignored(canonical: str) -> None:
    record = url_record(canonical=canonical, canonical_source="link")
    assert record.issues == ["canonical_mismatch"]
    assert record.errors == [
        f"canonical_mismatch: canonical (link) is {canonical}, which is not an http or https "
        "URL: search engines ignore it, so the page has no canonical they can use"
    ]


@pytest.mark.parametrize(
    "canonical", ["https://exa mple.com/t", "http://[bad/t", "https://e.com:99999/", "https://a<b/"]
)
def test_a_canonical_browsers_cannot_parse_is_said_to_be_ignored(canonical: str) -> None:
    record = url_record(canonical=canonical, canonical_source="link")
    assert record.errors == [
        f"canonical_mismatch: canonical (link) is {canonical}, which is not a URL browsers can "
        "parse (its host or port is malformed): search engines ignore it, so the page has no "
        "canonical they can use"
    ]


def test_a_last_modified_a_few_seconds_from_the_date_is_said_to_be_near_it() -> None:
    same = url_record(
        lastmod="2024-05-01",
        last_modified="Sat, 01 Jun 2024 12:00:00 GMT",
        date="Sat, 01 Jun 2024 12:00:00 GMT",
    )
    assert same.errors == [
        "lastmod_unverifiable: Last-Modified equals the response's Date (generated on the fly)"
    ]
    near = url_record(
        lastmod="2024-05-01",
        last_modified="Sat, 01 Jun 2024 11:59:56 GMT",
        date="Sat, 01 Jun 2024 12:00:00 GMT",
    )
    assert near.errors == [
        "lastmod_unverifiable: Last-Modified Sat, 01 Jun 2024 11:59:56 GMT is 4 s before the "
        "response's Date Sat, 01 Jun 2024 12:00:00 GMT, within SITEMAPAUDIT_GENERATED_DATE_WINDOW "
        "(generated on the fly)"
    ]


def test_hreflang_not_reciprocal_names_the_first_hundred_alternates_and_counts_the_rest() -> None:
    notes = [f"https://e.com/{n} (de) does not list {U} back" for n in range(250)]
    record = url_record(hreflang=notes)
    assert record.issues == ["hreflang_not_reciprocal"]
    assert len(record.errors) == 101
    assert record.errors[0] == f"hreflang_not_reciprocal: {notes[0]}"
    assert record.errors[-1] == (
        "hreflang_not_reciprocal: and 150 more hreflang alternates of this URL do not list it back"
    )


def test_a_last_modified_after_the_arrival_without_a_date_is_unverifiable() -> None:
    """Without a Date header, the audit's clock (when the response arrived) tells a
    Last-Modified to come, which dates nothing; a minute ahead is clock skew."""
    future = url_record(
        lastmod="2024-05-01T10:00:00Z",
        last_modified="Fri, 01 Jan 2100 10:00:00 GMT",
        checked_at="2024-06-01T12:00:00+00:00",
    )
    assert future.issues == ["lastmod_unverifiable"]
    assert future.lastmod_delta_s is None
    assert future.errors == [
        "lastmod_unverifiable: Last-Modified Fri, 01 Jan 2100 10:00:00 GMT is later than when "
        "the response arrived (2024-06-01T12:00:00+00:00), and the response has no Date: a "
        "time to come dates nothing"
    ]
    skewed = url_record(
        lastmod="2024-05-01T10:00:30Z",
        last_modified="Wed, 01 May 2024 10:00:30 GMT",
        checked_at="2024-05-01T10:00:00+00:00",
    )
    assert skewed.issues == []
    assert skewed.lastmod_delta_s == 0.0


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        (
            "https://e.com/a|b",
            "'|' is not allowed unescaped in a URL (RFC 3986, which the "
            "sitemap protocol requires): write %7C",
        ),
        (
            "https://e.com/{x}?q=a{b}",
            "'{' and '}' are not allowed unescaped in a URL (RFC 3986, "
            "which the sitemap protocol requires): write %7B and %7D",
        ),
        (
            "https://e.com/a^b`c\\d",
            "'^', '`' and '\\' are not allowed unescaped in a URL "
            "(RFC 3986, which the sitemap protocol requires): write %5E, %60 and %5C (browsers "
            "read '\\' as '/')",
        ),
        (
            'https://e.com/?q="<x>"',
            "'\"', '<' and '>' are not allowed unescaped in a URL "
            "(RFC 3986, which the sitemap protocol requires): write %22, %3C and %3E",
        ),
        (
            "https://e.com/list?a[]=1",
            "'[' and ']' are not allowed unescaped in a URL (RFC 3986, "
            "which the sitemap protocol requires): write %5B and %5D",
        ),
    ],
)
def test_characters_a_url_must_escape_are_named_with_their_escapes(url: str, detail: str) -> None:
    record = _listed(url)
    assert record.issues == ["url_unescaped"]
    assert record.errors == [f"url_unescaped: {detail}"]


@pytest.mark.parametrize(
    "url",
    [
        "https://e.com/a%7Cb",
        "https://[2001:db8::1]/p",
        "http://[::1]:8080/a?b=c&d=e;f",
        "https://e.com/caf\u00e9/\u65e5\u672c",
        "https://e.com/!$&'()*+,;=:@-._~/?/q",
    ],
)
def test_urls_within_rfc_3986_and_iris_are_not_unescaped(url: str) -> None:
    assert _listed(url).issues == []


def test_an_invalid_url_is_not_also_unescaped() -> None:
    assert _listed("https://e.com/a b|c", ["invalid_url"]).issues == ["invalid_url"]
