"""#48 item 5 (reading): ``report --group-by session`` and the HTML report show each session with its session scores
and turns in order; ``gate --max session.fabricated_count=0`` fails on a session with a fabricated citation and passes
without one; a gate limit on a session score is counted over the sessions."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import tracescore
from tests.scorers.test_session import Turn, _trace
from tracescore.cli import main


def _results(tmp_path: Path, designs: dict[int, list[Turn]]) -> Path:
    traces = [_trace(s, t, turn) for s, design in designs.items() for t, turn in enumerate(design)]
    out = tmp_path / "results.jsonl"
    out.write_text("".join(json.dumps(r.to_json()) + "\n" for r in tracescore.score_traces(traces)))
    return out


CLEAN = {0: [Turn(True, True, True, 0), Turn(True, False, True, 0)], 1: [Turn(True, True, True, 0)]}
DIRTY = CLEAN | {2: [Turn(True, True, True, 0), Turn(True, True, True, 2)]}


def test_report_group_by_session_lists_sessions_with_their_scores_and_turns(tmp_path: Path) -> None:
    results = _results(tmp_path, DIRTY)
    out = CliRunner().invoke(main, ["report", str(results), "--group-by", "session", "--format", "json"])
    assert out.exit_code == 0, out.output
    sessions = {s["session_id"]: s for s in json.loads(out.stdout)["sessions"]}
    assert set(sessions) == {"conv-0", "conv-1", "conv-2"}
    assert [t["trace_id"] for t in sessions["conv-0"]["turns"]] == ["s0-t0", "s0-t1"]
    assert sessions["conv-0"]["turns"][1]["cell"] == "retrieval_fail/right"
    assert sessions["conv-0"]["scores"]["session.first_failed_turn"] == 2.0
    assert sessions["conv-2"]["scores"]["session.fabricated_count"] == 2.0
    assert sessions["conv-1"]["missing"]["session.diagnosis"] == "no turn of the session failed"
    terminal = CliRunner().invoke(main, ["report", str(results), "--group-by", "session"])
    assert terminal.exit_code == 0 and "Sessions (3)" in terminal.output and "s0-t1" in terminal.output
    markdown = CliRunner().invoke(main, ["report", str(results), "--group-by", "session", "--format", "markdown"])
    assert "## Sessions" in markdown.output and "**conv-2**" in markdown.output


def test_the_html_report_shows_sessions(tmp_path: Path) -> None:
    results = _results(tmp_path, DIRTY)
    out = CliRunner().invoke(main, ["report", str(results), "--format", "html"])
    assert out.exit_code == 0, out.output
    assert '<table id="sessions">' in out.output and 'data-session="conv-2"' in out.output
    assert "<code>s2-t1</code>" in out.output


def test_gate_on_a_session_score_fails_on_a_fabricated_citation_and_passes_without(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "c").mkdir()
    dirty, clean = _results(tmp_path / "d", DIRTY), _results(tmp_path / "c", CLEAN)
    args = ["--max", "session.fabricated_count=0", "--allow-unread", "--format", "json"]
    failed = CliRunner().invoke(main, ["gate", str(dirty), *args])
    assert failed.exit_code != 0
    check = next(c for c in json.loads(failed.stdout)["rules"] if c["subject"] == "session.fabricated_count")
    assert check["verdict"] == "fail" and "over 3 sessions" in check["message"]  # three sessions, not five traces
    passed = CliRunner().invoke(main, ["gate", str(clean), *args])
    check = next(c for c in json.loads(passed.stdout)["rules"] if c["subject"] == "session.fabricated_count")
    assert check["verdict"] == "pass" and passed.exit_code == 0, passed.output
