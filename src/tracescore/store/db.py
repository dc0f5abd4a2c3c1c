"""The local store (SQLite, the embedded default): every run, per-trace result, per-citation and per-claim row, and
the content-addressed judge cache. The per-score rows (``scores``) are a view over the result lines, the per-citation
rows (``citations``) a view over one JSON array per result, the current score of each trace (``current_scores``) a
view over all runs.

Reports, gates and calibration read from here. Schema changes are ordered, named, append-only migrations
(``store/migrations.py``) recorded in the ``migrations`` table.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracescore.errors import StoreError
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import cell_of
from tracescore.store.citations_view import citation_rows
from tracescore.store.connect import PAGE_SIZE as PAGE_SIZE, cannot_create, connect
from tracescore.store.current_view import not_computed, not_computed_of
from tracescore.store.migrations import MIGRATIONS as MIGRATIONS
from tracescore.store.scores_view import score_metadata

_CLAIM_KEYS = ("claim_index", "sentence_index", "text", "verdict", "judge_verdict", "doc", "quote", "quote_check",
               "reason", "cited", "cited_verdict", "drift_to", "calls")  # fmt: skip


@dataclass(slots=True)  # not frozen: a frozen dataclass pays object.__setattr__ per field, per trace
class ResultRows:
    """One trace's rows, ready for ``executemany``: built where it was scored (a worker process), written in batches."""

    result: tuple[Any, ...]  # the results row, its citation rows included (one JSON array)
    claims: list[tuple[Any, ...]]

    def __reduce__(self) -> tuple[type[ResultRows], tuple[Any, ...]]:
        return ResultRows, (self.result, self.claims)  # a tuple: no Python call per field


