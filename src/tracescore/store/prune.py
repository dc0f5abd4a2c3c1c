"""What the store holds (``describe``: ``tracescore store info``) and what a prune may remove (``prune``: ``tracescore
store prune --before DATE``).

A prune removes the runs that finished before a date, their results and claim rows, and the per-trace marks they
wrote, and never what later work reads:

- a run still ``running`` (a job in progress; a run killed without a chance to finish stays so and is kept too);
- a run that calibration items were sampled from (the labels people gave refer to it);
- a run holding a turn of a session active at or after the date (its ``sessions`` row's last turn): the session's
  scores are computed again from all its turns' results when it grows (``store/session_state``);
- the marks of an unfinished backfill (``backfill:<id>`` scopes of a backfill not ``done``: a resume skips what they
  name), and the scheduled job's marks of traces at or after the date (``run:`` scopes: its next window re-reads its
  lookback and skips what is marked);
- the judge cache, the written-score ledger (removals of superseded scores read it), the judge's daily spend, the
  watermarks and the calibrations.

The turns' evidence a pruned run kept for later turns (``session_evidence``) goes with it (its sessions ended before
the date: a later turn's run would not read them), and so does a session's row once none of its turns' results is
left; the fold's cursor never points past the newest result left (a deleted id may be given again).

Where the scheduled job's marks before the date go, ``run --check-gaps`` would report those traces as never scored,
so the gap check's lower edge (the watermark's ``low``) moves up to the date. The file shrinks only by a ``VACUUM``,
done after a prune (it needs the store to itself for a moment).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tracescore.store.db import Store
from tracescore.store.state import to_text

_SESSION = "json_extract(r.result_line, '$.session_id')"
_PRUNABLE = (
    "SELECT id FROM runs WHERE status != 'running' AND finished_at IS NOT NULL AND finished_at < :cut"
    " AND id NOT IN (SELECT run_id FROM calibration_items)"
    f" AND id NOT IN (SELECT r.run_id FROM results AS r WHERE {_SESSION} IN"
    " (SELECT session_id FROM sessions WHERE last_at >= :cut))"
)
_KEPT_MARKS = (
    "scope IN (SELECT 'backfill:' || id FROM backfills WHERE status != 'done')"
    " OR (scope LIKE 'run:%' AND (trace_ts IS NULL OR trace_ts >= :mark))"
)


@dataclass
class StoreInfo:
    """The size of a store's files and what it holds."""

    path: Path
    size: int  # bytes: the database file and its write-ahead log
    runs: dict[str, int] = field(default_factory=dict)  # by status
    oldest: str | None = None  # the first run's start
    newest: str | None = None
    results: int = 0
    marks: int = 0
    cached: int = 0  # judge replies in the cache

    def lines(self) -> list[str]:
        total = sum(self.runs.values())
        statuses = ", ".join(f"{n} {status}" for status, n in sorted(self.runs.items()))
        runs = f"{total} runs ({statuses})" if total else "no runs"
        span = f"; oldest run {self.oldest}, newest {self.newest}" if self.oldest else ""
        return [
            f"store {self.path}: size {_size(self.size)}",
            runs + span,
            f"{self.results} results, {self.marks} per-trace marks, {self.cached} judge replies cached",
        ]


