"""Acceptance 4 of #13: without a gold answer or without a judge every surface.* score is absent with its reason,
and nothing else changes (every other score, absent reason and diagnosis cell of the sample traces is the same)."""

from __future__ import annotations

import json

from tests.conftest import SAMPLES
from tests.fakes.judge import QueueJudge
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.registry import get_adapter
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import cell_of
from tracescore.scorers.surface import SURFACE_SCORES, surface_scorer
from tracescore.trace import Labels, Trace


def _traces() -> list[Trace]:
    adapter = get_adapter("jsonl")
    return [adapter(json.loads(line)) for line in SAMPLES.read_text().splitlines()]


def _others(result: TraceResult) -> dict[str, object]:
    line = result.to_json()
    return {
        "scores": {n: v for n, v in line["scores"].items() if not n.startswith("surface.")},
        "missing": {n: v for n, v in line["missing"].items() if not n.startswith("surface.")},
        "errors": line["errors"],
    }


def test_without_a_judge_every_surface_score_is_absent_and_nothing_else_changes() -> None:
    for trace in _traces():
        without = score_trace(trace, deterministic_scorers())
        with_surface = score_trace(trace, [*deterministic_scorers(), surface_scorer(judge=None)])
        assert _others(with_surface) == _others(without), trace.id
        assert cell_of(with_surface) == cell_of(without)
        assert {n: with_surface.missing.get(n) for n in SURFACE_SCORES} == dict.fromkeys(
            SURFACE_SCORES, "no judge configured"
        )


def test_without_a_gold_answer_every_surface_score_is_absent_no_call_and_nothing_else_changes() -> None:
    judge = QueueJudge()  # any request would fail: none may be sent
    for trace in _traces():
        labels = trace.labels.model_copy(update={"gold_answer": None, "expected_answer_contains": None})
        bare = trace.model_copy(update={"labels": Labels.model_validate(labels.model_dump())})
        without = score_trace(bare, deterministic_scorers())
        with_surface = score_trace(bare, [*deterministic_scorers(), surface_scorer(judge=judge)])
        assert _others(with_surface) == _others(without), trace.id
        reasons = {with_surface.missing.get(n) for n in SURFACE_SCORES}
        assert len(reasons) == 1 and next(iter(reasons)) in {
            "no gold_answer or expected_answer_contains label",
            "refusal case: no gold answer for the surface to support",
        }
        assert not any(n in with_surface.values for n in SURFACE_SCORES)
    assert judge.requests == []


def test_with_a_judge_and_gold_the_surface_is_scored_so_the_absence_above_is_the_gold_and_judge() -> None:
    trace = next(t for t in _traces() if t.labels.gold_answer and t.searches and not t.labels.expect_refusal)
    values = score_trace(trace, [surface_scorer(judge=QueueJudge().enqueue({"labels": []}))]).values
    assert set(values) >= {"surface.support_any", "surface.smart", "surface.noop"}
