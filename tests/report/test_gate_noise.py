"""Issue #43 item 6: the gate fails on what was asked and says what is noise — diagnostics are shown, not gated (unless
[gate] names them); a zero-width band is widened to one case flipping, and says so; a results file holding a trace
id twice is refused by gate and report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from tests.report.test_gate import case_line, clean_run, write
from tracescore import catalog
from tracescore.cli import main
from tracescore.report.gate import GateConfig, run_gate
from tracescore.report.render import render_gate_markdown
from tracescore.scorers.numbers import GROUNDING_NUMBERS_CHECKED

UNUSED = next(e.name for e in catalog.entries() if e.scorer == "trajectory" and "unused" in e.name)


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _with(lines: list[dict[str, Any]], name: str, value: float) -> list[dict[str, Any]]:
    return [line | {"scores": line["scores"] | {name: value}} for line in lines]


def test_every_trajectory_score_and_count_without_a_better_direction_is_a_diagnostic() -> None:
    diagnostics = {e.name for e in catalog.entries() if e.direction == 0}
    assert {e.name for e in catalog.entries() if e.scorer == "trajectory"} <= diagnostics
    assert GROUNDING_NUMBERS_CHECKED in diagnostics


def test_a_diagnostic_is_shown_but_not_gated_unless_named() -> None:
    base = _with(clean_run("base"), UNUSED, 0.0)
    now = _with(clean_run("now"), UNUSED, 0.5)  # every case reads pages it never cites: a diagnostic, not a verdict
    result = run_gate(now, [base], GateConfig(case_key="metadata.case_id"))
    assert result.passed, [c.message for c in result.failures]
    assert not [c for c in result.checks if c.subject == UNUSED]
    summary = render_gate_markdown(result)
    row = next(line for line in summary.splitlines() if UNUSED in line)
    assert "not gated" in row and "0.5" in row
    named = run_gate(now, [base], GateConfig(case_key="metadata.case_id", maximums={UNUSED: 0.2}))
    assert not named.passed and [c.subject for c in named.failures] == [UNUSED]


def test_a_zero_width_band_is_widened_by_one_case_flipping_and_says_so() -> None:
    base = clean_run("base")  # recall: five cases 1.0, c6 0.5 -> mean 11/12 over 6 cases
    one = clean_run("now", c1={"recall": 0.5})  # one case moved by half a point of six
    result = run_gate(one, [base], GateConfig(case_key="metadata.case_id", tolerance=0.0))
    recall = next(c for c in result.checks if c.rule == "regression" and c.subject == "retrieval.recall_at_5")
    assert recall.status == "pass", recall.message
    assert "widened" in recall.message and "one case" in recall.message
    assert "widened" in render_gate_markdown(result)
    two = clean_run("now", c1={"recall": 0.0}, c2={"recall": 0.0})  # two cases flipped: beyond one case's width
    worse = run_gate(two, [base], GateConfig(case_key="metadata.case_id"))
    assert any(c.subject == "retrieval.recall_at_5" and c.rule == "regression" for c in worse.failures)


def test_a_results_file_holding_a_trace_id_twice_is_refused(tmp_path: Path) -> None:
    lines = clean_run("r")
    doubled = write(tmp_path / "doubled.jsonl", [*lines, case_line("c1", run="r"), case_line("c2", run="r")])
    base = write(tmp_path / "base.jsonl", clean_run("b"))
    for args in (["gate", str(doubled)], ["gate", str(base), "--baseline", str(doubled)], ["report", str(doubled)]):
        done = _cli(*args)
        assert done.exit_code == 2, (args, done.output)
        assert "'r-c1', 'r-c2'" in done.stderr and str(doubled) in done.stderr, done.stderr
