"""The local store (SQLite, the embedded default): every run, per-trace result, per-citation and per-claim row, and
the content-addressed judge cache. The per-score rows (``scores``) are a view over the result lines, the per-citation
rows (``citations``) a view over one JSON array per result, the current score of each trace (``current_scores``) a
view over all runs.

Reports, gates and calibration read from here. Schema changes are ordered, named, append-only migrations recorded
in the ``migrations`` table; an applied migration is never edited, a new one is appended to ``MIGRATIONS``.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracescore.errors import StoreError
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import cell_of
from tracescore.store.citations_view import CITATIONS_VIEW_MIGRATION, citation_rows
from tracescore.store.connect import PAGE_SIZE, cannot_create, connect
from tracescore.store.current_view import (
    CURRENT_VIEW_MIGRATION,
    NOT_COMPUTED_REASONS_MIGRATION,
    not_computed,
    not_computed_of,
)
from tracescore.store.scores_view import SCORES_VIEW_MIGRATION, score_metadata
from tracescore.store.spend import JUDGE_SPEND_MIGRATION

__all__ = ["MIGRATIONS", "PAGE_SIZE", "ResultRows", "Store", "result_rows"]

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, command TEXT NOT NULL,
            source TEXT, status TEXT NOT NULL DEFAULT 'running', summary TEXT
        );
        CREATE TABLE results (
            id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id), trace_id TEXT, line INTEGER,
            timestamp TEXT, diagnosis TEXT, scores TEXT NOT NULL, missing TEXT NOT NULL, errors TEXT NOT NULL,
            notes TEXT NOT NULL, metadata TEXT NOT NULL
        );
        CREATE INDEX results_run ON results(run_id);
        CREATE INDEX results_trace ON results(trace_id);
        CREATE TABLE scores (
            run_id TEXT NOT NULL, trace_id TEXT NOT NULL, name TEXT NOT NULL, value REAL, label TEXT,
            reason TEXT, comment TEXT, metadata TEXT
        );
        CREATE INDEX scores_run_name ON scores(run_id, name);
        CREATE TABLE citations (
            run_id TEXT NOT NULL, trace_id TEXT NOT NULL, sentence_index INTEGER NOT NULL, marker TEXT,
            target TEXT NOT NULL, kind TEXT NOT NULL, normalized TEXT NOT NULL, fetched INTEGER NOT NULL,
            seen INTEGER NOT NULL
        );
        CREATE INDEX citations_run ON citations(run_id, trace_id);
        """,
    ),
    (
        "0002_judge",
        """
        CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY, model TEXT NOT NULL, rubric TEXT NOT NULL, request TEXT NOT NULL,
            reply TEXT NOT NULL, created_at TEXT NOT NULL
        );
        CREATE TABLE claims (
            run_id TEXT NOT NULL, trace_id TEXT NOT NULL, claim_index INTEGER NOT NULL, sentence_index INTEGER,
            text TEXT NOT NULL, verdict TEXT NOT NULL, judge_verdict TEXT, doc TEXT, quote TEXT, quote_check TEXT,
            reason TEXT, cited TEXT NOT NULL, cited_verdict TEXT, drift_to TEXT, calls TEXT NOT NULL
        );
        CREATE INDEX claims_run ON claims(run_id, trace_id);
        """,
    ),
    (
        "0003_result_line",
        """
        ALTER TABLE results ADD COLUMN result_line TEXT;
        """,
    ),
    (
        "0004_job_state",
        """
        CREATE TABLE watermarks (
            source_key TEXT PRIMARY KEY, low TEXT NOT NULL, watermark TEXT NOT NULL, run_id TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE scored_traces (
            scope TEXT NOT NULL, trace_key TEXT NOT NULL, trace_ts TEXT, status TEXT NOT NULL, run_id TEXT NOT NULL,
            scored_at TEXT NOT NULL, PRIMARY KEY (scope, trace_key)
        );
        CREATE TABLE backfills (
            id TEXT PRIMARY KEY, source_key TEXT NOT NULL, fingerprint TEXT NOT NULL, start TEXT NOT NULL,
            stop TEXT NOT NULL, chunks INTEGER NOT NULL, done_until TEXT NOT NULL, status TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL
        );
        CREATE INDEX backfills_source ON backfills(source_key, fingerprint, start, stop)
        """,
    ),
    (
        "0005_judge_batches",
        """
        CREATE TABLE judge_batches (
            id TEXT PRIMARY KEY, scope TEXT, slice_start TEXT, slice_stop TEXT, model TEXT NOT NULL,
            keys TEXT NOT NULL, status TEXT NOT NULL, attempt INTEGER NOT NULL, replaces TEXT, reason TEXT,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL
        );
        CREATE INDEX judge_batches_status ON judge_batches(model, status)
        """,
    ),
    (
        "0006_calibration",
        """
        CREATE TABLE calibration_items (
            item_id TEXT PRIMARY KEY, sample_id TEXT NOT NULL, slice TEXT NOT NULL, stratum TEXT NOT NULL,
            inclusion_probability REAL, run_id TEXT NOT NULL, trace_id TEXT NOT NULL, claim_index INTEGER NOT NULL,
            judge_model TEXT, rubric_version TEXT, judge TEXT NOT NULL, item TEXT NOT NULL, queue TEXT,
            platform_ref TEXT, queued_at TEXT NOT NULL
        );
        CREATE INDEX calibration_items_day ON calibration_items(queued_at);
        CREATE TABLE calibration_labels (
            item_id TEXT NOT NULL, label TEXT NOT NULL, value TEXT NOT NULL, author TEXT NOT NULL,
            source TEXT NOT NULL, labelled_at TEXT NOT NULL, external_id TEXT, pulled_at TEXT NOT NULL
        );
        CREATE INDEX calibration_labels_item ON calibration_labels(item_id, label, author);
        CREATE TABLE calibrations (
            id TEXT PRIMARY KEY, judge_model TEXT NOT NULL, rubric_version TEXT NOT NULL, label TEXT NOT NULL,
            n INTEGER NOT NULL, kappa REAL, kappa_low REAL, kappa_high REAL, raw REAL, raw_low REAL, raw_high REAL,
            measured_at TEXT NOT NULL, detail TEXT NOT NULL
        );
        CREATE INDEX calibrations_judge ON calibrations(judge_model, rubric_version, label, measured_at)
        """,
    ),
    (
        "0007_written_scores",
        """
        CREATE TABLE written_scores (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, platform TEXT NOT NULL, score_id TEXT NOT NULL,
            trace_id TEXT NOT NULL, name TEXT NOT NULL, score TEXT NOT NULL, version TEXT, event TEXT NOT NULL,
            reason TEXT, run_id TEXT, at TEXT NOT NULL
        );
        CREATE INDEX written_scores_id ON written_scores(platform, score_id);
        CREATE INDEX written_scores_trace ON written_scores(platform, trace_id);
        CREATE INDEX scores_trace ON scores(trace_id)
        """,
    ),
    (
        "0008_link_cache",
        """
        CREATE TABLE link_cache (url TEXT PRIMARY KEY, status TEXT NOT NULL, checked_at TEXT NOT NULL)
        """,
    ),
    (
        "0010_lean_results",
        # the result line holds scores, missing, errors, notes and metadata: rows written before 0003 get their line
        # rebuilt from those columns (the key order Store.results() used), then the duplicate columns go
        """
        UPDATE results SET result_line = json_object(
            'trace_id', trace_id, 'line', line, 'timestamp', timestamp, 'scores', json(scores),
            'missing', json(missing), 'errors', json(errors), 'notes', json(notes), 'metadata', json(metadata)
        ) WHERE result_line IS NULL;
        ALTER TABLE results DROP COLUMN scores;
        ALTER TABLE results DROP COLUMN missing;
        ALTER TABLE results DROP COLUMN errors;
        ALTER TABLE results DROP COLUMN notes;
        ALTER TABLE results DROP COLUMN metadata
        """,
    ),
    ("0011_scores_view", SCORES_VIEW_MIGRATION),  # the per-score rows become a view over the result line
    ("0012_citations_view", CITATIONS_VIEW_MIGRATION),  # the per-citation rows become a view over one JSON array
    ("0013_current_scores", CURRENT_VIEW_MIGRATION),  # which absences were not computed; the current score per trace
    ("0014_judge_batch_outcome", "ALTER TABLE judge_batches ADD COLUMN outcome TEXT"),  # API counts, results, cost
    ("0015_backfill_done_from", "ALTER TABLE backfills ADD COLUMN done_from TEXT"),  # slices done newest first
    ("0016_not_computed_reasons", NOT_COMPUTED_REASONS_MIGRATION),  # not_computed holds reasons, not names: -90 %
    ("0017_judge_spend", JUDGE_SPEND_MIGRATION),  # the judge's spend per UTC day and run: [job] max_cost_per_day
    ("0018_due_traces", "CREATE TABLE due_traces (scope TEXT NOT NULL, trace_key TEXT NOT NULL, trace_ts TEXT,"
     " tries INTEGER NOT NULL, state TEXT NOT NULL, run_id TEXT NOT NULL, updated_at TEXT NOT NULL,"
     " PRIMARY KEY (scope, trace_key))"),  # the traces whose judge failed, judged again by later runs (store/due.py)
    ("0019_sessions", SESSIONS_MIGRATION),  # the conversations the job scores once idle (store/session_state.py)
]

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

    def write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Queue rows of another module's table (job state, ledger) in the open transaction; ``commit()`` ends it."""
        if not self._in_tx:
            self._execute("BEGIN")
            self._in_tx = True
        try:
            self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"store {str(self.path)!r}: {exc}") from exc

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read query (job state, reports)."""
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
