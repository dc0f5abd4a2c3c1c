"""Langfuse adapter: real exported traces map cleanly; search/fetch steps, question, answer and labels are found."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tests.conftest import SHARED_DATA
from tests.fakes.langfuse_data import make_trace
from tracescore.adapters.mapping import MappingConfig
from tracescore.errors import AdapterError
from tracescore.platforms.langfuse.adapter import langfuse_adapter, trace_from_observations
from tracescore.trace import FetchStep, SearchStep

DATA = SHARED_DATA / "langfuse_traces"


def test_chat_shapes_give_the_user_question_and_assistant_answer() -> None:
    data = json.loads((DATA / "worker_trace_fixtures/langgraph-python-2025-08-22.trace.json").read_text())
    trace = trace_from_observations(data)
    assert trace.question == "Search the web for 'example' and summarize."
    assert trace.answer.startswith("The search for")


def _payload(**kwargs: object) -> dict[str, object]:
    trace, observations = make_trace(7, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), **kwargs)  # type: ignore[arg-type]
    return {"id": trace["id"], "observations": observations}


def test_search_and_fetch_steps_from_source_rows() -> None:
    trace = trace_from_observations(_payload())
    retriever, web, fetch = trace.steps
    assert isinstance(retriever, SearchStep) and retriever.tool == "kb_retriever" and retriever.query == "return window"
    assert [(h.rank, h.doc_id, h.url) for h in retriever.hits] == [
        (1, "policy-returns-v4", "https://help.example.com/returns"),
        (2, "blog-returns", "https://blog.example.com/returns"),
    ]
    assert isinstance(web, SearchStep) and web.query == "example returns days" and len(web.hits) == 2
    assert isinstance(fetch, FetchStep)
    assert (fetch.url, fetch.status, fetch.text) == (
        "https://help.example.com/returns",
        200,
        "Returns policy. Returns within 30 days.",
    )
    assert trace.question == "How many days do I have to return an item?"
    assert trace.answer.startswith("You can return items within")
    assert trace.labels.required_doc_ids == ["policy-returns-v4"]
    assert trace.timestamp == datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    assert trace.metadata["provider"] == "langfuse"


def test_mapping_config_changes_what_counts_as_search() -> None:
    adapter = langfuse_adapter(MappingConfig(search_types=[], search_tools=["web_*"]))
    trace = adapter(_payload())
    assert [s.tool for s in trace.searches] == ["web_search"]


def test_openinference_documents_in_metadata() -> None:
    payload = _payload()
    rows = payload["observations"]
    assert isinstance(rows, list)
    rows[1] = dict(
        rows[1],
        output=None,
        metadata={
            "retrieval.documents.0.document.id": "kb-1",
            "retrieval.documents.0.document.content": "alpha",
            "retrieval.documents.0.document.score": 0.9,
        },
    )
    trace = trace_from_observations(payload)
    assert [(h.rank, h.doc_id, h.snippet) for h in trace.searches[0].hits] == [(1, "kb-1", "alpha")]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("[]", "not a Langfuse trace"),
        ({"observations": []}, "without an id"),
        ({"id": "t", "observations": []}, "trace t: no observations"),
        ({"id": "t", "observations": [{"id": "o1", "startTime": "yesterday"}]}, "observation 'o1' has no readable"),
    ],
)
def test_unmappable_payloads_name_the_trace_and_problem(payload: object, message: str) -> None:
    with pytest.raises(AdapterError, match=message):
        trace_from_observations(payload)


def test_experiment_labels_come_from_the_dataset_item_first() -> None:
    payload = _payload()
    payload["experiment_item"] = {
        "experimentName": "exp-1",
        "experimentItemId": "item-9",
        "expectedOutput": json.dumps("30 days"),
        "experimentItemMetadata": {"required_doc_ids": ["kb-7"]},
    }
    trace = trace_from_observations(payload)
    assert trace.labels.gold_answer == "30 days"  # from the dataset item's expected output
    assert trace.labels.required_doc_ids == ["kb-7"]  # the item's metadata wins over the trace's metadata
    assert trace.labels.expected_answer_contains == ["30 days"]  # not on the item: kept from trace metadata
    assert (trace.metadata["experiment"], trace.metadata["dataset_item_id"]) == ("exp-1", "item-9")


def test_an_empty_answer_field_is_an_empty_answer_not_the_output_as_json() -> None:
    data = json.loads((DATA / "worker_trace_fixtures/langgraph-python-2025-08-22.trace.json").read_text())
    data["trace"]["output"] = {"answer": "", "intermediate": {"steps": 3}}
    for observation in data["observations"]:
        observation["output"] = (
            {"answer": ""} if observation.get("parentObservationId") is None else observation.get("output")
        )
    trace = trace_from_observations(data)
    assert "intermediate" not in trace.answer and "{" not in trace.answer
