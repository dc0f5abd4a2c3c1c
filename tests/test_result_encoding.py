"""``TraceResult.encoded()`` writes the same bytes as ``json.dumps(to_json(), ensure_ascii=False, default=str)``,
also where its piecewise writer has to hand over to the json module."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tracescore import result as result_module
from tracescore.result import TraceResult
from tracescore.scores import Score


def _reference(result: TraceResult) -> str:
    return json.dumps(result.to_json(), ensure_ascii=False, default=str)


class _Name(str):
    pass


class _Float(float):
    def __repr__(self) -> str:
        return "not-json"


CASES: dict[str, dict[str, Any]] = {
    "floats": {"scores": [Score("a", 0.1), Score("b", 1e16), Score("c", -0.0), Score("d", 5), Score("e", 1e-7)]},
    "bools and text": {"scores": [Score("a", True), Score("b", False), Score("diagnosis", "retrieval_pass/right")]},
    "absent, one reason many names": {"scores": [Score(f"s.{i}", None, "judge turned off") for i in range(5)]},
    "absent without reason": {"scores": [Score("a", None), Score("b", None, "")]},
    "non-ascii and escapes": {
        "scores": [Score("ü.naïve", "é\"\\\n\t\x00\u2028"), Score("b", None, "raison: « ¬ » \ud800")],
        "errors": ["ligne 3: \x7f"],
        "notes": ["note ✓"],
    },
    "comments": {"scores": [Score("a", 1.0, comment="cité ‘x’"), Score("b", None, "why", comment="c")]},
    "infinite and nan values": {
        "scores": [Score("a", float("inf")), Score("b", float("-inf")), Score("c", float("nan"))],
    },
    "nan in score metadata does not reach the line": {"scores": [Score("a", 1.0, metadata={"x": float("nan")})]},
    "nan in result metadata": {"scores": [Score("a", 1.0)], "metadata": {"x": 1}, "nan_after": True},
    "float subclass value": {"scores": [Score("a", _Float(0.5))]},
    "str subclass name": {"scores": [Score(_Name("a"), 1.0), Score(_Name("b"), None, "r")]},
    "non-text reason and comment": {"scores": [Score("a", None, 7), Score("b", 1.0, comment=3)]},  # type: ignore[arg-type]
    "odd metadata": {
        "scores": [Score("a", 1.0)],
        "metadata": {"when": datetime(2026, 1, 2, tzinfo=UTC), "n": [1, 2.5]},
    },
    "everything": {
        "trace_id": "t-1",
        "scores": [
            Score("grounding.rate", 0.5, metadata={"judge_model": "m", "rubric_version": "r1", "agreement": 0.8,
                                                   "judge_usage": {"calls": 2, "input_tokens": 10, "cost_usd": 0.1}}),
            Score("grounding.x", None, "why"),
        ],
        "errors": ["e1", "e2"],
        "notes": ["n"],
        "line": 7,
        "timestamp": datetime(2026, 11, 20, 1, 2, 3, tzinfo=UTC),
        "metadata": {"provider": "x", "nested": {"a": [1, None, True]}},
    },
    "no trace id": {"trace_id": None, "errors": ["line 3: unreadable"], "line": 3},
}


@pytest.mark.parametrize("case", list(CASES))
def test_encoded_is_json_dumps_of_to_json(case: str) -> None:
    spec = dict(CASES[case])
    nan_after = spec.pop("nan_after", False)
    scores = spec.pop("scores", [])
    result = TraceResult(trace_id=spec.pop("trace_id", "t"), scores={s.name: s for s in scores}, **spec)
    if nan_after:
        result.metadata["late"] = float("nan")  # set after construction: only the strict walk catches it
    data, text = result.encoded()
    assert text == _reference(result)
    assert data == result.to_json()
    assert json.loads(text) == json.loads(_reference(result))


@pytest.mark.parametrize("case", ["floats", "bools and text", "non-ascii and escapes", "comments", "everything"])
def test_plain_values_are_written_piecewise_not_handed_over(case: str) -> None:
    spec = dict(CASES[case])
    scores = spec.pop("scores", [])
    result = TraceResult(trace_id=spec.pop("trace_id", "t"), scores={s.name: s for s in scores}, **spec)
    assert result._encode()[1] == _reference(result)


def test_the_same_line_twice_reuses_the_absent_pairs_and_stays_identical() -> None:
    result_module._PAIRS.clear()
    result = TraceResult("t", scores={f"s.{i}": Score(f"s.{i}", None, "same reason") for i in range(3)})
    first = result.encoded()[1]
    assert len(result_module._PAIRS) == 3
    assert result.encoded()[1] == first == _reference(result)


def test_repeated_floats_keep_their_sign_and_digits() -> None:
    for value in (0.0, -0.0, 0.0, 0.1, 0.1, 1e16, 1e16, -0.0, 1 / 3, 1 / 3):
        result = TraceResult("t", scores={"a": Score("a", value), "b": Score("b", None, "r")})
        assert result._encode()[1] == _reference(result)


def test_a_name_absent_for_another_reason_gets_its_own_pair() -> None:
    for reason in ("first", "second", "first"):
        result = TraceResult("t", scores={"a": Score("a", None, reason)})
        assert result._encode()[1] == _reference(result)
        assert f'"a": "{reason}"' in result._encode()[1]


def test_the_caches_start_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result_module, "_REMEMBERED", 2)
    result_module._PAIRS.clear()
    result = TraceResult("t", scores={f"s.{i}": Score(f"s.{i}", None, f"reason {i}") for i in range(5)})
    assert result.encoded()[1] == _reference(result)
    assert len(result_module._PAIRS) <= 2


def test_varied_results_encode_as_json_dumps_does() -> None:
    """Random names, values, reasons and comments (many reasons new per trace, as a URL in a reason makes them): the
    pieces looked up in the caches give the json module's bytes, also after the caches start over."""
    import random

    rng = random.Random(4)
    texts = ["judge turned off", "no gold_answer label", "é « x »", "\"q\"\\", "", "\x00\u2028"]
    values: list[Any] = [0.0, -0.0, 0.5, 1 / 3, 1e16, 2, True, False, "cell/x", float("nan")]
    for i in range(3000):
        scores = []
        for n in range(rng.randint(0, 12)):
            name = rng.choice([f"s.{n}", f"é.{n}", _Name(f"n.{n}")]) if rng.random() < 0.1 else f"s.{n}"
            if rng.random() < 0.5:
                reason = rng.choice(texts) if rng.random() < 0.7 else f"no date (https://x.example/{i}/{n})"
                scores.append(Score(name, None, reason, comment=rng.choice([None, rng.choice(texts)])))
            else:
                scores.append(Score(name, rng.choice(values), comment=rng.choice([None, None, f"c {i}"])))
        metadata = rng.choice([{"provider": "p"}, {"é": "ü\"\x00", "n": "1"}, {"n": 1}, {"a": ["x"]}, {}])
        result = TraceResult(trace_id=f"t{i}", scores={s.name: s for s in scores}, metadata=metadata)
        data, text = result.encoded()
        assert text == _reference(result) and data == result.to_json()


def test_a_new_pair_among_known_ones_is_written_where_it_stands() -> None:
    """A reason new on this trace between known pairs (looked up in C, then written), and one that is not text."""
    result_module._PAIRS.clear()
    TraceResult("t", scores={"a": Score("a", None, "r1"), "b": Score("b", None, "r2")}).encoded()
    mixed = {"a": Score("a", None, "r1"), "c": Score("c", None, "new"), "b": Score("b", None, "r2")}
    odd = {"a": Score("a", None, "r1"), "d": Score("d", None, 3)}  # type: ignore[arg-type]
    for scores in (mixed, mixed | {"e": Score("e", None, "newer")}, odd):
        result = TraceResult("t", scores=scores)
        assert result.encoded()[1] == _reference(result)
