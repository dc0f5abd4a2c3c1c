"""#30 item 2 (experiments): tracescore's item and run evaluators inside the real ``Langfuse.run_experiment`` (SDK 5)
against the loopback fake Langfuse.

The cookbook example's task returns each case's trace (labels stripped: the item's ``expected_output`` carries
them, a gold answer once as the ``reference`` synonym). The scores the fake receives must be ``tracescore score``'s
result line for the same canonical traces: one per present score with the catalog's data type, none for an absent
score, one TEXT ``tracescore.absent`` listing them; the run evaluator's contingency cells land on the experiment run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.langfuse import FakeLangfuse
from tests.fakes.langsmith_runs import load_samples
from tests.integrations.conftest import cli_lines, cookbook
from tracescore.catalog import entry
from tracescore.integrations import langfuse as ts

langfuse = pytest.importorskip("langfuse")

SAMPLES = {case["id"]: case for case in load_samples(10)}


def _item(n: int, case: dict[str, Any]) -> dict[str, Any]:
    labels = {k: v for k, v in (case.get("labels") or {}).items() if v is not None}
    if n % 2 and "gold_answer" in labels:
        labels["reference"] = labels.pop("gold_answer")  # a synonym
    return {"input": {"case": case["id"], "question": case["question"]}, "expected_output": labels}


def test_run_experiment_posts_one_score_per_present_score_with_the_catalog_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langfuse_pair: tuple[FakeLangfuse, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    expected = cli_lines(tmp_path, list(SAMPLES.values()))
    fake, client = langfuse_pair
    items = [_item(n, c) for n, c in enumerate(SAMPLES.values())]
    result = cookbook("langfuse_experiment").experiment(client, items, max_concurrency=1)  # the README's example
    client.flush()
    scores = list(fake.scores.values())

    assert len(result.item_results) == 10
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for s in scores:
        if s.get("traceId"):
            by_trace.setdefault(s["traceId"], []).append(s)
    case_of = {r.trace_id: r.item["input"]["case"] for r in result.item_results}
    assert set(by_trace) == set(case_of)
    for trace_id, got in by_trace.items():
        line = expected[case_of[trace_id]]
        names = [s["name"] for s in got]
        assert len(names) == len(set(names)), names
        scored = {s["name"]: s for s in got if s["name"] != ts.ABSENT_KEY}
        assert set(scored) == set(line["scores"])  # none for an absent score
        for name, value in line["scores"].items():
            kind = entry(name).kind  # type: ignore[union-attr]
            assert scored[name]["dataType"] == kind, name
            if kind == "BOOLEAN":
                assert scored[name]["value"] == (1 if value else 0), name
            elif kind == "CATEGORICAL":
                assert scored[name]["value"] == value, name
            else:
                assert scored[name]["value"] == pytest.approx(value), name
            assert scored[name].get("comment") == line.get("comments", {}).get(name), name
        [absent] = [s for s in got if s["name"] == ts.ABSENT_KEY]
        assert absent["dataType"] == "TEXT"
        assert absent["value"].splitlines() == [f"{n}: {r}" for n, r in line["missing"].items()]
    cells = {s["name"].split(":", 1)[1]: s["value"] for s in scores if s.get("datasetRunId")}
    counted: dict[str, int] = {}
    for line in expected.values():
        cell = line["scores"].get("diagnosis", ts.UNDECIDED)
        counted[cell] = counted.get(cell, 0) + 1
    assert {c: v for c, v in cells.items() if v} == counted and sum(cells.values()) == 10


def test_an_output_that_is_no_trace_gives_one_text_absent_evaluation() -> None:
    [evaluator] = ts.evaluators()
    [only] = evaluator(input={"q": "?"}, output="just the answer", expected_output=None, metadata=None)
    assert (only.name, only.data_type) == (ts.ABSENT_KEY, "TEXT")
    assert only.value.startswith("trace not scored: the task output is not a trace")


def test_a_text_expected_output_is_the_gold_answer_and_stages_filter() -> None:
    case = dict(SAMPLES["tr-0003"], labels=None)
    [evaluator] = ts.evaluators(stages=["answer"])
    said = {e.name: e for e in evaluator(input={}, output=case, expected_output="Tenzing Norgay and Edmund Hillary",
                                         metadata={"expected_answer_contains": ["Hillary", "1953"]})}
    assert {n for n in said if n != ts.ABSENT_KEY} == {"answer.correct", "answer.token_f1", "answer.exact_match"}
    assert said["answer.correct"].data_type == "BOOLEAN" and said["answer.correct"].value in (0.0, 1.0)
    assert said[ts.ABSENT_KEY].value.splitlines() == ["answer.semantic_match: no judge configured"]
