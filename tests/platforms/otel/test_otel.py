"""The OTel span-file platform end to end: OTLP JSON and flat spans through ``tracescore score --source otel``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.cli import main
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import group_spans, read_spans
from tracescore.platforms.registry import names

FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "openinference"


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    """A flat dict as OTLP ``[{key, value: {…Value}}]``."""
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            encoded: dict[str, Any] = {"boolValue": value}
        elif isinstance(value, int):
            encoded = {"intValue": str(value)}
        elif isinstance(value, float):
            encoded = {"doubleValue": value}
        else:
            encoded = {"stringValue": value}
        out.append({"key": key, "value": encoded})
    return out


def _span(trace: str, span: str, parent: str | None, name: str, start: int, attrs: dict[str, Any]) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span,
        **({"parentSpanId": parent} if parent else {}),
        "name": name,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 10),
        "attributes": _attrs(attrs),
    }


def _agent_trace(trace: str, answer: str) -> list[dict[str, Any]]:
    """A root agent span (question, answer, labels), a RETRIEVER span with 3 documents, a TOOL fetch span."""
    docs: dict[str, Any] = {}
    for i, (doc, score) in enumerate([("d1", 0.9), ("d2", 0.8), ("d3", 0.5)]):
        docs[f"retrieval.documents.{i}.document.id"] = doc
        docs[f"retrieval.documents.{i}.document.content"] = f"text of {doc}"
        docs[f"retrieval.documents.{i}.document.score"] = score
        docs[f"retrieval.documents.{i}.document.metadata"] = json.dumps({"url": f"https://docs.example/{doc}"})
    return [
        _span(
            trace,
            "a1",
            None,
            "agent",
            0,
            {
                "openinference.span.kind": "AGENT",
                "input.value": "What is the capital of France?",
                "output.value": answer,
                "metadata": json.dumps({"labels": {"required_doc_ids": ["d2"]}}),
            },
        ),
        _span(
            trace,
            "r1",
            "a1",
            "vector_search",
            1,
            {
                "openinference.span.kind": "RETRIEVER",
                "input.value": "capital of France",
                **docs,
            },
        ),
        _span(
            trace,
            "t1",
            "a1",
            "fetch_page",
            2,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "fetch_page",
                "input.value": json.dumps({"url": "https://docs.example/d2"}),
                "output.value": "Paris is the capital of France.",
            },
        ),
    ]


def _otlp(spans: list[Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]
    }


def _score(tmp_path: Path, document: Any) -> tuple[Any, list[dict[str, Any]]]:
    path, out = tmp_path / "spans.json", tmp_path / "r.jsonl"
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    result = CliRunner().invoke(
        main, ["score", str(path), "--source", "otel", "--out", str(out), "--store", str(tmp_path / "s.db")]
    )
    return result, [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []


def test_otel_is_a_registered_source() -> None:
    assert "otel" in names()


def test_otlp_file_scores_retrieval_and_citations(tmp_path: Path) -> None:
    cited = "The capital of France is Paris [https://docs.example/d2]."
    fabricated = "The capital of France is Paris [https://elsewhere.example/x]."
    spans = _agent_trace("t-good", cited) + _agent_trace("t-fab", fabricated)
    result, lines = _score(tmp_path, _otlp(spans))
    rows = {r["trace_id"]: r for r in lines}
    assert result.exit_code == 0, result.output
    assert set(rows) == {"t-good", "t-fab"}
    good, fab = rows["t-good"]["scores"], rows["t-fab"]["scores"]
    assert good["retrieval.recall_at_5"] == 1.0
    assert good["retrieval.first_hit_rank"] == 2
    assert good["citation.fabricated_count"] == 0
    assert good["citation.unfetched_rate"] == 0.0
    assert fab["citation.fabricated_count"] == 1  # the check fails on a URL no step saw


def test_adapter_maps_openinference_and_genai_spans() -> None:
    spans = _agent_trace("t1", "Paris.") + [
        _span(
            "t1",
            "g1",
            "a1",
            "execute_tool fetch_url",
            3,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "fetch_url",
                "gen_ai.tool.call.arguments": json.dumps({"url": "https://docs.example/d3"}),
                "gen_ai.tool.call.result": "page three",
            },
        ),
        _span("t1", "n1", "r1", "inner_search", 4, {"openinference.span.kind": "RETRIEVER"}),  # nested: not counted
    ]
    (record,) = group_spans(read_spans(_otlp(spans)))
    trace = trace_from_spans(record.payload)
    assert trace.question == "What is the capital of France?" and trace.answer == "Paris."
    assert [s.kind for s in trace.steps] == ["search", "fetch", "fetch"]
    search = trace.steps[0]
    assert search.kind == "search" and search.query == "capital of France"
    assert [(h.doc_id, h.url, h.score) for h in search.hits] == [
        ("d1", "https://docs.example/d1", 0.9),
        ("d2", "https://docs.example/d2", 0.8),
        ("d3", "https://docs.example/d3", 0.5),
    ]
    assert trace.steps[2].kind == "fetch" and trace.steps[2].url == "https://docs.example/d3"
    assert trace.steps[2].text == "page three"
    assert trace.labels.required_doc_ids == ["d2"]


def test_flat_span_list_and_blind_spot(tmp_path: Path) -> None:
    flat = [
        {
            "context": {"trace_id": "f1", "span_id": "a"},
            "name": "agent",
            "start_time": "2025-01-01T00:00:00Z",
            "attributes": {"input.value": "q?", "output.value": "a.", "openinference.span.kind": "CHAIN"},
        },
        {
            "context": {"trace_id": "f1", "span_id": "b"},
            "parent_id": "a",
            "name": "retrieve",
            "start_time": "2025-01-01T00:00:01Z",
            "attributes": {"openinference.span.kind": "RETRIEVER"},
        },
    ]
    (record,) = group_spans(read_spans(flat))
    trace = trace_from_spans(record.payload)
    assert trace.question == "q?" and len(trace.steps) == 1
    assert [b.kind for b in trace.blind_spots] == ["search"]  # a retriever with no documents is seen, not read


def test_fixture_spans_are_read() -> None:
    attributes = json.loads((FIXTURES / "otel_genai_tool_execution_span.json").read_text())
    spans = [
        {"traceId": "x", "spanId": "1", "name": "root", "attributes": {"input.value": "weather?"}},
        {"traceId": "x", "spanId": "2", "parentSpanId": "1", "name": "tool", "attributes": attributes},
    ]
    (record,) = group_spans(read_spans(spans))
    trace = trace_from_spans(record.payload)
    assert trace.question == "weather?" and trace.steps == []  # get_weather is neither a search nor a fetch tool
    llm = json.loads((FIXTURES / "openinference_client_span_tool_calls.json").read_text())
    (record,) = group_spans(read_spans([{"traceId": "y", "spanId": "1", "name": "llm", "attributes": llm}]))
    trace = trace_from_spans(record.payload)
    assert trace.question == "Weather in Paris?"
    assert "rainy" in trace.answer


@pytest.mark.parametrize("bad", ["{not json", json.dumps({"hello": 1})])
def test_unreadable_file_is_reported_not_a_crash(tmp_path: Path, bad: str) -> None:
    result, _ = _score(tmp_path, bad)
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "span file" in result.output


def test_malformed_span_is_reported_and_the_rest_scored(tmp_path: Path) -> None:
    spans = [*_agent_trace("t-ok", "Paris [https://docs.example/d2]."), {"name": "no ids"}, "not a span"]
    result, rows = _score(tmp_path, _otlp(spans))
    assert result.exit_code == 1
    (ok,) = [r for r in rows if r["trace_id"] == "t-ok"]
    assert not ok["errors"] and ok["scores"]["retrieval.recall_at_5"] == 1.0
    errors = [e for r in rows for e in r["errors"]]
    assert any("span 4: span 'no ids' has no traceId/spanId" in e for e in errors)
    assert any("span 5: span is str" in e for e in errors)
    assert "2 of 3 lines could not be scored" in result.output


def test_inspect_reads_a_whole_span_file(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(_otlp(_agent_trace("t1", "Paris."))))
    result = CliRunner().invoke(main, ["inspect", str(path), "--source", "otel"])
    assert result.exit_code == 0, result.output
    assert "searches: 1" in result.output and "fetches:  1" in result.output
    bad = CliRunner().invoke(main, ["inspect", str(path), "--source", "jsonl"])
    assert "searches: 1" not in bad.output  # the same file read as canonical traces is not these steps
