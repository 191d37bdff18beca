"""A history store whose writes are carried out by a second process.

Writing the history costs the SQLite work of a few rows per URL, about as much CPU as the
rest of an inventory-only audit. :class:`BackgroundHistoryStore` buffers the rows of the
run as :class:`~sitemapaudit.history.store.HistoryStore` does, and hands each full batch to a
writer process (this module's :func:`main`), which commits it with
its own connection while the crawl goes on. A thread would not help: the GIL would have the
crawl and the writer take turns.

The two processes never write at the same time. The crawl's own process reads and writes
only after :meth:`BackgroundHistoryStore.sync`, which waits until the writer has committed
everything sent to it; every read, ``finish_run``, ``delete_run`` and ``close`` sync first,
so the store reads as if it had written everything itself. Sitemap listings and validators,
written during the crawl, go through the writer too.

The writer runs in a session of its own and ignores SIGINT and SIGTERM: a Ctrl-C or a
``kill`` of the crawl makes the crawl shut down gracefully, and it still finishes its run
through the writer. The writer exits when its input ends: on ``close``, or when the crawl's
process has died, after committing what it was sent. A writer that fails
reports the error and exits; the next call of the store raises :class:`HistoryError` with
that message.
"""

from __future__ import annotations

import contextlib
import fcntl
import pickle
import signal
import struct
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

from sitemapaudit.history.store import (
    REJUDGE_UNKNOWN,
    HistoryError,
    HistoryStore,
    listing_chunks,
)

_FRAME = struct.Struct("<Q")
# The pipe to the writer holds this much (Linux), so that the crawl rarely waits while the
# writer commits a batch.
_PIPE_BYTES = 1 << 20
# The writer's SQLite page cache. Its writes go to the right edges of the B-trees (new ids,
# and a batch's new URLs in order), which a small cache holds; the writer's memory counts
# towards the audit's.
_WRITER_CACHE_KIB = 2000


class BackgroundHistoryStore(HistoryStore):
    """A :class:`HistoryStore` that writes the records of runs from a second process."""

    def __init__(self, path: str | Path, *, batch_size: int = 5000) -> None:
        super().__init__(path, batch_size=batch_size)
        self._unsynced = False
        self._broken: HistoryError | None = None
        self._writer: subprocess.Popen[bytes] | None = None
        try:
            self._writer = _start_writer(self.path)
        except OSError as exc:
            self._db.close()
            raise HistoryError(f"cannot start the history writer process: {exc}") from None

    # Writes that go to the writer

    def _write_buffered(self) -> None:
        taken = self._take_buffered()
        if taken is not None:
            self._send(("rows", *taken))

    def add_listings(
        self,
        run_id: int,
        sitemap_url: str,
        entries: Iterable[tuple[str, str | None, str]],
        batch: int = 5000,
    ) -> None:
        for chunk in listing_chunks(entries, batch):
            self._send(("listings", run_id, sitemap_url, chunk, batch))

    def set_validators(
        self,
        run_id: int,
        sitemap_url: str,
        etag: str | None,
        last_modified: str | None,
        rejudge_after: str | None = REJUDGE_UNKNOWN,
    ) -> None:
        self._send(("validators", run_id, sitemap_url, etag, last_modified, rejudge_after))

    # Everything else waits until the writer has caught up

    def flush(self) -> None:
        """Commit the buffered records: send them, and wait until the writer has."""
        self._write_buffered()
        self.sync()

    def sync(self) -> None:
        """Wait until the writer has committed everything sent to it."""
        writer = self._running()
        if not self._unsynced:
            return
        self._send(("sync",))
        assert writer.stdout is not None
        reply = writer.stdout.readline()
        if reply != b"ok\n":
            raise self._failure(reply)
        self._unsynced = False

    def _loc_id(self, loc: str, *, create: bool) -> int | None:
        self.sync()
        return super()._loc_id(loc, create=create)

    def summary(self, run_id: int) -> dict[str, Any] | None:
        self.sync()
        return super().summary(run_id)

    def begin_run(self, origin: str, started_at: str) -> int:
        self.sync()
        return super().begin_run(origin, started_at)

    def close(self) -> None:
        """Commit what is pending, stop the writer and close the database."""
        try:
            if self._writer is not None:
                self.flush()
                self._stop_writer()
        finally:
            self._writer = None
            self._db.close()

    # The pipe

    def _running(self) -> subprocess.Popen[bytes]:
        if self._writer is None:
            raise self._broken or HistoryError(f"the history store {self.path} is closed")
        return self._writer

    def _send(self, message: tuple[Any, ...]) -> None:
        writer = self._running()
        assert writer.stdin is not None
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        frame = memoryview(_FRAME.pack(len(data)) + data)
        try:
            while frame:  # (a signal can cut a write to a pipe short)
                frame = frame[writer.stdin.write(frame) :]
        except BrokenPipeError:
            raise self._failure(b"") from None
        self._unsynced = True

    def _stop_writer(self) -> None:
        writer = self._running()
        assert writer.stdin is not None
        assert writer.stdout is not None
        with contextlib.suppress(BrokenPipeError):
            writer.stdin.close()
        rest = writer.stdout.read()
        code = writer.wait()
        if code != 0:
            raise self._failure(rest, code)
        writer.stdout.close()

    def _failure(self, reply: bytes, code: int | None = None) -> HistoryError:
        """The error of a writer that stopped answering (its last words, when it said any)."""
        writer = self._writer
        self._writer = None
        if writer is not None:
            if code is None:
                if writer.stdout is not None and not reply:
                    reply = writer.stdout.read()
                code = writer.wait()
            for pipe in (writer.stdin, writer.stdout):
                if pipe is not None:
                    with contextlib.suppress(BrokenPipeError):
                        pipe.close()
        said = reply.decode("utf-8", "replace").strip()
        if said.startswith("error "):
            error = HistoryError(f"the history writer failed: {said[len('error ') :]}")
        else:
            error = HistoryError(
                f"the history writer process exited (status {code}) before committing "
                f"everything to {self.path}"
            )
        self._broken = error
        return error


