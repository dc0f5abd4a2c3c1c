"""Several gold answers (#34): token F1 and exact match take the best over them, as the SQuAD v1.1 official script
(evaluate-v1.1.py, https://rajpurkar.github.io/SQuAD-explorer/) scores a question with several ground truths, and
``answer.semantic_match`` passes when any gold matches."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from tests.scorers.test_answer import _official_em, _official_f1, _official_normalize
from tracescore.scorers.answer import ANSWER_EXACT_MATCH, ANSWER_TOKEN_F1, answer_scorer
from tracescore.trace import Labels, Trace


# evaluate-v1.1.py's metric_max_over_ground_truths and evaluate(), in substance: per question, the maximum of the
# metric over its ground truths; over the set, the mean times 100. (Its normalize_answer, f1_score and
# exact_match_score are test_answer.py's _official_* functions.)
def _max_over_ground_truths(metric: Callable[[str, str], Any], prediction: str, ground_truths: list[str]) -> Any:
    return max(metric(prediction, truth) for truth in ground_truths)


def _official_evaluate(dataset: list[dict[str, Any]], predictions: dict[str, str]) -> dict[str, float]:
    f1 = exact = total = 0.0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                truths = [answer["text"] for answer in qa["answers"]]
                exact += _max_over_ground_truths(_official_em, predictions[qa["id"]], truths)
                f1 += _max_over_ground_truths(_official_f1, predictions[qa["id"]], truths)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


# SQuAD v1.1 dev-style questions (three crowd answers each, often differing in span) with plausible predictions.
DEV = [
    ("Where did Super Bowl 50 take place?", ["Santa Clara, California", "Levi's Stadium",
     "Levi's Stadium in the San Francisco Bay Area at Santa Clara, California."], "Levi's Stadium in Santa Clara"),
    ("Which NFL team represented the AFC at Super Bowl 50?", ["Denver Broncos", "Denver Broncos", "Denver Broncos"],
     "the Denver Broncos"),
    ("What color was used to emphasize the 50th anniversary?", ["gold", "gold", "gold"], "golden"),
    ("What was the theme of Super Bowl 50?", ["\"golden anniversary\"", "gold-themed", "\"golden anniversary"],
     "a golden anniversary"),
    ("Who was the Super Bowl 50 MVP?", ["Von Miller", "Von Miller", "Miller"], "Miller"),
    ("What is the name of the stadium?", ["Levi's Stadium", "Levi's Stadium", "Levi's"], "Levis"),
    ("Which network broadcast the game?", ["CBS", "CBS", "CBS"], "NBC"),
    ("Who headlined the halftime show?", ["Coldplay", "Coldplay", "Coldplay"], "Coldplay with Beyoncé"),
]  # fmt: skip

_WORDS = "Paris France the city of lights a river Seine bank north-west U.S.A. café Noël rock-n-roll 1990—1995".split()


def _random_dev(rng: random.Random, n: int) -> list[tuple[str, list[str], str]]:
    """Vectors in the shape of SQuAD's dev set: 1-4 ground truths a question, spans sharing words with the
    prediction (no number word: the project's one documented extension over SQuAD)."""

    def span() -> str:  # with a word left after normalisation (a gold without one is a broken label, below)
        while not _official_normalize(text := " ".join(rng.choices(_WORDS, k=rng.randint(1, 5)))):
            pass
        return text

    return [(f"q{i}", [span() for _ in range(rng.randint(1, 4))], span()) for i in range(n)]


def _squad(vectors: list[tuple[str, list[str], str]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    qas = [{"id": f"id{i}", "question": q, "answers": [{"text": t} for t in truths]} for i, (q, truths, _) in
           enumerate(vectors)]  # fmt: skip
    return [{"paragraphs": [{"qas": qas}]}], {f"id{i}": pred for i, (_, _, pred) in enumerate(vectors)}


def _ours(vectors: list[tuple[str, list[str], str]]) -> dict[str, float]:
    scorer = answer_scorer(final_answer_prefix=None)
    f1 = exact = 0.0
    for question, truths, prediction in vectors:
        got = {s.name: s for s in scorer(Trace(id="t", question=question, answer=prediction,
                                               labels=Labels(gold_answers=truths)))}  # fmt: skip
        f1 += got[ANSWER_TOKEN_F1].value  # type: ignore[operator]
        exact += got[ANSWER_EXACT_MATCH].value  # type: ignore[operator]
    return {"exact_match": 100.0 * exact / len(vectors), "f1": 100.0 * f1 / len(vectors)}


@pytest.mark.parametrize("case", ["dev-style", "random"])
def test_f1_and_exact_match_equal_the_official_evaluation_over_all_ground_truths(case: str) -> None:
    vectors = DEV if case == "dev-style" else _random_dev(random.Random(11), 400)
    official = _official_evaluate(*_squad(vectors))
    ours = _ours(vectors)
    assert ours["f1"] == pytest.approx(official["f1"], abs=1e-9)
    assert ours["exact_match"] == pytest.approx(official["exact_match"], abs=1e-9)
    if case == "dev-style":
        # by hand: EM on Broncos, "golden anniversary", Miller, Levis = 4 of 8; F1 per question: Super Bowl venue
        # 0.625 (the long span: P 5/5, R 5/11), Coldplay 0.5 (P 1/3, R 1), gold/golden and NBC 0, the rest 1
        assert official == ours == pytest.approx({"exact_match": 50.0, "f1": 100 * 5.125 / 8})
    # the first ground truth alone (gold_answer) scores lower: the maximum is what makes the difference
    single = _ours([(q, truths[:1], pred) for q, truths, pred in vectors])
    assert single["f1"] < ours["f1"]


def _scored(answer: str, **labels: Any) -> dict[str, Any]:
    trace = Trace(id="t", answer=answer, labels=Labels(**labels))
    return {s.name: (s.value, s.metadata) if s.present else ("absent", s.reason) for s in answer_scorer()(trace)}


def test_gold_answer_and_gold_answers_are_all_ground_truths_and_the_best_is_named() -> None:
    got = _scored("thirty days", gold_answer="a month", gold_answers=["30 days", "30 calendar days"])
    assert got[ANSWER_EXACT_MATCH] == (True, {"gold": "30 days"})
    assert got[ANSWER_TOKEN_F1] == (1.0, {"gold": "30 days"})
    partial = _scored("30 calendar days from delivery", gold_answer="30 days", gold_answers=["30 calendar days"])
    # "30 days": P 2/5 R 1 -> 4/7; "30 calendar days": P 3/5 R 1 -> 3/4
    assert partial[ANSWER_TOKEN_F1] == (pytest.approx(0.75), {"gold": "30 calendar days"})
    assert partial[ANSWER_EXACT_MATCH] == (False, {"gold": "30 calendar days"})


def test_a_gold_with_no_word_among_several_is_a_broken_label() -> None:
    """The official script would score the empty ground truth 0 and take the others' maximum; here the label is
    fixed first, so both scores are absent naming it (as for a single gold_answer with no word)."""
    got = _scored("30 days", gold_answers=["30 days", "the"])
    reason = (
        "gold_answer label 'the' has no word after normalisation (SQuAD: case, punctuation, articles); fix the label"
    )
    assert got[ANSWER_TOKEN_F1] == got[ANSWER_EXACT_MATCH] == ("absent", reason)


def test_an_empty_gold_answers_list_is_no_gold_label() -> None:
    got = _scored("30 days", gold_answers=[])
    assert got[ANSWER_TOKEN_F1] == ("absent", "no gold_answer label")
