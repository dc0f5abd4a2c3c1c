"""The label forms of #34 arrive from every place labels come from: trace metadata, a Langfuse dataset item, a
LangSmith example (and LangSmith run metadata), and score from there as from a JSONL trace: groups of alternatives,
several gold answers, and a multi-hop case's ``hops``."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tests.fakes.langfuse_data import make_trace
from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore.adapters.fields import extract_labels
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.langfuse.adapter import trace_from_observations
from tracescore.platforms.langsmith.adapter import trace_from_langsmith
from tracescore.scorers.hops import RETRIEVAL_HOP_ORDER, RETRIEVAL_HOPS_FOUND
from tracescore.trace import Labels, Trace

FORMS = {
    "required_doc_ids": [["faq-returns", "policy-returns-v4"], "shipping-v2", ["kb-1"]],
    "gold_answers": ["30 days", "thirty calendar days"],
    "gold_answer": "a month",
}
HOPS = {"hops": [["doc-b", "doc-b-mirror"], "doc-a"], "gold_answer": "a month"}  # read B, then find A


def test_metadata_labels_accept_groups_and_gold_answers() -> None:
    labels = extract_labels({"labels": FORMS}, ["labels"])
    assert labels == Labels(**FORMS)  # type: ignore[arg-type]
    assert extract_labels({"labels": HOPS}, ["labels"]) == Labels(**HOPS)  # type: ignore[arg-type]
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
    trace, observations = make_trace(7, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), labels=False)  # type: ignore[arg-type]
    payload = {"id": trace["id"], "observations": observations, "experiment_item": payload["experiment_item"]}
    payload["experiment_item"]["expectedOutput"] = json.dumps(HOPS)
    labels = trace_from_observations(payload).labels
    assert labels.hops == HOPS["hops"] and labels.required_doc_ids is None


def test_a_langfuse_trace_with_hops_in_its_metadata_scores_the_hops() -> None:
    trace, observations = make_trace(8, datetime(2026, 11, 20, 9, 0, tzinfo=UTC))  # type: ignore[arg-type]
    # hop 1: the help page (a web_search hit at step 2, fetched at step 3); hop 2: the news page, a hit of that same
    # step 2, so it came back before hop 1 was fetched: both found, out of order
    hops = ["https://help.example.com/returns", ["https://news.example.org/x", "doc-elsewhere"]]
    observations[0]["metadata"] = {"labels": {"hops": hops}}  # the root observation's metadata, where SDKs put it
    mapped = trace_from_observations({"id": trace["id"], "observations": observations})
    assert mapped.labels.hops == hops and mapped.labels.required_doc_ids is None
    values = score_trace(mapped, deterministic_scorers()).values
    assert values[RETRIEVAL_HOPS_FOUND] == 1.0 and values[RETRIEVAL_HOP_ORDER] is False
    observations[0]["metadata"] = {"labels": {"hops": [hops[0], "doc-nowhere"]}}
    values = score_trace(trace_from_observations({"id": trace["id"], "observations": observations}),
                         deterministic_scorers()).values  # fmt: skip
    assert values[RETRIEVAL_HOPS_FOUND] == 0.5 and RETRIEVAL_HOP_ORDER not in values  # absent: a hop never found


@pytest.mark.parametrize("forms", [FORMS, HOPS], ids=["groups", "hops"])
@pytest.mark.parametrize("experiment", [False, True], ids=["labels-in-metadata", "labels-in-example"])
def test_a_langsmith_trace_carries_the_forms_and_scores_as_the_jsonl_trace(experiment: bool, forms: dict) -> None:
    project = "11111111-1111-4111-8111-111111111111"
    scorers = deterministic_scorers()
    for sample in load_samples(limit=5):
        labels = {k: v for k, v in (sample.get("labels") or {}).items() if k not in forms and k != "required_doc_ids"}
        sample = {**sample, "labels": {**labels, **forms}}
        runs, example = run_tree(sample, project, experiment=experiment)
        bundle = {"id": runs[0]["id"], "project": {"id": project, "name": "p"}, "root": runs[0], "runs": runs[1:],
                  "example": example, "error": None}  # fmt: skip
        mapped, original = trace_from_langsmith(bundle), Trace.model_validate(sample)
        assert mapped.labels == original.labels
        key = "hops" if "hops" in forms else "required_doc_ids"
        assert getattr(mapped.labels, key) == forms[key]
        values = score_trace(mapped, scorers).values
        assert values == score_trace(original, scorers).values, sample["id"]
        assert (RETRIEVAL_HOPS_FOUND in values) == (key == "hops"), sample["id"]
