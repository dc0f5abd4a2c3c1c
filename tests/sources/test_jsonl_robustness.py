"""Hostile JSONL input: lines nested 10,000+ deep, non-finite numbers, a BOM, a truncated last line.

Every line is either scored or reported with its number and reason; output (results file and store) stays strict
JSON; a ``[source] kind = "jsonl"`` backfill over the same file scores its good traces.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.engine.helpers import write_traces
from tracescore.adapters.jsonl import trace_from_json
from tracescore.cli import main
from tracescore.errors import AdapterError
from tracescore.result import TraceResult
from tracescore.sources.jsonl import JsonlSource, record_time

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _no_constants(name: str) -> Any:
    raise ValueError(f"not strict JSON: bare {name}")


def strict(text: str) -> Any:
    """Parse like a strict JSON parser: no Infinity/-Infinity/NaN."""
    return json.loads(text, parse_constant=_no_constants)


def nested(depth: int) -> str:
    return f'{{"id": "deep-{depth}", "metadata": {{"x": {"[" * depth + "]" * depth}}}}}'


def assert_store_is_strict_json(db: Path) -> None:
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        checked = 0
        for table in tables:
            for row in con.execute(f"SELECT * FROM {table}"):  # noqa: S608 - names from sqlite_master
                for cell in row:
                    if isinstance(cell, str) and cell[:1] in "{[":
                        strict(cell)
                        checked += 1
        assert checked > 0
    finally:
        con.close()


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_a_line_nested_thousands_deep_is_reported_and_has_no_time(depth: int) -> None:
    with pytest.raises(AdapterError, match="nested too deeply"):
        trace_from_json(nested(depth).encode())
    assert record_time(nested(depth).encode()) is None
    assert record_time(("[" * depth + "]" * depth).encode()) is None


@pytest.mark.parametrize(
    ("number", "where"),
    [("1e400", "metadata.x"), ("Infinity", "metadata.x"), ("-Infinity", "metadata.x"), ("NaN", "metadata.x")],
)
def test_a_non_finite_number_is_rejected_with_its_path(number: str, where: str) -> None:
    with pytest.raises(AdapterError, match=f"non-finite number at {where}"):
        trace_from_json(f'{{"id": "a", "metadata": {{"x": {number}, "ok": 1e300}}}}\n'.encode())
    with pytest.raises(AdapterError, match="non-finite number at metadata.y.1"):
        trace_from_json({"id": "a", "metadata": {"y": [1.0, float("nan")]}})
    # the same words inside strings are text, not numbers
    assert trace_from_json(b'{"id": "a", "question": "NaN Infinity 1e400"}').question == "NaN Infinity 1e400"


def test_a_bom_is_accepted_and_a_truncated_line_is_called_truncated() -> None:
    assert trace_from_json(b'\xef\xbb\xbf{"id": "bom"}\r\n').id == "bom"
    for cut in (b'{"id": "c", "question": "what is th\n', b'{"id": "c", "steps": [{"kind": "search"\n'):
        with pytest.raises(AdapterError, match="^truncated line"):
            trace_from_json(cut)


def test_results_never_carry_bare_infinity_or_nan() -> None:
    result = TraceResult(trace_id="p", metadata={"x": float("inf"), "y": [float("-inf"), float("nan")], "z": 1.5})
    line = strict(json.dumps(result.to_json()))
    assert line["metadata"] == {"x": "Infinity", "y": ["-Infinity", "NaN"], "z": 1.5}
    assert strict(json.dumps(result.metadata)) == line["metadata"]


def _hostile_file(path: Path) -> dict[int, str]:
    """Good sample lines around every kind of hostile line; returns {line number: expected reason}."""
    good = SAMPLES.read_text().splitlines()[:3]
    lines = [
        "\ufeff" + good[0],
        nested(10_000),
        "[" * 100_000 + "]" * 100_000,
        '{"id": "inf", "metadata": {"x": 1e400}}',
        '{"id": "nan", "metadata": {"x": NaN}}',
        good[1],
        '{"id": "ninf", "metadata": {"x": -Infinity}}',
        good[2],
        good[2][: len(good[2]) // 2],  # the last line, cut mid-object
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        2: "nested too deeply",
        3: "nested too deeply",
        4: "non-finite number at metadata.x",
        5: "non-finite number at metadata.x",
        7: "non-finite number at metadata.x",
        9: "truncated line",
    }


def test_score_reports_every_hostile_line_and_writes_strict_results_and_a_finished_run(tmp_path: Path) -> None:
    path, out, db = tmp_path / "hostile.jsonl", tmp_path / "r.jsonl", tmp_path / "s.db"
    expected = _hostile_file(path)
    result = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--store", str(db)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    rows = [strict(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert not (tmp_path / "r.jsonl.partial").exists()
    assert [r["line"] for r in rows] == list(range(1, 10))
    assert [r["line"] for r in rows if not r["errors"]] == [1, 6, 8]
    for row in rows:
        if row["errors"]:
            reason = row["errors"][0]
            assert reason.startswith(f"line {row['line']}: ") and expected[row["line"]] in reason, reason
            assert "control character" not in reason
    assert "6 of 9 lines could not be scored" in result.output
    con = sqlite3.connect(db)
    assert [r[0] for r in con.execute("SELECT status FROM runs")] == ["done"]
    con.close()
    assert_store_is_strict_json(db)


def test_a_jsonl_backfill_over_hostile_lines_scores_the_good_traces(tmp_path: Path) -> None:
    ids = write_traces(tmp_path / "t.jsonl", T0, 4, step=timedelta(minutes=10))
    with (tmp_path / "t.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(nested(10_000) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
        fh.write('{"id": "inf", "timestamp": "2026-11-01T05:00:00+00:00", "metadata": {"x": Infinity}}\n')
    write_traces(tmp_path / "t.jsonl", T0 + timedelta(hours=6), 2, prefix="late")
    config = tmp_path / "tracescore.toml"
    config.write_text(f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n')
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output  # some traces unreadable: reported, not aborted (4)
    summary = json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])
    assert summary["scored"] == len(ids) + 2 and summary["failed"] == 3 and summary["status"] == "done"
    failures = " | ".join(summary["failures"])
    assert failures.count("nested too deeply") == 2 and "line 5 " in failures and "line 6 " in failures
    assert "line 7 (inf): non-finite number at metadata.x" in failures
    assert_store_is_strict_json(tmp_path / "ts.db")


def test_the_jsonl_source_yields_deep_lines_in_every_window(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_traces(path, T0, 2)
    with path.open("a") as fh:
        fh.write(nested(100_000) + "\n")
    lines = [r.line for r in JsonlSource(path).records(T0 + timedelta(days=1))]
    assert lines == [3]  # no timestamp can be read: yielded so the adapter reports it
