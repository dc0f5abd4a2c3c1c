"""0011_scores_view: the per-score rows are a view over the result line plus one metadata column per trace.

The oracle is the per-score table as it was written before 0011 (``_old_score_rows`` is that writer, kept here):
a store migrated from it, and a fresh run, must give the same rows value for value.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.docs_pages import page
from tests.store.old_store import store_before
from tracescore.api import score_traces
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import cell_of
from tracescore.scores import Score, absent, score
from tracescore.store.db import Store

_COLUMNS = "run_id, trace_id, name, value, label, reason, comment, metadata"
Row = tuple[Any, ...]


def _old_score_rows(run_id: str, result: TraceResult) -> list[Row]:
    """The per-score rows exactly as ``result_rows`` built them up to 0010 (the table's writer)."""
    tid = result.trace_id or f"line:{result.line}"
    return [
        (
            run_id,
            tid,
            s.name,
            float(s.value) if isinstance(s.value, bool | int | float) else None,
            s.value if isinstance(s.value, str) else None,
            s.reason,
            s.comment,
            json.dumps(s.metadata, default=str) if s.metadata else None,
        )
        for s in result.scores.values()
    ]


def _normalised(rows: list[Row]) -> list[Row]:
    """Rows sorted, metadata parsed (the view gives compact JSON text; readers ``json.loads`` it), types kept."""
    out = [(*row[:7], json.loads(row[7]) if row[7] is not None else None) for row in rows]
    for row in out:  # value is REAL or NULL, as the table's column was: a reader summing it gets floats
        assert row[3] is None or type(row[3]) is float, row
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


def _view(store: Store) -> list[Row]:
    return _normalised(store.query(f"SELECT {_COLUMNS} FROM scores"))


def _kinds() -> list[TraceResult]:
    """Every kind of score row: numeric, integer, bool, label, absent with reason, comment, metadata, no trace id."""
    first = TraceResult(trace_id="t1", line=1)
    for s in (
        score("retrieval.recall_at_5", 0.5, k=5, scorer_version="retrieval-2"),
        score("retrieval.hits", 7),
        score("answer.correct", False, comment="expected 'Paris'", judge={"model": "m", "usage": [1, 2]}),
        score("citation.supported", True),
        score("diagnosis", "retrieval_pass/wrong", cells=["a.b", "ü"]),
        absent("grounding.rate", "no judge", rubric_version="g-3"),
        absent("answer.semantic_match", "no gold answer"),
    ):
        first.scores[s.name] = s
    unnamed = TraceResult(trace_id=None, line=9)  # stored under "line:9", as the table had it
    unnamed.scores["retrieval.recall_at_5"] = score("retrieval.recall_at_5", 1.0, comment="all found")
    unnamed.scores["grounding.rate"] = absent("grounding.rate", "no answer")
    return [first, unnamed]


def _write_old(db: sqlite3.Connection, run_id: str, results: list[TraceResult]) -> None:
    db.execute("INSERT INTO runs (id, started_at, command) VALUES (?, ?, 'score')", (run_id, run_id))
    for result in results:
        db.execute(
            "INSERT INTO results (run_id, trace_id, line, timestamp, diagnosis, result_line) VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, result.trace_id, result.line, None, cell_of(result), result.encoded()[1]),
        )
        db.executemany(f"INSERT INTO scores ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       _old_score_rows(run_id, result))


@pytest.mark.parametrize("tamper", [None, "metadata", "comment"])
def test_a_store_at_0010_migrates_and_the_view_returns_the_rows_the_table_held(
    tmp_path: Path, tamper: str | None
) -> None:
    path = tmp_path / "old.db"
    db = store_before(path, "0011_scores_view")
    _write_old(db, "r1", _kinds())
    _write_old(db, "r2", score_traces([json.loads(x) for x in SAMPLES.read_text().splitlines()[:6]]))
    before = _normalised(db.execute(f"SELECT {_COLUMNS} FROM scores").fetchall())
    if tamper == "metadata":  # the table is what the migration reads: a changed value must come out changed
        db.execute("UPDATE scores SET metadata = '{\"k\": 6}' WHERE run_id = 'r1' AND name = 'retrieval.recall_at_5'")
    if tamper == "comment":  # a line rebuilt by 0010 had no comments: the table's are carried onto the line
        db.execute("UPDATE results SET result_line = json_remove(result_line, '$.comments') WHERE run_id = 'r1'")
    tampered = _normalised(db.execute(f"SELECT {_COLUMNS} FROM scores").fetchall())
    db.close()
    with Store(path) as store:
        assert "0011_scores_view" in store.applied_migrations()
        assert store.query("SELECT type FROM sqlite_master WHERE name = 'scores'") == [("view",)]
        after = _view(store)
        assert len(after) == len(before) > 100
        if tamper == "metadata":
            assert after == tampered != before
        else:
            assert after == before
        assert store.query("SELECT count(*) FROM sqlite_master WHERE name IN ('scores_trace', 'scores_run_name')") == [
            (0,)
        ]


def test_a_fresh_runs_view_rows_equal_the_results_scores(tmp_path: Path) -> None:
    results = _kinds() + score_traces([json.loads(x) for x in SAMPLES.read_text().splitlines()])
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        for result in results:
            store.add_result(run, result)
        store.commit()
        expected = _normalised([row for r in results for row in _old_score_rows(run, r)])
        assert _view(store) == expected
        assert any(row[6] for row in expected) and any(row[7] for row in expected)  # comments and metadata seen
        assert {r[2]: r for r in _view(store) if r[1] == "line:9"}["retrieval.recall_at_5"][6] == "all found"
        assert list(store.results(run)) == [r.to_json() for r in results]  # the lines are untouched


@pytest.mark.parametrize(
    "change",
    [
        ("retrieval.recall_at_5", score("retrieval.recall_at_5", 0.5, k=6, scorer_version="retrieval-2")),
        ("answer.correct", score("answer.correct", True, comment="expected 'Paris'", judge={"model": "m"})),
        ("answer.correct", score("answer.correct", False, comment="expected 'Rome'", judge={"model": "m"})),
        ("grounding.rate", absent("grounding.rate", "judge failed", rubric_version="g-3")),
        ("diagnosis", score("diagnosis", "retrieval_fail/wrong", cells=["a.b", "ü"])),
    ],
)
def test_the_view_rows_differ_when_a_score_differs(tmp_path: Path, change: tuple[str, Score]) -> None:
    results = _kinds()
    results[0].scores[change[0]] = change[1]
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        for result in results:
            store.add_result(run, result)
        store.commit()
        assert _view(store) != _normalised([row for r in _kinds() for row in _old_score_rows(run, r)])
        assert _view(store) == _normalised([row for r in results for row in _old_score_rows(run, r)])


def _readme_query() -> str:
    """The example query of the result format page's store section (the ``sqlite3 tracescore.db "..."`` block)."""
    found = re.search(r'sqlite3 tracescore\.db "(.+?)"\n```', page("reference/results.md"), re.S)
    assert found, "the result format page's store section lost its example query"
    return found.group(1)


def test_the_readme_example_query_gives_recall_of_the_last_run(tmp_path: Path) -> None:
    traces = [json.loads(x) for x in SAMPLES.read_text().splitlines()]
    with Store(tmp_path / "s.db") as store:
        older = store.start_run("score")
        store.add_result(older, _kinds()[0])  # recall 0.5: not the last run, left out
        store.finish_run(older, {})
        store.query("UPDATE runs SET started_at = '2026-01-01T00:00:00+00:00' WHERE id = ?", (older,))
        last = store.start_run("score")
        results = score_traces(traces)
        for result in results:
            store.add_result(last, result)
        store.finish_run(last, {})
        (row,) = store.query(_readme_query())
    values = [r.scores["retrieval.recall_at_5"].value for r in results if r.scores["retrieval.recall_at_5"].present]
    reasons = {r.missing["retrieval.recall_at_5"] for r in results if "retrieval.recall_at_5" in r.missing}
    assert values and reasons  # the sample has both kinds, so each column is checked
    assert row[0] == pytest.approx(sum(float(v) for v in values) / len(values))
    assert row[1:3] == (len(values), len(results) - len(values))
    assert all(reason in row[3] for reason in reasons) and len(row[3]) == len(",".join(reasons))  # DISTINCT


def test_a_non_finite_metadata_value_never_breaks_the_view(tmp_path: Path) -> None:
    """JSON has no NaN: the new column writes it as the result line does ("NaN"); an old row's text comes back as is."""
    result = TraceResult(trace_id="t-nan", line=1)
    result.scores["x"] = score("x", 0.5, spread=float("nan"), top=float("inf"))
    db = store_before(tmp_path / "s.db", "0011_scores_view")
    _write_old(db, "old", [result])
    db.close()
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        store.add_result(run, result)
        store.commit()
        rows = dict(store.query("SELECT run_id, metadata FROM scores WHERE name = 'x'"))
    assert json.loads(rows[run]) == {"spread": "NaN", "top": "Infinity"}
    assert rows["old"] == '{"spread": NaN, "top": Infinity}'  # what the table held, byte for byte
