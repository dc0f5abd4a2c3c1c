"""Spans as the OpenTelemetry Python SDK prints them (``ReadableSpan.to_json()``, ConsoleSpanExporter): a span whose
status is ``{"status_code": "ERROR"}`` is a failed step, and the trace scores as its JSONL equivalent does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.adapters.test_platform_parity import ANSWER, HITS, LABELS, A, Q
from tracescore.adapters.jsonl import trace_from_json
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import group_spans, read_spans
from tracescore.trace import FetchStep, Trace

TRACE = "0x12bf4292c6bb78b379b13a52e8112086"
RESOURCE = {"attributes": {"telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry"}, "schema_url": ""}


def _sdk_span(name: str, span_id: str, parent: str | None, second: int, attributes: Any, **status: Any) -> Any:
    """One span exactly as ``ReadableSpan.to_json()`` writes it (opentelemetry-sdk 1.45)."""
    return {
        "name": name,
        "context": {"trace_id": TRACE, "span_id": span_id, "trace_state": "[]"},
        "kind": "SpanKind.INTERNAL",
        "parent_id": parent,
        "start_time": f"2026-12-01T13:53:4{second}.059832Z",
        "end_time": f"2026-12-01T13:53:4{second}.959875Z",
        "status": {"status_code": "UNSET"} | status,
        "attributes": attributes,
        "events": [],
        "links": [],
        "resource": RESOURCE,
    }


def _spans(status: dict[str, Any]) -> list[Any]:
    root = {"openinference.span.kind": "AGENT", "input.value": Q, "output.value": ANSWER}
    search = {"openinference.span.kind": "TOOL", "tool.name": "web_search", "input.value": json.dumps({"query": Q})}
    fetch = {"openinference.span.kind": "TOOL", "tool.name": "fetch_url", "input.value": json.dumps({"url": A})}
    return [
        _sdk_span("web_search", "0x02", "0x01", 1, search | {"output.value": json.dumps({"results": HITS})}),
        _sdk_span("fetch_url", "0x03", "0x01", 2, fetch | {"output.value": "404 Client Error: Not Found"}, **status),
        _sdk_span("agent", "0x01", None, 0, root | {"metadata": json.dumps({"labels": LABELS})}),
    ]


def _scores(trace: Trace) -> dict[str, tuple[Any, str | None]]:
    return {name: (s.value, s.reason) for name, s in score_trace(trace, deterministic_scorers()).scores.items()}


@pytest.mark.parametrize("code", ["ERROR", "STATUS_CODE_ERROR", 2])
def test_an_sdk_span_with_status_code_error_is_read_as_failed(code: object) -> None:
    spans = list(read_spans(_spans({"status_code": code, "description": "HTTPError 404"})))
    assert [s["error"] for s in spans if isinstance(s, dict)] == [False, True, False]


def test_a_failed_fetch_span_from_the_sdk_scores_as_a_failed_jsonl_fetch() -> None:
    record = next(group_spans(read_spans(_spans({"status_code": "ERROR", "description": "HTTPError 404"}))))
    native = trace_from_spans(record.payload)
    fetched = native.steps[-1]
    assert isinstance(fetched, FetchStep) and (fetched.url, fetched.status) == (A, "error")
    steps = [
        {"kind": "search", "tool": "web_search", "query": Q, "hits": HITS},
        {"kind": "fetch", "tool": "fetch_url", "url": A, "text": "404 Client Error: Not Found", "status": "error"},
    ]
    line = {"schema_version": "1", "id": "t1", "question": Q, "steps": steps, "answer": ANSWER, "labels": LABELS}
    assert _scores(native) == _scores(trace_from_json(json.dumps(line)))
    assert _scores(native)["citation.unfetched_rate"] == (1.0, None)


def test_an_sdk_span_with_status_ok_is_not_failed() -> None:
    spans = list(read_spans(_spans({"status_code": "OK"})))
    assert [s["error"] for s in spans if isinstance(s, dict)] == [False, False, False]
    record = next(group_spans(read_spans(_spans({"status_code": "ERROR"}))))
    assert trace_from_spans(record.payload).steps[-1].status == "error"  # type: ignore[union-attr]
