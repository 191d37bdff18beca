"""What changed between two stored runs: diff records, computed by SQL joins over both runs.

Every change type is one query (or two merged by URL) whose rows stream from SQLite, so
memory does not grow with the size of the runs. Records come out grouped by change type in
the order of :data:`CHANGES`, each group sorted by URL.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sitemapaudit.checks.fetching import Redirect
from sitemapaudit.checks.indexing import CanonicalMismatch
from sitemapaudit.checks.listing import Duplicate, OutOfScope
from sitemapaudit.checks.registry import (
    document_codes,
    lastmod_codes,
    page_codes,
    response_codes,
)
from sitemapaudit.history.store import (
    SITEMAP_RECORD,
    URL_RECORD,
    HistoryError,
    HistoryStore,
)
from sitemapaudit.page.dates import (
    Lastmod,
    parse_http_date,
    parse_rfc822_date,
    parse_w3c_datetime,
    period_end,
)
from sitemapaudit.words import count_noun

CHANGES: dict[str, str] = {
    "url_added": (
        "The URL is listed in the new run and was not in the old one (not when a sitemap the "
        "old run could not read lists it, see url_removed)."
    ),
    "url_removed": (
        "The URL was listed in the old run and is not in the new one. Not when a sitemap that "
        "listed it could not be read in the new run (its fetch failed, it answered a status "
        "that is neither 2xx nor 304, a 404 included, or what it answered could not be read to "
        "its end: not_a_sitemap, such as an HTML error page served with 200, xml_malformed "
        "or gzip_invalid, whose entries up to the break are known and compared as usual) or "
        "is missing from the new run because an index above it could not be read: that "
        "sitemap may list it still, so the URL is unknown, not removed."
    ),
    "url_moved": (
        "The URL is listed in both runs, by a different set of sitemaps. A sitemap that a run "
        "could not read (see url_removed) does not count as missing from that run's set."
    ),
    "sitemap_added": (
        "The sitemap is in the new run and was not in the old one (not one the old run lacked "
        "because an index above it could not be read)."
    ),
    "sitemap_removed": (
        "The sitemap was in the old run and is not in the new one. Not when it is missing "
        "because an index above it (at any depth) could not be read in the new run (see "
        "url_removed); a sitemap still listed that answers 404 or 500 is not removed either "
        "(it has http_error)."
    ),
    "finding_new": (
        "A URL or sitemap has a finding code it did not have (or did not exist). A finding "
        "only a request can find counts only if the old run requested the URL too; one whose "
        "check is switched off in either run does not count; nor does one the old run could "
        "not judge because it could not read a sitemap (as for finding_fixed)."
    ),
    "finding_fixed": (
        "A URL or sitemap no longer has a finding code (or is gone). A finding only a request "
        "can find counts only if the new run requested the URL too, one read from a page "
        "(noindex, canonical, lastmod...) only if the new run got a 2xx page for it, one that "
        "compares the lastmod (lastmod_mismatch, lastmod_unverifiable, lastmod_future) only if "
        "the new lastmod is not lastmod_invalid (a lastmod removed fixes them); one whose "
        "check is switched off in either run does not count. Nor is a finding fixed that the "
        "new run could not judge because it could not read a sitemap (see url_removed): one "
        "read from that sitemap's document (all but http_error, fetch_failed, redirect, "
        "redirect_loop, redirect_broken, off_host, robots_blocked and the index's "
        "lastmod_invalid and lastmod_future), any of a sitemap missing under an index that "
        "could not be read or of a URL that is unknown (see url_removed), a URL's duplicate, "
        "out_of_scope and lastmod findings when such a sitemap listed it (in either run: a "
        "URL's lastmod is the greatest of its listings')."
    ),
    "finding_persisting": "A URL or sitemap has the same finding code in both runs.",
    "status_regression": "The final status was 2xx and is now 4xx/5xx, or fetching now fails.",
    "status_changed": "The final status changed in another way between two fetched results.",
    "indexability_regression": (
        "The URL was indexable and now is not. The record's old and new give the reason, the "
        'first of: robots_blocked, fetch_failed, a non-2xx status (its number, as text: "404"), '
        "redirected (the listed URL redirects: its redirect finding), noindex, canonicalised "
        "(its canonical names another URL: its canonical_mismatch finding, unless that "
        "canonical is not an http(s) URL, which search engines ignore); else indexable. "
        "A redirect or a canonical counts only when its check is on in both runs."
    ),
    "indexability_restored": (
        "The URL was not indexable and now is (old says why, as for indexability_regression)."
    ),
    "lastmod_backwards": (
        "The URL's lastmod moved to an earlier date than in the old run. Not when a sitemap "
        "that listed the URL in one run could not be read in the other (see url_removed): a "
        "URL's lastmod is the greatest of its listings', so that run's is not the whole "
        "story (the same holds for the next two)."
    ),
    "lastmod_changed_page_unchanged": (
        "The lastmod changed but the page's Last-Modified is the same in both runs."
    ),
    "page_changed_lastmod_unchanged": (
        "The page's Last-Modified changed but its lastmod is the same in both runs."
    ),
}

_PHRASES: dict[str, tuple[str, str]] = {
    "url_added": ("URL added", "URLs added"),
    "url_removed": ("URL removed", "URLs removed"),
    "url_moved": ("URL moved between sitemaps", "URLs moved between sitemaps"),
    "sitemap_added": ("sitemap added", "sitemaps added"),
    "sitemap_removed": ("sitemap removed", "sitemaps removed"),
    "finding_new": ("new finding", "new findings"),
    "finding_fixed": ("finding fixed", "findings fixed"),
    "finding_persisting": ("finding persisting", "findings persisting"),
    "status_regression": ("status regression", "status regressions"),
    "status_changed": ("other status change", "other status changes"),
    "indexability_regression": ("URL no longer indexable", "URLs no longer indexable"),
    "indexability_restored": ("URL indexable again", "URLs indexable again"),
    "lastmod_backwards": ("lastmod gone backwards", "lastmods gone backwards"),
    "lastmod_changed_page_unchanged": (
        "lastmod changed on an unchanged page",
        "lastmods changed on unchanged pages",
    ),
    "page_changed_lastmod_unchanged": (
        "page changed under an unchanged lastmod",
        "pages changed under unchanged lastmods",
    ),
}

# URL finding codes judged from the sitemaps that list the URL: unknown when one of them could
# not be read.
_LISTING_CODES = (Duplicate.code, OutOfScope.code)

# Why an indexable URL is not, besides the finding codes and statuses that say it themselves.
REDIRECTED = "redirected"
CANONICALISED = "canonicalised"

# A date-only lastmod names a day in an unknown time zone (UTC-12:00 to UTC+14:00).
_EARLIEST_OFFSET = timedelta(hours=14)
_LATEST_OFFSET = timedelta(hours=12)

# The sitemap XSD's dates and times take time zones from -14:00 to +14:00.
_MAX_XSD_OFFSET = timedelta(hours=14)
_ZONED_DATE = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})(?:Z|[+-](?P<h>[0-9]{2}):(?P<m>[0-9]{2}))"
)


def diff_runs(
    store: HistoryStore, old_run: int, new_run: int, *, unchecked: Iterable[str] = ()
) -> Iterator[dict[str, Any]]:
    """The diff records from ``old_run`` to ``new_run``, both runs of ``store``.

    Each record is ``{"record": "diff", "change", "url", "sitemap", "code", "old", "new"}``;
    see :data:`CHANGES` for the change types. Finding codes whose check was switched off in
    either run (read from the stored summaries, plus ``unchecked``: those of a run whose
    summary is not stored yet) are neither new nor fixed. Raises :class:`HistoryError` for an
    unknown run.
    """
    for run_id in (old_run, new_run):
        if store.run(run_id) is None:
            raise HistoryError(f"no run {run_id} in {store.path}")
    skipped = frozenset(unchecked) | _disabled(store, old_run) | _disabled(store, new_run)
    return _diff(store, {"old": old_run, "new": new_run}, skipped)


def _disabled(store: HistoryStore, run_id: int) -> frozenset[str]:
    """The finding codes a finished run had switched off (its summary's settings)."""
    settings = (store.summary(run_id) or {}).get("settings")
    codes = settings.get("disabled_checks") if isinstance(settings, dict) else None
    return (
        frozenset(c for c in codes if isinstance(c, str))
        if isinstance(codes, list)
        else frozenset()
    )


def _diff(
    store: HistoryStore, runs: dict[str, int], skipped: frozenset[str]
) -> Iterator[dict[str, Any]]:
    yield from _url_presence(store, "url_added", runs["new"], runs["old"])
    yield from _url_presence(store, "url_removed", runs["old"], runs["new"])
    yield from _url_moved(store, runs)
    yield from _sitemap_presence(store, "sitemap_added", runs["new"], runs["old"])
    yield from _sitemap_presence(store, "sitemap_removed", runs["old"], runs["new"])
    for change, here, there in (("finding_new", "new", "old"), ("finding_fixed", "old", "new")):
        for record in _findings(store, change, runs[here], runs[there], present=False):
            if record["code"] not in skipped:
                yield record
    yield from _findings(store, "finding_persisting", runs["new"], runs["old"], present=True)
    yield from _statuses(store, "status_regression", runs)
    yield from _statuses(store, "status_changed", runs)
    yield from _indexability(store, "indexability_regression", runs, skipped)
    yield from _indexability(store, "indexability_restored", runs, skipped)
    yield from _lastmod_backwards(store, runs)
    yield from _lastmod_changed_page_unchanged(store, runs)
    yield from _page_changed_lastmod_unchanged(store, runs)


def summarize(diff_counts: Mapping[str, int]) -> str:
    """A one-line account of a diff from its number of records per change type."""
    parts = []
    known = [name for name in CHANGES if name in diff_counts]
    others = sorted(name for name in diff_counts if name not in CHANGES)
    for name in [*known, *others]:
        count = diff_counts[name]
        if not count:
            continue
        singular, plural = _PHRASES.get(name, (name, name))
        parts.append(f"{count:,} {singular if count == 1 else plural}")
    return ", ".join(parts) if parts else "no changes"


def _record(
    change: str,
    url: str | None,
    sitemap: str | None = None,
    *,
    code: str | None = None,
    old: Any = None,
    new: Any = None,
) -> dict[str, Any]:
    return {
        "record": "diff",
        "change": change,
        "url": url,
        "sitemap": sitemap,
        "code": code,
        "old": old,
        "new": new,
    }


UNREADABLE_BODY = ("not_a_sitemap", "xml_malformed", "gzip_invalid")
"""Findings of a sitemap whose body (answered 2xx) could not be read to its end: nothing of it
(an HTML error page served with 200, an empty body), or its entries only up to a broken
markup or gzip stream. What it lists is not known: a URL it no longer lists is unknown, not
removed, as for a sitemap that answered 500."""


def _unreadable(s: str) -> str:
    """SQL: the sitemap result ``s`` could not be read: its fetch failed, or it answered a
    status that is neither 2xx nor a 304 (a 404 too: the sitemap is still named where it was
    found), or what it answered could not be read to its end (see :data:`UNREADABLE_BODY`).
    A 3xx with a ``redirect`` finding is read, under the name of the sitemap it redirects
    to."""
    return (
        f"({s}.fetch_failed OR ({s}.status IS NOT NULL AND {s}.status NOT BETWEEN 200 AND 299 "
        f"AND {s}.status <> 304 AND NOT ({s}.status BETWEEN 300 AND 399 AND EXISTS "
        f"(SELECT 1 FROM findings rf WHERE rf.run_id = {s}.run_id "
        f"AND rf.kind = {SITEMAP_RECORD} AND rf.loc_id = {s}.sitemap_id "
        "AND rf.code = 'redirect'))) OR EXISTS "
        f"(SELECT 1 FROM findings rb WHERE rb.run_id = {s}.run_id "
        f"AND rb.kind = {SITEMAP_RECORD} AND rb.loc_id = {s}.sitemap_id "
        f"AND rb.code IN ({', '.join(repr(code) for code in UNREADABLE_BODY)})))"
    )


def _unread(name: str, unread: str, other: str) -> str:
    """SQL: a recursive common table ``name (id, lost)``: the sitemaps that the run of parameter
    ``unread`` could not read (``lost`` 0), and those of the run of parameter ``other`` that
    ``unread`` lacks because an index above them (at any depth, in ``other``'s tree) is one
    of these (``lost`` 1). That run does not know what they list, nor their findings."""
    return (
        f"{name} (id, lost) AS ("
        f"SELECT s.sitemap_id, 0 FROM sitemap_results s WHERE s.run_id = :{unread} "
        f"AND {_unreadable('s')} "
        "UNION "
        f"SELECT o.sitemap_id, 1 FROM {name} u JOIN sitemap_results o "
        f"ON o.run_id = :{other} AND o.parent_id = u.id WHERE NOT EXISTS "
        f"(SELECT 1 FROM sitemap_results x WHERE x.run_id = :{unread} "
        "AND x.sitemap_id = o.sitemap_id))"
    )


def _listed_by(url_id: str, run: str, sitemaps: str, other: str) -> str:
    """SQL: in the run of parameter ``run``, the URL ``url_id`` is listed by a sitemap of the
    common table ``sitemaps`` (one that may list it still, for all the run of parameter
    ``other`` knows), and ``other`` did not read that listing (a sitemap read only up to a
    broken markup or gzip stream lists the URLs it gave as known)."""
    return (
        f"EXISTS (SELECT 1 FROM url_sitemaps us WHERE us.run_id = :{run} "
        f"AND us.url_id = {url_id} AND us.sitemap_id IN (SELECT id FROM {sitemaps}) "
        f"AND NOT EXISTS (SELECT 1 FROM url_sitemaps uo WHERE uo.run_id = :{other} "
        "AND uo.url_id = us.url_id AND uo.sitemap_id = us.sitemap_id))"
    )


# The sitemaps each run could not read of those the other run had (see _unread).
_UNREAD_BOTH = (
    f"WITH RECURSIVE {_unread('unread_new', 'new', 'old')}, {_unread('unread_old', 'old', 'new')} "
)


def _lastmod_unknown(url_id: str) -> str:
    """SQL (with :data:`_UNREAD_BOTH`): in one run the URL was listed by a sitemap that the
    other run could not read, so the lastmod of one of the two runs is that of fewer
    listings (a URL's lastmod is the greatest of its listings'): no lastmod change is known."""
    return (
        f"({_listed_by(url_id, 'old', 'unread_new', 'new')} "
        f"OR {_listed_by(url_id, 'new', 'unread_old', 'old')})"
    )


def unread_sitemaps(store: HistoryStore, old_run: int, new_run: int) -> tuple[int, int]:
    """How many sitemaps that ``old_run`` read the run ``new_run`` could not read (a failed
    fetch, a status neither 2xx nor 304, a body that is no sitemap or breaks off), and how
    many more of ``old_run`` it lacks because an index above them could not be read: their
    URLs and findings are unknown in ``new_run``."""
    rows = store.query(
        f"WITH RECURSIVE {_unread('unread', 'new', 'old')} "
        "SELECT COALESCE(SUM(NOT u.lost AND EXISTS (SELECT 1 FROM sitemap_results o "
        f"WHERE o.run_id = :old AND o.sitemap_id = u.id AND NOT {_unreadable('o')})), 0), "
        "COALESCE(SUM(u.lost), 0) "
        "FROM unread u",
        {"old": old_run, "new": new_run},
    )
    unread, lost = next(rows)
    return int(unread), int(lost)


def unread_note(store: HistoryStore, old_run: int, new_run: int) -> str | None:
    """The summary's note when ``new_run`` could not read sitemaps that ``old_run`` had."""
    unread, lost = unread_sitemaps(store, old_run, new_run)
    if not unread:
        return None
    more = (
        f", nor {count_noun(lost, 'sitemap')} listed under "
        f"{'it' if unread == 1 else 'them'} in run {old_run}"
        if lost
        else ""
    )
    return (
        f"{count_noun(unread, 'sitemap')} of run {old_run} could not be read in this run (a "
        f"failed fetch, an error status, or a body that is no sitemap or breaks off){more}: the "
        f"changes since run {old_run} count the URLs listed there and their findings as "
        "unknown, not as removed or fixed"
    )


def _url_presence(
    store: HistoryStore, change: str, here: int, there: int
) -> Iterator[dict[str, Any]]:
    # A URL that a sitemap the other run could not read listed is not known to be gone.
    rows = store.query(
        f"WITH RECURSIVE {_unread('unread', 'there', 'here')} "
        "SELECT l.loc, (SELECT MIN(s.loc) FROM url_sitemaps us JOIN locs s "
        "ON s.id = us.sitemap_id WHERE us.run_id = :here AND us.url_id = r.url_id) "
        "FROM url_results r JOIN locs l ON l.id = r.url_id "
        "WHERE r.run_id = :here AND NOT EXISTS "
        "(SELECT 1 FROM url_results x WHERE x.run_id = :there AND x.url_id = r.url_id) "
        f"AND NOT {_listed_by('r.url_id', 'here', 'unread', 'there')} "
        "ORDER BY l.loc",
        {"here": here, "there": there},
    )
    for url, sitemap in rows:
        yield _record(change, url, sitemap)


def _url_moved(store: HistoryStore, runs: dict[str, int]) -> Iterator[dict[str, Any]]:
    # A sitemap that one run could not read is not missing from the sets of that run.
    rows = store.query(
        f"WITH RECURSIVE {_unread('unread_new', 'new', 'old')}, "
        f"{_unread('unread_old', 'old', 'new')}, "
        "changed (url_id) AS ("
        " SELECT a.url_id FROM url_sitemaps a WHERE a.run_id = :new AND NOT EXISTS"
        " (SELECT 1 FROM url_sitemaps b WHERE b.run_id = :old AND b.url_id = a.url_id"
        " AND b.sitemap_id = a.sitemap_id)"
        " AND a.sitemap_id NOT IN (SELECT id FROM unread_old)"
        " UNION"
        " SELECT a.url_id FROM url_sitemaps a WHERE a.run_id = :old AND NOT EXISTS"
        " (SELECT 1 FROM url_sitemaps b WHERE b.run_id = :new AND b.url_id = a.url_id"
        " AND b.sitemap_id = a.sitemap_id)"
        " AND a.sitemap_id NOT IN (SELECT id FROM unread_new)"
        ") "
        "SELECT l.loc, "
        "(SELECT json_group_array(s.loc) FROM url_sitemaps us JOIN locs s ON s.id = us.sitemap_id"
        " WHERE us.run_id = :old AND us.url_id = c.url_id), "
        "(SELECT json_group_array(s.loc) FROM url_sitemaps us JOIN locs s ON s.id = us.sitemap_id"
        " WHERE us.run_id = :new AND us.url_id = c.url_id) "
        "FROM changed c JOIN locs l ON l.id = c.url_id "
        "WHERE EXISTS (SELECT 1 FROM url_results r WHERE r.run_id = :old AND r.url_id = c.url_id)"
        " AND EXISTS (SELECT 1 FROM url_results r WHERE r.run_id = :new AND r.url_id = c.url_id) "
        "ORDER BY l.loc",
        runs,
    )
    for url, old, new in rows:
        yield _record("url_moved", url, old=sorted(json.loads(old)), new=sorted(json.loads(new)))


def _sitemap_presence(
    store: HistoryStore, change: str, here: int, there: int
) -> Iterator[dict[str, Any]]:
    # A sitemap under an index the other run could not read is not known to be gone.
    rows = store.query(
        f"WITH RECURSIVE {_unread('unread', 'there', 'here')} "
        "SELECT l.loc FROM sitemap_results r JOIN locs l ON l.id = r.sitemap_id "
        "WHERE r.run_id = :here AND NOT EXISTS "
        "(SELECT 1 FROM sitemap_results x WHERE x.run_id = :there AND x.sitemap_id = r.sitemap_id) "
        "AND r.sitemap_id NOT IN (SELECT id FROM unread WHERE lost) "
        "ORDER BY l.loc",
        {"here": here, "there": there},
    )
    for (url,) in rows:
        yield _record(change, url, url)


def _findings(
    store: HistoryStore, change: str, here: int, there: int, *, present: bool
) -> Iterator[dict[str, Any]]:
    # A finding only a request can find (noindex, a status...) is neither new nor fixed when
    # the other run lists the URL without requesting it (an inventory, a robots.txt block):
    # that run does not know. Nor is one read from a page's head fixed when the new run got no
    # 2xx page for the URL (a noindex is not fixed by a 500), nor one judged from the lastmod
    # when the new run's lastmod is invalid (a mismatch is not fixed by a lastmod of "-1");
    # a lastmod that is gone takes its findings with it. What the other run could not read is
    # unknown there: the findings of a sitemap's document when it could not read the sitemap,
    # every finding of a sitemap it lacks because an index above could not be read, those of a
    # URL it lacks that such a sitemap listed, and those judged from the sitemaps listing
    # a URL (duplicate, out_of_scope) when such a sitemap listed it.
    codes = sorted(response_codes())
    marks = ", ".join(f":code{i}" for i in range(len(codes)))
    fixed = change == "finding_fixed"
    page = sorted(page_codes()) if fixed else []
    page_marks = ", ".join(f":page{i}" for i in range(len(page)))
    dated = sorted(lastmod_codes()) if fixed else []
    dated_marks = ", ".join(f":dated{i}" for i in range(len(dated)))
    unjudged = (
        f"AND NOT (f.kind = :url_kind AND f.code IN ({page_marks}) AND EXISTS "
        "(SELECT 1 FROM url_results x WHERE x.run_id = :there AND x.url_id = f.loc_id "
        "AND NOT (x.fetched AND NOT x.fetch_failed AND x.status BETWEEN 200 AND 299))) "
        if page
        else ""
    )
    if dated:
        unjudged += (
            f"AND NOT (f.kind = :url_kind AND f.code IN ({dated_marks}) AND EXISTS "
            "(SELECT 1 FROM findings g WHERE g.run_id = :there AND g.kind = :url_kind "
            "AND g.loc_id = f.loc_id AND g.code = 'lastmod_invalid')) "
        )
    document = [] if present else sorted(document_codes())
    document_marks = ", ".join(f":document{i}" for i in range(len(document)))
    listing = [] if present else sorted({*_LISTING_CODES, *lastmod_codes()})
    listing_marks = ", ".join(f":listing{i}" for i in range(len(listing)))
    if document:
        unjudged += (
            "AND NOT (f.kind = :sitemap_kind AND EXISTS (SELECT 1 FROM unread u "
            f"WHERE u.id = f.loc_id AND (u.lost OR f.code IN ({document_marks})))) "
            "AND NOT (f.kind = :url_kind AND NOT EXISTS "
            "(SELECT 1 FROM url_results x WHERE x.run_id = :there AND x.url_id = f.loc_id) "
            f"AND {_listed_by('f.loc_id', 'here', 'unread', 'there')}) "
            f"AND NOT (f.kind = :url_kind AND f.code IN ({listing_marks}) "
            f"AND ({_listed_by('f.loc_id', 'here', 'unread', 'there')} "
            f"OR {_listed_by('f.loc_id', 'there', 'unread_here', 'here')})) "
        )
    unread = (
        ""
        if present
        else f"WITH RECURSIVE {_unread('unread', 'there', 'here')}, "
        f"{_unread('unread_here', 'here', 'there')} "
    )
    rows = store.query(
        f"{unread}SELECT l.loc, f.kind, f.code FROM findings f JOIN locs l ON l.id = f.loc_id "
        f"WHERE f.run_id = :here AND {'' if present else 'NOT '}EXISTS "
        "(SELECT 1 FROM findings g WHERE g.run_id = :there AND g.kind = f.kind "
        "AND g.loc_id = f.loc_id AND g.code = f.code) "
        f"AND NOT (f.kind = :url_kind AND f.code IN ({marks}) AND EXISTS "
        "(SELECT 1 FROM url_results x WHERE x.run_id = :there AND x.url_id = f.loc_id "
        "AND NOT (x.fetched OR x.fetch_failed OR x.status IS NOT NULL))) "
        f"{unjudged}"
        "ORDER BY l.loc, f.kind, f.code",
        {
            "here": here,
            "there": there,
            "url_kind": URL_RECORD,
            "sitemap_kind": SITEMAP_RECORD,
            **{f"code{i}": code for i, code in enumerate(codes)},
            **{f"document{i}": code for i, code in enumerate(document)},
            **{f"page{i}": code for i, code in enumerate(page)},
            **{f"dated{i}": code for i, code in enumerate(dated)},
            **{f"listing{i}": code for i, code in enumerate(listing)},
        },
    )
    for url, kind, code in rows:
        yield _record(change, url, url if kind == SITEMAP_RECORD else None, code=code)


def _got(alias: str, fetched: str) -> str:
    """SQL: the result is a fetched response (not a failure)."""
    return f"({fetched} AND NOT {alias}.fetch_failed AND {alias}.status IS NOT NULL)"


def _effective_status(alias: str) -> str:
    """SQL: the status of a result, a 304 Not Modified read as the success it confirms (a
    conditional sitemap fetch answers 304 only when the content of a 2xx answer is unchanged)."""
    return f"(CASE {alias}.status WHEN 304 THEN 200 ELSE {alias}.status END)"


def _status_condition(change: str, fetched_old: str, fetched_new: str) -> str:
    got_old, got_new = _got("o", fetched_old), _got("n", fetched_new)
    old, new = _effective_status("o"), _effective_status("n")
    regression = (
        f"({got_old} AND {old} BETWEEN 200 AND 299 AND "
        f"(n.fetch_failed OR ({got_new} AND n.status >= 400)))"
    )
    if change == "status_regression":
        return regression
    return f"({got_old} AND {got_new} AND {old} <> {new} AND NOT {regression})"


def _statuses(store: HistoryStore, change: str, runs: dict[str, int]) -> Iterator[dict[str, Any]]:
    url_rows = store.query(
        "SELECT l.loc, o.status, n.status, n.fetch_failed "
        "FROM url_results n JOIN url_results o ON o.run_id = :old AND o.url_id = n.url_id "
        "JOIN locs l ON l.id = n.url_id "
        f"WHERE n.run_id = :new AND {_status_condition(change, 'o.fetched', 'n.fetched')} "
        "ORDER BY l.loc",
        runs,
    )
    sitemap_rows = store.query(
        "SELECT l.loc, o.status, n.status, n.fetch_failed "
        "FROM sitemap_results n JOIN sitemap_results o "
        "ON o.run_id = :old AND o.sitemap_id = n.sitemap_id "
        "JOIN locs l ON l.id = n.sitemap_id "
        "WHERE n.run_id = :new AND "
        f"{_status_condition(change, 'o.status IS NOT NULL', 'n.status IS NOT NULL')} "
        "ORDER BY l.loc",
        runs,
    )
    tagged = heapq.merge(
        ((row, URL_RECORD) for row in url_rows),
        ((row, SITEMAP_RECORD) for row in sitemap_rows),
        key=lambda item: (item[0][0], item[1]),
    )
    for (url, old, new, new_failed), kind in tagged:
        yield _record(
            change,
            url,
            url if kind == SITEMAP_RECORD else None,
            old=old,
            new=None if new_failed else new,
        )


def _indexability_sql(alias: str, skipped: frozenset[str], *, canonical_kept: bool = True) -> str:
    """SQL: ``'indexable'``, why not, or NULL when the run does not tell (not requested).

    In order: ``robots_blocked``, ``fetch_failed``, the status of a non-2xx answer (``'404'``),
    ``'redirected'`` (the listed URL redirects: its ``redirect`` finding), ``'noindex'``,
    ``'canonicalised'`` (its canonical names another URL: its ``canonical_mismatch`` finding,
    unless the canonical is not an http(s) URL, which search engines ignore; a history without
    ``canonical_kept`` does not tell, and any canonical_mismatch counts).
    A finding whose check is in ``skipped`` (switched off in either run) is not asked about,
    so that a run that did not look does not make the URL indexable again.
    """
    a = alias
    redirected = (
        ""
        if Redirect.code in skipped
        else f"WHEN {_has_finding(a, Redirect.code)} THEN '{REDIRECTED}' "
    )
    canonicalised = (
        ""
        if CanonicalMismatch.code in skipped
        else f"WHEN {_has_finding(a, CanonicalMismatch.code)}"
        f"{f' AND NOT {a}.canonical_ignored' if canonical_kept else ''} THEN '{CANONICALISED}' "
    )
    return (
        f"CASE WHEN {a}.robots_blocked THEN 'robots_blocked' "
        f"WHEN {a}.fetch_failed THEN 'fetch_failed' "
        f"WHEN NOT {a}.fetched OR {a}.status IS NULL THEN NULL "
        f"WHEN {a}.status NOT BETWEEN 200 AND 299 THEN CAST({a}.status AS TEXT) "
        f"{redirected}"
        f"WHEN {a}.noindex <> '' THEN 'noindex' "
        f"{canonicalised}"
        "ELSE 'indexable' END"
    )


def _has_finding(alias: str, code: str) -> str:
    """SQL: the URL result ``alias`` has the finding ``code`` in its run."""
    return (
        f"EXISTS (SELECT 1 FROM findings f WHERE f.run_id = {alias}.run_id "
        f"AND f.kind = {URL_RECORD} AND f.loc_id = {alias}.url_id AND f.code = '{code}')"
    )


def _indexability(
    store: HistoryStore, change: str, runs: dict[str, int], skipped: frozenset[str]
) -> Iterator[dict[str, Any]]:
    if change == "indexability_regression":
        condition = "old = 'indexable' AND new <> 'indexable'"
    else:
        condition = "old <> 'indexable' AND new = 'indexable'"
    kept = store.canonical_kept
    old = _indexability_sql("o", skipped, canonical_kept=kept)
    new = _indexability_sql("n", skipped, canonical_kept=kept)
    rows = store.query(
        "SELECT url, old, new FROM ("
        f"SELECT l.loc AS url, {old} AS old, {new} AS new "
        "FROM url_results n JOIN url_results o ON o.run_id = :old AND o.url_id = n.url_id "
        "JOIN locs l ON l.id = n.url_id WHERE n.run_id = :new"
        f") WHERE {condition} ORDER BY url",
        runs,
    )
    for url, old_reason, new_reason in rows:
        yield _record(change, url, old=old_reason, new=new_reason)


def _lastmod_backwards(store: HistoryStore, runs: dict[str, int]) -> Iterator[dict[str, Any]]:
    rows = store.query(
        f"{_UNREAD_BOTH}SELECT l.loc, o.lastmod, n.lastmod "
        "FROM url_results n JOIN url_results o ON o.run_id = :old AND o.url_id = n.url_id "
        "JOIN locs l ON l.id = n.url_id "
        "WHERE n.run_id = :new AND o.lastmod IS NOT NULL AND n.lastmod IS NOT NULL "
        f"AND o.lastmod <> n.lastmod AND NOT {_lastmod_unknown('n.url_id')} ORDER BY l.loc",
        runs,
    )
    for url, old, new in rows:
        if went_backwards(old, new):
            yield _record("lastmod_backwards", url, old=old, new=new)


# Both runs fetched the page with a 2xx answer and found a usable Last-Modified: one that
# is there in both and that the audit did not judge generated on the fly.
_PAGE_DATES_USABLE = (
    "o.fetched AND n.fetched AND o.status BETWEEN 200 AND 299 AND n.status BETWEEN 200 AND 299 "
    "AND o.lastmod IS NOT NULL AND n.lastmod IS NOT NULL "
    "AND o.last_modified IS NOT NULL AND n.last_modified IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.run_id IN (:old, :new) "
    f"AND f.kind = {URL_RECORD} AND f.loc_id = n.url_id AND f.code = 'lastmod_unverifiable')"
)


def _lastmod_changed_page_unchanged(
    store: HistoryStore, runs: dict[str, int]
) -> Iterator[dict[str, Any]]:
    rows = store.query(
        f"{_UNREAD_BOTH}SELECT l.loc, o.lastmod, n.lastmod, o.last_modified, n.last_modified "
        "FROM url_results n JOIN url_results o ON o.run_id = :old AND o.url_id = n.url_id "
        "JOIN locs l ON l.id = n.url_id "
        f"WHERE n.run_id = :new AND {_PAGE_DATES_USABLE} AND o.lastmod <> n.lastmod "
        f"AND NOT {_lastmod_unknown('n.url_id')} ORDER BY l.loc",
        runs,
    )
    for url, old, new, old_page, new_page in rows:
        if not same_lastmod(old, new) and same_http_date(old_page, new_page):
            yield _record("lastmod_changed_page_unchanged", url, old=old, new=new)


def _page_changed_lastmod_unchanged(
    store: HistoryStore, runs: dict[str, int]
) -> Iterator[dict[str, Any]]:
    rows = store.query(
        f"{_UNREAD_BOTH}SELECT l.loc, o.lastmod, n.lastmod, o.last_modified, n.last_modified "
        "FROM url_results n JOIN url_results o ON o.run_id = :old AND o.url_id = n.url_id "
        "JOIN locs l ON l.id = n.url_id "
        f"WHERE n.run_id = :new AND {_PAGE_DATES_USABLE} AND o.last_modified <> n.last_modified "
        f"AND NOT {_lastmod_unknown('n.url_id')} ORDER BY l.loc",
        runs,
    )
    for url, old, new, old_page, new_page in rows:
        if same_lastmod(old, new) and not same_http_date(old_page, new_page):
            yield _record("page_changed_lastmod_unchanged", url, old=old_page, new=new_page)


def parse_lastmod(text: str) -> Lastmod | None:
    """Read a lastmod leniently: W3C Datetime first, then an RSS/RFC 822 date, then a date with
    a time zone (as its day), then any ISO 8601 form Python reads (a missing time zone is UTC).
    ``None`` when none of them fits, or for a time zone beyond the XSD's -14:00..+14:00."""
    parsed = parse_w3c_datetime(text)
    if parsed is not None:
        return parsed
    email = parse_rfc822_date(text)
    if email is not None:
        return Lastmod(value=email, date_only=False, precision="time")
    stripped = text.strip()
    zoned_date = _ZONED_DATE.fullmatch(stripped)
    if zoned_date is not None:
        # An xsd:date with a time zone (which fromisoformat would read as a time of day) names
        # that day: read as the day in an unknown zone, it is compared as a date-only lastmod.
        hours, minutes = int(zoned_date["h"] or 0), int(zoned_date["m"] or 0)
        if minutes > 59 or timedelta(hours=hours, minutes=minutes) > _MAX_XSD_OFFSET:
            return None
        return parse_w3c_datetime(zoned_date["date"])
    try:
        value = datetime.fromisoformat(stripped)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    offset = value.utcoffset()
    if offset is not None and abs(offset) > _MAX_XSD_OFFSET:
        return None
    date_only = not any(c in stripped for c in "T: ")
    try:
        return Lastmod(value=value.astimezone(UTC), date_only=date_only, precision="day")
    except (OverflowError, ValueError):
        return None


def went_backwards(old: str, new: str) -> bool:
    """Whether lastmod ``new`` is earlier than ``old`` without any doubt.

    Two dates-only compare as periods (a day, a month, a year): the new one must end by the
    time the old one starts. A date-only value against one with a time is widened by the
    time zones in use (UTC-12:00 to UTC+14:00). When neither value parses, the strings are
    compared; when only one does, nothing is concluded.
    """
    old_value, new_value = parse_lastmod(old), parse_lastmod(new)
    if old_value is None and new_value is None:
        return new.strip() < old.strip()
    if old_value is None or new_value is None:
        return False
    widen = old_value.date_only != new_value.date_only
    try:
        old_start = old_value.value
        if old_value.date_only and widen:
            old_start -= _EARLIEST_OFFSET
        if not new_value.date_only:
            return new_value.value < old_start
        new_end = period_end(new_value)
        if widen:
            new_end += _LATEST_OFFSET
    except (OverflowError, ValueError):
        return False
    return new_end <= old_start


def same_lastmod(old: str, new: str) -> bool:
    """Whether two lastmods say the same thing (the same text, or the same instant written
    with the same precision)."""
    if old.strip() == new.strip():
        return True
    old_value, new_value = parse_lastmod(old), parse_lastmod(new)
    if old_value is None or new_value is None:
        return False
    return old_value == new_value


def same_http_date(old: str, new: str) -> bool:
    """Whether two ``Last-Modified`` headers name the same instant (or are the same text)."""
    if old.strip() == new.strip():
        return True
    old_value, new_value = parse_http_date(old), parse_http_date(new)
    return old_value is not None and old_value == new_value