# The writer's command: the module's main(), importing from the same sys.path as the crawl's
# process, so that it runs the same sitemapaudit, whether installed or in a checkout.
_WRITER_CODE = (
    "import sys; sys.path[:] = sys.argv[2:]; "
    "from sitemapaudit.history.background import main; sys.exit(main(sys.argv[1:2]))"
)


def _start_writer(path: str) -> subprocess.Popen[bytes]:
    # In a session of its own, a Ctrl-C at the terminal does not reach the writer.
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER_CODE, path, *sys.path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        start_new_session=True,
    )
    assert writer.stdin is not None
    set_pipe_size: int | None = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_pipe_size is not None:
        fcntl.fcntl(writer.stdin.fileno(), set_pipe_size, _pipe_bytes())
    return writer


def _pipe_bytes() -> int:
    """_PIPE_BYTES, or less where the system lets a process have only less."""
    limit = Path("/proc/sys/fs/pipe-max-size")
    if not limit.is_file():
        return _PIPE_BYTES
    return min(_PIPE_BYTES, int(limit.read_text()))


# The writer process


def _frames(source: BinaryIO) -> Iterator[tuple[Any, ...]]:
    """The messages read from ``source`` until it ends."""
    while True:
        head = source.read(_FRAME.size)
        if len(head) < _FRAME.size:
            return
        (size,) = _FRAME.unpack(head)
        data = source.read(size)
        if len(data) < size:
            return
        # (The crawl's own process wrote it.)
        message = pickle.loads(data)
        yield message


def serve(path: str, source: BinaryIO, replies: IO[bytes]) -> int:
    """Carry out the messages of ``source`` on the history at ``path``; the exit status."""
    try:
        store = HistoryStore(path, cache_kib=_WRITER_CACHE_KIB)
    except HistoryError as exc:  # (the crawl's process opened it, but this one cannot)
        replies.write(f"error {exc}\n".encode())
        replies.flush()
        return 1
    try:
        for message in _frames(source):
            op = message[0]
            if op == "rows":
                _, run_id, urls, sitemaps = message
                store.commit_rows(run_id, urls, sitemaps)
            elif op == "listings":
                _, run_id, sitemap_url, chunk, batch = message
                store.add_listings(run_id, sitemap_url, chunk, batch)
            elif op == "validators":
                store.set_validators(*message[1:])
            elif op == "sync":
                replies.write(b"ok\n")
                replies.flush()
            else:
                raise HistoryError(f"unknown message {op!r}")
    except Exception as exc:  # reported to the crawl, which raises it as a HistoryError
        replies.write(f"error {type(exc).__name__}: {exc}\n".encode())
        replies.flush()
        return 1
    finally:
        store.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m sitemapaudit.history.background HISTORY_PATH\n")
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return serve(args[0], sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())
