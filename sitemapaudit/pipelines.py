"""Item pipelines: run the checks over crawl facts, then count the report for its summary."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import asdict, fields
from datetime import UTC, datetime
from typing import Any, Self, TypeVar

from scrapy import signals
from scrapy.crawler import Crawler

from sitemapaudit.checks.base import ROBOTS_UNREADABLE
from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import SitemapFacts, UrlFacts, UrlFactsBatch
from sitemapaudit.history.diff import summarize
from sitemapaudit.history.store import STORE_FAILURES, HistoryStore
from sitemapaudit.report.build import RecordBuilder
from sitemapaudit.report.records import (
    DiffRecordBatch,
    SitemapRecord,
    SummaryRecord,
    UrlRecord,
    UrlRecordBatch,
)
from sitemapaudit.report.summary import SummaryCounter
from sitemapaudit.urls import usable_canonical
from sitemapaudit.words import count_noun

logger = logging.getLogger(__name__)

_STATS_EVERY = 1000

_Record = TypeVar("_Record", SitemapRecord, UrlRecord)


class ChecksPipeline:
    """Turns :class:`SitemapFacts` and :class:`UrlFacts` into report records."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.builder = RecordBuilder(AuditConfig.from_settings(crawler.settings), datetime.now(UTC))
        self._robots_unknown = True
        # Record and finding counts for the stats, added to them every _STATS_EVERY records
        # and at the end (a stats call per record and finding costs more than counting here).
        self._counts: Counter[tuple[str, str | None]] = Counter()
        self._pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if self._robots_unknown and isinstance(item, UrlFactsBatch | UrlFacts):
            self._read_robots()
        if self.builder.ctx.sitemaps_read_at is None and isinstance(item, UrlFactsBatch | UrlFacts):
            run = getattr(self.crawler.spider, "run", None)
            self.builder.ctx.sitemaps_read_at = getattr(run, "sitemaps_read_at", None)
        if isinstance(item, UrlFactsBatch):
            url_record = self.builder.url_record
            return UrlRecordBatch([self._count(url_record(facts)) for facts in item.facts])
        if isinstance(item, SitemapFacts):
            return self._count(self.builder.sitemap_record(item))
        if isinstance(item, UrlFacts):
            return self._count(self.builder.url_record(item))
        return item

    def _read_robots(self) -> None:
        """Before the first URL record: what the run's robots.txt says of every URL when it
        could not be read (URL facts come once it is read)."""
        run = getattr(self.crawler.spider, "run", None)
        robots_unreadable = getattr(run, "robots_unreadable", None)
        if robots_unreadable is None or getattr(run, "robots", None) is None:
            return
        self._robots_unknown = False
        reason = robots_unreadable()
        if reason is not None:
            self.builder.ctx.extras[ROBOTS_UNREADABLE] = reason

    def _count(self, record: _Record) -> _Record:
        counts = self._counts
        counts[record.record, None] += 1
        for code in record.issues:
            counts[record.record, code] += 1
        self._pending += 1
        if self._pending >= _STATS_EVERY:
            self._flush_stats()
        return record

    def close_spider(self) -> None:
        self._flush_stats()

    def _flush_stats(self) -> None:
        counts, self._counts, self._pending = self._counts, Counter(), 0
        if self.stats is None:
            return
        for (kind, code), count in counts.items():
            if code is None:
                self.stats.inc_value(f"sitemapaudit/records/{kind}", count)
            else:
                self.stats.inc_value(f"sitemapaudit/findings/{kind}/{code}", count)


