"""The store columns read from a result line's dict (``not_computed_of``, ``result_rows(..., missing)``) and the
metadata column picked in C are the ones the pass over the scores writes, on every kind of absence reason."""

from __future__ import annotations

import pickle
import random
import re
from pathlib import Path
from typing import Any

from tracescore.reasons import REASONS
from tracescore.result import TraceResult
from tracescore.scores import Score
from tracescore.store import current_view
from tracescore.store.current_view import not_computed, not_computed_of
from tracescore.store.db import result_rows
from tracescore.store.scores_view import score_metadata

_WRITTEN = [re.sub(r"\{[^{}]*\}", "x (https://a.example/1)", r.text) for r in REASONS]  # each field filled
_ODD = [None, "", "not computed", "x", "naïve ✓"]


def _random_scores(rng: random.Random) -> list[tuple[str, Any, str | None, dict[str, Any]]]:
    return [
        (f"s{rng.randrange(8)}", rng.choice([None, None, rng.random(), 1.0]), rng.choice(_WRITTEN + _ODD),
         rng.choice([{}, {}, {"a": rng.randrange(3)}, {"b": [], "c": "d"}]))
        for _ in range(rng.randrange(11))
    ]  # fmt: skip


def _result(scores: list[tuple[str, Any, str | None, dict[str, Any]]]) -> TraceResult:
    return TraceResult("t", scores={n: Score(n, v, r if v is None else None, metadata=m) for n, v, r, m in scores})


def _old_score_metadata(result: TraceResult) -> str | None:
    """The dict comprehension the metadata column was picked with."""
    metadata = {name: s.metadata for name, s in result.scores.items() if s.metadata}
    return score_metadata(TraceResult("t", scores={n: Score(n, 1.0, metadata=m) for n, m in metadata.items()}))


def test_the_columns_from_the_line_are_the_columns_from_the_scores() -> None:
    rng = random.Random(33)
    for i in range(3000):
        result = _result(_random_scores(rng))
        if i % 2:  # learnt anew, not from the caches of an earlier example
            for cache in (current_view._TEXT, current_view._KEPT, current_view._UNCOMPUTED):
                cache.clear()
        data, line = result.encoded()
        expected = not_computed(result)
        assert not_computed_of(data["missing"]) == expected
        for cache in (current_view._TEXT, current_view._KEPT):
            cache.clear()
        assert not_computed_of(data["missing"]) == expected
        assert result_rows("r", result, line, data["missing"]) == result_rows("r", result, line)
        assert score_metadata(result) == _old_score_metadata(result)


def test_the_columns_of_benchmark_results(tmp_path: Path) -> None:
    """Light and heavy benchmark-shaped results (a stale reason naming the trace's URLs: a new tuple each trace)."""
    import benchmarks.throughput as bench
    from tracescore.adapters.jsonl import trace_from_json
    from tracescore.engine.pipeline import score_trace
    from tracescore.engine.recipe import ScorerPlan

    scorers = ScorerPlan(no_judge_reason="judge turned off (--no-judge)").scorers(None)
    for write in (bench.write_light_file, bench.write_file):
        path = tmp_path / "t.jsonl"
        write(path, 60)
        for raw in path.read_bytes().splitlines():
            result = pickle.loads(pickle.dumps(score_trace(trace_from_json(raw), scorers)))
            data, line = result.encoded()
            assert result_rows("r", result, line, data["missing"]) == result_rows("r", result, line)
