"""#30 item 1: tracescore's evaluators inside the real ``langsmith.evaluate`` against the loopback fake LangSmith.

The target replays ten cookbook traces as ``@traceable`` retriever and fetch runs; the dataset's examples carry the
labels (some in ``metadata``, some gold answers as the ``reference`` synonym). The feedback the fake receives must be
the result line ``tracescore score`` writes for the same canonical traces: the same keys, the same values (the SDK
rounds float scores to 4 decimals), the same comments, and no feedback for an absent score, whose name and reason
are listed in the one ``tracescore.absent`` feedback of the run. ``evaluate_existing`` over the same experiment (the
runs and child runs read back from the server as ``Run`` objects) gives the same feedback.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_experiments import add_dataset
from tests.fakes.langsmith_runs import load_samples
from tests.integrations.conftest import cli_lines, cookbook
from tracescore.integrations import langsmith as ts

langsmith = pytest.importorskip("langsmith")
from langsmith.evaluation import evaluate_existing  # noqa: E402

SAMPLES = {case["id"]: case for case in load_samples(10)}


def _example(n: int, trace: dict[str, Any]) -> dict[str, Any]:
    labels = {k: v for k, v in (trace.get("labels") or {}).items() if v is not None}
    outputs, metadata = dict(labels), {}
    if n % 2 and "gold_answer" in outputs:
        outputs["reference"] = outputs.pop("gold_answer")  # a synonym
    if n % 3 == 0 and "required_doc_ids" in outputs:
        metadata["required_doc_ids"] = outputs.pop("required_doc_ids")  # labels in the example's metadata
    return {"inputs": {"case": trace["id"], "question": trace["question"]}, "outputs": outputs, "metadata": metadata}


def _by_run(fake: FakeLangSmith) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for f in fake.feedback.values():
        if f.get("run_id") is not None:
            found.setdefault(f["run_id"], []).append(f)
    return found


def _said(feedback: list[dict[str, Any]]) -> dict[str, tuple[Any, Any, Any]]:
    return {f["key"]: (f.get("score"), f.get("value"), f.get("comment")) for f in feedback}


def _settle(fake: FakeLangSmith, session_keys: int, bound: float = 30.0) -> None:
    """Wait (at most ``bound`` s) for the summary feedback, which the SDK submits from its own executor."""
    deadline = time.monotonic() + bound
    while sum(1 for f in list(fake.feedback.values()) if f.get("run_id") is None) < session_keys:
        assert time.monotonic() < deadline, "the summary feedback never arrived"
        time.sleep(0.05)


# evaluate() hands each summary result to create_feedback with its `metadata` field, which the SDK 0.15 warns it no
# longer uses (DeprecationWarning); under this suite's warnings-as-errors that warning would kill the write inside the
# SDK's executor thread, silently. The warning is the SDK's own, about its own call: let it be a warning here.
@pytest.mark.filterwarnings("ignore:The following arguments are no longer used:DeprecationWarning")
def test_evaluate_writes_one_feedback_per_present_score_equal_to_score(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray tracescore.toml
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    expected = cli_lines(tmp_path, list(SAMPLES.values()))
    with FakeLangSmith() as fake:
        add_dataset(fake, "search-agent-cases", [_example(n, t) for n, t in enumerate(SAMPLES.values())])
        client = langsmith.Client(api_url=fake.url, api_key="fake-key", auto_batch_tracing=False)
        # the README's example
        results = cookbook("langsmith_evaluate").run(client, "search-agent-cases", max_concurrency=0)
        rows = list(results)
        client.flush()
        _settle(fake, len(ts.summary_evaluator()([], [])["results"]))
        roots = {r["id"]: r for r in fake.runs if r["parent_run_id"] is None and r["name"] == "search_agent"}
        by_run = _by_run(fake)
        session_feedback = [f for f in fake.feedback.values() if f.get("run_id") is None]
        # the same experiment again through evaluate_existing: runs and child runs read back from the server
        fake.feedback.clear()
        evaluate_existing(results.experiment_name, evaluators=ts.evaluators(), client=client, load_nested=True,
                          max_concurrency=0)
        client.flush()
        again = {run_id: _said(fs) for run_id, fs in _by_run(fake).items()}

    assert again == {run_id: _said(fs) for run_id, fs in by_run.items()}  # the same feedback, run by run
    assert len(rows) == len(roots) == 10
    assert not fake.duplicates()
    seen_absent = 0
    for run_id, root in roots.items():
        line = expected[root["inputs"]["inputs"]["case"]]
        got = by_run[run_id]
        keys = [f["key"] for f in got]
        assert len(keys) == len(set(keys)), keys  # one feedback per score
        scored = {f["key"]: f for f in got if f["key"] != ts.ABSENT_KEY}
        assert set(scored) == set(line["scores"]), run_id  # no feedback for an absent score
        for name, value in line["scores"].items():
            f = scored[name]
            if isinstance(value, str):
                assert f["value"] == value and f.get("score") is None, name
            elif isinstance(value, bool):
                assert f["score"] is value, name
            else:
                assert f["score"] == pytest.approx(round(value, 4), abs=1e-9), name
            assert f.get("comment") == line.get("comments", {}).get(name), name
        absent = [f for f in got if f["key"] == ts.ABSENT_KEY]
        if line["missing"]:
            seen_absent += 1
            assert len(absent) == 1 and absent[0].get("score") is None and absent[0].get("value") is None
            assert absent[0]["comment"].splitlines() == [f"{n}: {r}" for n, r in line["missing"].items()]
        else:
            assert absent == []
    assert seen_absent == 10  # without a judge every judged score is absent, with "no judge configured"
    assert {"retrieval.recall_at_5", "answer.correct", "diagnosis"} <= {k for fs in by_run.values() for f in fs
                                                                         for k in [f["key"]]}
    # the summary evaluator: the experiment's contingency cells, counted as `report` counts them
    cells = {f["key"]: f["score"] for f in session_feedback}
    counted: dict[str, int] = {}
    for line in expected.values():
        cell = line["scores"].get("diagnosis", ts.UNDECIDED)
        counted[cell] = counted.get(cell, 0) + 1
    assert sum(cells.values()) == 10
    assert {k.split(":", 1)[1]: v for k, v in cells.items() if v} == counted
