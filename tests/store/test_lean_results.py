"""0010_lean_results: the result line is stored once; rows written before it keep their line; per-score rows stay
(a view since 0011)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.store.old_store import store_before
from tracescore.result import TraceResult
from tracescore.scores import Score
from tracescore.store.db import PAGE_SIZE, Store


def _result() -> TraceResult:
    result = TraceResult(trace_id="t1", line=3, metadata={"provider": "exa"})
    result.scores["retrieval.recall_at_5"] = Score(name="retrieval.recall_at_5", value=0.5, metadata={"k": 5})
    result.scores["answer.correct"] = Score(name="answer.correct", value=None, reason="no gold answer")
    return result


def test_results_hold_the_line_once_and_scores_stay_queryable(tmp_path: Path) -> None:
    result = _result()
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        store.add_rows([])
        store.add_result(run, result)
        store.commit()
        assert list(store.results(run)) == [result.to_json()]
        columns = [row[1] for row in store.query("PRAGMA table_info(results)")]
        assert columns == [
            "id", "run_id", "trace_id", "line", "timestamp", "diagnosis", "result_line", "score_metadata",
            "citation_rows", "not_computed",
        ]
        rows = store.query("SELECT name, value, reason, metadata FROM scores WHERE run_id = ? ORDER BY name", (run,))
        assert [(n, v, r, m and json.loads(m)) for n, v, r, m in rows] == [
            ("answer.correct", None, "no gold answer", None),
            ("retrieval.recall_at_5", 0.5, None, {"k": 5}),
        ]
        assert store.query("PRAGMA journal_mode") == [("wal",)]
        assert store.query("PRAGMA page_size") == [(PAGE_SIZE,)] != [(4096,)]  # a new store: rows pack, 2+ a page
        assert store.query("PRAGMA wal_autocheckpoint") == [((4 << 20) // PAGE_SIZE,)]  # every 4 MiB, not 16


def test_rows_written_before_the_migration_keep_their_line(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = store_before(path, "0010_lean_results")
    db.execute("INSERT INTO runs (id, started_at, command) VALUES ('r', 'then', 'score')")
    old = {"trace_id": "t0", "line": 1, "timestamp": None, "scores": {"a": 1.0}, "missing": {"b": "why"},
           "errors": [], "notes": [], "metadata": {"m": [1, "x"]}}
    db.execute(
        "INSERT INTO results (run_id, trace_id, line, scores, missing, errors, notes, metadata) VALUES"
        " ('r', 't0', 1, ?, ?, '[]', '[]', ?)",
        (json.dumps(old["scores"]), json.dumps(old["missing"]), json.dumps(old["metadata"])),
    )
    line = json.dumps(_result().to_json())
    db.execute("INSERT INTO results (run_id, trace_id, line, scores, missing, errors, notes, metadata, result_line)"
               " VALUES ('r', 't1', 3, '{}', '{}', '[]', '[]', '{}', ?)", (line,))
    db.close()
    with Store(path) as store:
        assert "0010_lean_results" in store.applied_migrations()
        assert store.query("PRAGMA page_size") == [(4096,)]  # an existing store keeps its pages
        assert list(store.results("r")) == [old, json.loads(line)]
