"""Carry the calibration: judged scores written after a calibration carry its agreement; never measured, none."""

from __future__ import annotations

from pathlib import Path

from tests.calibrate.helpers import MODEL, scored_store
from tests.fakes.judge import QueueJudge
from tests.report.calibration import calibrated_store
from tests.scorers.test_grounding import _judgement, _trace
from tracescore.calibrate.carry import grounding_agreement
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.scorers.grounding import grounding_scorer


def test_judged_scores_carry_the_agreement_after_a_calibration(tmp_path: Path) -> None:
    store, cal = calibrated_store(tmp_path / "s.db", accuracy=0.82, seed=6)
    agreement = grounding_agreement(store, MODEL)
    assert agreement is not None
    judge = QueueJudge(model=MODEL).enqueue(_judgement())
    result = score_trace(_trace(), [*deterministic_scorers(), grounding_scorer(judge=judge, agreement=agreement)])
    carried = result.scores["grounding.rate"].metadata["agreement"]
    assert carried == cal.agreement and carried["kappa"] == cal.kappa and carried["n"] == 60
    assert set(carried) == {"kappa", "raw", "n", "measured_at", "calibration_id"}
    assert "agreement" not in result.scores["retrieval.recall_at_5"].metadata  # deterministic: nothing to carry
    assert result.to_json()["judge"]["agreement"]["calibration_id"] == cal.calibration_id  # and in the result line


def test_no_calibration_means_no_agreement_never_zero(tmp_path: Path) -> None:
    store, _ = scored_store(tmp_path / "s.db", traces=12)
    assert grounding_agreement(store, MODEL) is None
    store2, _ = calibrated_store(tmp_path / "c.db", accuracy=0.82, seed=6)
    assert grounding_agreement(store2, "another-judge") is None  # calibrated for another model only
    judge = QueueJudge(model=MODEL).enqueue(_judgement())
    result = score_trace(_trace(), [*deterministic_scorers(), grounding_scorer(judge=judge, agreement=None)])
    assert "agreement" not in result.scores["grounding.rate"].metadata
    assert "agreement" not in result.to_json()["judge"]
