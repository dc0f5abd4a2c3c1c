"""LangSmith adapter: run trees → Trace, on recorded real runs and on run trees built from the sample traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore.adapters.mapping import MappingConfig
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.errors import AdapterError
from tracescore.platforms.langsmith.adapter import langsmith_adapter, merge_ingest, trace_from_langsmith
from tracescore.platforms.registry import get_adapter
from tracescore.trace import Trace

RECORDED = SHARED_DATA / "langsmith_runs"
RECORDED_FILES = sorted(RECORDED.glob("*.json"))
PROJECT = "11111111-1111-4111-8111-111111111111"


def _bundle(trace: dict, *, experiment: bool = False) -> dict:
    runs, example = run_tree(trace, PROJECT, experiment=experiment)
    return {
        "id": runs[0]["id"],
        "project": {"id": PROJECT, "name": "p"},
        "root": runs[0],
        "runs": runs[1:],
        "example": example,
        "error": None,
    }


def test_recorded_runs_are_present() -> None:
    assert len(RECORDED_FILES) == 7, f"recorded LangSmith runs expected in {RECORDED}"


@pytest.mark.parametrize("path", RECORDED_FILES, ids=lambda p: p.stem)
def test_recorded_runs_map_without_error(path: Path) -> None:
    body = json.loads(path.read_text(encoding="utf-8"))
    trace = get_adapter("langsmith")(body)
    assert trace.id == body["post"][0]["id"]
    assert trace.question  # the last user message of the chat input
    assert trace.answer  # choices[0].message.content of the merged patch
    assert trace.steps == []  # an llm run: no search, no fetch
    result = score_trace(trace, deterministic_scorers())
    assert result.ok
    assert "retrieval" in (result.missing.get("retrieval.recall_at_5") or "") or result.missing["diagnosis"]


def test_recorded_js_patch_without_id_is_merged_by_trace() -> None:
    body = json.loads((RECORDED / "langsmith_js_wrap_openai_default.json").read_text(encoding="utf-8"))
    assert "id" not in body["patch"][0]
    runs = merge_ingest(body)
    assert len(runs) == 1 and runs[0]["outputs"] == body["patch"][0]["outputs"]
    assert trace_from_langsmith(body).answer == "Howdy! How can I assist you today?"


@pytest.mark.parametrize("experiment", [False, True], ids=["labels-in-metadata", "labels-in-example"])
def test_sample_traces_round_trip_to_the_same_scores(experiment: bool) -> None:
    """Every sample trace, stored as LangSmith runs and read back, scores exactly as the canonical trace does."""
    scorers = deterministic_scorers()
    for sample in load_samples():
        original = Trace.model_validate(sample)
        mapped = trace_from_langsmith(_bundle(sample, experiment=experiment))
        assert mapped.question == original.question
        assert mapped.answer == original.answer
        assert mapped.labels == original.labels, sample["id"]
        assert [s.kind for s in mapped.steps] == [s.kind for s in original.steps]
        for got, want in zip(mapped.searches, original.searches, strict=True):
            assert got.query == want.query
            assert [(h.rank, h.doc_id, h.url, h.title) for h in got.hits] == [
                (i, h.doc_id, h.url, h.title) for i, h in enumerate(want.hits, start=1)
            ]
        for got, want in zip(mapped.fetches, original.fetches, strict=True):
            assert (got.url, got.doc_id, got.text) == (want.url, want.doc_id, want.text)
        assert score_trace(mapped, scorers).values == score_trace(original, scorers).values, sample["id"]


def test_retriever_shapes_and_tool_names() -> None:
    sample = next(s for s in load_samples() if len([x for x in s["steps"] if x["kind"] == "search"]) >= 1)
    bundle = _bundle(sample)
    root = bundle["root"]
    docs = [{"page_content": "A", "metadata": {"doc_id": "d1", "source": "https://a.example/1"}, "type": "Document"}]
    extra = [
        {
            "id": "r1",
            "name": "VectorStoreRetriever",
            "run_type": "retriever",
            "parent_run_id": root["id"],
            "dotted_order": "z1",
            "inputs": {"query": "q1"},
            "outputs": {"documents": docs},
        },
        {
            "id": "r2",
            "name": "my_lookup",
            "run_type": "retriever",
            "parent_run_id": root["id"],
            "dotted_order": "z2",
            "inputs": {"query": "q2"},
            "outputs": {"output": [{"url": "https://b.example/2", "title": "B"}]},
        },
        {
            "id": "r3",
            "name": "kb_lookup",
            "run_type": "tool",
            "parent_run_id": root["id"],
            "dotted_order": "z3",
            "inputs": {"input": "q3"},
            "outputs": {"output": [{"url": "https://c.example/3"}]},
        },
        {
            "id": "r4",
            "name": "get_weather",
            "run_type": "tool",
            "parent_run_id": root["id"],
            "dotted_order": "z4",
            "inputs": {"city": "Oslo"},
            "outputs": {"output": "rain"},
        },
    ]
    bundle["runs"] = extra
    trace = trace_from_langsmith(bundle)
    assert [(s.query, [h.url for h in s.hits]) for s in trace.searches] == [
        ("q1", ["https://a.example/1"]),
        ("q2", ["https://b.example/2"]),
    ]  # kb_lookup is not a search tool by default; get_weather is neither
    custom = langsmith_adapter(MappingConfig(search_tools=["kb_lookup"]))(bundle)
    assert [s.query for s in custom.searches] == ["q1", "q2", "q3"]


def test_a_search_nested_in_a_search_tool_counts_once() -> None:
    root = {
        "id": "root",
        "name": "agent",
        "run_type": "chain",
        "start_time": "2026-11-20T09:00:00+00:00",
        "inputs": {"question": "q"},
        "outputs": {"output": "a"},
        "session_id": PROJECT,
    }
    runs = [
        {
            "id": "t",
            "name": "web_search",
            "run_type": "tool",
            "parent_run_id": "root",
            "dotted_order": "1",
            "inputs": {"query": "q"},
            "outputs": {"output": [{"url": "https://a.example/"}]},
        },
        {
            "id": "r",
            "name": "Retriever",
            "run_type": "retriever",
            "parent_run_id": "t",
            "dotted_order": "1.1",
            "inputs": {"query": "q"},
            "outputs": {"documents": [{"page_content": "x", "metadata": {"source": "s"}}]},
        },
    ]
    trace = trace_from_langsmith({"root": root, "runs": runs})
    assert len(trace.searches) == 1 and trace.searches[0].tool == "web_search"
    assert trace.metadata["langsmith"] == {
        "run_id": "root",
        "trace_id": "root",
        "session_id": PROJECT,
        "project": None,
        "start_time": "2026-11-20T09:00:00+00:00",
        "reference_example_id": None,
    }


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"id": "x", "root": {"id": "x"}, "error": "cannot read the child runs of trace x: boom"}, "child runs"),
        ([1, 2], "expected a JSON object, got list"),
        ({"post": [{"id": "c", "parent_run_id": "p", "name": "n", "run_type": "llm"}]}, "no root run"),
        ({"what": 1}, "expected 'root' and 'runs'"),
        ({"root": {"name": "no id"}, "runs": []}, "no root run id"),
    ],
)
def test_unmappable_records_raise_adapter_errors(payload: object, message: str) -> None:
    with pytest.raises(AdapterError, match=message):
        trace_from_langsmith(payload)
