"""Scrapy's feed exporter and item counter, record by record: a :class:`UrlRecordBatch` is
one Scrapy item but many records, written as one line each by any feed format and counted as
that many items in ``item_scraped_count``."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from typing import Any

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.extensions.corestats import CoreStats
from scrapy.extensions.feedexport import FeedExporter, FeedSlot, FileFeedStorage

from sitemapaudit.report.records import DiffRecordBatch, UrlRecordBatch
from sitemapaudit.words import count_noun

logger = logging.getLogger(__name__)

# Items that carry records to write one line each.
_BATCHES = (UrlRecordBatch, DiffRecordBatch)


class _FeedProgress:
    """What one feed's file holds of the records handed to it."""

    __slots__ = ("failed", "handed", "kept", "kept_bytes", "local", "lost", "start_bytes")

    def __init__(self, local: bool) -> None:
        # A local file, flushed after each item: a write that fails shows at once, and the
        # file can be cut back to the records known to be whole in it.
        self.local = local
        self.handed = 0
        # Records known to be whole in the file, and the file's size after them (local).
        self.kept = 0
        self.kept_bytes: int | None = None
        self.start_bytes: int | None = None
        self.failed = False
        self.lost = 0


class RecordFeedExporter(FeedExporter):
    """Scrapy's ``FeedExporter`` (every feed option, batch and filter works the same); each
    record of a batch reaches every feed as an item of its own.

    A feed whose file cannot be written (a full disk, a directory that went away) takes no
    record after its first failure, so that it ends with the records before it and no summary
    after a gap (a reader takes it for an audit that did not finish, not for a complete one);
    the other feeds go on. A local file is flushed after each item and, at the end, cut back
    to the records known to be whole in it (the write buffer may have held records when the
    disk filled, and a record may have been written in part). The records a feed lacks are
    counted in ``sitemapaudit/report/records_lost``, the first failure is logged with its
    traceback and each failed feed's count at the end, and ``sitemapaudit/report/failed``
    makes the command exit with 1."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._progress: dict[FeedSlot, _FeedProgress] = {}

    def item_scraped(self, item: Any, spider: Spider) -> None:
        records = item.records if isinstance(item, _BATCHES) else [item]
        slots: list[FeedSlot] = []
        for slot in self.slots:
            slots.append(self._export(slot, records, spider))
        self.slots = slots

    def _export(self, slot: FeedSlot, records: list[Any], spider: Spider) -> FeedSlot:
        """Hand ``records`` to one feed; the slot that follows it (a new one when Scrapy
        starts the feed's next batch file)."""
        progress = self._of(slot)
        if progress.failed:
            self._lose(progress, _accepted(slot, records))
            return slot
        if progress.local and progress.kept_bytes is None:
            try:
                slot.start_exporting()
                assert slot.file is not None
                progress.kept_bytes = progress.start_bytes = slot.file.tell()
            except Exception:
                self._failed(slot, _accepted(slot, records))
                return slot
        scraped = super().item_scraped
        self.slots = [slot]
        current, start = slot, 0
        for index, record in enumerate(records):
            try:
                scraped(record, spider)
            except Exception:
                progress.handed += _accepted(current, records[start:index])
                self._failed(current, _accepted(current, records[index:]))
                return current
            if self.slots[0] is not current:  # its next batch file (batch_item_count)
                progress.handed += _accepted(current, records[start : index + 1])
                start = index + 1
                self._flush(current)
                current = self.slots[0]
                progress = self._of(current)
        progress.handed += _accepted(current, records[start:])
        self._flush(current)
        return current

    def _of(self, slot: FeedSlot) -> _FeedProgress:
        progress = self._progress.get(slot)
        if progress is None:
            local = isinstance(slot.storage, FileFeedStorage) and not slot.feed_options.get(
                "postprocessing"
            )
            progress = self._progress[slot] = _FeedProgress(local)
        return progress

    def _flush(self, slot: FeedSlot) -> None:
        progress = self._of(slot)
        if progress.local and slot.file is not None:
            try:
                slot.file.flush()
                progress.kept_bytes = slot.file.tell()
            except Exception:
                self._failed(slot, 0)
                return
        progress.kept = progress.handed

    def _failed(self, slot: FeedSlot, unwritten: int) -> None:
        """The feed's file failed: ``unwritten`` records are lost, and so are those of a
        local file handed since its last flush, and every later one."""
        progress = self._of(slot)
        if not progress.local:  # (what it holds is not known: those handed are counted in)
            progress.kept = progress.handed
        self._mark_failed(slot, progress)
        self._lose(progress, progress.handed - progress.kept + unwritten)

    def _mark_failed(self, slot: FeedSlot, progress: _FeedProgress) -> None:
        """The feed failed: said once for each output, when it happens."""
        if progress.failed:
            return
        progress.failed = True
        stats = self.crawler.stats
        assert stats is not None
        stats.set_value("sitemapaudit/report/failed", True)
        exc = sys.exception()
        if isinstance(exc, OSError):  # (a full disk, a lost mount: no bug to trace)
            logger.error(
                "the report %s could not be written (%s): it gets no record from here on",
                slot.uri,
                exc,
            )
        else:
            logger.exception(
                "the report %s could not be written: it gets no record from here on",
                slot.uri,
            )

    async def _close_slot(self, slot: FeedSlot, spider: Spider) -> None:
        progress = self._progress.get(slot)
        if progress is not None and progress.failed and progress.local:
            # A local file that failed takes nothing more: what its buffer holds (bytes the
            # disk refused) is dropped, not written again to fail and be logged once more.
            if slot.file is not None:
                with contextlib.suppress(OSError):
                    slot.file.close()
            stats = self.crawler.stats
            assert stats is not None
            stats.inc_value(f"feedexport/failed_count/{type(slot.storage).__name__}")
            return
        try:
            await super()._close_slot(slot, spider)
        except Exception:
            progress = self._of(slot)
            if progress.failed:
                pass  # (its records are counted already)
            elif getattr(slot.exporter, "writes_at_end", False):
                # A format written in one piece as it finishes (an XLSX workbook, an HTML
                # page) holds none of its records, whatever part of it reached the file,
                # which is cut back to where it started.
                progress.kept = 0
                progress.kept_bytes = progress.start_bytes
                self._mark_failed(slot, progress)
                self._lose(progress, progress.handed)
            else:
                self._failed(slot, 0)
            if slot.file is not None:
                try:
                    slot.file.close()
                except OSError:
                    # It flushes the same failing bytes again; the failure is logged above.
                    logger.debug("the report %s could not be closed", slot.uri, exc_info=True)

    def _lose(self, progress: _FeedProgress, count: int) -> None:
        if count:
            progress.lost += count
            stats = self.crawler.stats
            assert stats is not None
            stats.inc_value("sitemapaudit/report/records_lost", count)

    async def close_spider(self, spider: Spider) -> None:
        await super().close_spider(spider)
        for slot, progress in self._progress.items():
            if progress.failed:
                self._cut(slot, progress)

    def _cut(self, slot: FeedSlot, progress: _FeedProgress) -> None:
        """Log what a failed feed lacks; a local file loses what follows its last whole
        record (records left in the write buffer, one written in part)."""
        storage = slot.storage
        if progress.local and progress.kept_bytes is not None and _regular_file(storage):
            assert isinstance(storage, FileFeedStorage)
            try:
                os.truncate(storage.path, progress.kept_bytes)
            except OSError as exc:
                logger.error(
                    "the report %s could not be cut back to its whole records: %s", slot.uri, exc
                )
        logger.error(
            "%s could not be written to the report %s: it ends after its first %s",
            count_noun(progress.lost, "record"),
            slot.uri,
            f"{progress.kept:,}",
        )


def _regular_file(storage: Any) -> bool:
    """Whether a local feed is a regular file: a device or a pipe (``/dev/full``) has nothing
    to cut back."""
    try:
        return stat.S_ISREG(os.stat(storage.path).st_mode)
    except OSError:
        return True  # (cutting it back says why it cannot be)


def _accepted(slot: FeedSlot, records: list[Any]) -> int:
    """How many of ``records`` the feed's file holds: those its ``item_classes`` let through
    and, for a format of one record type (``urls_csv``...), of that type."""
    keeps = getattr(slot.exporter, "accepts", None)
    if not slot.filter.item_classes and keeps is None:
        return len(records)
    return sum(
        1 for record in records if slot.filter.accepts(record) and (keeps is None or keeps(record))
    )


class RecordCoreStats(CoreStats):
    """Scrapy's ``CoreStats``; ``item_scraped_count`` counts the records of a batch."""

    def item_scraped(self, item: Any, spider: Spider) -> None:
        if isinstance(item, _BATCHES):
            self.stats.inc_value("item_scraped_count", len(item.records))
        else:
            super().item_scraped(item, spider)
