"""#48 item 5: the evaluators take the turns of one session (a LangSmith thread's root runs, a Langfuse session's
traces) and score each with the evidence of the turns before it, as the Python API does."""

from __future__ import annotations

from typing import Any

import pytest

import tracescore
from tests.engine.sessions_gen import generate
from tests.fakes.langsmith_runs import run_tree
from tracescore.integrations import langfuse as lf, langsmith as ls

schemas = pytest.importorskip("langsmith.schemas")
PROJECT = "00000000-0000-4000-8000-0000000000aa"
NAMES = ("citation.unfetched_rate", "citation.fabricated_count", "grounding.unsupported_numbers")


def _session() -> list[dict[str, Any]]:
    _, dicts = generate(seed=3, sessions=3)
    turns = sorted((d for d in dicts if d["session_id"] == "s1"), key=lambda d: d["timestamp"])
    assert len(turns) >= 3
    return turns


def _expected(turns: list[dict[str, Any]], *, carry: bool = True) -> list[dict[str, Any]]:
    results = tracescore.score_traces(turns, carry_evidence=carry)
    return [{n: r.values[n] for n in NAMES} for r in results]


def test_a_langsmith_thread_evaluator_scores_each_turn_with_the_earlier_turns() -> None:
    turns = _session()
    runs = []
    for trace in turns:
        tree, _ = run_tree({k: v for k, v in trace.items() if k != "session_id"}, PROJECT, experiment=False)
        root, children = tree[0], tree[1:]
        runs.append(schemas.Run(**root, child_runs=[schemas.Run(**child) for child in children]))
    experiment = ls.Experiment()
    results = experiment.thread_evaluator(runs)["results"]
    got = []
    for run in runs:
        mine = {r["key"]: r.get("score") for r in results if r["target_run_id"] == str(run.id)}
        got.append({n: mine[n] for n in NAMES})
    assert got == _expected(turns) != _expected(turns, carry=False)
    # one run at a time, the ordinary evaluator still scores each turn alone
    [alone] = experiment.evaluators
    assert [{n: next(r["score"] for r in alone(run, None)["results"] if r["key"] == n) for n in NAMES}
            for run in runs] == _expected(turns, carry=False)  # fmt: skip


def test_a_langfuse_session_evaluator_gives_each_turn_its_evaluations() -> None:
    pytest.importorskip("langfuse.experiment")
    turns = _session()
    experiment = lf.Experiment()
    bare = [{k: v for k, v in t.items() if k != "session_id"} for t in reversed(turns)]  # the order given is no matter
    per_turn = experiment.session_evaluator(outputs=[*bare, "not a trace"])
    assert len(per_turn) == len(turns) + 1
    got = [{e.name: e.value for e in evaluations if e.name in NAMES} for evaluations in per_turn[:-1]]
    assert list(reversed(got)) == _expected(turns)
    assert per_turn[-1][0].name == lf.ABSENT_KEY and "trace not scored" in per_turn[-1][0].value
