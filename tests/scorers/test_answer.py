"""Answer scorer: SQuAD v1.1 official definitions (reference implementation below), labels and refusals."""

from __future__ import annotations

import random
import re
import string
from collections import Counter

import pytest

from tracescore.scorers.answer import (
    answer_scorer,
    exact_match,
    extract_final_answer,
    is_refusal,
    squad_normalize,
    token_f1,
)
from tracescore.trace import Labels, Trace


# The official SQuAD v1.1 evaluation script (evaluate-v1.1.py), verbatim in substance: the independent reference.
def _official_normalize(s: str) -> str:
    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _official_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = _official_normalize(prediction).split()
    ground_truth_tokens = _official_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def _official_em(prediction: str, ground_truth: str) -> bool:
    return _official_normalize(prediction) == _official_normalize(ground_truth)


TRICKY = [
    ("the the a Eiffel Tower", "Eiffel Tower"),  # repeated articles
    ("", ""),  # empty strings: EM true, F1 0 in v1.1
    ("", "Paris"),
    ("Paris", ""),
    ("rock-n-roll", "rock n roll"),  # punctuation inside words is removed, not split
    ("rock–n–roll", "rock n roll"),  # unicode en dash is not ASCII punctuation
    ("1990—1995", "1990 1995"),  # em dash
    ("U.S.A.", "USA"),
    ("An apple a day", "apple day"),
    ("Theatre and the theater", "theatre theater"),  # 'the' inside words stays
    ("café  Noël", "Café noël"),
    ("Paris Paris Paris", "Paris"),  # repeated tokens count by multiplicity
    ("Alexander Fleming's discovery", "Alexander Flemings discovery"),
    ("  \t\n", "the"),
]


@pytest.mark.parametrize(("prediction", "gold"), TRICKY)
def test_matches_official_squad_v11(prediction: str, gold: str) -> None:
    assert token_f1(prediction, gold) == pytest.approx(_official_f1(prediction, gold))
    assert exact_match(prediction, gold) == _official_em(prediction, gold)


def test_number_words_as_digits_extension() -> None:
    assert exact_match("Twenty days", "20 days")
    assert token_f1("thirty days", "30 days") == 1.0


def test_final_answer_prefix() -> None:
    text = "I searched twice. Final Answer: Alexander Fleming"
    assert extract_final_answer(text, "FINAL ANSWER:") == "Alexander Fleming"
    assert extract_final_answer(text, None) == text
    trace = Trace(id="t", answer=text, labels=Labels(gold_answer="Alexander Fleming"))
    got = {s.name: s.value for s in answer_scorer()(trace)}
    assert got["answer.exact_match"] is True and got["answer.token_f1"] == 1.0


def _answer(answer: str, **labels: object) -> dict[str, object]:
    trace = Trace(id="t", answer=answer, labels=Labels(**labels))
    return {s.name: s.value if s.present else ("absent", s.reason) for s in answer_scorer()(trace)}


def test_expected_contains_normalised() -> None:
    assert _answer("You have THIRTY days.", expected_answer_contains=["30 days"])["answer.correct"] is True
    assert _answer("Within 3 days", expected_answer_contains=["30 days"])["answer.correct"] is False
    # word boundaries: '30 days' must not match '130 days'
    assert _answer("within 130 days", expected_answer_contains=["30 days"])["answer.correct"] is False
    got = _answer("x", expected_answer_contains=["a", "x"])
    # 'a' normalises to nothing: a broken label, not a wrong answer (it was False, with no word on the label)
    assert got["answer.correct"] == ("absent", "expected_answer_contains entry 'a' " + _NO_WORD)


_NO_WORD = "has no word after normalisation (SQuAD: case, punctuation, articles); fix the label"


@pytest.mark.parametrize("gold", ["", "   ", "the", "!!!"])
def test_a_gold_answer_with_no_word_is_absent_not_zero(gold: str) -> None:
    got = _answer("Returns are accepted within 30 days.", gold_answer=gold, expected_answer_contains=["30 days"])
    reason = f"gold_answer label {gold!r} {_NO_WORD}"
    assert got["answer.token_f1"] == got["answer.exact_match"] == ("absent", reason)
    assert got["answer.correct"] is True


@pytest.mark.parametrize("entry", ["", "  ", "?!", "the"])
def test_an_expected_entry_with_no_word_makes_correct_absent(entry: str) -> None:
    got = _answer("Returns are accepted within 30 days.", expected_answer_contains=["30 days", entry])
    assert got["answer.correct"] == ("absent", f"expected_answer_contains entry {entry!r} {_NO_WORD}")


def test_refusal() -> None:
    assert is_refusal("I could not find any information about that.")
    assert not is_refusal("Returns are accepted within 30 days.")
    assert _answer("I don't know.", expect_refusal=True)["answer.correct"] is True
    assert _answer("Yes, lifetime warranty.", expect_refusal=True)["answer.correct"] is False


def test_absent_without_labels() -> None:
    got = _answer("anything")
    assert got["answer.correct"][0] == "absent"
    assert got["answer.token_f1"] == ("absent", "no gold_answer label")


def test_normalisation_matches_the_official_script_on_ascii_and_unicode_text() -> None:
    """The fast path (bytes.translate on ASCII text) and the str.translate path both equal the official script."""
    words = ["The", "an", "A.", "U.S.", "rock-n-roll", "café", "Noël", "İstanbul", "ß", "ΣΑΣ", "—", "x_y", "'s", "¿?"]
    rng = random.Random(3)
    for _ in range(500):
        text = "".join(rng.choice(words) + rng.choice([" ", "", "\t", "-"]) for _ in range(rng.randint(0, 8)))
        gold = " ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))
        assert squad_normalize(text) == _official_normalize(text), text
        assert token_f1(text, gold) == pytest.approx(_official_f1(text, gold)), (text, gold)
        assert exact_match(text, gold) == _official_em(text, gold), (text, gold)


def test_a_refused_verdict_is_not_shared_with_the_next_trace() -> None:
    """The answer stage keeps fixed outcomes once per scorer: a refusal after an answer still reads as a refusal."""
    scorer = answer_scorer()
    answered = scorer(Trace(id="a", answer="Yes, 30 days.", labels=Labels(expect_refusal=True)))
    refused = scorer(Trace(id="b", answer="I could not find it.", labels=Labels(expect_refusal=True)))
    assert (answered[0].value, answered[0].comment) == (False, "a refusal was expected; the agent answered")
    assert (refused[0].value, refused[0].comment) == (True, None)
