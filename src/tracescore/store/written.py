"""The ledger of scores this package wrote to a platform: every delivered score id (trace, name, version, run) and
every removal (when, why), append-only.

It is how the sinks know which platform scores are ours and still live, so superseded and vanished ones can be
removed, and nothing else ever is. Writes are queued in the store's open transaction (the engine commits them with
the results and per-trace marks of the same batch); reads see committed rows and this connection's queued ones.
Stores from before the ledger are covered by ``legacy``: the scores their runs wrote, from the ``scores`` table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tracescore.store.db import Store

LEDGER_MIGRATION = "0007_written_scores"
WRITTEN = "written"
REMOVED = "removed"
_CHUNK = 500  # SQLite parameters per IN (...) list


@dataclass(frozen=True)
class Written:
    """One score id of ours on a platform: its trace, name as written (``x`` or ``x@v``), own name, version."""

    score_id: str
    trace_id: str
    name: str
    score: str
    version: str | None = None


class WrittenScores:
    """The ledger of one platform (``langfuse``, ``langsmith``) in a ``Store``."""

    def __init__(self, store: Store, platform: str) -> None:
        self.store = store
        self.platform = platform
        self._before: str | None = None  # when the ledger came ("" when no earlier run wrote to this platform)

    # -- writing (queued in the open transaction) ------------------------------------------------------------
    def wrote(self, rows: Iterable[Written], run_id: str | None) -> None:
        """Queue "delivered" events: the platform accepted these ids in run ``run_id``."""
        self._event(((w, WRITTEN, None) for w in rows), run_id)

    def removed(self, rows: Iterable[tuple[Written, str]], run_id: str | None) -> None:
        """Queue "removed" events with why (superseded by which score, or the absent score's reason)."""
        self._event(((w, REMOVED, reason) for w, reason in rows), run_id)

    def _event(self, rows: Iterable[tuple[Written, str, str | None]], run_id: str | None) -> None:
        now = datetime.now(UTC).isoformat()
        values = [
            (self.platform, w.score_id, w.trace_id, w.name, w.score, w.version, event, reason, run_id, now)
            for w, event, reason in rows
        ]
        if values:
            self.store.write(
                "INSERT INTO written_scores (platform, score_id, trace_id, name, score, version, event, reason,"
                " run_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

    # -- reading ------------------------------------------------------------------------------------------------
    def live(self, trace_ids: Sequence[str]) -> list[Written]:
        """Our ids on these traces whose latest event is "delivered" (not removed since)."""
        out: list[Written] = []
        for chunk in _chunks(trace_ids):
            marks = ", ".join("?" * len(chunk))
            out += [
                Written(*row)
                for row in self.store.query(
                    "SELECT w.score_id, w.trace_id, w.name, w.score, w.version FROM written_scores w"
                    f" WHERE w.platform = ? AND w.trace_id IN ({marks}) AND w.event = 'written' AND w.seq = ("
                    " SELECT max(x.seq) FROM written_scores x"
                    " WHERE x.platform = w.platform AND x.score_id = w.score_id)",
                    (self.platform, *chunk),
                )
            ]
        return out

    def known(self, score_ids: Sequence[str]) -> set[str]:
        """The ids among ``score_ids`` the ledger has any event for."""
        found: set[str] = set()
        for chunk in _chunks(score_ids):
            marks = ", ".join("?" * len(chunk))
            found |= {
                str(r[0])
                for r in self.store.query(
                    f"SELECT DISTINCT score_id FROM written_scores WHERE platform = ? AND score_id IN ({marks})",
                    (self.platform, *chunk),
                )
            }
        return found

    def legacy(self, trace_ids: Sequence[str]) -> list[tuple[str, str, dict[str, Any]]]:
        """``(trace id, score name, score metadata)`` of present scores that runs on this platform stored before the
        ledger existed (they were written under the old versioned ids; a run known to have written nothing is left
        out)."""
        if self._before is None:  # once: when the ledger came, and whether any earlier run wrote to this platform
            applied = self.store.query("SELECT applied_at FROM migrations WHERE name = ?", (LEDGER_MIGRATION,))
            earlier = applied and self.store.query(
                "SELECT 1 FROM runs WHERE started_at < ? AND source LIKE ? LIMIT 1",
                (str(applied[0][0]), f"{self.platform}:%"),
            )
            self._before = str(applied[0][0]) if earlier else ""
        if not self._before:
            return []
        out: list[tuple[str, str, dict[str, Any]]] = []
        for chunk in _chunks(trace_ids):
            marks = ", ".join("?" * len(chunk))
            rows = self.store.query(
                "SELECT DISTINCT s.trace_id, s.name, s.metadata FROM scores s JOIN runs r ON r.id = s.run_id"
                f" WHERE s.trace_id IN ({marks}) AND (s.value IS NOT NULL OR s.label IS NOT NULL)"
                " AND r.started_at < ? AND r.source LIKE ? AND (r.summary IS NULL"
                " OR coalesce(json_extract(r.summary, '$.scores_written'), 0) > 0"
                " OR coalesce(json_extract(r.summary, '$.write.accepted'), 0) > 0)",
                (*chunk, self._before, f"{self.platform}:%"),
            )
            out += [(str(t), str(n), json.loads(m) if m else {}) for t, n, m in rows]
        return out

    def history(self, trace_id: str | None = None) -> list[dict[str, Any]]:
        """Every event (oldest first), optionally of one trace: what was written and removed, when, by which run."""
        keys = ("score_id", "trace_id", "name", "score", "version", "event", "reason", "run_id", "at")
        sql = f"SELECT {', '.join(keys)} FROM written_scores WHERE platform = ?"
        params: tuple[Any, ...] = (self.platform,)
        if trace_id is not None:
            sql, params = sql + " AND trace_id = ?", (*params, trace_id)
        return [dict(zip(keys, row, strict=True)) for row in self.store.query(sql + " ORDER BY seq", params)]


def live_values(store: Store, trace_ids: Sequence[str]) -> dict[tuple[str, str], float | str | None]:
    """``{(trace id, score name): value}`` of our live scores on these traces, on any platform: the value the run
    that wrote each one stored for it (a label for a categorical score)."""
    out: dict[tuple[str, str], float | str | None] = {}
    for chunk in _chunks(trace_ids):
        marks = ", ".join("?" * len(chunk))
        rows = store.query(
            "SELECT w.trace_id, w.score, s.value, s.label FROM written_scores w"
            " JOIN scores s ON s.run_id = w.run_id AND s.trace_id = w.trace_id AND s.name = w.score"
            f" WHERE w.trace_id IN ({marks}) AND w.event = 'written' AND w.seq = ("
            " SELECT max(x.seq) FROM written_scores x WHERE x.platform = w.platform AND x.score_id = w.score_id)",
            tuple(chunk),
        )
        out |= {(str(t), str(n)): (label if label is not None else value) for t, n, value, label in rows}
    return out


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    items = list(dict.fromkeys(items))
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]
