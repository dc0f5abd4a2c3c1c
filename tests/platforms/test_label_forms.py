"""The label forms of #34 arrive from every place labels come from: trace metadata, a Langfuse dataset item, a
LangSmith example (and LangSmith run metadata), and score from there as from a JSONL trace."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tests.fakes.langfuse_data import make_trace
from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore.adapters.fields import extract_labels
from tracescore.engine.pipeline import score_trace
from tracescore.platforms.langfuse.adapter import trace_from_observations
from tracescore.platforms.langsmith.adapter import trace_from_langsmith
from tracescore.scorers import default_scorers
from tracescore.trace import Labels, Trace

FORMS = {
    "required_doc_ids": [["faq-returns", "policy-returns-v4"], "shipping-v2", ["kb-1"]],
    "gold_answers": ["30 days", "thirty calendar days"],
    "gold_answer": "a month",
}


def test_metadata_labels_accept_groups_and_gold_answers() -> None:
    labels = extract_labels({"labels": FORMS}, ["labels"])
    assert labels == Labels(**FORMS)  # type: ignore[arg-type]
    # a hostile group in metadata is dropped as any wrong-typed metadata label is, the rest kept
    kept = extract_labels({"labels": {**FORMS, "required_doc_ids": [[]]}}, ["labels"])
    assert kept.required_doc_ids is None and kept.gold_answers == FORMS["gold_answers"]


def test_a_langfuse_dataset_item_carries_the_forms() -> None:
    trace, observations = make_trace(7, datetime(2026, 11, 20, 9, 0, tzinfo=UTC))  # type: ignore[arg-type]
    payload = {"id": trace["id"], "observations": observations}
    payload["experiment_item"] = {
        "experimentName": "exp-1",
        "experimentItemId": "item-9",
        "expectedOutput": json.dumps(FORMS),
    }
    labels = trace_from_observations(payload).labels
    assert labels.required_doc_ids == FORMS["required_doc_ids"] and labels.gold_answers == FORMS["gold_answers"]


@pytest.mark.parametrize("experiment", [False, True], ids=["labels-in-metadata", "labels-in-example"])
def test_a_langsmith_trace_carries_the_forms_and_scores_as_the_jsonl_trace(experiment: bool) -> None:
    project = "11111111-1111-4111-8111-111111111111"
    scorers = default_scorers()
    for sample in load_samples(limit=5):
        sample = {**sample, "labels": {**(sample.get("labels") or {}), **FORMS}}
        runs, example = run_tree(sample, project, experiment=experiment)
        bundle = {"id": runs[0]["id"], "project": {"id": project, "name": "p"}, "root": runs[0], "runs": runs[1:],
                  "example": example, "error": None}  # fmt: skip
        mapped, original = trace_from_langsmith(bundle), Trace.model_validate(sample)
        assert mapped.labels == original.labels and mapped.labels.required_doc_ids == FORMS["required_doc_ids"]
        assert score_trace(mapped, scorers).values == score_trace(original, scorers).values, sample["id"]
