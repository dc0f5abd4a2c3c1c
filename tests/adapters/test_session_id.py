"""``Trace.session_id`` (#48, item 1): read from a JSONL line (the struct decoder and the pydantic model agree) and
from OTel / OpenInference spans; carried by the result line only when the trace has one (a trace without one gives
the same line as before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tracescore.adapters import structs
from tracescore.adapters.jsonl import model_trace, trace_from_json
from tracescore.cli import main
from tracescore.cli.push import result_from_line
from tracescore.errors import AdapterError
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import group_spans, read_spans


def _line(**fields: Any) -> bytes:
    return json.dumps({"id": "t1", "question": "q", "answer": "a", **fields}).encode()


@pytest.mark.parametrize(
    ("given", "read"),
    [("conv-7f3a", "conv-7f3a"), (42, "42"), ("", None), ("   ", None), (None, None), (" a b ", " a b ")],
)
def test_jsonl_session_id_is_read_alike_by_both_decoders(given: Any, read: str | None) -> None:
    line = _line(session_id=given)
    fast, model = structs.decode(line), model_trace(line)
    assert fast is not None, "the struct decoder takes every well-formed session_id"
    assert fast.session_id == model.session_id == trace_from_json(line).session_id == read


def test_a_line_without_session_id_has_none() -> None:
    assert trace_from_json(_line()).session_id is None


@pytest.mark.parametrize("given", [True, {"id": "x"}, ["a"], 1.5])
def test_a_session_id_that_is_not_text_names_the_field(given: Any) -> None:
    with pytest.raises(AdapterError, match=r"wrong value at session_id"):
        trace_from_json(_line(session_id=given))


def _score(tmp_path: Path, name: str, lines: list[str]) -> list[str]:
    path, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.out.jsonl"
    path.write_text("\n".join(lines) + "\n")
    config = tmp_path / "tracescore.toml"  # each turn alone: the scores as without a session (carrying: conversations)
    config.write_text("[sessions]\ncarry_evidence = false\n")
    args = ["score", str(path), "--out", str(out), "--store", "none", "--workers", "1", "--config", str(config)]
    result = CliRunner().invoke(main, args)
    assert out.exists(), result.output
    return out.read_text().splitlines()


def test_result_line_carries_session_id_only_when_the_trace_has_one(tmp_path: Path) -> None:
    plain = [x for x in SAMPLES.read_text().splitlines() if x.strip()][:8]
    turns = [json.dumps({**json.loads(x), "session_id": f"s-{i % 3}"}) for i, x in enumerate(plain)]
    blank = [json.dumps({**json.loads(x), "session_id": ""}) for x in plain]
    before, after, none = (
        _score(tmp_path, "plain", plain),
        _score(tmp_path, "turns", turns),
        _score(tmp_path, "blank", blank),
    )
    assert none == before  # an empty session_id is no session: the same bytes
    assert all('"session_id"' not in x for x in before)
    by_id = {json.loads(a)["trace_id"]: a for a in after}  # session turns are written grouped by session
    assert len(by_id) == len(after) == len(before)
    for i, b in enumerate(before):
        old = json.loads(b)
        a = by_id[old["trace_id"]]
        new = json.loads(a)
        assert new.pop("session_id") == f"s-{i % 3}"
        assert new == old  # every score, reason and comment as without a session
        keys = list(json.loads(a))
        assert keys.index("session_id") == keys.index("timestamp") + 1  # placed after the timestamp
    assert result_from_line(json.loads(by_id[json.loads(before[1])["trace_id"]])).session_id == "s-1"  # push reads it
    assert result_from_line(json.loads(before[1])).session_id is None


# -- OpenTelemetry / OpenInference -------------------------------------------------------------------------------


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]


def _span(trace: str, span: str, parent: str | None, start: int, attrs: dict[str, str]) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span,
        **({"parentSpanId": parent} if parent else {}),
        "name": "agent" if parent is None else "llm",
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 10),
        "attributes": _attrs(attrs),
    }


def _otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]
    }


ROOT = {"openinference.span.kind": "AGENT", "input.value": "q?", "output.value": "a."}
OTEL_CASES = {
    # trace id: (root span's extra attributes, child span's extra attributes, expected session)
    "on-root": ({"session.id": "s-root"}, {"session.id": "s-child"}, "s-root"),
    "on-child": ({}, {"session.id": "s-child"}, "s-child"),
    "genai": ({"gen_ai.conversation.id": "conv-9"}, {}, "conv-9"),
    "both": ({"gen_ai.conversation.id": "conv-9", "session.id": "s-1"}, {}, "s-1"),
    "blank": ({"session.id": " "}, {}, None),
    "none": ({}, {}, None),
}


def _otel_document() -> dict[str, Any]:
    spans = []
    for tid, (root, child, _) in OTEL_CASES.items():
        spans += [_span(tid, "a1", None, 0, {**ROOT, **root}), _span(tid, "c1", "a1", 1, {"input.value": "x", **child})]
    return _otlp(spans)


def test_otel_session_id_is_the_root_spans_else_a_spans() -> None:
    traces = [trace_from_spans(r.payload) for r in group_spans(read_spans(_otel_document()))]
    assert {t.id: t.session_id for t in traces} == {tid: case[2] for tid, case in OTEL_CASES.items()}


def test_otel_result_lines_carry_session_id(tmp_path: Path) -> None:
    path, out = tmp_path / "spans.json", tmp_path / "r.jsonl"
    path.write_text(json.dumps(_otel_document()))
    result = CliRunner().invoke(main, ["score", str(path), "--source", "otel", "--out", str(out), "--store", "none"])
    assert out.exists(), result.output
    rows = {r["trace_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {tid: r.get("session_id") for tid, r in rows.items()} == {tid: c[2] for tid, c in OTEL_CASES.items()}
    assert all("session_id" in r for r in rows.values() if r["trace_id"] not in ("blank", "none"))
    assert "session_id" not in rows["none"] and "session_id" not in rows["blank"]
