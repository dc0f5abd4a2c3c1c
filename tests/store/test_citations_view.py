"""0012_citations_view: the per-citation rows are a view over one JSON array per result.

The oracle is the table as it was written before 0012 (``_old_citation_rows`` is that writer, kept here): a store
migrated from it, and a fresh run, must give the same rows with the same types, each trace's rows in the order they
were written. (A run's rows came from the table in trace-id order, its index's; the view gives them in written order.)
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.engine.test_golden import faults_lines
from tests.store.old_store import store_before
from tracescore.api import score_traces
from tracescore.result import CitationRow, TraceResult
from tracescore.store.db import Store

_COLUMNS = "run_id, trace_id, sentence_index, marker, target, kind, normalized, fetched, seen"
Row = tuple[Any, ...]


def _old_citation_rows(run_id: str, result: TraceResult) -> list[Row]:
    """The per-citation rows exactly as ``result_rows`` built them up to 0011 (the table's writer)."""
    tid = result.trace_id or f"line:{result.line}"
    return [
        (run_id, tid, c.sentence_index, c.marker, c.target, c.kind, c.normalized, int(c.fetched), int(c.seen))
        for c in result.citations
    ]


def _results() -> list[TraceResult]:
    """Scored traces with citations (the cookbook and the planted faults), plus the odd cases by hand: a trace cited
    twice under one id in a run, one with no id (kept under "line:N"), a citation placed in no sentence, no marker,
    a text citation, a non-ASCII URL, and a trace that cites nothing."""
    lines = [json.loads(x) for x in SAMPLES.read_text().splitlines()]
    for raw in faults_lines():
        try:
            lines.append(json.loads(raw))
        except (ValueError, RecursionError):  # the planted unreadable lines
            continue
    scored = [r for r in score_traces([x for x in lines if isinstance(x, dict)]) if r.citations]
    odd = []
    for trace_id, line in (("dup", 1), ("dup", 2), (None, 7), ("", 8)):
        result = TraceResult(trace_id=trace_id, line=line)
        result.citations = [
            CitationRow(0, "1", "https://é.example/a?q=1", "url", "https://é.example/a", True, True),
            CitationRow(-1, None, f"doc-{line}", "doc_id", f"doc-{line}", False, False),
            CitationRow(2, "3", "Smith 2020, p. 4", "text", "Smith 2020, p. 4", False, True),
        ]
        odd.append(result)
    odd.append(TraceResult(trace_id="uncited", line=9))
    return scored + odd


def _write_old(db: sqlite3.Connection, run_id: str, results: list[TraceResult]) -> None:
    db.execute("INSERT INTO runs (id, started_at, command) VALUES (?, ?, 'score')", (run_id, run_id))
    for result in results:
        db.execute(
            "INSERT INTO results (run_id, trace_id, line, result_line) VALUES (?, ?, ?, ?)",
            (run_id, result.trace_id, result.line, result.encoded()[1]),
        )
        db.executemany(f"INSERT INTO citations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       _old_citation_rows(run_id, result))


def _by_run(read: Any, run_id: str, trace_id: str | None = None) -> list[Row]:
    """What ``Store.citations`` reads: a run's rows (or one trace's), in the order the store gives them."""
    where = " AND trace_id = ?" if trace_id is not None else ""
    params = (run_id, trace_id) if trace_id is not None else (run_id,)
    return [tuple(row) for row in read(f"SELECT {_COLUMNS} FROM citations WHERE run_id = ?{where}", params)]


def _per_trace(rows: list[Row]) -> list[Row]:
    """Rows grouped by trace id, each trace's rows in the order given (a stable sort)."""
    return sorted(rows, key=lambda row: row[1])


def _typed(rows: list[Row]) -> list[tuple[type, ...]]:
    return [tuple(type(v) for v in row) for row in rows]


@pytest.mark.parametrize("tamper", [False, True])
def test_a_store_at_0011_migrates_and_the_view_returns_the_rows_the_table_held(tmp_path: Path, tamper: bool) -> None:
    path = tmp_path / "old.db"
    db = store_before(path, "0012_citations_view")
    results = _results()
    _write_old(db, "r1", results)
    _write_old(db, "r2", results[:3])
    if tamper:  # the table is what the migration reads: a changed row must come out changed
        db.execute("UPDATE citations SET fetched = 1 - fetched WHERE run_id = 'r2' AND rowid = ("
                   "SELECT min(rowid) FROM citations WHERE run_id = 'r2')")
    before = {run: _by_run(db.execute, run) for run in ("r1", "r2")}
    dup_before = _by_run(db.execute, "r1", "dup")
    db.close()
    with Store(path) as store:
        assert "0012_citations_view" in store.applied_migrations()
        assert store.query("SELECT type FROM sqlite_master WHERE name = 'citations'") == [("view",)]
        for run in ("r1", "r2"):
            after = _per_trace(_by_run(store.query, run))
            assert after == _per_trace(before[run]) and _typed(after) == _typed(before[run])
        assert len(before["r1"]) > 50 and sum(len(r.citations) for r in results[:3]) == len(before["r2"])
        untampered = [row for r in results[:3] for row in _old_citation_rows("r2", r)]
        assert (_per_trace(untampered) != _per_trace(before["r2"])) == tamper  # the tamper took
        assert _by_run(store.query, "r1", "dup") == dup_before and len(dup_before) == 6
        assert len(_by_run(store.query, "r1", "line:7")) == len(_by_run(store.query, "r1", "line:8")) == 3
        assert store.query("SELECT count(*) FROM sqlite_master WHERE name = 'citations_run'") == [(0,)]


def test_a_fresh_runs_view_rows_equal_what_the_table_held(tmp_path: Path) -> None:
    results = _results()
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        for result in results:
            store.add_result(run, result)
        store.commit()
        expected = [row for r in results for row in _old_citation_rows(run, r)]
        got = _by_run(store.query, run)
        assert got == expected and _typed(got) == _typed(expected)
        assert any(row[3] is None for row in got) and any(row[2] == -1 for row in got)
        assert store.citations(run, "dup") == [
            dict(zip(_COLUMNS.split(", ")[1:], row[1:], strict=True)) for row in expected if row[1] == "dup"
        ]
        assert store.query("SELECT citation_rows FROM results WHERE trace_id = 'uncited'") == [(None,)]


def test_the_comparison_can_fail(tmp_path: Path) -> None:
    """A row changed in the store is seen: the view reads the stored array, not the results it was built from."""
    results = _results()[-3:]
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        for result in results:
            store.add_result(run, result)
        store.commit()
        store.write("UPDATE results SET citation_rows = json_set(citation_rows, '$[0][5]', 0) WHERE line = 7", [()])
        store.commit()
        assert _by_run(store.query, run) != [row for r in results for row in _old_citation_rows(run, r)]


def test_a_trace_lookup_searches_an_index(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        plan = store.query(f"EXPLAIN QUERY PLAN SELECT {_COLUMNS} FROM citations WHERE run_id = ? AND trace_id = ?",
                           ("r", "t"))
        details = " ".join(str(row[-1]) for row in plan)
        assert "USING INDEX" in details and "SCAN r" not in details, details
