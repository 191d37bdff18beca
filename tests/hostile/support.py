"""Shared tools of the hostile-input tests: budgets, a file tripwire, hostile documents.

Small hostile documents live in ``tests/fixtures/hostile``; giants are generated here, at test
time, as compressed bytes or in pieces, so that no large file sits in the repository.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import gzip
import logging
import os
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sitemapaudit.crawl.intake import read_sitemap
from sitemapaudit.facts import SitemapFacts
from sitemapaudit.inventory import Inventory
from sitemapaudit.sitemap.parse import SitemapReader
from sitemapaudit.sitemap.records import ChildEntry, UrlEntry
from sitemapaudit.validation import HreflangGraph

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"
MB = 1024 * 1024
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML = "application/xml"


def fixture(name: str, **values: str) -> bytes:
    """A hostile fixture file, with ``{name}`` placeholders replaced by ``values``."""
    data = (FIXTURES / name).read_bytes()
    for key, value in values.items():
        data = data.replace(b"{" + key.encode() + b"}", value.encode())
    return data


# -- budgets -----------------------------------------------------------------------------------


@dataclass
class Usage:
    seconds: float = 0.0
    peak_bytes: int = 0


@contextmanager
def bounded(
    *, seconds: float, megabytes: float, clock: Callable[[], float] = time.process_time
) -> Iterator[Usage]:
    """Assert that the block takes under ``seconds`` and allocates under ``megabytes`` at peak.

    Seconds are the process's CPU seconds unless another ``clock`` is given: a blow-up shows
    there, and the load of other processes on a shared machine does not. Peak memory is what
    tracemalloc sees allocated during the block (Python objects, including every ``bytes`` and
    ``str`` a reader builds), on top of what existed before it.
    """
    usage = Usage()
    tracemalloc.start()
    start = clock()
    try:
        yield usage
    finally:
        usage.seconds = clock() - start
        usage.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert usage.seconds < seconds, f"took {usage.seconds:.2f} s (budget {seconds} s)"
    assert usage.peak_bytes < megabytes * MB, (
        f"peak {usage.peak_bytes / MB:.1f} MiB (budget {megabytes} MiB)"
    )


def _release_free_memory() -> None:
    """Hand memory freed by earlier tests back to the system, so that growth shows in RSS.

    glibc keeps freed heap pages and reuses them; without this, a test that runs after a
    bigger one would allocate without the resident set growing at all.
    """
    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


class _ResidentPeak(threading.Thread):
    """Samples the process's resident set size until stopped; keeps the highest value."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.page = os.sysconf("SC_PAGE_SIZE")
        _release_free_memory()
        self.baseline = self.resident()
        self.peak = self.baseline
        self._stop_event = threading.Event()

    def resident(self) -> int:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * self.page

    def run(self) -> None:
        while not self._stop_event.wait(0.01):
            self.peak = max(self.peak, self.resident())

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return max(self.peak, self.resident()) - self.baseline


@contextmanager
def bounded_resident(
    *, seconds: float, megabytes: float, clock: Callable[[], float] = time.process_time
) -> Iterator[Usage]:
    """Like :func:`bounded`, but measures the growth of the resident set size.

    For giants whose parse makes millions of small objects, where tracemalloc's own overhead
    would dominate the run; resident memory also counts what libxml2 allocates in C.
    """
    if not Path("/proc/self/statm").exists():
        pytest.skip("needs /proc/self/statm")
    usage = Usage()
    sampler = _ResidentPeak()
    sampler.start()
    start = clock()
    try:
        yield usage
    finally:
        usage.seconds = clock() - start
        usage.peak_bytes = sampler.stop()
    assert usage.seconds < seconds, f"took {usage.seconds:.2f} s (budget {seconds} s)"
    assert usage.peak_bytes < megabytes * MB, (
        f"resident set grew {usage.peak_bytes / MB:.1f} MiB (budget {megabytes} MiB)"
    )


# -- a tripwire for file access ------------------------------------------------------------------


_WATCHER = """
import errno, os, sys, time
path, out = sys.argv[1], sys.argv[2]
count = 0
while True:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            break
        time.sleep(0.002)
        continue
    count += 1
    with open(out, "w") as f:
        f.write(str(count))
    os.close(fd)
"""


