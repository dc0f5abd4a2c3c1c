"""``Score``: immutable, an int value kept as a float (as the pydantic model did), equal by value, and picklable to
and from worker processes."""

from __future__ import annotations

import copy
import pickle

import pytest

from tracescore.scores import Score, absent, score


def test_a_count_is_numeric_and_a_bool_stays_a_bool() -> None:
    assert repr(score("citation.fabricated_count", 0).value) == "0.0"
    assert score("answer.correct", True).value is True and score("answer.correct", True).data_type == "BOOLEAN"
    assert score("diagnosis", "retrieval_pass/right").data_type == "CATEGORICAL"
    assert absent("grounding.rate", "no judge").present is False


def test_a_score_cannot_be_changed_in_place() -> None:
    s = score("retrieval.recall_at_5", 0.5, k=5)
    with pytest.raises(AttributeError, match="immutable"):
        s.value = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del s.reason  # type: ignore[misc]
    moved = s.with_metadata({"k": 10})
    assert (s.metadata, moved.metadata, moved.value) == ({"k": 5}, {"k": 10}, 0.5)


def test_equal_by_value_and_survives_pickle_and_deepcopy() -> None:
    s = Score(name="x", value=2, reason=None, comment="c", metadata={"a": [1]})
    assert pickle.loads(pickle.dumps(s)) == s == copy.deepcopy(s)
    assert s != Score(name="x", value=2.5, comment="c", metadata={"a": [1]})
    assert s != Score(name="x", value=2, comment="c", metadata={"a": [2]})
    assert Score(name="y").metadata == {} and Score(name="y").metadata is not Score(name="y").metadata


def _slow(name: str, value: object, reason: object, comment: object, metadata: object) -> Score:
    """A Score built the way it was before ``scores._make``: each slot set through its member descriptor."""
    made = object.__new__(Score)
    for slot, item in zip(
        ("name", "value", "reason", "comment", "metadata"),
        (name, float(value) if type(value) is int else value, reason, comment, metadata),
        strict=True,
    ):
        getattr(Score, slot).__set__(made, item)
    return made


@pytest.mark.parametrize(
    "value", [None, 0, 3, -7, 2**70, 0.0, 0.5, float("inf"), True, False, "", "retrieval_fail/wrong", 1.0]
)
def test_the_fast_construction_is_the_slow_one(value: object) -> None:
    """score(), absent() and Score() fill a _Fields and give it Score's class: the same type, the same objects in
    every slot (an int made a float, a bool kept) as setting each slot through its descriptor, and the same repr,
    pickle and immutability."""
    metadata = {"k": 5, "missing": ["doc-1"]}
    for made, slow in (
        (score("a.b", value, comment="c", **metadata), _slow("a.b", value, None, "c", metadata)),  # type: ignore[arg-type]
        (absent("a.b", "why", **metadata), _slow("a.b", None, "why", None, metadata)),
        (Score("a.b", value, "r", None, metadata), _slow("a.b", value, "r", None, metadata)),  # type: ignore[arg-type]
        (Score("a.b"), _slow("a.b", None, None, None, {})),
    ):
        assert type(made) is Score and made == slow and repr(made) == repr(slow)
        for slot in ("name", "value", "reason", "comment", "metadata"):
            got, want = getattr(made, slot), getattr(slow, slot)
            assert type(got) is type(want) and (got is want or got == want or got != got), slot
        if made.reason is None and made.name == "a.b" and made.metadata:  # score(): the value given
            assert type(made.value) is (float if type(value) is int else type(value))
        assert pickle.loads(pickle.dumps(made)) == made and made.data_type == slow.data_type
        with pytest.raises(AttributeError, match="immutable"):
            made.name = "other"  # type: ignore[misc]
        with pytest.raises(AttributeError, match="immutable"):
            made.__class__ = object  # type: ignore[assignment]