def result_rows(
    run_id: str, result: TraceResult, line: str | None = None, missing: dict[str, str] | None = None
) -> ResultRows:
    """The store rows of ``result`` (``line``: its result line, when already serialised; ``missing``: that line's
    ``missing``, when its dict is at hand: the not-computed column is read from it).

    The per-score rows are a view over the result line; only the scores' metadata, which the line lacks, is added.
    The per-citation rows are a view too, over one JSON array in the results row.
    """
    tid = result.trace_id or f"line:{result.line}"
    if line is None:
        line = result.encoded()[1]
    return ResultRows(
        (
            run_id,
            result.trace_id,
            result.line,
            result.timestamp.isoformat() if result.timestamp else None,
            cell_of(result),
            line,
            score_metadata(result),
            citation_rows(result.citations),
            not_computed(result) if missing is None else not_computed_of(missing),
        ),
        [
            (run_id, tid)
            + tuple(json.dumps(v) if isinstance(v, list) else v for v in (getattr(c, k) for k in _CLAIM_KEYS))
            for c in result.claims
        ],
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


class Store:
    """A SQLite file holding runs and their results. Writes are batched; ``commit()`` makes them durable."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        existed = self.path.exists()
        try:
            self._db = connect(self.path)
            self._migrate()
        except sqlite3.Error as exc:
            if not existed and not self.path.exists():  # sqlite says "unable to open database file"
                raise StoreError(cannot_create(self.path)) from exc
            raise StoreError(f"cannot open store {str(self.path)!r}: {exc}") from exc
        self._in_tx = False

    # -- schema -------------------------------------------------------------------------------------------
    def _migrate(self) -> None:
        self._db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {row[0] for row in self._db.execute("SELECT name FROM migrations")}
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            self._db.execute("BEGIN IMMEDIATE")
            try:  # another process may have applied it while this one waited for the lock: then it is done
                if not self._db.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                    for statement in sql.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute("INSERT INTO migrations VALUES (?, ?)", (name, _now()))
                self._db.execute("COMMIT")
            except sqlite3.Error:
                self._db.execute("ROLLBACK")
                raise

    def applied_migrations(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT name FROM migrations ORDER BY name")]

    # -- writing ------------------------------------------------------------------------------------------
    def start_run(self, command: str, source: str | None = None) -> str:
        """Record a new run and return its id."""
        run_id = uuid.uuid4().hex
        self._execute(
            "INSERT INTO runs (id, started_at, command, source) VALUES (?, ?, ?, ?)", (run_id, _now(), command, source)
        )
        return run_id

    def finish_run(self, run_id: str, summary: dict[str, Any], status: str = "done") -> None:
        self.commit()
        self._execute(
            "UPDATE runs SET finished_at = ?, status = ?, summary = ? WHERE id = ?",
            (_now(), status, json.dumps(summary), run_id),
        )

    def add_result(self, run_id: str, result: TraceResult) -> None:
        """Queue one trace's result, citation and claim rows in the open transaction."""
        self.add_rows([result_rows(run_id, result)])

    def add_rows(self, batch: Sequence[ResultRows]) -> None:
        """Queue the rows of many traces in the open transaction: one ``executemany`` per table for the batch."""
        if not batch:
            return
        if not self._in_tx:
            self._execute("BEGIN")
            self._in_tx = True
        try:
            self._db.executemany(
                "INSERT INTO results (run_id, trace_id, line, timestamp, diagnosis, result_line, score_metadata,"
                " citation_rows, not_computed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [rows.result for rows in batch],
            )
            self._db.executemany(
                f"INSERT INTO claims (run_id, trace_id, {', '.join(_CLAIM_KEYS)}) VALUES ({', '.join('?' * 15)})",
                [r for rows in batch for r in rows.claims],
            )
        except sqlite3.Error as exc:
            first = batch[0].result[1] or batch[0].result[2]
            raise StoreError(f"cannot write {len(batch)} result(s) from {first!r} to {self.path}: {exc}") from exc

    def write(self, sql: str, rows: Sequence[tuple[Any, ...] | Mapping[str, Any]]) -> None:
        """Queue rows of another module's table (job state, ledger) in the open transaction; ``commit()`` ends it
        (a row: positional parameters, or named ones)."""
        if not self._in_tx:
            self._execute("BEGIN")
            self._in_tx = True
        try:
            self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"store {str(self.path)!r}: {exc}") from exc

    def query(self, sql: str, params: tuple[Any, ...] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read query (job state, reports); ``params`` positional or named."""
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"store {str(self.path)!r}: {exc}") from exc

    # -- judge cache (content-addressed; see tracescore.judge.cache) -------------------------------------------
    def judge_cache_get(self, key: str) -> str | None:
        """The stored judge reply for a content key, if any."""
        try:
            row = self._db.execute("SELECT reply FROM judge_cache WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"store {str(self.path)!r}: cannot read the judge cache: {exc}") from exc
        return row[0] if row else None

    def judge_cache_put(self, key: str, *, model: str, rubric: str, request: str, reply: str) -> None:
        """Keep a judge reply under its content key (request kept for audit)."""
        self._execute(
            "INSERT OR REPLACE INTO judge_cache VALUES (?, ?, ?, ?, ?, ?)", (key, model, rubric, request, reply, _now())
        )

    def commit(self) -> None:
        if self._in_tx:
            self._execute("COMMIT")
            self._in_tx = False

    def close(self) -> None:
        self.commit()
        self._db.close()
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------------------------
    def runs(self) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT id, started_at, finished_at, command, source, status, summary FROM runs ORDER BY started_at"
        )
        keys = ("id", "started_at", "finished_at", "command", "source", "status", "summary")
        return [dict(zip(keys, row, strict=True)) | {"summary": json.loads(row[6] or "null")} for row in rows]

    def results(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The result lines of a run, exactly as ``--out`` writes them."""
        for (line,) in self._db.execute("SELECT result_line FROM results WHERE run_id = ? ORDER BY id", (run_id,)):
            yield json.loads(line)

    def citations(self, run_id: str, trace_id: str | None = None) -> list[dict[str, Any]]:
        sql = (
            "SELECT trace_id, sentence_index, marker, target, kind, normalized, fetched, seen FROM citations"
            " WHERE run_id = ?" + (" AND trace_id = ?" if trace_id else "")
        )
        keys = ("trace_id", "sentence_index", "marker", "target", "kind", "normalized", "fetched", "seen")
        params = (run_id, trace_id) if trace_id else (run_id,)
        return [dict(zip(keys, row, strict=True)) for row in self._db.execute(sql, params)]

    def claims(self, run_id: str, trace_id: str | None = None) -> list[dict[str, Any]]:
        """Per-claim judge rows of a run (verdict after quote verification, evidence, citations)."""
        sql = f"SELECT trace_id, {', '.join(_CLAIM_KEYS)} FROM claims WHERE run_id = ?" + (
            " AND trace_id = ?" if trace_id else ""
        )
        params = (run_id, trace_id) if trace_id else (run_id,)
        out = []
        for row in self._db.execute(sql + " ORDER BY rowid", params):
            item = dict(zip(("trace_id", *_CLAIM_KEYS), row, strict=True))
            item["cited"], item["calls"] = json.loads(item["cited"]), json.loads(item["calls"])
            out.append(item)
        return out

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise StoreError(f"store {str(self.path)!r}: {exc}") from exc
