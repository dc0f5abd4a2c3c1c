"""Gate on the judge's calibration: a failing judged rule fails only with a judge humans agree with (kappa ≥ 0.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.report.calibration import JUDGE, calibrated_store
from tracescore.cli import main
from tracescore.report.gate import GateConfig, load_gate_config, run_gate
from tracescore.store.db import Store

PASSED, RULE_FAILED = 0, 1


def grounding_run(rate: float, n: int = 8) -> list[dict[str, Any]]:
    """n result lines of one judge with ``grounding.rate`` = ``rate``: half grounded, half not, when rate < 1."""
    lines = []
    for i in range(n):
        grounded = i % 2 == 0 or rate >= 1
        lines.append(
            {
                "trace_id": f"t{i}",
                "scores": {
                    "grounding.rate": rate,
                    "citation.fabricated_count": 0.0,  # the citation rules check what they can: a line has them
                    "citation.unfetched_rate": 0.0,
                    "diagnosis": f"{'grounded' if grounded else 'ungrounded'}/right",
                },
                "missing": {},
                "errors": [],
                "judge": {"calls": 1, **JUDGE},
            }
        )
    return lines


FAILING = GateConfig(minimums={"grounding.rate": 0.85})


@pytest.fixture(scope="module")
def trusted(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store, cal = calibrated_store(tmp_path_factory.mktemp("trusted") / "s.db", accuracy=0.82, seed=6)
    assert cal.kappa == pytest.approx(0.75, abs=0.01)
    return store


@pytest.fixture(scope="module")
def weak(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store, cal = calibrated_store(tmp_path_factory.mktemp("weak") / "s.db", accuracy=0.66, seed=1)
    assert cal.kappa == pytest.approx(0.45, abs=0.02)
    return store


def test_failing_grounding_rate_fails_with_a_calibration_at_075(trusted: Store) -> None:
    outcome = run_gate(grounding_run(0.5), [], FAILING, store=trusted)
    assert not outcome.passed
    [check] = [c for c in outcome.checks if c.subject == "grounding.rate"]
    assert check.status == "fail" and "judge trusted" in check.message and "kappa 0.75" in check.message


def test_the_same_failure_is_demoted_to_review_at_045(weak: Store) -> None:
    outcome = run_gate(grounding_run(0.5), [], FAILING, store=weak)
    assert outcome.passed
    [check] = [c for c in outcome.checks if c.subject == "grounding.rate"]
    assert check.status == "warn"
    assert "demoted to review" in check.message and "below min_judge_kappa 0.6" in check.message
    assert [c.case for c in check.cases] == ["t1", "t3", "t5", "t7"]  # the ungrounded traces, named for review


def test_the_same_failure_is_demoted_without_a_calibration(tmp_path: Path, trusted: Store) -> None:
    outcome = run_gate(grounding_run(0.5), [], FAILING)
    [check] = [c for c in outcome.checks if c.subject == "grounding.rate"]
    assert outcome.passed and check.status == "warn" and "no calibration" in check.message
    other = [
        {**line, "judge": {"model": "claude-sonnet-4-6", "rubric_version": "grounding-1"}}
        for line in grounding_run(0.5)
    ]
    uncalibrated = run_gate(other, [], FAILING, store=trusted)  # this judge model was never calibrated
    assert uncalibrated.passed
    assert "never calibrated" in next(c for c in uncalibrated.checks if c.subject == "grounding.rate").message


def test_a_passing_judged_rule_and_a_deterministic_rule_are_untouched(weak: Store) -> None:
    passing = run_gate(grounding_run(0.9), [], FAILING, store=weak)
    assert passing.passed and all(c.status == "pass" for c in passing.checks if c.subject == "grounding.rate")
    lines = [{**line, "scores": {**line["scores"], "retrieval.recall_at_5": 0.2}} for line in grounding_run(0.9)]
    recall = run_gate(lines, [], GateConfig(minimums={"retrieval.recall_at_5": 0.9}))  # not judged: fails, no store
    assert not recall.passed


def test_min_judge_kappa_is_configurable(tmp_path: Path, weak: Store) -> None:
    toml = tmp_path / "tracescore.toml"
    toml.write_text('[gate]\nmin_judge_kappa = 0.4\n[gate.min]\n"grounding.rate" = 0.85\n')
    config = load_gate_config(toml)
    assert config.min_judge_kappa == 0.4 and GateConfig().min_judge_kappa == 0.6
    assert not run_gate(grounding_run(0.5), [], config, store=weak).passed


def test_cli_gate_reads_the_store(tmp_path: Path, trusted: Store, weak: Store) -> None:
    results = tmp_path / "now.jsonl"
    results.write_text("".join(json.dumps(line) + "\n" for line in grounding_run(0.5)))
    args = ["gate", str(results), "--min", "grounding.rate=0.85"]
    failed = CliRunner().invoke(main, [*args, "--store", str(trusted.path)])
    assert failed.exit_code == RULE_FAILED, failed.output
    demoted = CliRunner().invoke(main, [*args, "--store", str(weak.path)])
    assert demoted.exit_code == PASSED and "demoted to review" in demoted.output, demoted.output
    nostore = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "none.db")])
    assert nostore.exit_code == PASSED and "no calibration" in nostore.output
