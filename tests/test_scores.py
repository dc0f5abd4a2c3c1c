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