class SummaryPipeline:
    """Counts every record and completes the summary record, which comes last."""

    def __init__(self, crawler: Crawler) -> None:
        builder = RecordBuilder(AuditConfig.from_settings(crawler.settings), datetime.now(UTC))
        self.builder = builder
        self.counter = SummaryCounter(builder.severity)
        self.crawler = crawler
        self.summarized = False
        # What made fail_on fail (see FailOn.matched), said last in the log.
        self.fail_on_matched: list[str] = []
        crawler.signals.connect(self.on_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def on_closed(self) -> None:
        """A cron job's log says why the command exits with 1, not only the summary."""
        if self.fail_on_matched:
            fail_on = getattr(self.crawler.spider, "fail_on", None)
            logger.warning(
                "fail_on=%s matched (%s): the command exits with status 1",
                getattr(fail_on, "policy", "?"),
                ", ".join(self.fail_on_matched),
            )

    def process_item(self, item: Any) -> Any:
        if isinstance(item, UrlRecordBatch):
            add = self.counter.add
            for record in item.records:
                add(record)
        elif isinstance(item, SitemapRecord | UrlRecord):
            self.counter.add(item)
        elif isinstance(item, DiffRecordBatch):
            add_change = self.counter.add_change
            for change in item.records:
                add_change(str(change["change"]))
        elif isinstance(item, SummaryRecord):
            self.summarized = True
            run = getattr(self.crawler.spider, "run", None)
            if run is None:
                self.counter.complete(item)
            else:
                self.counter.complete(
                    item,
                    run.homepage_unknown(),
                    run.robots_unknown(),
                    common_paths=bool(run.config.common_paths),
                )
            fail_on = getattr(self.crawler.spider, "fail_on", None)
            no_sitemap = item.complete and item.sitemaps_found == 0
            matched = (
                []
                if fail_on is None
                else fail_on.matched(item.counts, item.severities, no_sitemap=no_sitemap)
            )
            if matched:
                self.fail_on_matched = matched
                item.fail_on["failed"] = True
                assert self.crawler.stats is not None
                self.crawler.stats.set_value("sitemapaudit/fail_on/failed", True)
            logger.info(
                "audit of %s: %s, %s listed, %s fetched; findings: %s",
                item.origin,
                count_noun(item.sitemaps_found, "sitemap"),
                count_noun(item.urls_listed, "URL"),
                f"{item.urls_fetched:,}",
                ", ".join(f"{code}={n}" for code, n in item.counts.items()) or "none",
            )
            for note in item.notes:
                logger.warning("%s", note)
            previous = item.changes.get("previous_run")
            if previous is not None:
                logger.info("changes since run %s: %s", previous, summarize(item.changes["counts"]))
        return item

    def close_spider(self) -> None:
        """A crawl that closed before the summary came (Ctrl-C, SIGTERM, a CLOSESPIDER limit)
        still ends its report with one, marked ``"complete": false``; it goes straight to the
        feeds, past the history (the run stays unfinished there)."""
        if self.summarized:
            return
        spider = self.crawler.spider
        unfinished = getattr(spider, "unfinished_summary", None)
        summary = unfinished() if unfinished is not None else None
        if summary is None:
            return
        for record in self._held_records(spider):
            self.process_item(record)
            self.crawler.signals.send_catch_log(
                signal=signals.item_scraped, item=record, response=None, spider=spider
            )
        self.process_item(summary)
        if self.crawler.stats is not None:
            self.crawler.stats.set_value("sitemapaudit/summary/incomplete", True)
        self.crawler.signals.send_catch_log(
            signal=signals.item_scraped, item=summary, response=None, spider=spider
        )

    def _held_records(self, spider: Any) -> list[SitemapRecord]:
        """The records of indexes still waiting for their children's answers when the crawl
        stopped (see ``AuditRun.take_released``): they go in the report all the same."""
        run = getattr(spider, "run", None)
        take = getattr(run, "take_released", None)
        if take is None or getattr(spider, "shared", None) is not None:
            return []
        return [self.builder.sitemap_record(facts) for facts in take(all_held=True)]


class HistoryPipeline:
    """Keeps every record of the run in the history store (SITEMAPAUDIT_HISTORY_PATH).

    A history that fails (a full disk, a writer process that died) costs the report nothing:
    the record goes on, and the run carries on without the history (``AuditRun.history_failed``).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.keep_runs = AuditConfig.from_settings(crawler.settings).history_keep_runs

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        run = getattr(self.crawler.spider, "run", None)
        history = getattr(run, "history", None)
        if history is None or run is None:
            return item
        try:
            self._keep(history, run.history_run, item, run.read_runs)
        except STORE_FAILURES as exc:
            self._failed(run, item, exc)
        except Exception as exc:
            # A bug of the history's own: its traceback goes to the log, and it costs the report
            # nothing either (an error here would drop the record, the summary included).
            logger.exception("history: a %s record could not be kept", type(item).__name__)
            self._failed(run, item, exc)
        return item

    @staticmethod
    def _failed(run: Any, item: Any, exc: Exception) -> None:
        note = run.history_failed(exc)
        if isinstance(item, SummaryRecord) and note not in item.notes:
            item.notes.append(note)  # (the summary was made before the failure)

    def _keep(
        self, history: HistoryStore, run_id: int, item: Any, read_runs: dict[str, int]
    ) -> None:
        if isinstance(item, UrlRecordBatch):
            for record in item.records:
                _add_url(history, run_id, record)
        elif isinstance(item, UrlRecord):
            _add_url(history, run_id, item)
        elif isinstance(item, SitemapRecord):
            # The store reads a few fields and copies what it keeps: no deep copy needed.
            values = _fields(item)
            if item.not_modified:
                # The run that read the body this 304 stands for (see SitemapFacts.read_run).
                values["read_run"] = read_runs.get(item.url)
            history.add_record(run_id, values)
        elif isinstance(item, SummaryRecord):
            history.finish_run(run_id, item.finished_at or "", asdict(item))
            if item.resumed_at and item.complete:
                dropped = history.drop_parts(run_id)
                if dropped and self.crawler.stats is not None:
                    self.crawler.stats.inc_value("sitemapaudit/history/parts_deleted", len(dropped))
            if self.keep_runs:
                self._prune(history, item.origin)

    def _prune(self, history: HistoryStore, origin: str) -> None:
        """Delete the runs of ``origin`` past SITEMAPAUDIT_HISTORY_KEEP_RUNS (this one is
        finished, so it is among those kept)."""
        deleted = history.prune_runs(origin, self.keep_runs)
        if deleted:
            logger.info(
                "history: deleted %s of %s, keeping the newest %d",
                count_noun(len(deleted), "run"),
                origin,
                self.keep_runs,
            )
            stats = self.crawler.stats
            if stats is not None:
                stats.inc_value("sitemapaudit/history/runs_deleted", len(deleted))


def _add_url(history: HistoryStore, run_id: int, record: UrlRecord) -> None:
    history.add_url(
        run_id,
        record.url,
        record.sitemaps,
        record.issues,
        status=record.status,
        fetched=record.fetched,
        final_url=record.final_url,
        noindex=record.noindex,
        robots_blocked=record.robots_blocked,
        lastmod=record.lastmod,
        last_modified=record.last_modified,
        checked_at=record.checked_at,
        canonical_ignored=record.canonical is not None and not usable_canonical(record.canonical),
        canonical=record.canonical,
    )


_SITEMAP_FIELDS = tuple(f.name for f in fields(SitemapRecord))


def _fields(record: SitemapRecord) -> dict[str, Any]:
    """A record's fields as a dict, sharing their values (``asdict`` copies them deeply)."""
    return {name: getattr(record, name) for name in _SITEMAP_FIELDS}
