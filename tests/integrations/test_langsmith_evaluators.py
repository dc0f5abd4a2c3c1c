"""#30 item 1: the evaluators on the SDK's own ``Run`` / ``Example`` objects (as ``evaluate_existing`` hands them
over: a root run loaded with its child runs), their stage filter, and a run that is not a readable trace."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore import score_traces
from tracescore.errors import ConfigError
from tracescore.integrations import langsmith as ts
from tracescore.report.verdicts import score_stage

schemas = pytest.importorskip("langsmith.schemas")
PROJECT = "00000000-0000-4000-8000-0000000000aa"


def _sdk_objects(trace: dict[str, Any], *, experiment: bool) -> tuple[Any, Any]:
    runs, example = run_tree(trace, PROJECT, experiment=experiment)
    root, children = runs[0], runs[1:]
    run = schemas.Run(**root, child_runs=[schemas.Run(**child) for child in children])
    return run, (schemas.Example(**example) if example is not None else None)


@pytest.mark.parametrize("experiment", [True, False])
def test_sdk_runs_score_as_the_python_api_scores_the_canonical_trace(experiment: bool) -> None:
    [evaluator] = ts.evaluators()
    for trace in load_samples(6):
        run, example = _sdk_objects(trace, experiment=experiment)
        results = evaluator(run, example)["results"]
        [expected] = score_traces([trace])
        present = {r["key"]: r.get("score", r.get("value")) for r in results if r["key"] != ts.ABSENT_KEY}
        assert present == expected.values, trace["id"]
        [absent] = [r for r in results if r["key"] == ts.ABSENT_KEY]
        assert "score" not in absent and "value" not in absent
        assert absent["comment"].splitlines() == [f"{n}: {why}" for n, why in expected.missing.items()]


def test_stages_keep_only_their_scores_and_absences() -> None:
    trace = load_samples(1)[0]
    run, example = _sdk_objects(trace, experiment=True)
    everything = ts.evaluators()[0](run, example)["results"]
    retrieval = ts.evaluators(stages=["retrieval"])[0](run, example)["results"]
    assert [r for r in retrieval if r["key"] != ts.ABSENT_KEY] == [
        r for r in everything if score_stage(r["key"]) == "retrieval"  # the catalog's stage (trajectory.*: its own)
    ]
    assert {r["key"] for r in retrieval} - {ts.ABSENT_KEY} >= {"retrieval.recall_at_5", "retrieval.retrieved_any"}
    assert all(r["key"] != ts.ABSENT_KEY for r in retrieval)  # no retrieval score is absent on this trace
    with pytest.raises(ConfigError, match=r"unknown stage\(s\) 'retreival'.*retrieval"):
        ts.evaluators(stages=["retreival"])


def test_a_run_that_is_no_trace_gives_one_absent_result_with_the_reason() -> None:
    results = ts.evaluators()[0]({"name": "agent", "run_type": "chain", "inputs": {}}, None)["results"]
    reason = "trace not scored: record: LangSmith record has no root run id"
    assert results == [{"key": ts.ABSENT_KEY, "comment": reason}]
