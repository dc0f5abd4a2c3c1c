"""``score_metadata`` (the per-score view's metadata column) writes exactly ``json.dumps``'s compact ASCII text,
also where its key-by-key writer hands over to the json module."""

from __future__ import annotations

import json
from datetime import date
from types import MappingProxyType
from typing import Any

import pytest

from tracescore.result import TraceResult, _strict
from tracescore.scores import Score
from tracescore.store.scores_view import score_metadata


@pytest.mark.parametrize(
    "metadata",
    [
        {"k": 5, "missing": [], "rate": 0.5, "flag": True, "none": None, "name": "naïve ✓", "ids": ["a", "é"]},
        {"nested": {"a": [1, 2.5, None]}, "tuple": ("x", 1), "neg": -0.0, "big": 10**30, "when": date(2026, 1, 2)},
        {"nan": float("nan")},
        {"inner": {"inf": float("inf")}},
        {"mixed": ["a", 1]},
        {3: "int key"},
        {"sub": MappingProxyType({"a": 1})},
    ],
)
def test_score_metadata_is_json_dumps_of_the_metadata(metadata: dict[Any, Any]) -> None:
    result = TraceResult("t", scores={"a.b": Score("a.b", 1.0, metadata=metadata), "c": Score("c", None, "r")})
    try:
        expected = json.dumps({"a.b": metadata}, default=str, separators=(",", ":"), allow_nan=False)
    except ValueError:
        expected = json.dumps(_strict({"a.b": metadata}), default=str, separators=(",", ":"))
    assert score_metadata(result) == expected
    assert score_metadata(result) == expected  # the second time from the cached names


def test_no_metadata_no_column_value() -> None:
    assert score_metadata(TraceResult("t", scores={"a": Score("a", 1.0), "b": Score("b", None, "r")})) is None
