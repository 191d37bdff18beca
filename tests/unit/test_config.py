from __future__ import annotations

import pytest
from scrapy.settings import Settings

from sitemapaudit.config import (
    AuditConfig,
    check_scrapy_settings,
    check_setting_names,
    parse_bool,
)
from sitemapaudit.defaults import SETTINGS
from sitemapaudit.errors import ConfigError


def test_defaults_build_a_config() -> None:
    config = AuditConfig.from_settings({})
    assert config.robots_user_agent == "Googlebot"
    assert config.fetch_urls is True
    assert config.common_paths[0] == "/sitemap.xml"
    assert config.max_redirects == SETTINGS["SITEMAPAUDIT_MAX_REDIRECTS"][0]


def test_values_from_the_command_line_are_strings() -> None:
    config = AuditConfig.from_settings(
        {
            "SITEMAPAUDIT_FETCH_URLS": "no",
            "SITEMAPAUDIT_MAX_SITEMAPS": "12",
            "SITEMAPAUDIT_LASTMOD_TOLERANCE": "0.5",
            "SITEMAPAUDIT_DISABLED_CHECKS": "duplicate, redirect",
        }
    )
    assert config.fetch_urls is False
    assert config.max_sitemaps == 12
    assert config.lastmod_tolerance == 0.5
    assert config.disabled_checks == {"duplicate", "redirect"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SITEMAPAUDIT_MAX_SITEMAPS", "many"),
        ("SITEMAPAUDIT_MAX_SITEMAPS", 0),
        ("SITEMAPAUDIT_LASTMOD_TOLERANCE", -1),
        ("SITEMAPAUDIT_LASTMOD_TOLERANCE", "nan"),
        ("SITEMAPAUDIT_LASTMOD_TOLERANCE", "inf"),
        ("SITEMAPAUDIT_MAX_CRAWL_DELAY", float("nan")),
        ("SITEMAPAUDIT_MAX_REDIRECTS", "1e999"),
        ("SITEMAPAUDIT_UNTHROTTLED", "yesplease"),
        ("SITEMAPAUDIT_FETCH_URLS", "maybe"),
        ("SITEMAPAUDIT_COMMON_PATHS", "sitemap.xml"),
        ("SITEMAPAUDIT_ROBOTS_USER_AGENT", " "),
        ("SITEMAPAUDIT_ROBOTS_USER_AGENT", "Mozilla/5.0 (compatible; Googlebot/2.1)"),
        ("SITEMAPAUDIT_ROBOTS_USER_AGENT", "Google bot"),
        ("SITEMAPAUDIT_MAX_REDIRECTS", True),
        ("SITEMAPAUDIT_HISTORY_KEEP_RUNS", -1),
        ("SITEMAPAUDIT_HISTORY_KEEP_RUNS", "all"),
        # 0 would warn of every document (the validator refuses it, mid-audit).
        ("SITEMAPAUDIT_NEAR_LIMIT_FRACTION", 0),
        ("SITEMAPAUDIT_NEAR_LIMIT_FRACTION", "1.1"),
        # Past what SQLite and Redis keep as integers (the history, the cluster's state).
        ("SITEMAPAUDIT_HISTORY_KEEP_RUNS", 2**63),
        ("SITEMAPAUDIT_RECHECK_NIGHTS", "9223372036854775808"),
        ("SITEMAPAUDIT_WORKER_TIMEOUT", 1e17),
    ],
)
def test_a_bad_setting_fails_with_its_name(name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=name):
        AuditConfig.from_settings({name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SITEMAPAUDIT_MAX_INDEX_DEPTH", "1.5"),
        ("SITEMAPAUDIT_MAX_INDEX_DEPTH", 1.5),
        ("SITEMAPAUDIT_SITEMAP_READ_LIMIT", "1e3"),
        ("SITEMAPAUDIT_MAX_REDIRECTS", "1e999"),
    ],
)
def test_an_integer_setting_refuses_a_number_that_is_not_whole(name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"^{name} must be a whole number, got "):
        AuditConfig.from_settings({name: value})


def test_the_largest_values_that_can_be_kept_are_taken() -> None:
    config = AuditConfig.from_settings(
        {"SITEMAPAUDIT_HISTORY_KEEP_RUNS": 2**63 - 1, "SITEMAPAUDIT_WORKER_TIMEOUT": 1e12}
    )
    assert (config.history_keep_runs, config.worker_timeout) == (2**63 - 1, 1e12)


def test_an_integer_setting_takes_a_whole_float_and_refuses_a_word_as_no_number() -> None:
    config = AuditConfig.from_settings({"SITEMAPAUDIT_MAX_INDEX_DEPTH": 2.0})
    assert config.max_index_depth == 2
    assert isinstance(config.max_index_depth, int)
    with pytest.raises(ConfigError, match="MAX_INDEX_DEPTH must be a number, got 'deep'"):
        AuditConfig.from_settings({"SITEMAPAUDIT_MAX_INDEX_DEPTH": "deep"})


@pytest.mark.parametrize(
    ("value", "token"),
    [("Googlebot/2.1", "Googlebot"), (" bingbot ", "bingbot"), ("360Spider", "360Spider")],
)
def test_the_robots_user_agent_is_its_product_token(value: str, token: str) -> None:
    config = AuditConfig.from_settings({"SITEMAPAUDIT_ROBOTS_USER_AGENT": value})
    assert config.robots_user_agent == token


