"""The audit's configuration, read once from Scrapy settings into a typed, validated object."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from sitemapaudit.defaults import SETTINGS
from sitemapaudit.errors import ConfigError
from sitemapaudit.urls import Origin, parse_origin

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


# A crawler's product token, optionally with its version (``Googlebot/2.1``).
_PRODUCT_RE = re.compile(r"([A-Za-z0-9_.\-]+)(?:/[!-~]*)?")


def _product_token(value: str) -> str:
    """The product token of SITEMAPAUDIT_ROBOTS_USER_AGENT, without a version: the name
    robots.txt groups (RFC 9309), robots metas and ``X-Robots-Tag`` rules address a crawler by
    (``googlebot``, never ``googlebot/2.1``). A whole User-Agent string (``Mozilla/5.0
    (compatible; ...)``) names no single crawler and is refused."""
    text = value.strip()
    if not text:
        raise ConfigError("SITEMAPAUDIT_ROBOTS_USER_AGENT must not be empty")
    match = _PRODUCT_RE.fullmatch(text)
    if match is None:
        raise ConfigError(
            "SITEMAPAUDIT_ROBOTS_USER_AGENT must be a crawler's product token such as "
            f"'Googlebot' (optionally with a version, 'Googlebot/2.1'), got {text!r}"
        )
    return match[1]


def parse_bool(name: str, value: Any) -> bool:
    """A boolean setting or argument; accepts bools and yes/no/true/false/on/off/1/0."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if not lowered:
            raise ConfigError(f"{name} is empty: give yes or no (true/false)")
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    raise ConfigError(f"{name} must be yes or no (true/false), got {value!r}")


