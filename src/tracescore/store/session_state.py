"""The ``sessions`` table: each conversation the job has seen, its turns, its last activity and how far it is scored.

One row per (source, session id): ``turns`` (distinct traces stored with that session id), ``first_at`` and
``last_at`` (the oldest and newest turn's start time: the session's fixed timestamp and its last activity),
``changed`` (a turn was stored since its scores were last written: a new turn, a late one, or a turn scored again),
``scored_up_to`` and ``scored_turns`` (the ``last_at`` and ``turns`` its session scores were last written for: NULL
until they are), ``written_at`` and ``scores`` (the session's result line as last written: values and absences).

The table is folded from the stored results (``fold``), in the same transaction as the fold's cursor (the newest
``results.id`` folded), so a crash leaves it either before or after a whole fold: nothing counted twice, nothing
lost. A session is **due** (``due``) when it has been idle ``idle`` (no turn started since) and it changed since its
scores were last written: never written, a turn came since (a late one too, whatever its start time), or one of
its turns was scored again (a judge healed, a backfill): its scores stay current.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tracescore.result import TraceResult, result_from_line
from tracescore.store.db import Store

_SESSION = "json_extract(r.result_line, '$.session_id')"


@dataclass(frozen=True)
class Session:
    """One row of the table."""

    session_id: str
    turns: int
    first_at: str | None
    last_at: str | None
    scored_up_to: str | None
    scored_turns: int | None


class Sessions:
    """The sessions of one source (``source_key``) in a store."""

    def __init__(self, store: Store, source_key: str) -> None:
        self.store = store
        self.source_key = source_key

    def fold(self) -> int:
        """Bring the table up to date with the results stored since the last fold (queued in the open transaction,
        with the cursor); returns how many sessions it touched."""
        row = self.store.query("SELECT results_id FROM sessions_folded WHERE source_key = ?", (self.source_key,))
        after = int(row[0][0]) if row else 0
        newest = self.store.query("SELECT coalesce(max(id), 0) FROM results")[0][0]
        touched = [str(r[0]) for r in self.store.query(
            f"SELECT DISTINCT {_SESSION} FROM results AS r JOIN runs AS u ON u.id = r.run_id"
            f" WHERE r.id > ? AND r.id <= ? AND u.source = ? AND {_SESSION} IS NOT NULL",
            (after, newest, self.source_key),
        )]  # fmt: skip
        for session_id in touched:
            turns, first, last = self.store.query(
                f"SELECT count(DISTINCT r.trace_id), min(r.timestamp), max(r.timestamp) FROM results AS r"
                f" JOIN runs AS u ON u.id = r.run_id WHERE u.source = ? AND {_SESSION} = ?",
                (self.source_key, session_id),
            )[0]
            self.store.write(
                "INSERT INTO sessions (source_key, session_id, turns, first_at, last_at, changed)"
                " VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (source_key, session_id) DO UPDATE SET turns = excluded.turns,"
                " first_at = excluded.first_at, last_at = excluded.last_at, changed = 1",
                [(self.source_key, session_id, turns, first, last)],
            )
        self.store.write(
            "INSERT INTO sessions_folded VALUES (?, ?) ON CONFLICT (source_key) DO UPDATE SET"
            " results_id = excluded.results_id",
            [(self.source_key, newest)],
        )
        return len(touched)

    def get(self, session_id: str) -> Session | None:
        rows = self.store.query(
            "SELECT session_id, turns, first_at, last_at, scored_up_to, scored_turns FROM sessions"
            " WHERE source_key = ? AND session_id = ?",
            (self.source_key, session_id),
        )
        return Session(*rows[0]) if rows else None

    def due(self, now: datetime, idle: timedelta) -> list[Session]:
        """The sessions idle since ``now - idle`` that changed since their scores were last written (or never were)."""
        rows = self.store.query(
            "SELECT session_id, turns, first_at, last_at, scored_up_to, scored_turns FROM sessions"
            " WHERE source_key = ? AND changed = 1 AND last_at IS NOT NULL AND last_at <= ?"
            " ORDER BY last_at, session_id",
            (self.source_key, (now - idle).isoformat()),
        )
        return [Session(*row) for row in rows]

    def waiting(self, now: datetime, idle: timedelta) -> int:
        """Sessions that changed since their scores were written, still inside ``idle``."""
        return int(self.store.query(
            "SELECT count(*) FROM sessions WHERE source_key = ? AND changed = 1 AND last_at > ?",
            (self.source_key, (now - idle).isoformat()),
        )[0][0])  # fmt: skip

    def written(self, session: Session, line: dict[str, Any], at: datetime) -> None:
        """Queue: ``session``'s scores (its result ``line``) were written for its turns as they are now."""
        self.store.write(
            "UPDATE sessions SET changed = 0, scored_up_to = ?, scored_turns = ?, written_at = ?, scores = ?"
            " WHERE source_key = ? AND session_id = ?",
            [(session.last_at, session.turns, at.isoformat(), json.dumps(line), self.source_key,
              session.session_id)],
        )  # fmt: skip

    def scores(self, session_id: str) -> dict[str, Any] | None:
        """The session's result line as last written (None: never)."""
        rows = self.store.query(
            "SELECT scores FROM sessions WHERE source_key = ? AND session_id = ?", (self.source_key, session_id)
        )
        return json.loads(rows[0][0]) if rows and rows[0][0] else None


def turn_results(store: Store, source_key: str, session_id: str) -> list[TraceResult]:
    """The session's turns as last scored (each trace's newest stored result without errors, else its newest),
    oldest first: scores with their metadata, rebuilt from the result lines."""
    rows = store.query(
        f"SELECT r.id, r.trace_id, r.result_line, r.score_metadata FROM results AS r JOIN runs AS u ON u.id = r.run_id"
        f" WHERE u.source = ? AND {_SESSION} = ? ORDER BY r.id",
        (source_key, session_id),
    )
    latest: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for _, trace_id, line_text, metadata_text in rows:
        line = json.loads(line_text)
        if line.get("errors") and trace_id in latest:
            continue  # a later run that failed on the turn: the earlier result stands
        latest[str(trace_id)] = line, json.loads(metadata_text) if metadata_text else {}
    return ordered([result_from_line(line, metadata) for line, metadata in latest.values()])


def ordered(results: Sequence[TraceResult]) -> list[TraceResult]:
    """``results`` oldest first (a turn without a start time first, then by trace id)."""
    return sorted(results, key=lambda r: (r.timestamp.isoformat() if r.timestamp else "", r.trace_id or ""))
