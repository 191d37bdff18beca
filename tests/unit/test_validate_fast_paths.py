"""The short cuts of record building and of ``scrapy validate`` say exactly what the long way says.

Record building skips the checks that need a response for URLs that were not requested;
``validate`` serialises records without ``dataclasses.asdict`` and keeps the listings of a file
in memory up to a bound, then in the SQLite inventory; each is compared here with the way it
replaced.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit import localfiles
from sitemapaudit.checks.base import CheckContext
from sitemapaudit.checks.lastmod import delta_seconds, listed_lastmod
from sitemapaudit.checks.registry import URL_CHECKS
from sitemapaudit.commands.validate import record_line
from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import FetchOutcome, UrlFacts
from sitemapaudit.inventory import Inventory, NewEntry
from sitemapaudit.localfiles import FileListings, validate_files
from sitemapaudit.report.build import RecordBuilder, _run
from sitemapaudit.report.records import SitemapRecord, UrlRecord

AUDIT_TIME = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)

LASTMODS = [
    None,
    "2024-05-01",
    "2024-05-01T10:00:00+00:00",
    "2024-05-01T10:00:00Z",
    "2031-01-01T00:00:00+02:00",
    "2031-01-01",
    "2024-13-01T00:00:00+00:00",
    "2024-05-01 10:00:00+00:00",
    "yesterday",
    "Wed, 01 May 2024 10:00:00 GMT",
]
RULES = [[], ["invalid_url"], ["url_too_long", "off_host"], ["out_of_scope"]]


def all_facts() -> list[UrlFacts]:
    facts = []
    for i, (lastmod, fmt, rules, listed, blocked, hreflang) in enumerate(
        (lastmod, fmt, rules, listed, blocked, hreflang)
        for lastmod in LASTMODS
        for fmt in ("w3c", "rfc822")
        for rules in RULES
        for listed in (1, 3)
        for blocked in (False, True)
        for hreflang in ([], ["https://e.com/fr does not list it back"])
    ):
        facts.append(
            UrlFacts(
                url=f"https://e.com/p{i}",
                sitemaps=["https://e.com/s.xml", "https://e.com/t.xml"][: 1 + i % 2],
                lastmod=lastmod,
                lastmod_format=fmt,
                times_listed=listed,
                rules=list(rules),
                robots_blocked=blocked,
                outcome=FetchOutcome(),
                hreflang=list(hreflang),
            )
        )
    return facts


@pytest.mark.parametrize("check", [c for c in URL_CHECKS if c.needs_response])
def test_checks_that_need_a_response_pass_every_unrequested_url(check: Any) -> None:
    ctx = CheckContext(config=AuditConfig.from_settings({}), audit_time=AUDIT_TIME)
    for facts in all_facts():
        assert check().run(facts, ctx) is None


@pytest.mark.parametrize("check", [c for c in URL_CHECKS if c.needs_rule])
def test_checks_that_need_a_rule_pass_every_url_that_broke_none(check: Any) -> None:
    ctx = CheckContext(config=AuditConfig.from_settings({}), audit_time=AUDIT_TIME)
    for facts in all_facts():
        for outcome in (FetchOutcome(), FetchOutcome(fetched=True, status=200)):
            facts.outcome = outcome
            facts.rules = []
            assert check().run(facts, ctx) is None


def test_only_the_url_rule_checks_need_a_rule() -> None:
    assert {c.code for c in URL_CHECKS if c.needs_rule} == {
        "invalid_url",
        "url_too_long",
        "off_host",
        "out_of_scope",
    }


def test_unrequested_urls_get_the_record_of_every_check() -> None:
    builder = RecordBuilder(AuditConfig.from_settings({}), AUDIT_TIME)
    window = builder.ctx.config.generated_date_window
    seen: set[str] = set()
    for facts in all_facts():
        record = builder.url_record(facts)
        issues, errors = _run(builder.url_checks, facts, builder.ctx)
        expected = UrlRecord(
            url=facts.url,
            sitemaps=list(facts.sitemaps),
            lastmod=facts.lastmod,
            lastmod_delta_s=delta_seconds(facts, window),
            robots_blocked=facts.robots_blocked,
            issues=issues,
            errors=errors,
        )
        assert record == expected
        assert record.sitemaps is not facts.sitemaps
        seen.update(record.issues)
    assert {"lastmod_invalid", "lastmod_future", "duplicate", "robots_blocked"} <= seen


def test_a_requested_url_still_runs_every_check() -> None:
    builder = RecordBuilder(AuditConfig.from_settings({}), AUDIT_TIME)
    facts = all_facts()[0]
    facts.outcome = FetchOutcome(fetched=True, status=404)
    assert builder.url_record(facts).issues == ["http_error"]
    seen: set[str] = set()
    for facts in all_facts():
        facts.outcome = FetchOutcome(fetched=True, status=404)
        record = builder.url_record(facts)
        assert (record.issues, record.errors) == _run(builder.url_checks, facts, builder.ctx)
        seen.update(record.issues)
    assert {"invalid_url", "url_too_long", "off_host", "out_of_scope", "http_error"} <= seen


def test_listed_lastmod_reads_w3c_and_rfc822() -> None:
    listed_lastmod.cache_clear()
    w3c = listed_lastmod("2024-05-01T10:00:00+02:00", "w3c")
    assert w3c is not None
    assert w3c.value == datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
    # A W3C Datetime in an RSS pubDate is read (and reported by lastmod_invalid).
    assert listed_lastmod("2024-05-01T10:00:00+02:00", "rfc822") == w3c
    rss = listed_lastmod("Wed, 01 May 2024 10:00:00 +0200", "rfc822")
    assert rss is not None
    assert rss.value == w3c.value
    assert listed_lastmod("Wed, 01 May 2024 10:00:00 +0200", "w3c") is None
    assert listed_lastmod(None, "w3c") is None


@dataclass
class _Hop:
    url: str
    status: int


def _records() -> list[SitemapRecord | UrlRecord]:
    return [
        SitemapRecord(url="/tmp/s.xml", found_via="argument"),
        SitemapRecord(
            url="https://e.com/s.xml.gz",
            found_via="robots.txt",
            parent="https://e.com/index.xml",
            kind="urlset",
            status=200,
            gzip=True,
            bytes=123,
            url_count=2,
            issues=["schema_invalid"],
            errors=['schema_invalid: line 3: /urlset/url[2]: "bad" \\ <tab>\t and é ☃ \u2028'],
            not_modified=True,
        ),
        UrlRecord(url="https://e.com/a", sitemaps=["/tmp/s.xml"], lastmod="2024-05-01"),
        UrlRecord(
            url='https://e.com/ü?q="x"&y=<z>',
            sitemaps=["https://e.com/s.xml", "https://e.com/t.xml"],
            status=301,
            fetched=True,
            redirect_chain=[
                {"url": "https://e.com/a", "status": 301, "location": "/b", "extra": (1, 2)},
                {"url": "https://e.com/b", "status": 200, "hop": _Hop("x", 1)},
            ],
            final_url="https://e.com/b",
            last_modified="Wed, 01 May 2024 10:00:00 GMT",
            lastmod_delta_s=-3600.5,
            noindex=["meta:robots"],
            canonical="https://e.com/c",
            issues=["redirect", "noindex"],
            errors=["redirect: redirects to https://e.com/b in 1 hop"],
            checked_at="2024-06-01T12:00:00Z",
            carried_over=True,
        ),
        UrlRecord(url="https://e.com/nan", lastmod_delta_s=float("nan")),
        UrlRecord(
            url='https://e.com/"q"\\\x00\u2028é',
            sitemaps=["/tmp/a b.xml", "/tmp/\u263a.xml"],
            robots_blocked=True,
            issues=["duplicate", "lastmod_invalid"],
            errors=["duplicate: listed 2 times in 1 sitemap", "lastmod_invalid: 'x\ty'"],
        ),
        UrlRecord(url="https://e.com/empty", sitemaps=[]),
        UrlRecord(url="https://e.com/odd", sitemaps=[1, None]),  # type: ignore[list-item]
        UrlRecord(url="https://e.com/tuple", issues=("a",)),  # type: ignore[arg-type]
        UrlRecord(url="https://e.com/lastmod", lastmod=5),  # type: ignore[arg-type]
        UrlRecord(url="https://e.com/blocked", robots_blocked=1),  # type: ignore[arg-type]
        UrlRecord(url="https://e.com/issues", issues=["a", 2]),  # type: ignore[list-item]
        UrlRecord(url="https://e.com/errors", issues=["a"], errors=["a: \u00e9"]),
        UrlRecord(url=None, sitemaps=["/tmp/s.xml"]),  # type: ignore[arg-type]
        UrlRecord(url="https://e.com/sitemaps", sitemaps=("/tmp/s.xml",)),  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize("record", _records())
def test_record_lines_are_the_asdict_json_lines(record: SitemapRecord | UrlRecord) -> None:
    assert record_line(record) == json.dumps(asdict(record), ensure_ascii=False) + "\n"


def test_record_lines_refuse_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        record_line(UrlRecord(url="https://e.com/a", redirect_chain=[{"at": object()}]))


# -- the listings of one file ---------------------------------------------------------------


def _entries() -> list[NewEntry]:
    """Listings with duplicates: later listings of a URL differ in lastmod, format and rules."""
    entries = []
    for i in range(400):
        url = f"https://e.com/p{(i * 7) % 150}"
        entries.append(
            NewEntry(
                url,
                None if i % 5 == 0 else f"2024-01-{1 + i % 28:02d}",
                "rfc822" if i % 11 == 0 else "w3c",
                ("invalid_url", "off_host") if i % 3 == 0 else (),
            )
        )
    return entries


def _listed(facts: list[UrlFacts]) -> list[tuple[Any, ...]]:
    return [
        (f.url, f.sitemaps, f.lastmod, f.lastmod_format, f.times_listed, f.rules) for f in facts
    ]


def _inventory_facts(tmp_path: Path, sitemap: str, entries: list[NewEntry]) -> list[UrlFacts]:
    """What the SQLite inventory alone makes of the listings (the path for every file before)."""
    inventory = Inventory(tmp_path / "reference.sqlite3")
    try:
        inventory.add_entries(sitemap, entries)
        inventory.listings_complete()
        facts = []
        while batch := inventory.take_new(1000):
            for listing in inventory.listings([url_id for url_id, *_ in batch]):
                facts.append(listing.facts(FetchOutcome()))
        return facts
    finally:
        inventory.close()


@pytest.mark.parametrize("memory_urls", [0, 1, 149, 150, 1000])
def test_file_listings_in_memory_or_spilled_match_the_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_urls: int
) -> None:
    entries = _entries()
    expected = _listed(_inventory_facts(tmp_path, "/tmp/s.xml", entries))
    assert len(expected) == 150
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    listings = FileListings(memory_urls)
    try:
        assert listings.add_entries("/tmp/s.xml", iter(entries), batch=7) == len(entries)
        assert listings.spilled is (memory_urls < len(expected))
        facts = list(listings.facts())
    finally:
        listings.close()
    assert _listed(facts) == expected
    assert all(f.outcome == FetchOutcome() and not f.robots_blocked for f in facts)
    assert not any(work.iterdir())


def test_validate_file_gives_the_same_records_in_memory_and_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = ['<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for entry in _entries():
        lastmod = "" if entry.lastmod is None else f"<lastmod>{entry.lastmod}</lastmod>"
        lines.append(f"<url><loc>{entry.loc}</loc>{lastmod}</url>")
    path = tmp_path / "sitemap.xml"
    path.write_text("\n".join([*lines, "</urlset>"]), encoding="utf-8")
    config = AuditConfig.from_settings({})
    builder = RecordBuilder(config, AUDIT_TIME)

    def records() -> list[str]:
        return [record_line(r) for r in validate_files([path], config, builder, [])]

    in_memory = records()
    monkeypatch.setattr(localfiles, "MEMORY_URLS", 10)
    assert records() == in_memory
    assert len(in_memory) == 151
    assert '"duplicate"' in in_memory[1]
