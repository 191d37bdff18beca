"""Defaults of every ``SITEMAPAUDIT_*`` setting, in one place.

Each entry is ``name: (default, type, meaning)``. The README's settings table documents the
same names, types, defaults and meanings (a test keeps the two in step), and
:mod:`sitemapaudit.config` reads and validates them once per crawl.
"""

from __future__ import annotations

from typing import Any

SETTINGS: dict[str, tuple[Any, str, str]] = {
    "SITEMAPAUDIT_ROBOTS_USER_AGENT": (
        "Googlebot",
        "str",
        "The robots.txt user agent whose rules are audited (falls back to the `*` group; "
        "`Googlebot-Image`, `-Video` and `-News` first to the `Googlebot` group), also the "
        "crawler name of robots metas and `X-Robots-Tag` rules: a product token such as "
        "`Googlebot`; a version (`Googlebot/2.1`) is dropped, a whole User-Agent string is "
        "refused.",
    ),
    "SITEMAPAUDIT_FETCH_URLS": (
        True,
        "bool",
        "Request every listed URL. Off (or `-a fetch_urls=no`): inventory only, no page requests.",
    ),
    "SITEMAPAUDIT_FETCH_BLOCKED": (
        False,
        "bool",
        "Also request URLs that robots.txt disallows (they are reported as blocked either way).",
    ),
    "SITEMAPAUDIT_COMMON_PATHS": (
        [
            "/sitemap.xml",
            "/sitemap_index.xml",
            "/sitemap-index.xml",
            "/sitemap.xml.gz",
            "/sitemap.txt",
        ],
        "list",
        "Paths tried when neither robots.txt nor the homepage names a sitemap.",
    ),
    "SITEMAPAUDIT_SITEMAP_HOSTS": (
        [],
        "list",
        "Other hosts that keep the site's sitemaps (a CDN, a host that robots.txt "
        "cross-submits), as `cdn.example.com` or `https://cdn.example.com`, with the port when "
        "it is not the scheme's default (`cdn.example.com:8080`; a host alone does not cover "
        "other ports): sitemaps there, and sitemap redirects to them, are fetched; the URLs "
        "they list must still be on the audited host, and the directory-scope rule "
        "(`out_of_scope`) does not apply to them. The hosts of `-a sitemap=` URLs count too.",
    ),
    "SITEMAPAUDIT_MAX_INDEX_DEPTH": (
        5,
        "int",
        "Deepest index nesting followed (a sitemap found directly has depth 0).",
    ),
    "SITEMAPAUDIT_MAX_SITEMAPS": (
        10_000,
        "int",
        "Most sitemaps fetched in one audit; children past the cap are reported, not fetched.",
    ),
    "SITEMAPAUDIT_SITEMAP_READ_LIMIT": (
        104_857_600,
        "int",
        "Bytes of one sitemap read after decompression, at least 1,024; reading stops there "
        "(gzip bombs).",
    ),
    "SITEMAPAUDIT_ROBOTS_MAX_BYTES": (
        512_000,
        "int",
        "Bytes of robots.txt parsed, at least 1,024 (Google reads the first 500 KiB).",
    ),
    "SITEMAPAUDIT_NEAR_LIMIT_FRACTION": (
        0.9,
        "float",
        "Fraction of the 50,000-entry and 50 MiB limits from which `near_limit` warns (above 0,"
        " at most 1).",
    ),
    "SITEMAPAUDIT_MAX_URL_LENGTH": (
        2048,
        "int",
        "Longest listed URL accepted; longer ones are `url_too_long`. (Sitemap locations are "
        "requested up to 8,192 characters whatever this says.)",
    ),
    "SITEMAPAUDIT_MAX_REDIRECTS": (10, "int", "Redirect hops followed before `redirect_loop`."),
    "SITEMAPAUDIT_LASTMOD_TOLERANCE": (
        3600.0,
        "float",
        "Seconds a `<lastmod>` may differ from `Last-Modified` before `lastmod_mismatch`, and "
        "an index's `<lastmod>` for a sitemap may be older than the newest `<lastmod>` it lists"
        " before `index_lastmod_stale`.",
    ),
    "SITEMAPAUDIT_GENERATED_DATE_WINDOW": (
        5.0,
        "float",
        "A `Last-Modified` this close (seconds) to the response's `Date` is taken as generated "
        "on the fly: `lastmod_unverifiable`.",
    ),
    "SITEMAPAUDIT_HONOR_CRAWL_DELAY": (
        True,
        "bool",
        "Space requests to the audited host by robots.txt `Crawl-delay`.",
    ),
    "SITEMAPAUDIT_MAX_CRAWL_DELAY": (60.0, "float", "Largest `Crawl-delay` honoured, in seconds."),
    "SITEMAPAUDIT_RETRY_AFTER_MAX": (
        300.0,
        "float",
        "Longest `Retry-After` (seconds) honoured on 429/503 before a retry; an answer that "
        "asks for longer is not retried, and its `http_error` says so.",
    ),
    "SITEMAPAUDIT_HEAD_ONLY": (
        True,
        "bool",
        "Stop reading a large HTML or XHTML page once its `<head>` has arrived (or its first 2 "
        "MiB, decoded, when the head has not ended by then: `head_too_large`), a large "
        "`application/xml` or `text/xml` response once its root element shows it is not XHTML, "
        "and any other large response after its headers (the checks need nothing more). A large"
        " page whose body cannot be read as its `Content-Encoding` says (gzip data sent without"
        " `Content-Encoding: gzip` or declared in another coding, a body declared `gzip` that "
        "is not gzip data, corrupt data, a coding the audit cannot decode) is stopped as soon "
        "as that shows, with the same `fetch_failed` finding as a full download gives.",
    ),
    "SITEMAPAUDIT_HEAD_ONLY_MIN_BYTES": (
        65536,
        "int",
        "Responses announcing at most this many bytes are read whole (stopping a download "
        "closes the connection, which costs more than small pages save); a response of unknown "
        "length (chunked, as servers that compress pages on the fly send them) is read up to "
        "this many bytes, counted as received (compressed), before it may be stopped.",
    ),
    "SITEMAPAUDIT_PROGRESS_INTERVAL": (
        60.0,
        "float",
        "Seconds between progress lines (URLs done, queued, rate, ETA), at least 1; 0 turns "
        "them off.",
    ),
    "SITEMAPAUDIT_UNTHROTTLED": (
        False,
        "bool",
        "For your own site or a staging copy: no delays, no AutoThrottle, 64 concurrent "
        "requests, Crawl-delay ignored (settings given with `-s` still win).",
    ),
    "SITEMAPAUDIT_DISABLED_CHECKS": (
        [],
        "list",
        "Finding codes to switch off (comma-separated on the command line). A check switched "
        "off only leaves its finding out of the records: what the audit requests stays the "
        "same. A URL that robots.txt disallows is still not requested "
        "(`SITEMAPAUDIT_FETCH_BLOCKED` requests it), nor is one longer than "
        "`SITEMAPAUDIT_MAX_URL_LENGTH` (raise that setting to request it), one on another host,"
        " or one that is no valid URL: with `url_too_long`, `off_host` or `invalid_url` "
        "switched off, such a record has `fetched` false, `status` null and no finding that "
        "says why.",
    ),
    "SITEMAPAUDIT_REPORT_DIR": (
        "reports",
        "str",
        "Where the report goes when no `-o`/`-O`/`FEEDS` is given (`<dir>/<host>-<UTC "
        "time>.jsonl`, `<host>_<port>` for a port other than the scheme's), and also, beside "
        "those, when this setting is itself given with `-s` (as scrapyd passes `-d setting=`, "
        'see "scrapyd"); empty for none.',
    ),
    "SITEMAPAUDIT_HISTORY_PATH": (
        "reports/history.sqlite3",
        "str",
        "SQLite file where every run's results are kept, for `diff` records against the "
        "previous run of the same origin and for `scrapy audit-diff`; empty turns history off.",
    ),
    "SITEMAPAUDIT_HISTORY_KEEP_RUNS": (
        0,
        "int",
        "Finished runs of an origin the history keeps: after each run, older runs of that "
        "origin are deleted and the file's freed space is reused (it stops growing); 0 keeps "
        "every run.",
    ),
    "SITEMAPAUDIT_CONDITIONAL_SITEMAPS": (
        True,
        "bool",
        "Fetch sitemaps with `If-None-Match`/`If-Modified-Since` from the previous run; a 304 "
        "reuses that run's entries (needs the history). Off, a run keeps neither its sitemaps' "
        "entries nor their validators, so the next run with it on reads every sitemap in full "
        "once (from an earlier run that kept both, it may still ask conditionally).",
    ),
    "SITEMAPAUDIT_INCREMENTAL": (
        False,
        "bool",
        "Request only URLs that are new, whose lastmod changed or that had findings last time, "
        "plus this run's share of the rest; carry the others over from the previous run.",
    ),
    "SITEMAPAUDIT_RECHECK_NIGHTS": (
        7,
        "int",
        "With the incremental policy, every URL is requested again at least once in this many "
        "consecutive finished runs of the origin, however they are scheduled (a deterministic "
        "rotation by URL, one share per run).",
    ),
    "SITEMAPAUDIT_DISTRIBUTED": (
        "",
        "str",
        "A Redis URL (`redis://host:port/db`): this process joins the audit of the same origin "
        "that other processes run on that Redis (shared queue, duplicate filter and URL state, "
        "cluster-wide rate limit). Empty: a single-process audit, no Redis needed.",
    ),
    "SITEMAPAUDIT_WORKER_TIMEOUT": (
        15.0,
        "float",
        "With `SITEMAPAUDIT_DISTRIBUTED`: seconds without a heartbeat after which a worker "
        "counts as gone and the work it held is queued again (a worker that is stopped hands "
        "its work back at once).",
    ),
    "SITEMAPAUDIT_WORK_DIR": (
        "",
        "str",
        "Directory of the on-disk URL inventory; empty means a temporary directory removed at "
        "the end.",
    ),
}


def default_settings() -> dict[str, Any]:
    """The defaults as a plain settings dict (used by the project's settings module)."""
    return {name: spec[0] for name, spec in SETTINGS.items()}
