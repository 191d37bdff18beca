from __future__ import annotations

import pytest

from sitemapaudit.arguments import check_fail_on, parse_arguments, parse_fail_on
from sitemapaudit.errors import ConfigError


def test_fail_on_policies() -> None:
    assert not parse_fail_on(None).failed({"duplicate": 3}, {"error": 5})
    assert parse_fail_on("error").failed({}, {"error": 1})
    assert not parse_fail_on("error").failed({}, {"warning": 1})
    assert parse_fail_on("warning").failed({}, {"warning": 1})
    assert parse_fail_on("duplicate, noindex").failed({"noindex": 1}, {})
    assert not parse_fail_on("duplicate").failed({"noindex": 1}, {"error": 1})


def test_an_audit_that_found_no_sitemap_fails_error_and_warning() -> None:
    assert parse_fail_on("error").failed({}, {}, no_sitemap=True)
    assert parse_fail_on("warning").failed({}, {}, no_sitemap=True)
    assert parse_fail_on("noindex,error").failed({}, {}, no_sitemap=True)
    assert not parse_fail_on("noindex").failed({}, {}, no_sitemap=True)
    assert not parse_fail_on("never").failed({}, {}, no_sitemap=True)
    assert not parse_fail_on("error").failed({}, {"warning": 2})


def test_what_matched_is_said() -> None:
    counts = {"duplicate": 2, "noindex": 1200}
    severities = {"error": 3, "warning": 1202}
    assert parse_fail_on("warning,noindex").matched(counts, severities) == [
        "error=3",
        "warning=1,202",
        "noindex=1,200",
    ]
    assert parse_fail_on("error,duplicate,lastmod_future").matched(counts, {}) == ["duplicate=2"]
    assert parse_fail_on("error").matched({}, {}, no_sitemap=True) == ["no sitemap was found"]
    assert parse_fail_on("error").matched(counts, {"warning": 4}) == []


def test_levels_and_codes_mix() -> None:
    policy = parse_fail_on("duplicate, warning")
    assert policy.policy == "warning,duplicate"
    assert policy.failed({"duplicate": 1}, {})
    assert policy.failed({}, {"warning": 1})
    assert not policy.failed({"noindex": 0}, {"notice": 4})
    assert parse_fail_on("error,warning").policy == "warning"


def test_fail_on_a_switched_off_code_is_refused() -> None:
    check_fail_on(parse_fail_on("duplicate"), frozenset({"redirect"}))
    with pytest.raises(ConfigError, match="SITEMAPAUDIT_DISABLED_CHECKS switches off: duplicate"):
        check_fail_on(parse_fail_on("duplicate,noindex"), frozenset({"duplicate"}))


@pytest.mark.parametrize("value", ["sometimes", "duplicate,nonsense", ",", "", "never,error"])
def test_bad_fail_on_names_the_argument(value: str) -> None:
    with pytest.raises(ConfigError, match="fail_on"):
        parse_fail_on(value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "domain argument is required"),
        ({"domain": "ftp://e.com"}, "domain"),
        ({"domain": "e.com", "sitemap": "/relative.xml"}, "sitemap"),
        ({"domain": "e.com", "fetch_urls": "perhaps"}, "fetch_urls"),
        ({"domain": "e.com", "colour": "red"}, "colour"),
        ({"domain": "e.com", "fetch_urls": ""}, "fetch_urls: it is empty"),
        ({"domain": "e.com", "sitemap": ""}, "sitemap: it names no URL"),
        ({"domain": "e.com", "sitemap": " , ,"}, "sitemap: it names no URL"),
    ],
)
def test_bad_arguments(kwargs: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_arguments(**kwargs)


def test_good_arguments() -> None:
    args = parse_arguments(
        domain="http://127.0.0.1:8080", sitemap="http://127.0.0.1:8080/a.xml", fetch_urls="no"
    )
    assert args.origin.url == "http://127.0.0.1:8080"
    assert args.sitemaps == ("http://127.0.0.1:8080/a.xml",)
    assert args.fetch_urls is False


def test_scrapyd_job_argument_is_accepted() -> None:
    # scrapyd starts every job with -a _job=<id>.
    args = parse_arguments(domain="e.com", _job="6487ec79947edab326d6db28a2d86511e8247444")
    assert args.origin.url == "https://e.com"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("sometimes", "sometimes is not a finding code"),
        ("ERROR", "ERROR is not a finding code"),
        ("never,error", "never cannot be combined with others"),
    ],
)
def test_bad_fail_on_says_what_is_wrong(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_fail_on(value)
