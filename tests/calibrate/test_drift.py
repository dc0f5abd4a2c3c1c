"""Drift check: re-judging the labelled items costs nothing for an unchanged judge and fails for a worse one."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.fakes.anthropic import FakeAnthropic
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.drift import check_drift
from tracescore.calibrate.labels import VERDICT_LABEL, Label, add_labels, measure_and_record
from tracescore.calibrate.sampling import candidates, record_sample, sample
from tracescore.cli import main
from tracescore.judge.anthropic import DEFAULT_MODEL, AnthropicJudge
from tracescore.judge.cache import CachingJudge
from tracescore.judge.rubrics import load_rubric
from tracescore.store.db import Store
from tracescore.trace import Trace

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
OTHER_MODEL = "claude-opus-4-6"


@dataclass
class Calibrated:
    """A store scored through the fake Anthropic API, a labelled random sample, and one calibration."""

    db: Path
    fake: FakeAnthropic
    traces: dict[str, Trace]
    kappa: float


def _flip(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """A worse judge: every supported verdict becomes contradicted (the other model only)."""
    if body["model"] != OTHER_MODEL:
        return output
    for claim in output["claims"]:
        for item in claim["evidence"]:
            item["verdict"] = "contradicted" if item["verdict"] == "supported" else item["verdict"]
    return output


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Calibrated]:
    """Built once per module (scoring the samples is the slow part); tests count requests as deltas."""
    tmp_path = tmp_path_factory.mktemp("drift")
    with FakeAnthropic(tamper=_flip) as fake, pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        db = tmp_path / "t.db"
        scored = CliRunner().invoke(main, ["score", str(SAMPLES), "--store", str(db), "--out", str(tmp_path / "r")])
        assert scored.exit_code == 0, scored.output
        with Store(db) as store:
            (run,) = store.runs()
            pool = candidates(store, run["id"])
            drawn = sample(pool, n=min(40, len(pool)), seed=2)
            record_sample(store, drawn, now=NOW)
            rng = random.Random(5)
            labels = []
            for n, picked in enumerate(drawn.picked):  # a reviewer agreeing with the judge 85% of the time
                verdict = picked.candidate.verdict
                value = verdict if rng.random() < 0.85 else rng.choice([v for v in VERDICTS if v != verdict])
                labels.append(
                    Label(picked.candidate.item.item_id, VERDICT_LABEL, value, "ann", NOW + timedelta(minutes=n))
                )
            add_labels(store, labels, now=NOW)
            cal = measure_and_record(
                store,
                judge_model=DEFAULT_MODEL,
                rubric_version=load_rubric("grounding").version,
                label=VERDICT_LABEL,
                now=NOW,
                seed=1,
            )
        assert cal.kappa is not None and cal.kappa_interval is not None
        traces = {t.id: t for t in map(Trace.model_validate_json, SAMPLES.read_text().splitlines())}
        yield Calibrated(db, fake, traces, cal.kappa)


def _judge(store: Store, model: str) -> CachingJudge:
    return CachingJudge(AnthropicJudge(model=model), store)


def test_an_unchanged_judge_is_free_and_passes(calibrated: Calibrated) -> None:
    before = len(calibrated.fake.messages())
    with Store(calibrated.db) as store:
        result = check_drift(store, calibrated.traces, _judge(store, DEFAULT_MODEL))
    assert len(calibrated.fake.messages()) == before  # 0 requests: every call answered from the store's cache
    assert result.status == "ok" and result.passed, result.reason
    assert result.changed == 0 and result.skipped == []
    assert result.figures is not None and result.figures.kappa.value == pytest.approx(calibrated.kappa)
    assert "within or above the stored interval" in result.reason


def test_a_worse_new_model_is_drift_with_the_reason(calibrated: Calibrated) -> None:
    before = len(calibrated.fake.messages())
    with Store(calibrated.db) as store:
        result = check_drift(store, calibrated.traces, _judge(store, OTHER_MODEL))
    assert len(calibrated.fake.messages()) > before  # a new model is really asked
    assert result.status == "drift" and not result.passed
    assert result.baseline is not None and result.baseline.judge_model == DEFAULT_MODEL  # compared with the old one
    assert result.changed > 0 and "is below the stored interval" in result.reason
    assert result.as_dict()["baseline"]["judge_model"] == DEFAULT_MODEL


def test_missing_traces_are_skipped_by_name_and_nothing_to_compare_is_unknown(calibrated: Calibrated) -> None:
    with Store(calibrated.db) as store:
        result = check_drift(store, {}, _judge(store, DEFAULT_MODEL))
        assert result.status == "unknown" and "could be re-judged" in result.reason
        assert result.skipped and all("not among the traces given" in s for s in result.skipped)
        none = check_drift(store, calibrated.traces, _judge(store, DEFAULT_MODEL), against="never-measured")
    assert none.status == "unknown" and "no stored calibration of never-measured" in none.reason


def test_result_is_json_ready(calibrated: Calibrated) -> None:
    with Store(calibrated.db) as store:
        result = check_drift(store, calibrated.traces, _judge(store, DEFAULT_MODEL))
    assert json.loads(json.dumps(result.as_dict()))["status"] == "ok"
