"""Absent scores of the judged stages: built once per reason and shared, in a value no caller can edit."""

from __future__ import annotations

from typing import Any

import pytest

from tracescore.scorers.absent import absent_for, all_absent
from tracescore.scorers.grounding import JUDGED_SCORES, grounding_scorer
from tracescore.scorers.semantic import semantic_scorer
from tracescore.scorers.surface import SURFACE_SCORES, surface_scorer
from tracescore.trace import Labels, Trace

PREFIX = "FINAL ANSWER:"  # the answer scorer's default marker


def _semantic(**given: Any) -> Any:
    return semantic_scorer(final_answer_prefix=PREFIX, **given)


def test_absent_for_shares_one_tuple_per_reason_and_all_absent_carries_comment_and_metadata() -> None:
    once = absent_for(("a", "b"), "why")
    assert once is absent_for(("a", "b"), "why")
    assert absent_for(("a", "b"), "other") is not once
    assert [(s.name, s.value, s.reason, s.metadata) for s in once] == [("a", None, "why", {}), ("b", None, "why", {})]
    fresh = all_absent(["a"], "judge_error", comment="timeout", judge_model="m")
    assert (fresh[0].reason, fresh[0].comment, fresh[0].metadata) == ("judge_error", "timeout", {"judge_model": "m"})


def test_without_a_judge_every_trace_gets_the_same_absent_scores_which_no_caller_can_edit() -> None:
    trace = Trace(id="t", answer="Paris is big.", labels=Labels(gold_answer="Lyon"))
    for scorer, names in (
        (grounding_scorer(judge=None, no_judge_reason="off"), JUDGED_SCORES),
        (surface_scorer(judge=None, no_judge_reason="off"), SURFACE_SCORES),
        (_semantic(judge=None, no_judge_reason="off"), ("answer.semantic_match",)),
    ):
        first = scorer(trace)
        with pytest.raises(AttributeError):  # a caller cannot change the next trace's scores (a frozen Struct)
            first.scores = ()  # type: ignore[misc]
        assert isinstance(first.scores, tuple)
        again = scorer(trace)
        assert [(s.name, s.reason) for s in again] == [(n, "off") for n in names], scorer
