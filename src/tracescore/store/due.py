"""The traces the scheduled job still owes a judgement: a trace ``run`` wrote with its judge failed stays due, and
each later ``run`` takes it up again, until it is judged (healed) or ``[job] judge_retries`` runs have tried it
(given up: named once, in that run's summary, and by ``run --check-gaps`` from then on).

The writer marks such a trace ``unjudged`` (``scored_traces``) in the transaction that holds its results and the
platform's ledger, after the platform took the batch. Everything here follows from those marks and is idempotent, so
a run killed at any point loses nothing and repeats nothing: ``settle`` (before and after each run) turns new
``unjudged`` marks into due traces, drops the due traces marked otherwise since (healed) and gives up those tried
``judge_retries`` times; ``take_up`` counts a try and removes the due traces' marks, so the run reads them again like
any unmarked trace. Writes are queued in the store's open transaction; the caller commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from tracescore.store.db import Store
from tracescore.store.state import from_text, to_text

UNJUDGED = "unjudged"
"""The mark of a trace written with a judged score absent because the judge failed (not computed)."""
GIVEN_UP = "given_up"
"""The mark of a trace the job stopped judging again after ``judge_retries`` runs."""


@dataclass
class Settled:
    """What ``settle`` found: the traces still due, those judged since (healed), those given up now."""

    due: int = 0
    healed: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)


class DueTraces:
    """The due traces of one run scope (``run:<source>``) in a ``Store``."""

    def __init__(self, store: Store, scope: str) -> None:
        self.store = store
        self.scope = scope

    def settle(self, retries: int, run_id: str) -> Settled:
        """Queue: new ``unjudged`` marks become due (no try yet); due traces marked otherwise since are healed (gone
        from the list); due traces tried ``retries`` times are given up (marked so: no run reads them again)."""
        now, scope = _now(), self.scope
        self.store.write(
            "INSERT INTO due_traces (scope, trace_key, trace_ts, tries, state, run_id, updated_at)"
            " SELECT scope, trace_key, trace_ts, 0, 'due', run_id, ? FROM scored_traces WHERE scope = ?"
            " AND status = ? ON CONFLICT (scope, trace_key) DO NOTHING",
            [(now, scope, UNJUDGED)],
        )
        healed = [
            str(k)
            for (k,) in self.store.query(
                "SELECT d.trace_key FROM due_traces d JOIN scored_traces s"
                " ON s.scope = d.scope AND s.trace_key = d.trace_key"
                " WHERE d.scope = ? AND d.state = 'due' AND s.status != ? ORDER BY d.trace_key",
                (scope, UNJUDGED),
            )
        ]
        self.store.write("DELETE FROM due_traces WHERE scope = ? AND trace_key = ?", [(scope, k) for k in healed])
        given = self.store.query(
            "SELECT trace_key, trace_ts FROM due_traces WHERE scope = ? AND state = 'due' AND tries >= ?"
            " ORDER BY trace_key",
            (scope, retries),
        )
        self.store.write(
            "UPDATE due_traces SET state = ?, run_id = ?, updated_at = ? WHERE scope = ? AND trace_key = ?",
            [(GIVEN_UP, run_id, now, scope, k) for k, _ in given],
        )
        self.store.write(  # marked given up, whether this run read it again or not
            "INSERT OR REPLACE INTO scored_traces (scope, trace_key, trace_ts, status, run_id, scored_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(scope, k, ts, GIVEN_UP, run_id, now) for k, ts in given],
        )
        (due,) = self.store.query("SELECT count(*) FROM due_traces WHERE scope = ? AND state = 'due'", (scope,))[0]
        return Settled(int(due), healed, [str(k) for k, _ in given])

    def take_up(self, run_id: str) -> tuple[list[str], datetime | None]:
        """Queue: each due trace's try counted and its mark removed (this run reads it again); returns their keys
        and the oldest one's time (None: none, or none has a time)."""
        scope = self.scope
        rows = self.store.query(
            "SELECT trace_key, trace_ts FROM due_traces WHERE scope = ? AND state = 'due' ORDER BY trace_key", (scope,)
        )
        keys = [str(k) for k, _ in rows]
        self.store.write(
            "UPDATE due_traces SET tries = tries + 1, run_id = ?, updated_at = ? WHERE scope = ? AND trace_key = ?",
            [(run_id, _now(), scope, k) for k in keys],
        )
        self.store.write("DELETE FROM scored_traces WHERE scope = ? AND trace_key = ?", [(scope, k) for k in keys])
        times = [from_text(ts) for _, ts in rows if ts]
        return keys, min(times) if times else None

    def due(self) -> set[str]:
        """The keys still due (one read by the gap check: unmarked while a run has them, not a gap)."""
        rows = self.store.query("SELECT trace_key FROM due_traces WHERE scope = ? AND state = 'due'", (self.scope,))
        return {str(k) for (k,) in rows}

    def given_up(self) -> list[tuple[str, datetime | None, int]]:
        """``(trace key, trace time, tries)`` of every trace given up, oldest first."""
        rows = self.store.query(
            "SELECT trace_key, trace_ts, tries FROM due_traces WHERE scope = ? AND state = ?"
            " ORDER BY trace_ts, trace_key",
            (self.scope, GIVEN_UP),
        )
        return [(str(k), from_text(ts) if ts else None, int(n)) for k, ts, n in rows]


def _now() -> str:
    return to_text(datetime.now(UTC))
