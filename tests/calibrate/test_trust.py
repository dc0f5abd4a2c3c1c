"""The gate decision on a calibration, and the PARTIAL-above-chance check: each shown failing."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from tests.calibrate.test_agreement import wice_pairs
from tracescore.calibrate.agreement import VERDICTS, measure
from tracescore.calibrate.labels import Calibration
from tracescore.calibrate.trust import MIN_CALIBRATION_ITEMS, judge_is_trusted, partial_above_chance

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def _cal(kappa: float | None, partial: dict[str, object] | None = None) -> Calibration:
    detail: dict[str, object] = {
        "kappa": {"value": kappa}
        if kappa is not None
        else {"value": None, "reason": "kappa undefined: chance disagreement is 0"}
    }
    if partial is not None:
        detail["per_class_kappa"] = {"partial": partial}
    return Calibration(
        "c0ffee00" * 4,
        "claude-opus-4-5",
        "grounding-1",
        "grounding.verdict",
        60,
        kappa,
        (kappa - 0.1, kappa + 0.1) if kappa is not None else None,
        0.8,
        (0.7, 0.9),
        NOW,
        detail,
    )


def test_trusted_at_075() -> None:
    ok, why = judge_is_trusted(_cal(0.75))
    assert ok and "kappa 0.75" in why and "meets min_judge_kappa 0.6" in why and "n=60" in why


def test_demoted_at_045() -> None:
    ok, why = judge_is_trusted(_cal(0.45))
    assert not ok and "kappa 0.45 (95% CI 0.35..0.55, n=60" in why and "below min_judge_kappa 0.6" in why


def test_demoted_without_calibration() -> None:
    ok, why = judge_is_trusted(None)
    assert not ok and "never calibrated" in why


def test_demoted_when_kappa_undefined() -> None:
    ok, why = judge_is_trusted(_cal(None))
    assert not ok and "not measurable" in why and "chance disagreement is 0" in why


def test_threshold_is_configurable() -> None:
    assert judge_is_trusted(_cal(0.45), min_kappa=0.4)[0]
    assert not judge_is_trusted(_cal(0.75), min_kappa=0.8)[0]


def test_partial_not_above_chance_says_how_to_merge() -> None:
    above, why = partial_above_chance(_cal(0.7, {"value": 0.08, "interval": [-0.05, 0.21]}))
    assert above is False and "includes 0" in why and 'merge_partial = "contradicted"' in why


def test_partial_above_chance() -> None:
    above, why = partial_above_chance(_cal(0.7, {"value": 0.4, "interval": [0.2, 0.6]}))
    assert above is True and "above chance" in why


def test_partial_unmeasured() -> None:
    above, why = partial_above_chance(_cal(0.7, {"value": None, "reason": "kappa undefined: no partial"}))
    assert above is None and "not measured" in why
    assert partial_above_chance(_cal(0.7))[0] is None


def test_wice_stand_in_judge_partial_is_not_above_chance(shared_data: Path) -> None:
    """On WiCE, the token-overlap judge's PARTIAL barely beats chance: its interval includes 0 and we say so."""
    figures = measure(wice_pairs(shared_data), label="grounding.verdict", categories=VERDICTS, ordinal=True, seed=0)
    cal = Calibration.of(figures, "stand-in", "grounding-1", NOW)
    assert cal.kappa is not None and 0.2 < cal.kappa < 0.45
    above, why = partial_above_chance(cal)
    assert above is False and "PARTIAL not above chance" in why
    assert partial_above_chance(cal, "unsupported")[0] is True
    trusted, reason = judge_is_trusted(cal)
    assert not trusted and "below min_judge_kappa 0.6" in reason


def test_a_kappa_on_too_few_items_does_not_trust_the_judge() -> None:
    tiny = replace(_cal(1.0), n=2)
    ok, why = judge_is_trusted(tiny)
    assert not ok and f"rests on fewer than {MIN_CALIBRATION_ITEMS} labelled items" in why and "n=2" in why
    assert judge_is_trusted(replace(_cal(0.75), n=MIN_CALIBRATION_ITEMS))[0]
    assert not judge_is_trusted(replace(_cal(0.75), n=MIN_CALIBRATION_ITEMS - 1))[0]
