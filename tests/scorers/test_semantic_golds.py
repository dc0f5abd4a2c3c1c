"""``answer.semantic_match`` and the surface oracle with several gold answers (#34): passes when any matches."""

from __future__ import annotations

from typing import Any

from tests.fakes.judge import QueueJudge
from tracescore.scorers.semantic import needed_request, semantic_scorer
from tracescore.scorers.surface_call import gold_text
from tracescore.trace import Labels, Trace

PREFIX = "FINAL ANSWER:"  # the answer scorer's default marker


def _semantic(**given: Any) -> Any:
    return semantic_scorer(final_answer_prefix=PREFIX, **given)


def _needed(trace: Any) -> Any:
    return needed_request(trace, final_answer_prefix=PREFIX)


def _trace(answer: str, **labels: object) -> Trace:
    return Trace(id="t", question="What did the startup raise?", answer=answer, labels=Labels(**labels))


def test_an_exact_match_with_any_gold_needs_no_call() -> None:
    judge = QueueJudge()
    (result,) = _semantic(judge=judge)(_trace("FINAL ANSWER: five million dollars", gold_answer="$5,000,000",
                                                    gold_answers=["Five million dollars"]))  # fmt: skip
    assert result.value is True and result.metadata["how"] == "exact" and judge.requests == []


def test_gold_answers_alone_are_a_gold_label_and_the_judge_is_asked_until_one_matches() -> None:
    judge = (
        QueueJudge()
        .enqueue({"match": False, "reason": "not 4 million"})
        .enqueue({"match": True, "reason": "US$5m is $5,000,000"})
    )
    trace = _trace("FINAL ANSWER: US$5m", gold_answers=["$4,000,000", "$5,000,000", "$6,000,000"])
    (result,) = _semantic(judge=judge)(trace)
    assert result.value is True and result.comment == "US$5m is $5,000,000"
    assert result.metadata["gold"] == "$5,000,000" and result.metadata["judge_usage"]["calls"] == 2
    assert ["<gold_answer>$4,000,000</gold_answer>" in r.content for r in judge.requests] == [True, False]
    assert len(judge.requests) == 2  # the third gold is never asked about
    assert _needed(trace) is not None and "$4,000,000" in _needed(trace).content  # type: ignore[union-attr]


def test_no_gold_matches_is_no_match_after_asking_about_each() -> None:
    judge = QueueJudge().enqueue({"match": False, "reason": "a"}).enqueue({"match": False, "reason": "b"})
    (result,) = _semantic(judge=judge)(_trace("FINAL ANSWER: $7m", gold_answers=["$4m", "$5m"]))
    assert result.value is False and result.metadata["judge_usage"]["calls"] == 2 and len(judge.requests) == 2


def test_the_surface_oracle_is_given_every_gold_answer() -> None:
    assert gold_text(_trace("x", gold_answers=["$5m", " ", "five million"])) == ("$5m OR five million", None)
    assert gold_text(_trace("x", gold_answer="$5m")) == ("$5m", None)  # one gold: as before
