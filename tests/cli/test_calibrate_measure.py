"""``calibrate measure``, ``check`` and ``agreement``, invoked as click commands (the lead registers them)."""

from __future__ import annotations

import csv
import json
import random
import warnings
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tests.calibrate.test_agreement import wice_pairs
from tests.calibrate.test_drift import OTHER_MODEL, Calibrated, calibrated  # noqa: F401 - the fixture
from tests.conftest import SAMPLES
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.labels import VERDICT_LABEL, Label, add_labels, latest_calibration
from tracescore.calibrate.sampling import candidates, record_sample, sample
from tracescore.cli import main
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.store.db import Store

NOW = __import__("datetime").datetime(2026, 11, 30, 20, 0, tzinfo=__import__("datetime").UTC)


def _labelled(path: Path, accuracy: float = 0.8) -> Path:
    """A store with a sampled random slice labelled on the per-claim verdict (no measurement yet)."""
    store, run_id = scored_store(path, traces=120)
    drawn = sample(candidates(store, run_id), n=60, seed=4)
    record_sample(store, drawn, now=NOW)
    rng = random.Random(2)
    labels = []
    for n, picked in enumerate(drawn.picked):
        verdict = picked.candidate.verdict
        value = verdict if rng.random() < accuracy else rng.choice([v for v in VERDICTS if v != verdict])
        labels.append(Label(picked.candidate.item.item_id, VERDICT_LABEL, value, "ann", NOW + timedelta(minutes=n)))
    add_labels(store, labels, now=NOW)
    store.close()
    return path


def test_measure_records_a_calibration_and_prints_the_figures(tmp_path: Path) -> None:
    db = _labelled(tmp_path / "s.db")
    result = CliRunner().invoke(main, ["calibrate", "measure", "--store", str(db)])
    assert result.exit_code == 0, result.output
    assert f"{MODEL} · rubric {RUBRIC} · {VERDICT_LABEL}" in result.output
    assert "linear-weighted kappa" in result.output and "confusion (rows: human, columns: judge)" in result.output
    assert "skipped: " in result.output and "no labelled item for answer.correct" in result.output
    with Store(db) as store:
        cal = latest_calibration(store, MODEL, RUBRIC)
    assert cal is not None and cal.n == 60
    args = ["calibrate", "measure", "--store", str(db), "--format", "json", "--label", VERDICT_LABEL]
    again = CliRunner().invoke(main, args)
    (entry,) = json.loads(again.output)["calibrations"]
    assert entry["agreement"]["n"] == 60 and entry["calibration_id"] != cal.calibration_id  # a new measurement


def test_measure_with_nothing_labelled_or_no_store_says_so(tmp_path: Path) -> None:
    store, _ = scored_store(tmp_path / "bare.db", traces=10)
    store.close()
    bare = CliRunner().invoke(main, ["calibrate", "measure", "--store", str(tmp_path / "bare.db")])
    assert bare.exit_code == 6 and "no human label on any sampled item" in bare.output
    missing = CliRunner().invoke(main, ["calibrate", "measure", "--store", str(tmp_path / "none.db")])
    assert missing.exit_code == 6 and "no store" in missing.output


def _sheet(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "human", "judge", "judge_score"])
        writer.writerows(rows)
    return path


def test_agreement_from_a_sheet_equals_sklearn(tmp_path: Path, shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    sheet = _sheet(tmp_path / "wice.csv", [(p.item_id, p.human, p.judge, str(p.judge_score)) for p in pairs])
    result = CliRunner().invoke(main, ["calibrate", "agreement", str(sheet), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    human, judge = [p.human for p in pairs], [p.judge for p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linear = cohen_kappa_score(human, judge, labels=list(VERDICTS), weights="linear")
        area = roc_auc_score([h == "supported" for h in human], [p.judge_score for p in pairs])
    assert data["n"] == 349 and data["kappa"]["value"] == pytest.approx(linear, rel=1e-9)
    assert data["auroc"]["value"] == pytest.approx(area, rel=1e-9)
    shown = CliRunner().invoke(main, ["calibrate", "agreement", str(sheet)])
    assert "PARTIAL not above chance" in shown.output  # WiCE's stand-in judge: its PARTIAL is noise


def test_agreement_reports_bad_rows_and_refuses_values_outside_the_label(tmp_path: Path) -> None:
    sheet = _sheet(
        tmp_path / "s.csv", [("a", "supported", "supported", ""), ("b", "", "partial", ""), ("c", "partial", "x", "")]
    )
    wrong = CliRunner().invoke(main, ["calibrate", "agreement", str(sheet)])
    assert wrong.exit_code == 2 and "'x'" in wrong.output and "--label" in wrong.output
    ok = _sheet(tmp_path / "ok.csv", [("a", "true", "true", ""), ("b", "false", "true", ""), ("c", "", "true", "")])
    result = CliRunner().invoke(main, ["calibrate", "agreement", str(ok), "--label", "grounding.grounded"])
    assert result.exit_code == 0 and "row 4: human is empty" in result.output  # stderr is mixed into output


def test_check_passes_for_free_and_fails_on_drift(calibrated: Calibrated, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    args = [str(SAMPLES), "--store", str(calibrated.db)]
    before = len(calibrated.fake.messages())
    same = CliRunner().invoke(main, ["calibrate", "check", *args])
    assert same.exit_code == 0, same.output
    assert "no drift" in same.output and "judge requests: 0" in same.output
    assert len(calibrated.fake.messages()) == before
    drift = CliRunner().invoke(main, ["calibrate", "check", *args, "--judge-model", OTHER_MODEL, "--format", "json"])
    assert drift.exit_code == 1, drift.output
    data = json.loads(drift.output)
    assert data["status"] == "drift" and data["judge_requests"] > 0 and data["baseline"]["judge_model"] == DEFAULT_MODEL
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    nokey = CliRunner().invoke(main, ["calibrate", "check", *args])
    assert nokey.exit_code == 2 and "ANTHROPIC_API_KEY" in nokey.output
