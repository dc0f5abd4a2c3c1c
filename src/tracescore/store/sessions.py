"""What each turn of a conversation leaves for the later turns, kept per source (``run`` and ``backfill`` of one
source share them): a turn that arrives in a later run is scored with its session's earlier turns read back from
here, not by reading the platform's window again.

A turn's row (``tracescore.session.EarlierTurn`` as JSON: its hits and successful fetches) is written in the
transaction that commits its result, after the platform sink took its scores (state after the destination); a turn
scored again replaces its row. ``score`` (no scope: a file is the whole input) neither reads nor writes them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from tracescore.errors import StoreError
from tracescore.session import EarlierTurn

SESSION_EVIDENCE_MIGRATION = """
CREATE TABLE session_evidence (
    source_key TEXT NOT NULL, session_id TEXT NOT NULL, trace_id TEXT NOT NULL, trace_ts TEXT, evidence TEXT NOT NULL,
    run_id TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (source_key, session_id, trace_id)
);
CREATE INDEX session_evidence_ts ON session_evidence(source_key, trace_ts)
"""

_SELECT = "SELECT evidence FROM session_evidence WHERE source_key = ? AND session_id = ? ORDER BY trace_ts, trace_id"


class _Writes(Protocol):
    path: Any

    def write(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...


def keep_evidence(store: _Writes, source_key: str, run_id: str, turns: Sequence[tuple[str, EarlierTurn]]) -> None:
    """Queue each (session id, turn evidence) of ``turns`` in the store's open transaction (the one committing the
    turns' results)."""
    if not turns:
        return
    now = datetime.now(UTC).isoformat()
    store.write(
        "INSERT OR REPLACE INTO session_evidence VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(source_key, session, t.trace_id, t.timestamp.isoformat() if t.timestamp else None, t.model_dump_json(),
          run_id, now) for session, t in turns],  # fmt: skip
    )


def stored_turns(store: _Writes, source_key: str, session_id: str) -> list[EarlierTurn]:
    """The turns of ``session_id`` kept for ``source_key``, oldest first."""
    return [EarlierTurn.model_validate_json(row[0]) for row in store.query(_SELECT, (source_key, session_id))]


class EvidenceReader:
    """A read-only connection of its own, for the engine's reader thread (WAL: it never waits on the writer)."""

    def __init__(self, path: Any, source_key: str) -> None:
        self.source_key = source_key
        try:
            self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {str(path)!r} for reading: {exc}") from exc

    def turns(self, session_id: str) -> list[EarlierTurn]:
        """The turns of ``session_id`` kept by earlier runs, oldest first."""
        try:
            rows = self._db.execute(_SELECT, (self.source_key, session_id)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the session evidence of {session_id!r}: {exc}") from exc
        return [EarlierTurn.model_validate_json(row[0]) for row in rows]

    def close(self) -> None:
        self._db.close()
