"""Opening the store's SQLite file: the settings every connection gets, and a new file turned to WAL even when other
processes open it at the same moment (two ``tracescore run`` from cron before the job lock is reached)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

PAGE_SIZE = 16_384
"""Bytes per page of a new store: results rows of 1.5-2.5 KB pack several to a page (at SQLite's default, 4096, a row
over ~2 KB took a page of its own)."""
BUSY_SECONDS = 30  # how long a connection waits for another process's write, and for the switch to WAL


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _wal(db: sqlite3.Connection) -> None:
    """Turn ``db`` to WAL. sqlite's busy handler does not cover this switch of a new file: a second process making the
    same switch at the same moment gets "database is locked" at once (seen: 1 of 30 opens of one new store by 3
    processes), so it is retried for up to ``BUSY_SECONDS`` (tenacity imported only then: the deterministic path
    imports no retry machinery)."""
    try:
        db.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        if not _locked(exc):
            raise
        from tenacity import retry, retry_if_exception, stop_after_delay, wait_random_exponential

        retry(retry=retry_if_exception(_locked), stop=stop_after_delay(BUSY_SECONDS),
              wait=wait_random_exponential(multiplier=0.02, max=0.5), reraise=True)(
            lambda: db.execute("PRAGMA journal_mode=WAL"))()  # fmt: skip


def connect(path: Path) -> sqlite3.Connection:
    """A connection to ``path`` in autocommit mode, in WAL, waiting up to 30 s for another process's write (a second
    run opening the store while the first migrates it must reach the job lock and say so, not fail on "database is
    locked" after sqlite's default 5 s)."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS)
    # a new store only (an existing one keeps its pages): at 4 KiB, 20,000 heavy results took 83 MB and 14 us of CPU
    # each to write, at 16 KiB 48 MB and 9 us (benchmarks/throughput.py traces)
    db.execute(f"PRAGMA page_size={PAGE_SIZE}")
    _wal(db)
    db.execute("PRAGMA synchronous=NORMAL")
    # checkpoint every 4 MiB of log, as at 4 KiB pages: the run's own checkpoints overlap its scoring, and the one on
    # close (which the run waits for) is small
    db.execute(f"PRAGMA wal_autocheckpoint={(4 << 20) // PAGE_SIZE}")
    return db


def cannot_create(path: Path) -> str:
    """Why a new store could not be made at ``path`` (sqlite says only "unable to open database file"), and the
    option that puts it elsewhere."""
    folder = path.absolute().parent
    why = "the folder is not writable" if folder.is_dir() else "there is no such folder"
    return (f"cannot create the store {str(path)!r} in {str(folder)!r}: {why}; give --store PATH in a writable"
            " folder (score: --store none keeps nothing)")
