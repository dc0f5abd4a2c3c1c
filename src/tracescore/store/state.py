"""Job state in the local store: watermarks per source, per-trace "scored and written" marks, backfill progress.

Cursor state lives only here, and only the pipeline advances it: a window's progress commits in a transaction of its
own, after the transactions holding every result and mark of the window (each committed after the platform sink took
its batch). Times are stored as fixed-width UTC text so they sort as they compare.
"""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from tracescore.errors import StoreError
from tracescore.store.db import Store

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def to_text(moment: datetime) -> str:
    """Fixed-width UTC text (``2026-11-29T23:05:43.000000Z``); a naive time is taken as UTC."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime(_FORMAT)


def from_text(text: str) -> datetime:
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def _now() -> str:
    return to_text(datetime.now(UTC))


@dataclass(frozen=True)
class Watermark:
    """Everything of ``source_key`` in ``[low, watermark)`` has been scored and written (or reported as failed)."""

    source_key: str
    low: datetime
    watermark: datetime
    run_id: str | None


@dataclass(frozen=True)
class Backfill:
    """One backfill job: ``[start, stop)`` cut into ``chunks`` equal windows; ``[done_from, stop)`` is done (slices
    are done newest first, as platforms list them), and so is ``[start, done_until)`` (what a backfill begun before
    slices went newest first had done oldest first)."""

    id: str
    source_key: str
    fingerprint: str
    start: datetime
    stop: datetime
    chunks: int
    done_until: datetime
    status: str
    done_from: datetime | None = None  # None: no slice done from the top (``stop``)

    @property
    def scope(self) -> str:
        return f"backfill:{self.id}"

    def windows(self) -> list[tuple[datetime, datetime]]:
        """The chunk windows still to do, newest first (chunks below ``done_until`` or from ``done_from`` skipped)."""
        step = (self.stop - self.start) / self.chunks
        edges = [self.start + step * i for i in range(self.chunks)] + [self.stop]
        top = self.stop if self.done_from is None else self.done_from
        return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > self.done_until and a < top][::-1]


class JobState:
    """Reads and queues writes of job state in a ``Store``; writes join the store's open transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- watermarks ---------------------------------------------------------------------------------------
    def watermark(self, source_key: str) -> Watermark | None:
        rows = self.store.query("SELECT low, watermark, run_id FROM watermarks WHERE source_key = ?", (source_key,))
        if not rows:
            return None
        low, mark, run_id = rows[0]
        return Watermark(source_key, from_text(low), from_text(mark), run_id)

    def advance(self, source_key: str, low: datetime, watermark: datetime, run_id: str) -> None:
        """Queue the new watermark (never moved backwards; ``low`` only ever moves down)."""
        self.store.write(
            "INSERT INTO watermarks (source_key, low, watermark, run_id, updated_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(source_key) DO UPDATE SET low = min(low, excluded.low),"
            " watermark = max(watermark, excluded.watermark), run_id = excluded.run_id,"
            " updated_at = excluded.updated_at",
            [(source_key, to_text(low), to_text(watermark), run_id, _now())],
        )

    # -- per-trace marks ----------------------------------------------------------------------------------
    def mark(self, scope: str, marks: list[tuple[str, datetime | None, str]], run_id: str) -> None:
        """Queue "done" marks ``(trace_key, trace timestamp, status)``; status is scored, failed or rejected."""
        now = _now()
        self.store.write(
            "INSERT OR REPLACE INTO scored_traces (scope, trace_key, trace_ts, status, run_id, scored_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(scope, key, to_text(ts) if ts else None, status, run_id, now) for key, ts, status in marks],
        )

    def marked(self, scope: str, trace_key: str) -> str | None:
        """The status this trace was marked with in ``scope``, or None when it was never done."""
        rows = self.store.query(
            "SELECT status FROM scored_traces WHERE scope = ? AND trace_key = ?", (scope, trace_key)
        )
        return str(rows[0][0]) if rows else None

    def count_marked(self, scope: str) -> dict[str, int]:
        rows = self.store.query("SELECT status, count(*) FROM scored_traces WHERE scope = ? GROUP BY status", (scope,))
        return {str(status): int(n) for status, n in rows}

    # -- backfills ----------------------------------------------------------------------------------------
    def open_backfill(
        self, source_key: str, fingerprint: str, start: datetime, stop: datetime, chunks: int
    ) -> tuple[Backfill, bool]:
        """The backfill of exactly this source, scoring setup and window (resumed), or a new one; True if resumed."""
        rows = self.store.query(
            "SELECT id FROM backfills WHERE source_key = ? AND fingerprint = ? AND start = ? AND stop = ?"
            " ORDER BY created_at DESC LIMIT 1",
            (source_key, fingerprint, to_text(start), to_text(stop)),
        )
        if rows:
            found = self.backfill(str(rows[0][0]))
            if found is not None:
                return found, True
        backfill_id = uuid.uuid4().hex[:12]
        now = _now()
        self.store.write(
            "INSERT INTO backfills (id, source_key, fingerprint, start, stop, chunks, done_until, status, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
            [(backfill_id, source_key, fingerprint, to_text(start), to_text(stop), chunks, to_text(start), now, now)],
        )
        self.store.commit()
        created = self.backfill(backfill_id)
        assert created is not None
        return created, False

    def latest_unfinished_backfill(self, source_key: str) -> Backfill | None:
        rows = self.store.query(
            "SELECT id FROM backfills WHERE source_key = ? AND status != 'done' ORDER BY created_at DESC LIMIT 1",
            (source_key,),
        )
        return self.backfill(str(rows[0][0])) if rows else None

    def backfill_of(self, source_key: str, fingerprint: str, start: datetime, stop: datetime) -> Backfill | None:
        """The backfill of exactly this source, scoring setup and window, if one was started."""
        rows = self.store.query(
            "SELECT id FROM backfills WHERE source_key = ? AND fingerprint = ? AND start = ? AND stop = ?",
            (source_key, fingerprint, to_text(start), to_text(stop)),
        )
        return self.backfill(str(rows[0][0])) if rows else None

    def backfill(self, backfill_id: str) -> Backfill | None:
        rows = self.store.query(
            "SELECT id, source_key, fingerprint, start, stop, chunks, done_until, status, done_from FROM backfills"
            " WHERE id = ?",
            (backfill_id,),
        )
        if not rows:
            return None
        r = rows[0]
        return Backfill(
            str(r[0]), str(r[1]), str(r[2]), from_text(r[3]), from_text(r[4]), int(r[5]), from_text(r[6]), str(r[7]),
            from_text(r[8]) if r[8] is not None else None,
        )

    def backfill_progress(self, backfill_id: str, done_from: datetime, status: str) -> None:
        """Queue how far down from its stop the backfill is done (monotonic: never moved up) and its status."""
        self.store.write(
            "UPDATE backfills SET done_from = min(coalesce(done_from, stop), ?), status = ?, updated_at = ?"
            " WHERE id = ?",
            [(to_text(done_from), status, _now(), backfill_id)],
        )


class MarkReader:
    """A read-only connection of its own, for the reader thread's "already done?" look-ups (WAL: no blocking)."""

    def __init__(self, store: Store) -> None:
        try:
            self._db = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {str(store.path)!r} for reading: {exc}") from exc

    def marked(self, scope: str, trace_key: str) -> str | None:
        row = self._db.execute(
            "SELECT status FROM scored_traces WHERE scope = ? AND trace_key = ?", (scope, trace_key)
        ).fetchone()
        return str(row[0]) if row else None

    def close(self) -> None:
        self._db.close()