class Tripwire:
    """A named pipe that notices when anything opens it for reading.

    A parser that tried to read it would block in ``open`` until a writer appears. A watcher
    process plays that writer: it counts the attempt, then hands over an empty file, so the
    count is written before the reader can go on, and the test fails on the count instead of
    hanging (a process, not a thread, because a parser blocked in C may hold the GIL).
    """

    def __init__(self, directory: Path) -> None:
        if not hasattr(os, "mkfifo"):
            pytest.skip("needs named pipes")
        self.path = directory / "tripwire.fifo"
        self._count = directory / "tripwire.count"
        os.mkfifo(self.path)
        self._watcher = subprocess.Popen(
            [sys.executable, "-c", _WATCHER, str(self.path), str(self._count)]
        )

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    @property
    def opened(self) -> int:
        """How many times the pipe was opened for reading so far."""
        try:
            return int(self._count.read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def close(self) -> None:
        self._watcher.terminate()
        self._watcher.wait(timeout=10)


# -- reading ------------------------------------------------------------------------------------


def read(body: bytes, **kwargs: Any) -> tuple[SitemapReader, list[UrlEntry | ChildEntry]]:
    reader = SitemapReader(body, **kwargs)
    return reader, list(reader)


def codes_of(problems: Iterable[Any]) -> list[str]:
    return [problem.code for problem in problems]


@dataclass
class Intake:
    """What the audit's sitemap intake made of one document."""

    facts: SitemapFacts
    urls: list[str]
    children: list[str] = field(default_factory=list)

    @property
    def codes(self) -> list[str]:
        return codes_of(self.facts.problems)


def intake(body: bytes, work: Path, *, read_limit: int = 104_857_600) -> Intake:
    """Run a document through the audit's sitemap intake (reader, validation, hreflang)."""
    work.mkdir(parents=True, exist_ok=True)
    inventory = Inventory(work / "inventory.sqlite3")
    graph = HreflangGraph(work / "hreflang.sqlite3")
    children: list[str] = []
    try:
        facts = read_sitemap(
            body,
            SitemapFacts(url="http://example.com/sitemap.xml", found_via="argument"),
            inventory=inventory,
            rules=lambda loc: (),
            on_child=lambda loc, lastmod: children.append(loc),
            read_limit=read_limit,
            now=datetime(2024, 6, 1, tzinfo=UTC),
            near_limit_fraction=0.9,
            hreflang=graph,
        )
        urls = list(inventory.iter_urls())
    finally:
        graph.close()
        inventory.close()
    return Intake(facts, urls, children)


# -- generated giants -----------------------------------------------------------------------------


def gzip_pieces(pieces: Iterable[bytes], level: int = 6) -> bytes:
    """Gzip the concatenation of ``pieces`` without holding it in memory."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [compressor.compress(piece) for piece in pieces]
    out.append(compressor.flush())
    return b"".join(out)


def repeated(piece: bytes, total: int, block: int = 1 << 20) -> Iterator[bytes]:
    """``total`` bytes made of ``piece`` over and over, in blocks of about ``block`` bytes."""
    unit = piece * max(1, block // len(piece))
    sent = 0
    while sent < total:
        chunk = unit[: total - sent]
        sent += len(chunk)
        yield chunk


def gzip_bomb(expanded_mib: int) -> bytes:
    """A gzipped urlset that expands to ``expanded_mib`` MiB: one entry, then empty elements.

    It is made of concatenated gzip members (one per MiB, about 1 KB each), so a 1 GiB bomb
    is built in milliseconds and travels as about 1 MB.
    """
    head = gzip.compress(
        f'<urlset xmlns="{NS}"><url><loc>http://example.com/first</loc></url>'.encode()
    )
    member = gzip_pieces(repeated(b"<x/>", MB), level=9)
    return head + member * expanded_mib


def urlset(locs: Iterable[str], *, newline: bool = True) -> bytes:
    sep = "\n" if newline else ""
    body = sep.join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    head = f'<?xml version="1.0" encoding="UTF-8"?>{sep}<urlset xmlns="{NS}">{sep}'
    return f"{head}{body}{sep}</urlset>{sep}".encode()


def sitemapindex(locs: Iterable[str]) -> bytes:
    body = "\n".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n'
    return f"{head}{body}\n</sitemapindex>\n".encode()


def corrupt_gzip(data: bytes) -> bytes:
    """``data`` gzipped, with a byte in the middle of the deflate stream flipped."""
    packed = bytearray(gzip.compress(data, mtime=0))
    middle = len(packed) // 2
    packed[middle] ^= 0xFF
    return bytes(packed)


# -- logs -----------------------------------------------------------------------------------------


def assert_no_errors(caplog: pytest.LogCaptureFixture, crawler: Any = None) -> None:
    """No ERROR log record, no record carrying a traceback, no callback exception."""
    bad = [
        record
        for record in caplog.records
        if record.levelno >= logging.ERROR or record.exc_info or record.exc_text
    ]
    assert not bad, "\n".join(record.getMessage() for record in bad)
    if crawler is not None:
        stats = crawler.stats.get_stats()
        assert not stats.get("log_count/ERROR"), stats
        assert not stats.get("log_count/CRITICAL"), stats
        assert not [key for key in stats if key.startswith("spider_exceptions")], stats
