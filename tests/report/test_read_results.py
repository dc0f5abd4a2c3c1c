"""A results file with a wrongly typed score value or absent reason: that line is reported, the rest are read."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracescore.cli import main
from tracescore.report.runs import read_results


def test_a_wrongly_typed_value_or_reason_is_a_bad_line_not_a_crash(tmp_path: Path) -> None:
    lines = [
        {"trace_id": "a", "scores": {"answer.correct": True}, "missing": {"grounding.rate": ["not", "text"]}},
        {"trace_id": "b", "scores": {"retrieval.recall_at_5": {"v": 1}}, "missing": {}},
        {"trace_id": "c", "scores": {"answer.correct": False}, "missing": {"grounding.rate": "no judge"}},
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = list(read_results(path))
    assert [r["trace_id"] for r in read] == [None, None, "c"]
    assert "line 1: not a result line (the reason 'grounding.rate' is missing is a JSON list" in read[0]["errors"][0]
    assert "line 2: not a result line (score 'retrieval.recall_at_5' is a JSON dict" in read[1]["errors"][0]
    result = CliRunner().invoke(main, ["report", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "line 1: not a result line" in result.output and "line 2: not a result line" in result.output
