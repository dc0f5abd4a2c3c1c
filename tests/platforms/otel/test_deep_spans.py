"""A span file with a value nested too deeply to decode: the trace holding it is reported, the others are scored.

``json.load`` of the whole file raised RecursionError and no trace was scored; now the too-deep value is cut out
with a flat scan (``adapters/deep_json.py``), the span holding it fails its trace by id, and a file of several
documents (JSON Lines, concatenated objects) is read document by document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.platforms.otel.test_otel import _agent_trace, _otlp
from tracescore.adapters.deep_json import TOO_DEEP, cap_depth, loads_capped, too_deep
from tracescore.cli import main
from tracescore.errors import InputError
from tracescore.platforms.otel.spans import read_documents

DEEP = "[" * 20_000 + "]" * 20_000
MARK = '"@@deep@@"'
CITED = "The capital of France is Paris [https://docs.example/d2]."


def _run(tmp_path: Path, text: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    path, out = tmp_path / "spans.json", tmp_path / "r.jsonl"
    path.write_text(text)
    args = ["score", str(path), "--source", "otel", "--out", str(out), "--store", str(tmp_path / "s.db"), "--no-judge"]
    result = CliRunner().invoke(main, args)
    rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return result, {r["trace_id"]: r for r in rows}


def _deep_span_in(spans: list[dict[str, Any]], trace: str) -> list[dict[str, Any]]:
    """``spans`` with an attribute of the retriever span of ``trace`` marked, to be replaced by ``DEEP``."""
    for span in spans:
        if span["traceId"] == trace and span["spanId"] == "r1":
            span["attributes"].append({"key": "x.deep", "value": {"stringValue": "@@deep@@"}})
    return spans


def _assert_only_bad_failed(result: Any, rows: dict[str, dict[str, Any]], good: list[str], bad: str) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 1, result.output
    for trace in good:
        assert not rows[trace]["errors"] and rows[trace]["scores"]["retrieval.recall_at_5"] == 1.0
    (error,) = rows[bad]["errors"]
    assert f"trace {bad}" in error and "nested too deeply" in error


@pytest.mark.parametrize("shape", ["otlp", "flat"])
def test_a_deep_value_fails_its_trace_and_the_others_are_scored(tmp_path: Path, shape: str) -> None:
    spans = _deep_span_in([s for t in ("t1", "t2", "t3") for s in _agent_trace(t, CITED)], "t2")
    if shape == "flat":  # flat spans: attributes as an object, the deep value an array in it
        for span in spans:
            span["attributes"] = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
    text = json.dumps(_otlp(spans) if shape == "otlp" else spans).replace(MARK, DEEP)
    result, rows = _run(tmp_path, text)
    _assert_only_bad_failed(result, rows, ["t1", "t3"], "t2")


def test_a_span_deeper_than_the_cap_but_decodable_fails_its_trace(tmp_path: Path) -> None:
    """300 levels decode in one json.loads; the span is still refused (the adapter's walks would recurse that deep)."""
    spans = _deep_span_in([s for t in ("t1", "t2") for s in _agent_trace(t, CITED)], "t1")
    result, rows = _run(tmp_path, json.dumps(_otlp(spans)).replace(MARK, "[" * 300 + "]" * 300))
    _assert_only_bad_failed(result, rows, ["t2"], "t1")


def test_json_lines_are_read_line_by_line(tmp_path: Path) -> None:
    """A collector's file exporter writes one OTLP export per line: a broken line and a deep line fail alone."""
    lines = [json.dumps(_otlp(_agent_trace(t, CITED))) for t in ("t1", "t2", "t3")]
    lines[1] = json.dumps(_otlp(_deep_span_in(_agent_trace("t2", CITED), "t2"))).replace(MARK, DEEP)
    lines.insert(2, '{"resourceSpans": [ broken')
    result, rows = _run(tmp_path, "\n".join(lines) + "\n")
    _assert_only_bad_failed(result, rows, ["t1", "t3"], "t2")
    assert any("line 3: not JSON" in e for r in rows.values() for e in r["errors"])


def test_concatenated_documents_and_single_spans_are_read(tmp_path: Path) -> None:
    """The OTel SDK's console exporter writes each span as an indented JSON object, one after the other."""
    spans = _agent_trace("t1", CITED)
    for span in spans:
        span["attributes"] = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
    result, rows = _run(tmp_path, "\n".join(json.dumps(s, indent=4) for s in spans))
    assert result.exit_code == 0, result.output
    assert rows["t1"]["scores"]["retrieval.recall_at_5"] == 1.0


@pytest.mark.parametrize("text", ["{not json", "[" * 50_000, '"' + "[" * 50_000, "\n\n", "[1, 2"])
def test_a_file_with_nothing_readable_is_one_clear_error(text: str) -> None:
    with pytest.raises(InputError, match="not valid JSON"):
        read_documents(text.encode())


@pytest.mark.parametrize(
    ("text", "said"), [(DEEP, "span 1: nested too deeply"), ("{" + '"a":{' * 20_000, "not valid JSON")]
)
def test_a_file_that_is_only_too_deep_is_reported_not_a_crash(tmp_path: Path, text: str, said: str) -> None:
    result, _ = _run(tmp_path, text)
    assert result.exit_code == 1 and said in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output


def test_cap_depth_cuts_only_values_too_deep() -> None:
    assert loads_capped('{"a": [[1]], "b": "[[[[", "c": "\\"[["}', 2) == {"a": [TOO_DEEP], "b": "[[[[", "c": '"[['}
    assert loads_capped("[[[[]]], [1]]", 3) == [[[TOO_DEEP]], [1]]
    assert cap_depth("[1] [[2]]", 1) == f"[1] [{json.dumps(TOO_DEEP)}]"
    with pytest.raises(ValueError):
        loads_capped("[[[[", 2)
    assert too_deep({"a": [[1]]}, 2) and not too_deep({"a": [1]}, 2) and too_deep(["x", TOO_DEEP], 5)


def test_a_file_cut_short_is_refused_whole_not_read_line_by_line() -> None:
    """The objects inside an indented file cut short are not documents: the file is refused, as before."""
    text = json.dumps([s for t in ("t1", "t2") for s in _agent_trace(t, CITED)], indent=2)
    with pytest.raises(InputError, match="not valid JSON"):
        read_documents(text[: len(text) // 2].encode())
