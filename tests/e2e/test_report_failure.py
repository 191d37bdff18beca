"""A report that cannot be written while the audit runs: the records lost are counted, the
failure is logged, and the command's exit status says so."""

from __future__ import annotations

import errno
import io
import json
import logging
import os
from pathlib import Path
from typing import IO, Any

import pytest
from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from sitemapaudit.commands.crawl import audit_failed
from sitemapaudit.spiders.audit import AuditSpider
from sitemapaudit.words import count_noun
from tests.support.crawl import project_settings
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite


@deferred_f_from_coro_f
async def test_records_that_cannot_be_written_fail_the_audit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/b")), content_type=XML),
        "/a": Page(body="<html><head></head><body>a</body></html>"),
        "/b": Page(body="<html><head></head><body>b</body></html>"),
    }
    values = project_settings(
        FEEDS={str(tmp_path / "a-file" / "report.jsonl"): {"format": "jsonlines"}},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with TestSite(routes) as site, caplog.at_level(logging.ERROR):  # type: ignore[arg-type]
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    stats = crawler.stats.get_stats()
    assert stats["sitemapaudit/report/failed"] is True
    assert stats["sitemapaudit/report/records_lost"] == 4  # a sitemap, two URLs, the summary
    assert audit_failed(stats)
    messages = [r.getMessage() for r in caplog.records]
    failures = [m for m in messages if ": it gets no record from here on" in m]
    assert failures == [
        f"the report {tmp_path / 'a-file' / 'report.jsonl'} could not be written ([Errno 20] "
        f"Not a directory: {str(tmp_path / 'a-file' / 'report.jsonl')!r}): it gets no record "
        "from here on"
    ]
    assert any(m.startswith("4 records could not be written to the report ") for m in messages)


class _Disk(io.RawIOBase):
    """A file on a disk with room for ``room`` more bytes: a write past it writes what fits,
    and the next one fails with ENOSPC, as on a full file system (then, if it ``frees`` up,
    there is room again, as when other files are deleted)."""

    def __init__(self, path: str, mode: str, room: int, frees: bool) -> None:
        self.file = io.FileIO(path, mode)
        self.room = room
        self.frees = frees

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.file.tell()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.file.seek(offset, whence)

    def fileno(self) -> int:
        return self.file.fileno()

    def write(self, data: Any) -> int:
        if self.room <= 0:
            if self.frees:
                self.room = 1 << 30
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        chunk = bytes(data)[: self.room]
        written = self.file.write(chunk) or 0
        self.room -= written
        return written

    def close(self) -> None:
        self.file.close()
        super().close()


class FullDiskStorage(FileFeedStorage):
    """A local report file on a disk that fills after ``room`` bytes (the URI's query:
    ``room`` or ``room,frees``; none: a full disk)."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        path, _, query = uri.removeprefix("fulldisk://").partition("?")
        query = query or "0"
        super().__init__(path, feed_options=feed_options)
        room, _, frees = query.partition(",")
        self.room, self.frees = int(room), frees == "frees"

    def open(self, spider: Any) -> IO[bytes]:
        disk = _Disk(self.path, self.write_mode.replace("b", ""), self.room, self.frees)
        return io.BufferedWriter(disk, buffer_size=4096)  # type: ignore[return-value]


def full_disk_site() -> TestSite:
    pages = [f"/p{i}" for i in range(40)]
    routes: dict[str, object] = {
        "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
        "/s.xml": Page(body=urlset(*(url("{base}" + p) for p in pages)), content_type=XML),
        **{p: Page(body="<html><head></head><body>a</body></html>") for p in pages},
    }
    return TestSite(routes)  # type: ignore[arg-type]


@pytest.mark.parametrize("room", ["0", "300", "3000", "9000", "3000,frees"])
@deferred_f_from_coro_f
async def test_a_full_disk_counts_every_record_the_report_lacks(
    tmp_path: Path, room: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Records still in the write buffer when the disk filled, and one written in part, are
    lost too: the count is every record the report does not hold whole, and the report ends
    with whole records (no summary, no line cut short), also when the disk has room again
    later (no record after the gap, which would end with a summary as if complete)."""
    report = tmp_path / "report.jsonl"
    csv = tmp_path / "urls.csv"
    values = project_settings(
        FEEDS={
            f"fulldisk://{report}?{room}": {"format": "jsonlines"},
            str(csv): {"format": "urls_csv"},
            str(tmp_path / "whole.jsonl"): {"format": "jsonlines"},
        },
        FEED_STORAGES={"fulldisk": f"{__name__}.FullDiskStorage"},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with full_disk_site() as site, caplog.at_level(logging.ERROR):
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    stats = crawler.stats.get_stats()
    records = 1 + 40 + 1  # the sitemap, the URLs, the summary
    assert stats["item_scraped_count"] == records
    data = report.read_bytes()
    assert data == b"" or data.endswith(b"\n")
    kept = [json.loads(line) for line in data.splitlines()]
    assert len(kept) < records
    assert all(r["record"] != "summary" for r in kept)
    assert stats["sitemapaudit/report/records_lost"] == records - len(kept)
    assert stats["sitemapaudit/report/failed"] is True
    assert audit_failed(stats)
    messages = [r.getMessage() for r in caplog.records]
    assert sum(": it gets no record from here on" in m for m in messages) == 1
    # A full disk is said in a line each time, without a traceback or Scrapy's own log of the
    # same failure as it closes the file.
    assert [r for r in caplog.records if r.exc_info] == []
    assert not [m for m in messages if m.startswith("Error storing")]
    assert (
        f"{count_noun(records - len(kept), 'record')} could not be written to the report "
        f"fulldisk://{report}?{room}: it ends after its first {len(kept)}"
    ) in messages
    # The other feeds, on another disk, have every record; the report's summary says that
    # an output failed.
    assert len(csv.read_text(encoding="utf-8").splitlines()) == 1 + 40
    whole = [json.loads(line) for line in (tmp_path / "whole.jsonl").read_text().splitlines()]
    assert len(whole) == records
    lost = count_noun(records - len(kept) - 1, "record")
    assert [n for n in whole[-1]["notes"] if "could not be written" in n] == [
        f"an output of this report could not be written ({lost} lost so far; see the log): "
        "the command exits with status 1"
    ]


@deferred_f_from_coro_f
async def test_the_command_says_how_many_records_the_default_report_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = project_settings(
        SITEMAPAUDIT_REPORT_DIR=str(tmp_path / "reports"),
        FEED_STORAGES={"": f"{__name__}.FullDiskStorage"},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with full_disk_site() as site:
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    (report,) = (tmp_path / "reports").iterdir()
    assert report.read_bytes() == b""
    assert crawler.stats.get_value("sitemapaudit/report/records_lost") == 42
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"sitemapaudit: 42 records could not be written to the report {report}, which is "
        "incomplete (see the log)"
    )


@deferred_f_from_coro_f
async def test_a_feed_in_batch_files_gets_every_record_once(tmp_path: Path) -> None:
    values = project_settings(
        FEEDS={
            str(tmp_path / "part-%(batch_id)d.jsonl"): {
                "format": "jsonlines",
                "batch_item_count": 7,
            }
        },
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with full_disk_site() as site:
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    parts = sorted(tmp_path.glob("part-*.jsonl"), key=lambda p: int(p.stem.split("-")[1]))
    lines = [line for part in parts for line in part.read_text(encoding="utf-8").splitlines()]
    assert [len(part.read_text(encoding="utf-8").splitlines()) for part in parts] == [7] * 6
    assert len(lines) == 42
    assert json.loads(lines[-1])["record"] == "summary"
    assert not crawler.stats.get_value("sitemapaudit/report/failed")


@pytest.mark.parametrize("fmt", ["xlsx", "html"])
@deferred_f_from_coro_f
async def test_a_report_written_in_one_piece_that_fails_holds_nothing(
    tmp_path: Path, fmt: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An XLSX workbook or an HTML page is written as its feed closes: when that fails, the
    file holds none of the records (cut back to nothing), and the audit says so."""
    report = tmp_path / f"report.{fmt}"
    values = project_settings(
        FEEDS={f"fulldisk://{report}?2000": {"format": fmt}},
        FEED_STORAGES={"fulldisk": f"{__name__}.FullDiskStorage"},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with full_disk_site() as site, caplog.at_level(logging.ERROR):
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    stats = crawler.stats.get_stats()
    assert stats["sitemapaudit/report/failed"] is True
    assert stats["sitemapaudit/report/records_lost"] == 42
    assert audit_failed(stats)
    assert report.read_bytes() == b""
    messages = [r.getMessage() for r in caplog.records]
    assert (
        f"42 records could not be written to the report fulldisk://{report}?2000: it ends "
        "after its first 0"
    ) in messages


@deferred_f_from_coro_f
async def test_a_csv_of_one_record_type_counts_only_its_rows_lost(tmp_path: Path) -> None:
    """``urls_csv`` holds URL records only: the sitemap and the summary it never holds are not
    counted as lost."""
    report = tmp_path / "urls.csv"
    values = project_settings(
        FEEDS={f"fulldisk://{report}?4000": {"format": "urls_csv"}},
        FEED_STORAGES={"fulldisk": f"{__name__}.FullDiskStorage"},
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with full_disk_site() as site:
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    rows = report.read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) < 40
    assert crawler.stats.get_value("sitemapaudit/report/records_lost") == 40 - len(rows)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@deferred_f_from_coro_f
async def test_a_device_that_refuses_every_write_is_said_once_and_not_cut_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``-O /dev/full``: every write fails with ENOSPC; a device has no length to cut back."""
    values = project_settings(
        FEEDS={"/dev/full": {"format": "jsonlines"}}, SITEMAPAUDIT_HISTORY_PATH=""
    )
    with full_disk_site() as site, caplog.at_level(logging.ERROR):
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    assert crawler.stats.get_value("sitemapaudit/report/records_lost") == 1 + 40 + 1
    assert [r.getMessage() for r in caplog.records] == [
        "the report /dev/full could not be written ([Errno 28] No space left on device): it "
        "gets no record from here on",
        "42 records could not be written to the report /dev/full: it ends after its first 0",
    ]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@deferred_f_from_coro_f
async def test_each_output_that_fails_is_said_when_it_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    values = project_settings(
        FEEDS={
            "/dev/full": {"format": "jsonlines"},
            "file:///dev/full": {"format": "urls_csv"},
        },
        SITEMAPAUDIT_HISTORY_PATH="",
    )
    with full_disk_site() as site, caplog.at_level(logging.ERROR):
        crawler = get_crawler(AuditSpider, values)
        await crawler.crawl_async(domain=site.base)
    said = [
        r.getMessage() for r in caplog.records if "gets no record from here on" in r.getMessage()
    ]
    assert said == [
        f"the report {uri} could not be written ([Errno 28] No space left on device): it gets "
        "no record from here on"
        for uri in ("/dev/full", "file:///dev/full")
    ]
