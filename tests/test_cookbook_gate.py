"""The GitHub Actions recipe's gate script, run for real on scored sample traces: outputs, summary, exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracescore.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "cookbook" / "github-actions" / "gate.sh"
WORKFLOW = ROOT / "cookbook" / "github-actions" / "agent-eval.yml"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("cookbook")
    out = tmp / "results.jsonl"
    samples = str(ROOT / "cookbook" / "data" / "traces.jsonl")
    result = CliRunner().invoke(main, ["score", samples, "--store", str(tmp / "ts.db"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def _run(tmp: Path, results: Path, baselines: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env["GITHUB_STEP_SUMMARY"] = str(tmp / "step-summary.md")
    return subprocess.run(
        ["bash", str(SCRIPT), str(results), str(baselines), str(tmp / "out"), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _baselines(tmp: Path, lines: list[str]) -> Path:
    for run in ("101", "102"):
        (tmp / "baselines" / run).mkdir(parents=True)
        (tmp / "baselines" / run / "results.jsonl").write_text("".join(lines))
    return tmp / "baselines"


def test_recipe_fails_on_the_samples_fabricated_citations(scored: Path, tmp_path: Path) -> None:
    baselines = _baselines(tmp_path, scored.read_text().splitlines(keepends=True))
    run = _run(tmp_path, scored, baselines, "--allow-unread")
    assert run.returncode == 1, run.stderr
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == {"report.md", "report.html", "gate.md", "gate.xml", "summary.md"}
    gate_md = (out / "gate.md").read_text()
    assert "2 baseline run(s)" in gate_md
    assert "- `tr-0010` — stage **citations**: 1 fabricated cited URL(s)" in gate_md
    summary = (out / "summary.md").read_text()
    assert summary.startswith(gate_md) and "### Stage contingency" in summary and "| cell | brave | exa |" in summary
    assert (tmp_path / "step-summary.md").read_text() == summary
    assert run.stdout == gate_md
    failures = [
        tc.get("classname") for tc in ET.parse(out / "gate.xml").iter("testcase") if tc.find("failure") is not None
    ]
    assert failures == ["tracescore.gate.fabricated"]


def test_recipe_passes_on_clean_cases(scored: Path, tmp_path: Path) -> None:
    clean = [
        line
        for line in scored.read_text().splitlines(keepends=True)
        if not json.loads(line)["scores"].get("citation.fabricated_count")
        and not json.loads(line)["scores"].get("citation.unfetched_rate")
    ]
    results = tmp_path / "clean.jsonl"
    results.write_text("".join(clean))
    run = _run(tmp_path, results, _baselines(tmp_path, clean), "--min", "retrieval.retrieved_any=0.9")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("## ✅ tracescore gate passed")


def test_recipe_reports_a_broken_input_instead_of_passing(tmp_path: Path) -> None:
    run = _run(tmp_path, tmp_path / "missing.jsonl", tmp_path / "none", "--allow-unread")
    assert run.returncode == 2  # a missing input: a bad argument, nothing ran
    assert "no result file" in run.stderr


def test_recipe_refuses_a_traces_file_and_a_bad_score_name(scored: Path, tmp_path: Path) -> None:
    traces = ROOT / "cookbook" / "data" / "traces.jsonl"
    run = _run(tmp_path, traces, tmp_path / "none")
    assert run.returncode == 6, run.stdout + run.stderr
    assert "is a traces file, not a results file" in run.stderr and "score it first" in run.stderr
    assert not (tmp_path / "out" / "summary.md").exists()
    typo = _run(tmp_path, scored, tmp_path / "none", "--min", "answer.corect=0.8")
    assert typo.returncode == 2
    assert "unknown score 'answer.corect'; did you mean answer.correct?" in typo.stderr


def test_workflow_uses_only_options_the_commands_accept() -> None:
    """The recipe's tracescore command lines use options that `tracescore score` / `gate` really have."""
    import re

    text = WORKFLOW.read_text()
    assert "bash .github/tracescore/gate.sh results.jsonl baselines tracescore-out" in text
    assert "--edit-last --create-if-none --body-file tracescore-out/summary.md" in text
    gate_call = text[text.index("gate.sh results.jsonl") : text.index("# thresholds can live")]
    score_call = next(line for line in text.splitlines() if "tracescore score" in line)
    runner = CliRunner()
    for command, call in (("gate", gate_call), ("score", score_call)):
        helptext = runner.invoke(main, [command, "--help"]).output
        used = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", call))
        assert used and all(option in helptext for option in used), (command, used)
