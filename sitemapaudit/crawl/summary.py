"""The summary record as the crawl knows it: the origin, discovery, settings and notes of the
run, and what a stop before the end left out. (The counts of the report's records are added by
:mod:`sitemapaudit.report.summary` as the summary goes through the pipelines.)"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from scrapy.statscollectors import StatsCollector

from sitemapaudit.config import AuditConfig
from sitemapaudit.middlewares import UNSENT_AT_STOP
from sitemapaudit.report.records import SummaryRecord
from sitemapaudit.words import count_noun, noun

if TYPE_CHECKING:
    from sitemapaudit.crawl.run import AuditRun
    from sitemapaudit.distributed.run import SharedAuditRun


def summary_record(
    run: AuditRun,
    config: AuditConfig,
    *,
    origin: str,
    started_at: datetime,
    fail_on: str,
    stats: StatsCollector | None,
    previous: int | None,
) -> SummaryRecord:
    """The summary of the run, its comparison with the ``previous`` run's id."""
    robots = run.robots
    return SummaryRecord(
        origin=origin,
        started_at=run.first_started_at or started_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        resumed_at=list(run.resumed_at),
        sitemaps_found=len(run.tree),
        robots_txt={
            "outcome": robots.outcome if robots else "unknown",
            "status": robots.status if robots else None,
            "sitemaps": len(robots.sitemaps) if robots else 0,
            "crawl_delay": robots.crawl_delay if robots else None,
        },
        notes=[*run.notes(), *_report_notes(stats)],
        settings={
            **config.shaping_settings(),
            # With the hosts of -a sitemap= URLs, whose sitemaps were fetched as theirs.
            "sitemap_hosts": [host.url for host in run.sitemap_hosts()],
        },
        fail_on={"policy": fail_on, "failed": False},
        changes={"previous_run": previous, "counts": {}},
        incremental=run.incremental_summary(),
    )


def _report_notes(stats: StatsCollector | None) -> list[str]:
    """A note for the outputs that can still be written, when another could not be."""
    if stats is None or not stats.get_value("sitemapaudit/report/failed"):
        return []
    lost = int(stats.get_value("sitemapaudit/report/records_lost", 0))
    return [
        f"an output of this report could not be written ({count_noun(lost, 'record')} lost "
        "so far; see the log): the command exits with status 1"
    ]


def stopped_summary(
    summary: SummaryRecord,
    run: AuditRun,
    *,
    history: bool,
    unreachable: str | None,
    waiting_pages: int,
    unsent_urls: int,
    first_error: str | None,
    stats: StatsCollector | None,
) -> SummaryRecord:
    """``summary`` marked incomplete, with a note on why the audit stopped early and how many
    URLs have no record: ``waiting_pages`` received but not read yet, ``unsent_urls`` whose
    records were not sent as the crawl closed (counted in ``stats`` too)."""
    summary.complete = False
    kept = "; the history keeps this run as unfinished" if history else ""
    if unreachable is not None:
        summary.notes.append(unreachable + kept)
        return summary
    urls, _ = run.inventory.totals()
    # Pages requested before the stop whose records were not out yet: none is left out
    # silently. Pages received but not read yet wait for their batch too.
    for_sitemaps, for_batch = run.unrecorded()
    for_batch += waiting_pages + unsent_urls
    unrecorded = for_sitemaps + for_batch
    if unrecorded and stats is not None:
        stats.inc_value("sitemapaudit/pages/unrecorded", unrecorded)
    more = (
        f" ({unrecorded:,} more {noun(unrecorded, 'was', 'were')} requested, but the audit "
        f"stopped before {noun(unrecorded, 'its record was', 'their records were')} written: "
        f"{why_unrecorded(for_sitemaps, for_batch)})"
        if unrecorded
        else ""
    )
    written = run.totals.urls_emitted - unsent_urls
    summary.notes.append(
        f"the audit stopped before it was complete: {written:,} of "
        f"the {urls:,} URLs found so far have a record{more}{kept}"
    )
    held = int(stats.get_value(UNSENT_AT_STOP, 0)) if stats is not None else 0
    if held:
        summary.notes.append(
            f"{count_noun(held, 'more URL')} answered 429 or 503 and waited for the "
            "Retry-After of the site when the audit stopped: the retry was not sent, and "
            f"{'they have' if held > 1 else 'it has'} no record"
        )
    if first_error is not None:
        summary.notes.append(
            f"it stopped on an error of sitemapaudit itself ({first_error}); the "
            "traceback is in the log"
        )
    return summary


def why_unrecorded(for_sitemaps: int, for_batch: int) -> str:
    """Why the records of pages requested before a stop were not written: they waited for
    every sitemap to be read, or for the rest of their batch, or some of each."""
    sitemaps = "a URL's record waits until every sitemap is read"
    batch = "records are written a batch of pages at a time"
    if not for_batch:
        return sitemaps
    if not for_sitemaps:
        return batch
    return (
        f"{for_sitemaps:,} waited for every sitemap to be read, as a URL's record names all "
        f"that list it, and {for_batch:,} for the rest of their batch, as {batch}"
    )


def stopped_worker_summary(summary: SummaryRecord, run: SharedAuditRun) -> SummaryRecord:
    """``summary`` marked incomplete, for a distributed worker that stopped while writing the
    report."""
    summary.complete = False
    urls = run.shared_inventory.url_count()
    summary.notes.append(
        f"this worker stopped while writing the report of the distributed audit: "
        f"{run.totals.urls_emitted:,} of its {urls:,} URLs have a record in this report; "
        "another worker may finish the audit and write the complete report"
    )
    return summary
