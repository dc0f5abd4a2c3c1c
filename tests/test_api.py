"""The in-process API: score dicts or Traces, report on the results, one DataFrame row per trace."""

from __future__ import annotations

import json

import pytest

import tracescore
from tests.conftest import REPO
from tracescore.trace import Trace

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"


def _dicts() -> list[dict[str, object]]:
    return [json.loads(line) for line in SAMPLES.read_text().splitlines()]


def test_dicts_and_traces_score_the_same_and_a_bad_dict_is_a_result_with_its_error() -> None:
    dicts = _dicts()[:5]
    from_dicts = tracescore.score_traces([*dicts, {"id": "broken", "steps": "nope"}], k=3)
    from_traces = tracescore.score_traces([Trace.model_validate(d) for d in dicts], k=3)
    assert [r.values for r in from_dicts[:5]] == [r.values for r in from_traces]
    assert "retrieval.recall_at_3" in from_dicts[0].scores
    assert from_dicts[5].errors and from_dicts[5].line == 6 and not from_dicts[5].scores
    assert from_dicts[0].scores["grounding.rate"].reason  # no judge: absent with the reason, never 0


def test_report_counts_the_cells_of_the_results() -> None:
    results = tracescore.score_traces(_dicts())
    built = tracescore.report(results)
    assert built.overall is not None and built.source == "python"


def test_to_pandas_is_one_row_per_trace_with_absent_scores_missing() -> None:
    pytest.importorskip("pandas")
    results = tracescore.score_traces(_dicts())
    frame = tracescore.to_pandas(results)
    assert len(frame) == 38 and "retrieval.recall_at_5" in frame.columns
    assert frame["grounding.rate"].isna().all()
