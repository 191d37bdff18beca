"""What an audit stopped early says about the pages it requested whose records were not
written: how many (never the URLs settled without a request), and why they waited."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemapaudit.config import AuditConfig
from sitemapaudit.crawl import dispatch
from sitemapaudit.crawl.run import AuditRun, PageAction
from sitemapaudit.crawl.summary import stopped_summary, why_unrecorded
from sitemapaudit.crawl.tree import SitemapRef
from sitemapaudit.facts import FetchOutcome, UrlFactsBatch
from sitemapaudit.report.records import SummaryRecord
from sitemapaudit.urls import parse_origin

ORIGIN = "https://e.com"
SITEMAPS = [f"{ORIGIN}/a.xml", f"{ORIGIN}/b.xml"]


class _Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] += count


def _urlset(*locs: str) -> bytes:
    items = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    ).encode()


@pytest.fixture
def audit(tmp_path: Path) -> Iterator[tuple[AuditRun, SitemapRef]]:
    """A run of two sitemaps whose robots.txt disallows /private/; the first sitemap is
    read, listing a disallowed URL, an off-host one and two pages; and the second sitemap."""
    config = AuditConfig.from_settings(
        {"SITEMAPAUDIT_HISTORY_PATH": "", "SITEMAPAUDIT_WORK_DIR": str(tmp_path)}
    )
    run = AuditRun(parse_origin(ORIGIN), config, _Stats(), sitemap_args=SITEMAPS)
    run.robots_received(200, b"User-agent: *\nDisallow: /private/\n", f"{ORIGIN}/robots.txt")
    first, second = run.argument_refs()
    body = _urlset(f"{ORIGIN}/private/1", "https://elsewhere.example/1", *_pages(2))
    run.read_sitemap(first, 200, body)
    yield run, second
    run.close()


def _pages(count: int) -> list[str]:
    return [f"{ORIGIN}/p{i}" for i in range(count)]


def _fetch_handed_out(run: AuditRun, limit: int | None = None) -> int:
    """Hands out up to ``limit`` pages (all the run has to hand out now by default), and
    answers each 200 as it comes."""
    fetched = 0
    while fetched != limit and (action := run.next_action()) is not None:
        if isinstance(action, PageAction):
            run.fetch_finished(action.url_id, FetchOutcome(fetched=True, status=200), False)
            fetched += 1
    return fetched


def test_pages_waiting_for_a_sitemap_count_and_urls_settled_without_a_request_do_not(
    audit: tuple[AuditRun, SitemapRef],
) -> None:
    run, _ = audit
    assert not run.listings_final
    assert _fetch_handed_out(run) == 2
    assert run.inventory.done_count() == 4  # the disallowed and the off-host URL wait too
    assert run.unrecorded() == (2, 0)


def test_pages_waiting_for_their_batch_once_every_sitemap_is_read(
    audit: tuple[AuditRun, SitemapRef], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dispatch, "_PAGE_BATCH_SECONDS", 60.0)  # however slow the machine
    run, second = audit
    run.read_sitemap(second, 200, _urlset(f"{ORIGIN}/private/2", *_pages(5)))
    assert run.listings_final
    assert _fetch_handed_out(run, 3) == 3
    # Pages are left to hand out: their records go out with the next pages', or once the
    # first waited long enough.
    assert run.unrecorded() == (0, 3)


def test_the_note_says_why_the_records_waited() -> None:
    assert why_unrecorded(3, 0) == "a URL's record waits until every sitemap is read"
    assert why_unrecorded(0, 2) == "records are written a batch of pages at a time"
    assert why_unrecorded(3, 2) == (
        "3 waited for every sitemap to be read, as a URL's record names all that list it, "
        "and 2 for the rest of their batch, as records are written a batch of pages at a time"
    )


def _resumed(tmp_path: Path) -> AuditRun:
    config = AuditConfig.from_settings(
        {"SITEMAPAUDIT_HISTORY_PATH": "", "SITEMAPAUDIT_WORK_DIR": str(tmp_path)}
    )
    run = AuditRun(parse_origin(ORIGIN), config, _Stats(), sitemap_args=SITEMAPS)
    assert run.resumed
    run.robots_received(200, b"User-agent: *\nDisallow: /private/\n", f"{ORIGIN}/robots.txt")
    # The sitemaps given were registered by the first part: no common path is guessed.
    assert run.argument_refs() == []
    assert run.common_path_refs() == []
    return run


def test_a_resumed_audit_writes_its_earlier_parts_records_before_requesting_more(
    audit: tuple[AuditRun, SitemapRef], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dispatch, "_PAGE_BATCH_SECONDS", 60.0)  # however slow the machine
    run, _ = audit
    assert _fetch_handed_out(run) == 2  # their records wait for the second sitemap
    run.close()  # stopped before it was read

    again = _resumed(tmp_path)
    try:
        (pending,) = again.resumed_refs
        again.read_sitemap(pending, 200, _urlset(*_pages(6)[2:]))
        assert again.listings_final
        first = again.next_action()
        assert isinstance(first, UrlFactsBatch)
        assert {facts.url for facts in first.facts} >= set(_pages(2))
        # Stopped again after one more page: only that page waits for its record.
        assert _fetch_handed_out(again, 1) == 1
        assert again.unrecorded() == (0, 1)
    finally:
        again.close()


@pytest.mark.parametrize(
    ("pages", "said"),
    [
        (1, "(1 more was requested, but the audit stopped before its record was written: "),
        (2, "(2 more were requested, but the audit stopped before their records were written: "),
    ],
)
def test_the_stop_note_counts_the_pages_in_their_number(
    audit: tuple[AuditRun, SitemapRef], pages: int, said: str
) -> None:
    run, _ = audit
    assert _fetch_handed_out(run, pages) == pages
    summary = stopped_summary(
        SummaryRecord(origin=ORIGIN, started_at="2026-01-01T00:00:00Z"),
        run,
        history=False,
        unreachable=None,
        waiting_pages=0,
        unsent_urls=0,
        first_error=None,
        stats=None,
    )
    assert said in summary.notes[0]


def test_the_progress_line_counts_every_url_not_requested_yet_as_queued(tmp_path: Path) -> None:
    config = AuditConfig.from_settings(
        {"SITEMAPAUDIT_HISTORY_PATH": "", "SITEMAPAUDIT_WORK_DIR": str(tmp_path)}
    )
    run = AuditRun(parse_origin(ORIGIN), config, _Stats(), sitemap_args=SITEMAPS[:1])
    try:
        run.robots_received(200, b"", f"{ORIGIN}/robots.txt")
        (ref,) = run.argument_refs()
        run.read_sitemap(ref, 200, _urlset(*_pages(10)))
        assert isinstance(run.next_action(), PageAction)
        progress = run.progress()
        # One handed out; the other nine wait, whether still in the inventory or taken from
        # it to be handed out next.
        assert (progress["urls_known"], progress["urls_done"], progress["urls_queued"]) == (
            10,
            0,
            9,
        )
    finally:
        run.close()