def test_parse_bool_names_the_argument() -> None:
    assert parse_bool("fetch_urls", "YES") is True
    with pytest.raises(ConfigError, match="fetch_urls"):
        parse_bool("fetch_urls", "sometimes")


def test_sitemap_hosts_are_read_as_origins() -> None:
    config = AuditConfig.from_settings(
        {"SITEMAPAUDIT_SITEMAP_HOSTS": "cdn.example.com, http://127.0.0.1:8080"}
    )
    assert [origin.url for origin in config.sitemap_hosts] == [
        "https://cdn.example.com",
        "http://127.0.0.1:8080",
    ]
    assert config.shaping_settings()["sitemap_hosts"] == [
        "https://cdn.example.com",
        "http://127.0.0.1:8080",
    ]


@pytest.mark.parametrize("value", ["https://cdn.example.com/sitemaps", "ftp://cdn", "a b"])
def test_a_bad_sitemap_host_fails_naming_the_setting(value: str) -> None:
    with pytest.raises(ConfigError, match="SITEMAPAUDIT_SITEMAP_HOSTS") as raised:
        AuditConfig.from_settings({"SITEMAPAUDIT_SITEMAP_HOSTS": [value]})
    assert repr(value) in str(raised.value)


def test_jobdir_and_a_distributed_audit_do_not_combine() -> None:
    settings = {"JOBDIR": "crawls/x", "SITEMAPAUDIT_DISTRIBUTED": "redis://127.0.0.1:6379/0"}
    with pytest.raises(
        ConfigError, match="JOBDIR cannot be combined with SITEMAPAUDIT_DISTRIBUTED"
    ):
        AuditConfig.from_settings(settings)


@pytest.mark.parametrize(
    "name",
    [
        "SITEMAPAUDIT_FETCH_URLS",
        "SITEMAPAUDIT_FETCH_BLOCKED",
        "SITEMAPAUDIT_HEAD_ONLY",
        "SITEMAPAUDIT_HONOR_CRAWL_DELAY",
        "SITEMAPAUDIT_UNTHROTTLED",
    ],
)
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_boolean_setting_is_refused_not_read_as_no(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"{name} is empty: give yes or no"):
        AuditConfig.from_settings({name: value})


@pytest.mark.parametrize(
    ("setting", "value", "key", "shown"),
    [
        ("SITEMAPAUDIT_NEAR_LIMIT_FRACTION", "0.5", "near_limit_fraction", 0.5),
        ("SITEMAPAUDIT_ROBOTS_MAX_BYTES", "4096", "robots_max_bytes", 4096),
        ("SITEMAPAUDIT_COMMON_PATHS", "/a.xml,/b.xml", "common_paths", ["/a.xml", "/b.xml"]),
    ],
)
def test_the_summary_names_every_setting_that_changes_findings(
    setting: str, value: str, key: str, shown: object
) -> None:
    """A distributed worker joins an audit only with the same shaping settings: one that
    judged near_limit by another fraction would make findings depend on the worker."""
    config = AuditConfig.from_settings({setting: value})
    assert config.shaping_settings()[key] == shown


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DOWNLOAD_DELAY", "1e15", "DOWNLOAD_DELAY must be at most 3600, got '1e15'"),
        ("AUTOTHROTTLE_MAX_DELAY", 3601, "AUTOTHROTTLE_MAX_DELAY must be at most 3600"),
        ("CONCURRENT_REQUESTS", 2**63, "CONCURRENT_REQUESTS must be at most 9,223,372,036"),
    ],
)
def test_a_scrapy_pace_setting_past_what_can_work_is_refused(
    name: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        check_scrapy_settings(Settings({name: value}))
    check_scrapy_settings(Settings({"DOWNLOAD_DELAY": 3600, "AUTOTHROTTLE_MAX_DELAY": 60}))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "SITEMAPAUDIT_HEADONLY",
            "unknown setting SITEMAPAUDIT_HEADONLY: did you mean SITEMAPAUDIT_HEAD_ONLY?",
        ),
        (
            "SITEMAPAUDIT_UNTHROTLED",
            "unknown setting SITEMAPAUDIT_UNTHROTLED: did you mean SITEMAPAUDIT_UNTHROTTLED?",
        ),
        ("SITEMAPAUDIT_FOO", "unknown setting SITEMAPAUDIT_FOO (the README lists every setting)"),
    ],
)
def test_an_unknown_sitemapaudit_setting_is_refused_with_the_nearest_name(
    name: str, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        check_setting_names(Settings({name: "1"}))
    assert str(info.value) == message


def test_every_setting_of_the_audit_and_of_other_tools_is_known() -> None:
    check_setting_names(Settings({**{name: spec[0] for name, spec in SETTINGS.items()}, "FOO": 1}))


@pytest.mark.parametrize("value", ["0.5", "0.001", 0.25])
def test_a_progress_interval_under_a_second_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match=r"PROGRESS_INTERVAL must be 0 \(off\) or at least 1"):
        AuditConfig.from_settings(Settings({"SITEMAPAUDIT_PROGRESS_INTERVAL": value}))


@pytest.mark.parametrize(("value", "seconds"), [("0", 0.0), ("1", 1.0), ("90.5", 90.5)])
def test_a_progress_interval_of_0_or_a_second_and_more_is_taken(value: str, seconds: float) -> None:
    config = AuditConfig.from_settings(Settings({"SITEMAPAUDIT_PROGRESS_INTERVAL": value}))
    assert config.progress_interval == seconds