@dataclass
class Pruned:
    """What a prune removed (or, dry, would remove)."""

    runs: list[str] = field(default_factory=list)
    results: int = 0
    marks: int = 0
    turns: int = 0  # the evidence kept of sessions' turns
    sessions: int = 0
    size_before: int = 0
    size_after: int = 0

    def counts(self) -> str:
        runs = f"{len(self.runs)} run" + ("" if len(self.runs) == 1 else "s")
        marks = f"{self.marks} mark" + ("" if self.marks == 1 else "s")
        sessions = f", {self.turns} session turns, {self.sessions} sessions" if self.turns or self.sessions else ""
        return f"{runs} ({self.results} results, {marks}{sessions})"


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def describe(store: Store) -> StoreInfo:
    """Size, runs by status, the oldest and newest run, and the row counts of ``store``."""
    info = StoreInfo(store.path, _bytes(store.path))
    info.runs = {status: n for status, n in store.query("SELECT status, count(*) FROM runs GROUP BY status")}
    info.oldest, info.newest = store.query("SELECT min(started_at), max(started_at) FROM runs")[0]
    info.results = store.query("SELECT count(*) FROM results")[0][0]
    info.marks = store.query("SELECT count(*) FROM scored_traces")[0][0]
    info.cached = store.query("SELECT count(*) FROM judge_cache")[0][0]
    return info


def prune(store: Store, before: datetime, *, dry_run: bool = False) -> Pruned:
    """Remove (``dry_run``: only count) the runs finished before ``before`` and what only they need (the module's
    rules), then give the space back (VACUUM)."""
    cut = {"cut": before.isoformat(), "mark": to_text(before)}  # (runs and results, marks and watermarks)
    done = Pruned(size_before=_bytes(store.path))
    done.runs = [row[0] for row in store.query(_PRUNABLE, cut)]
    if not done.runs:
        done.size_after = done.size_before
        return done
    chosen = {"runs": json.dumps(done.runs)} | cut
    pruned = "run_id IN (SELECT value FROM json_each(:runs))"
    done.results = store.query(f"SELECT count(*) FROM results WHERE {pruned}", chosen)[0][0]
    marks = f"{pruned} AND NOT ({_KEPT_MARKS})"
    done.marks = store.query(f"SELECT count(*) FROM scored_traces WHERE {marks}", chosen)[0][0]
    done.turns = store.query(f"SELECT count(*) FROM session_evidence WHERE {pruned}", chosen)[0][0]
    ended = _ended_sessions(store, pruned, chosen)
    done.sessions = len(ended)
    if dry_run:
        done.size_after = done.size_before
        return done
    store.write(  # the gap check starts no earlier than the marks kept (``run --check-gaps``)
        "UPDATE watermarks SET low = min(watermark, :mark) WHERE low < :mark AND 'run:' || source_key IN"
        f" (SELECT scope FROM scored_traces WHERE {marks})",
        [chosen],
    )
    store.write(f"DELETE FROM scored_traces WHERE {marks}", [chosen])
    store.write(f"DELETE FROM claims WHERE {pruned}", [chosen])
    store.write(f"DELETE FROM session_evidence WHERE {pruned}", [chosen])
    store.write(f"DELETE FROM results WHERE {pruned}", [chosen])
    store.write("DELETE FROM runs WHERE id IN (SELECT value FROM json_each(:runs))", [chosen])
    store.write("DELETE FROM sessions WHERE source_key = ? AND session_id = ?", sorted(ended))
    store.write(  # the next fold reads every result stored from now on, whatever id it is given
        "UPDATE sessions_folded SET results_id = min(results_id, (SELECT coalesce(max(id), 0) FROM results))", [()]
    )
    store.commit()
    store.query("VACUUM")  # the deleted rows' pages back to the file system (rewrites the file)
    store.query("PRAGMA wal_checkpoint(TRUNCATE)")
    done.size_after = _bytes(store.path)
    return done


def _ended_sessions(store: Store, pruned: str, chosen: dict[str, str]) -> set[tuple[str, str]]:
    """The (source, session id) of the sessions no turn of which has a result left once the chosen runs go."""
    of = f"SELECT DISTINCT u.source, {_SESSION} FROM results AS r JOIN runs AS u ON u.id = r.run_id WHERE {_SESSION}"
    touched = set(store.query(f"{of} IS NOT NULL AND r.{pruned}", chosen))
    if not touched:
        return set()
    left = set(store.query(f"{of} IS NOT NULL AND NOT r.{pruned}", chosen))
    return {(str(source), str(session)) for source, session in touched - left}
