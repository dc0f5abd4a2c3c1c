"""End to end through the CLI: sample traces, malformed input, results file and store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import SAMPLES
from tracescore.cli import main
from tracescore.store.db import Store


def test_scores_sample_traces_and_prints_contingency_table(tmp_path: Path) -> None:
    out, db = tmp_path / "results.jsonl", tmp_path / "ts.db"
    result = CliRunner().invoke(main, ["score", str(SAMPLES), "--out", str(out), "--store", str(db)])
    assert result.exit_code == 0, result.output
    assert "Stage contingency" in result.output and "retrieval_fail" in result.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == len(SAMPLES.read_text().splitlines())
    by_scenario: dict[str, set[str | None]] = {}
    for line in lines:
        assert set(line) >= {"trace_id", "scores", "missing", "errors"}
        by_scenario.setdefault(line["metadata"]["scenario"], set()).add(line["scores"].get("diagnosis"))
    # without a judge, the cells are retrieval_{pass,fail}/{right,wrong}
    assert by_scenario["grounded/right"] == {"retrieval_pass/right"}
    assert by_scenario["retrieval_fail/wrong"] == {"retrieval_fail/wrong"}
    assert by_scenario["retrieval_fail/right"] == {"retrieval_fail/right"}
    assert by_scenario["ungrounded/wrong"] == {"retrieval_pass/wrong"}
    assert by_scenario["retrieval/stale-label"] == {None}
    fabricated = [x for x in lines if x["metadata"]["scenario"] == "citation/fabricated"]
    assert all(x["scores"]["citation.fabricated_count"] == 1 for x in fabricated)
    with Store(db) as store:
        (run,) = store.runs()
        assert run["status"] == "done" and run["summary"]["scored"] == len(lines)
        stored = list(store.results(run["id"]))
        assert [r["trace_id"] for r in stored] == [x["trace_id"] for x in lines]
        assert any(not c["seen"] for c in store.citations(run["id"]))


def test_malformed_lines_are_reported_by_line_and_the_rest_scored(tmp_path: Path) -> None:
    good = SAMPLES.read_text().splitlines()[:4]
    bad = [
        '{"id": "x1", "steps": [',  # truncated JSON
        "[1, 2, 3]",  # JSON, not an object
        '{"question": "no id"}',  # not a trace: id missing
        '{"id": "x4", "steps": [{"kind": "search", "hits": [{"rank": "first"}]}]}',  # wrong type
        '{"id": "x5", "steps": [{"kind": "browse"}]}',  # unknown step kind
    ]
    lines = [good[0], bad[0], good[1], bad[1], bad[2], "", good[2], bad[3], bad[4], good[3]]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe not utf8\n")
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 1
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    scored = [r for r in rows if not r["errors"]]
    failed = {r["line"]: r for r in rows if r["errors"]}
    assert len(scored) == 4
    assert sorted(failed) == [2, 4, 5, 8, 9, 11]
    assert "truncated line" in failed[2]["errors"][0] and failed[2]["errors"][0].startswith("line 2:")
    assert "expected a JSON object" in failed[4]["errors"][0]
    assert "missing field at id" in failed[5]["errors"][0]
    assert "steps.0.search.hits.0.rank" in failed[8]["errors"][0]
    assert "browse" in failed[9]["errors"][0]
    assert failed[8]["trace_id"] == "x4"
    assert "6 of 10 lines could not be scored" in result.output
    for n in failed:
        assert f"line {n}:" in result.output


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", str(tmp_path / "nope.jsonl"), "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 2  # a missing input: a bad argument, the same code for every command (issue #35)
    assert "no traces file" in result.output and "nope.jsonl" in result.output


def test_huge_pages_and_empty_answers(tmp_path: Path) -> None:
    trace = {
        "id": "big",
        "answer": "",
        "steps": [{"kind": "fetch", "url": "https://a.example", "text": "é" * 5_000_000}],
        "labels": {"required_doc_ids": ["a"], "expected_answer_contains": ["x"]},
    }
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(trace) + "\n")
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())
    assert row["missing"]["citation.coverage"] == "empty answer"
    assert row["missing"]["retrieval.recall_at_5"] == "no search step in trace"


def test_store_migrations_are_recorded(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    Store(db).close()  # re-opening applies nothing twice
    names = [r[0] for r in sqlite3.connect(db).execute("SELECT name FROM migrations")]
    assert names == sorted(set(names)) and names[0] == "0001_initial"