def _parse_list(name: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ConfigError(
        f"{name} must be a list of strings or a comma-separated string, got {value!r}"
    )


# The largest whole number a setting may be: what SQLite (the history, the inventory) and Redis
# store as an integer.
MAX_INTEGER = 2**63 - 1
# The longest delay between two requests a setting may ask for (an hour).
MAX_DELAY = 3600.0


def _number(
    name: str, value: Any, cast: Callable[[Any], T], minimum: float, maximum: float | None = None
) -> T:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    if cast is int and not _whole(value):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    try:
        number = cast(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    if number < minimum:  # type: ignore[operator]
        raise ConfigError(f"{name} must be at least {minimum:g}, got {value!r}")
    if maximum is None and cast is int:
        maximum = MAX_INTEGER
    if maximum is not None and number > maximum:  # type: ignore[operator]
        shown = f"{maximum:,}" if isinstance(maximum, int) else f"{maximum:g}"
        raise ConfigError(f"{name} must be at most {shown}, got {value!r}")
    return number


def _whole(value: Any) -> bool:
    """Whether a value that is a number at all is a whole one (``1.5``, ``"1e3"`` are not: an
    integer setting would otherwise be cut down to its whole part, or refused as no number)."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, str):
        try:
            int(value)
        except ValueError:
            try:
                float(value)
            except ValueError:
                return True  # no number at all, which the caller reports as such
            return False
    return True


def _fraction(name: str, value: Any) -> float:
    """A fraction above 0 and at most 1 (0 would warn of every document)."""
    number = _number(name, value, float, 0.0)
    if not 0 < number <= 1:
        raise ConfigError(f"{name} must be above 0 and at most 1, got {value!r}")
    return number


def _origins(name: str, value: Any) -> tuple[Origin, ...]:
    origins = []
    for item in _parse_list(name, value):
        try:
            origins.append(parse_origin(item))
        except ConfigError:
            raise ConfigError(
                f"{name} entries must be hosts such as 'cdn.example.com' or origins such as "
                f"'https://cdn.example.com', got {item!r}"
            ) from None
    return tuple(origins)


_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def _progress_interval(seconds: float) -> float:
    """0 (no progress lines) or at least a second: a shorter interval would fill the log with
    lines that say the same."""
    if 0 < seconds < 1:
        raise ConfigError(
            f"SITEMAPAUDIT_PROGRESS_INTERVAL must be 0 (off) or at least 1 second, got {seconds!r}"
        )
    return seconds


def _redis_url(value: Any) -> str:
    text = str(value or "").strip()
    if text and not text.startswith(_REDIS_SCHEMES):
        raise ConfigError(
            "SITEMAPAUDIT_DISTRIBUTED must be a Redis URL such as redis://127.0.0.1:6379/0 "
            f"(or empty), got {value!r}"
        )
    return text


# Scrapy settings of the audit's pace and downloads (documented in the README with the
# project's values): name -> (type, least value, greatest value or None). Scrapy would take a
# bad one for a traceback at the first request, or, for a concurrency of 0 or a delay of years,
# a crawl that never sends one and never ends (a stop waits for the delay too).
_SCRAPY_SETTINGS: dict[str, tuple[type[int] | type[float], float, float | None]] = {
    "DOWNLOAD_DELAY": (float, 0.0, MAX_DELAY),
    "DOWNLOAD_DELAY_JITTER": (float, 0.0, None),
    "CONCURRENT_REQUESTS": (int, 1, None),
    "CONCURRENT_REQUESTS_PER_DOMAIN": (int, 1, None),
    "AUTOTHROTTLE_START_DELAY": (float, 0.0, MAX_DELAY),
    "AUTOTHROTTLE_MAX_DELAY": (float, 0.0, MAX_DELAY),
    "AUTOTHROTTLE_TARGET_CONCURRENCY": (float, 0.01, None),
    "DOWNLOAD_TIMEOUT": (float, 0.0, None),
    "RETRY_TIMES": (int, 0, None),
    "DOWNLOAD_MAXSIZE": (int, 0, None),
    "DOWNLOAD_WARNSIZE": (int, 0, None),
}


def check_scrapy_settings(settings: BaseSettings) -> None:
    """Refuse a Scrapy setting of the audit's pace or downloads that Scrapy cannot use,
    naming it."""
    for name, (kind, minimum, maximum) in _SCRAPY_SETTINGS.items():
        value = settings.get(name)
        if value is not None:
            _number(name, value, kind, minimum, maximum)
    for name in ("AUTOTHROTTLE_ENABLED", "RANDOMIZE_DOWNLOAD_DELAY", "RETRY_ENABLED"):
        try:
            settings.getbool(name)
        except ValueError:
            raise ConfigError(
                f"{name} must be True or False (1/0), got {settings.get(name)!r}"
            ) from None


def check_setting_names(settings: BaseSettings) -> None:
    """Refuse a ``SITEMAPAUDIT_*`` setting the audit does not have (a misspelt name would
    otherwise leave the default in force without a word), naming it and the nearest name."""
    for name in settings:
        if name.startswith("SITEMAPAUDIT_") and name not in SETTINGS:
            prefix = len("SITEMAPAUDIT_")
            near = difflib.get_close_matches(name[prefix:], [n[prefix:] for n in SETTINGS], n=1)
            hint = (
                f": did you mean SITEMAPAUDIT_{near[0]}?"
                if near
                else " (the README lists every setting)"
            )
            raise ConfigError(f"unknown setting {name}{hint}")


def check_robotstxt_obey(settings: BaseSettings) -> None:
    """Refuse Scrapy's ROBOTSTXT_OBEY: the audit reads robots.txt itself."""
    if settings.getbool("ROBOTSTXT_OBEY"):
        raise ConfigError(
            "ROBOTSTXT_OBEY=True cannot be used: the audit reads robots.txt itself and "
            "reports what it disallows (robots_blocked) instead of dropping requests; "
            "SITEMAPAUDIT_FETCH_BLOCKED decides whether such URLs are requested"
        )


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """Every ``SITEMAPAUDIT_*`` setting, typed. Build it with :meth:`from_settings`."""

    robots_user_agent: str
    fetch_urls: bool
    fetch_blocked: bool
    common_paths: tuple[str, ...]
    sitemap_hosts: tuple[Origin, ...]
    max_index_depth: int
    max_sitemaps: int
    sitemap_read_limit: int
    robots_max_bytes: int
    near_limit_fraction: float
    max_url_length: int
    max_redirects: int
    lastmod_tolerance: float
    generated_date_window: float
    honor_crawl_delay: bool
    max_crawl_delay: float
    retry_after_max: float
    head_only: bool
    progress_interval: float
    head_only_min_bytes: int
    disabled_checks: frozenset[str]
    report_dir: str
    history_path: str
    history_keep_runs: int
    conditional_sitemaps: bool
    incremental: bool
    recheck_nights: int
    work_dir: str
    distributed: str
    worker_timeout: float
    user_agent: str = ""
    """Scrapy's ``USER_AGENT``: what the audit's requests say they are (robots.txt groups
    that name it pace them)."""

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | Any) -> AuditConfig:
        """Read and validate the settings; a bad value raises :class:`ConfigError` naming it."""

        def get(name: str) -> Any:
            value = settings.get(name) if hasattr(settings, "get") else None
            return SETTINGS[name][0] if value is None else value

        def integer(name: str, minimum: int = 0) -> int:
            return _number(name, get(name), int, minimum)

        def real(name: str, minimum: float = 0.0, maximum: float | None = None) -> float:
            return _number(name, get(name), float, minimum, maximum)

        user_agent = _product_token(str(get("SITEMAPAUDIT_ROBOTS_USER_AGENT")))
        paths = _parse_list("SITEMAPAUDIT_COMMON_PATHS", get("SITEMAPAUDIT_COMMON_PATHS"))
        for path in paths:
            if not path.startswith("/"):
                raise ConfigError(
                    f"SITEMAPAUDIT_COMMON_PATHS entries must start with '/', got {path!r}"
                )
        disabled = _parse_list("SITEMAPAUDIT_DISABLED_CHECKS", get("SITEMAPAUDIT_DISABLED_CHECKS"))
        # Applied by the spider to Scrapy's settings (a preset), checked here with the rest.
        parse_bool("SITEMAPAUDIT_UNTHROTTLED", get("SITEMAPAUDIT_UNTHROTTLED"))
        jobdir = settings.get("JOBDIR") if hasattr(settings, "get") else None
        if jobdir and get("SITEMAPAUDIT_DISTRIBUTED"):
            raise ConfigError(
                "JOBDIR cannot be combined with SITEMAPAUDIT_DISTRIBUTED: a distributed audit "
                "keeps its state in Redis, and workers started again go on from there"
            )
        return cls(
            robots_user_agent=user_agent,
            fetch_urls=parse_bool("SITEMAPAUDIT_FETCH_URLS", get("SITEMAPAUDIT_FETCH_URLS")),
            fetch_blocked=parse_bool(
                "SITEMAPAUDIT_FETCH_BLOCKED", get("SITEMAPAUDIT_FETCH_BLOCKED")
            ),
            common_paths=tuple(paths),
            sitemap_hosts=_origins("SITEMAPAUDIT_SITEMAP_HOSTS", get("SITEMAPAUDIT_SITEMAP_HOSTS")),
            max_index_depth=integer("SITEMAPAUDIT_MAX_INDEX_DEPTH"),
            max_sitemaps=integer("SITEMAPAUDIT_MAX_SITEMAPS", 1),
            sitemap_read_limit=integer("SITEMAPAUDIT_SITEMAP_READ_LIMIT", 1024),
            robots_max_bytes=integer("SITEMAPAUDIT_ROBOTS_MAX_BYTES", 1024),
            near_limit_fraction=_fraction(
                "SITEMAPAUDIT_NEAR_LIMIT_FRACTION", get("SITEMAPAUDIT_NEAR_LIMIT_FRACTION")
            ),
            max_url_length=integer("SITEMAPAUDIT_MAX_URL_LENGTH", 16),
            max_redirects=integer("SITEMAPAUDIT_MAX_REDIRECTS", 1),
            lastmod_tolerance=real("SITEMAPAUDIT_LASTMOD_TOLERANCE"),
            generated_date_window=real("SITEMAPAUDIT_GENERATED_DATE_WINDOW"),
            honor_crawl_delay=parse_bool(
                "SITEMAPAUDIT_HONOR_CRAWL_DELAY", get("SITEMAPAUDIT_HONOR_CRAWL_DELAY")
            ),
            max_crawl_delay=real("SITEMAPAUDIT_MAX_CRAWL_DELAY"),
            retry_after_max=real("SITEMAPAUDIT_RETRY_AFTER_MAX"),
            head_only=parse_bool("SITEMAPAUDIT_HEAD_ONLY", get("SITEMAPAUDIT_HEAD_ONLY")),
            progress_interval=_progress_interval(real("SITEMAPAUDIT_PROGRESS_INTERVAL")),
            head_only_min_bytes=integer("SITEMAPAUDIT_HEAD_ONLY_MIN_BYTES"),
            disabled_checks=frozenset(disabled),
            report_dir=str(get("SITEMAPAUDIT_REPORT_DIR")),
            history_path=str(get("SITEMAPAUDIT_HISTORY_PATH") or ""),
            history_keep_runs=integer("SITEMAPAUDIT_HISTORY_KEEP_RUNS"),
            conditional_sitemaps=parse_bool(
                "SITEMAPAUDIT_CONDITIONAL_SITEMAPS", get("SITEMAPAUDIT_CONDITIONAL_SITEMAPS")
            ),
            incremental=parse_bool("SITEMAPAUDIT_INCREMENTAL", get("SITEMAPAUDIT_INCREMENTAL")),
            recheck_nights=integer("SITEMAPAUDIT_RECHECK_NIGHTS", 1),
            work_dir=str(get("SITEMAPAUDIT_WORK_DIR") or ""),
            distributed=_redis_url(get("SITEMAPAUDIT_DISTRIBUTED")),
            # (Redis keeps it in milliseconds, as a 64-bit integer.)
            worker_timeout=real("SITEMAPAUDIT_WORKER_TIMEOUT", 2.0, 1e12),
            user_agent=str(settings.get("USER_AGENT") or "") if hasattr(settings, "get") else "",
        ).checked()

    def checked(self) -> AuditConfig:
        """Combinations of settings that cannot work together fail here, naming them."""
        if self.distributed and self.incremental:
            raise ConfigError(
                "SITEMAPAUDIT_INCREMENTAL cannot be combined with SITEMAPAUDIT_DISTRIBUTED: the "
                "incremental policy reads each worker's own history store while crawling"
            )
        return self

    def with_fetch_urls(self, fetch_urls: bool) -> AuditConfig:
        """A copy with ``fetch_urls`` overridden (the ``fetch_urls`` spider argument)."""
        return replace(self, fetch_urls=fetch_urls)

    def shaping_settings(self) -> dict[str, Any]:
        """The settings that shape the result, as they go into the report's summary."""
        return {
            "robots_user_agent": self.robots_user_agent,
            "fetch_urls": self.fetch_urls,
            "fetch_blocked": self.fetch_blocked,
            "common_paths": list(self.common_paths),
            "sitemap_hosts": [origin.url for origin in self.sitemap_hosts],
            "max_index_depth": self.max_index_depth,
            "max_sitemaps": self.max_sitemaps,
            "sitemap_read_limit": self.sitemap_read_limit,
            "robots_max_bytes": self.robots_max_bytes,
            "near_limit_fraction": self.near_limit_fraction,
            "max_url_length": self.max_url_length,
            "max_redirects": self.max_redirects,
            "lastmod_tolerance": self.lastmod_tolerance,
            "generated_date_window": self.generated_date_window,
            "disabled_checks": sorted(self.disabled_checks),
        }
