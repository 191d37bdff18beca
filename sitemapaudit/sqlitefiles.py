"""What the audit's SQLite files (the URL inventory, the history) share: undoing a transaction
after an error, and telling a file that is not a database from one that cannot be written."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

# Primary result codes (the low byte of an extended one) that say the file itself is wrong.
_DAMAGED = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
# Codes that say the file could not be written or read, whatever it holds.
_STORAGE = (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)


def roll_back(db: sqlite3.Connection) -> None:
    """Undo the transaction an error interrupted, if it is still open.

    SQLite rolls a transaction back by itself after some errors (a full disk, an I/O error),
    and a ROLLBACK then fails with "cannot rollback - no transaction is active": that second
    error would replace the one that says what happened, which the caller raises again. A
    ROLLBACK that fails for another reason is left out for the same reason."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def is_damaged(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file is not a database, or a damaged one (rather than that it
    could not be read or written: a full disk, an I/O error, a lock)."""
    return _primary(exc) in _DAMAGED


def storage_detail(exc: sqlite3.Error, path: str | Path) -> str:
    """For an error of the disk (full, or an I/O error, which is what SQLite reports when it
    cannot grow its shared-memory file on a full one), how much space is free where ``path``
    is, e.g. ``"; 0 bytes free on its file system"``; otherwise nothing."""
    if _primary(exc) not in _STORAGE:
        return ""
    try:
        free = shutil.disk_usage(Path(path).absolute().parent).free
    except OSError:
        return ""
    return f"; {free:,} bytes free on its file system"


def _primary(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF
