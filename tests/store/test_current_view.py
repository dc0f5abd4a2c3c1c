"""``current_scores`` (migration 0013): the latest decided score of each trace and name over all runs; a later run
that could not compute it leaves it current, marked stale (``stale_since``, ``reason``); a fact of absence replaces
it; a score a later clean run no longer produces leaves the view. A store from before the migration gets its
not-computed absences from the reasons known then. ``results.not_computed`` holds those absences' reasons, each once
(migration 0016; 0013 held their names, one per score)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.store.old_store import store_before
from tracescore.result import TraceResult
from tracescore.scores import Score, absent, score
from tracescore.store.db import Store, result_rows


def _result(*scores: Score, errors: list[str] | None = None) -> TraceResult:
    result = TraceResult(trace_id="t1", errors=list(errors or []))
    for s in scores:
        result.scores[s.name] = s
    return result


def _run(store: Store, result: TraceResult) -> str:
    run_id = store.start_run("backfill")
    store.add_result(run_id, result)
    store.finish_run(run_id, {})
    return run_id


def _current(store: Store) -> dict[str, tuple[Any, ...]]:
    rows = store.query("SELECT name, coalesce(value, label), reason, run_id, stale_since, metadata, comment"
                       " FROM current_scores WHERE trace_id = 't1'")  # fmt: skip
    return {r[0]: tuple(r[1:]) for r in rows}


def _started(store: Store, run_id: str) -> str:
    return str({r["id"]: r["started_at"] for r in store.runs()}[run_id])


def test_a_score_not_computed_stays_current_marked_stale_until_a_run_computes_it(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        r1 = _run(store, _result(score("grounding.rate", 0.8, comment="one claim unsupported", rubric_version="g-1"),
                                 score("retrieval.recall_at_5", 1.0), score("answer.correct", True),
                                 score("diagnosis", "grounded/right")))  # fmt: skip
        assert _current(store)["grounding.rate"] == (0.8, None, r1, None, '{"rubric_version":"g-1"}',
                                                     "one claim unsupported")  # fmt: skip
        r2 = _run(store, _result(absent("grounding.rate", "judge_error"), score("retrieval.recall_at_5", 0.5),
                                 absent("answer.correct", "no expected_answer_contains or expect_refusal label"),
                                 score("diagnosis", "retrieval_fail/wrong")))  # fmt: skip
        now = _current(store)
        since = _started(store, r2)
        assert now["grounding.rate"] == (0.8, "judge_error", r1, since, '{"rubric_version":"g-1"}',
                                         "one claim unsupported")  # kept: the earlier value, its run, its metadata
        assert now["retrieval.recall_at_5"] == (0.5, None, r2, None, None, None)  # computed again: fresh
        assert now["answer.correct"][:4] == (None, "no expected_answer_contains or expect_refusal label", r2, None)
        assert now["diagnosis"][0] == "retrieval_fail/wrong"

        # a budget run (still stale since the first miss), then a scorer that raised (its scores not in the line)
        r3 = _run(store, _result(absent("grounding.rate", "judge budget spent ($0.0100 of max $0.0100)"),
                                 score("retrieval.recall_at_5", 0.5)))  # fmt: skip
        assert _current(store)["grounding.rate"][:4] == (0.8, "judge budget spent ($0.0100 of max $0.0100)", r1,
                                                         since)  # fmt: skip
        r4 = _run(store, _result(score("grounding.rate", 0.4), errors=["scorer retrieval failed: RuntimeError: boom"]))
        now = _current(store)
        assert now["retrieval.recall_at_5"][:4] == (0.5, "scorer retrieval failed: RuntimeError: boom", r3,
                                                    _started(store, r4))  # fmt: skip
        assert now["grounding.rate"][:2] == (0.4, None) and now["grounding.rate"][3] is None  # computed: fresh

        # the config turns the judge off: a fact, no longer current as a value; a clean run without a score at all
        # (a scorer or stage removed) takes it out of the view
        _run(store, _result(absent("grounding.rate", "judge turned off ([scoring] judge = false)"),
                            score("retrieval.recall_at_5", 1.0)))  # fmt: skip
        now = _current(store)
        assert now["grounding.rate"][:2] == (None, "judge turned off ([scoring] judge = false)")
        assert "answer.correct" not in now and "diagnosis" not in now


def test_an_unreadable_line_keeps_every_score_of_its_trace_stale(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        r1 = _run(store, _result(score("citation.coverage", 1.0)))
        r2 = _run(store, _result(errors=["record (t1): not JSON"]))
        assert _current(store)["citation.coverage"][:4] == (1.0, "record (t1): not JSON", r1, _started(store, r2))


def test_a_store_from_before_the_migration_marks_the_absences_that_were_not_computed(tmp_path: Path) -> None:
    db = store_before(tmp_path / "old.db", "0013_current_scores")
    db.execute("INSERT INTO runs (id, started_at, command) VALUES ('r1', '2026-11-01', 'run'),"
               " ('r2', '2026-11-02', 'run')")  # fmt: skip
    old = [("r1", _result(score("grounding.rate", 0.7), score("surface.smart", 2.0), score("answer.correct", True))),
           ("r2", _result(absent("grounding.rate", "judge_error"), absent("surface.smart", "no judge configured"),
                          absent("answer.correct", "no expected_answer_contains or expect_refusal label")))]
    for run_id, result in old:
        db.execute("INSERT INTO results (run_id, trace_id, result_line) VALUES (?, 't1', ?)",
                   (run_id, result.encoded()[1]))  # fmt: skip
    db.close()
    with Store(tmp_path / "old.db") as store:
        marked = store.query("SELECT run_id, not_computed FROM results ORDER BY id")
        assert marked == [("r1", None), ("r2", '["judge_error","no judge configured"]')]  # 0013 then 0016
        now = _current(store)
        assert now["grounding.rate"][:4] == (0.7, "judge_error", "r1", "2026-11-02")
        assert now["surface.smart"][:4] == (2.0, "no judge configured", "r1", "2026-11-02")
        assert now["answer.correct"][:2] == (None, "no expected_answer_contains or expect_refusal label")


def test_not_computed_holds_each_reason_once_not_each_name(tmp_path: Path) -> None:
    judged = ("grounding.rate", "grounding.hallucination_rate", "citation.support_rate", "surface.smart")
    off = "judge turned off (--no-judge)"
    result = _result(*(absent(name, off) for name in judged), absent("answer.token_f1", "no gold_answer label"),
                     absent("citation.drift_rate", ""), score("retrieval.recall_at_5", 1.0))  # fmt: skip
    with Store(tmp_path / "s.db") as store:
        _run(store, result)
        assert store.query("SELECT not_computed FROM results") == [(f'["{off}","not computed"]',)]  # the line's words
        now = _current(store)
        assert [now[name][:2] for name in judged] == [(None, off)] * 4  # nothing earlier: the absence is current
        assert now["citation.drift_rate"][:2] == (None, "not computed")
        assert now["answer.token_f1"][:2] == (None, "no gold_answer label")


def test_a_store_with_the_names_of_0013_gets_the_reasons_and_keeps_its_stale_scores(tmp_path: Path) -> None:
    db = store_before(tmp_path / "old.db", "0016_not_computed_reasons")
    db.execute("INSERT INTO runs (id, started_at, command) VALUES ('r1', '2026-11-01', 'run'),"
               " ('r2', '2026-11-02', 'run')")  # fmt: skip
    lines = [("r1", _result(score("grounding.rate", 0.7), score("surface.smart", 2.0)), None),
             ("r2", _result(absent("grounding.rate", "judge_error"), absent("surface.smart", "judge_error"),
                            absent("answer.correct", "no expected_answer_contains or expect_refusal label")),
              '["grounding.rate","surface.smart"]')]  # fmt: skip
    for run_id, result, names in lines:  # as the 0013 writer left them: the names
        db.execute("INSERT INTO results (run_id, trace_id, result_line, not_computed) VALUES (?, 't1', ?, ?)",
                   (run_id, result.encoded()[1], names))  # fmt: skip
    db.close()
    with Store(tmp_path / "old.db") as store:
        assert store.query("SELECT not_computed FROM results ORDER BY id") == [(None,), ('["judge_error"]',)]
        now = _current(store)
        assert now["grounding.rate"][:4] == (0.7, "judge_error", "r1", "2026-11-02")
        assert now["surface.smart"][:4] == (2.0, "judge_error", "r1", "2026-11-02")
        assert now["answer.correct"][:2] == (None, "no expected_answer_contains or expect_refusal label")


def test_the_view_reads_a_store_of_many_traces_in_linear_time(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        run = store.start_run("score")
        scores = (score("retrieval.recall_at_5", 1.0), absent("grounding.rate", "judge_error"))
        store.add_rows([result_rows(run, _traced(f"t{i}", *scores)) for i in range(8000)])
        store.commit()
        start = time.process_time()
        stale = store.query("SELECT count(*) FROM current_scores WHERE stale_since IS NOT NULL")
        spent = time.process_time() - start
    assert stale == [(0,)]
    assert spent < 1.5, spent  # ~0.12 s; with 0013's plain JOIN each entry searched `named` by name alone: ~10 s


def _traced(trace_id: str, *scores: Score) -> TraceResult:
    result = _result(*scores)
    result.trace_id = trace_id
    return result
