"""The result line's ``judge`` object sums the judge usage of every judged stage, each stage counted once."""

from __future__ import annotations

from tracescore.result import TraceResult
from tracescore.scores import absent, score


def _usage(calls: int, tokens: int, cost: float) -> dict[str, object]:
    return {"calls": calls, "input_tokens": tokens, "output_tokens": tokens // 10, "cost_usd": cost}


def test_usage_of_grounding_surface_and_semantic_is_summed_once_per_stage() -> None:
    grounding = {"judge_model": "m", "rubric_version": "grounding-1", "judge_usage": _usage(1, 1000, 0.004)}
    surface = {"judge_model": "m", "rubric_version": "surface-1", "judge_usage": _usage(2, 3000, 0.0105)}
    semantic = {"judge_model": "m", "rubric_version": "semantic-1", "judge_usage": _usage(0, 0, 0.0)}
    result = TraceResult(
        "t",
        scores={
            "grounding.rate": score("grounding.rate", 1.0, **grounding),
            "citation.support_rate": score("citation.support_rate", 1.0, **grounding),  # same call: counted once
            "surface.smart": score("surface.smart", 1.0, **surface),
            "surface.contradiction_ratio": absent("surface.contradiction_ratio", "no support", **surface),
            "answer.semantic_match": score("answer.semantic_match", True, **semantic),
        },
    )
    judge = result.to_json()["judge"]
    assert (judge["calls"], judge["input_tokens"], judge["output_tokens"]) == (3, 4000, 400)
    assert judge["cost_usd"] == 0.0145 and judge["model"] == "m" and judge["rubric_version"] == "grounding-1"


def test_no_judged_stage_no_judge_object() -> None:
    assert "judge" not in TraceResult("t", scores={"answer.correct": score("answer.correct", True)}).to_json()
