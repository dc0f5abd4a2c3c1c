"""Whether a judge may fail a gate: pure decisions on a stored calibration, each with the sentence that says why.

A judged score may fail a gate only when its judge model + rubric version has a calibration with kappa at or above
``min_kappa`` (default 0.6), measured on at least ``MIN_CALIBRATION_ITEMS`` labelled items (two agreeing items give
kappa 1.0 and prove nothing); otherwise its rule is demoted to a review list. PARTIAL is checked on its own: when
its one-against-the-rest kappa interval includes 0, its agreement is not above chance and the report says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracescore.calibrate.labels import Calibration

MIN_KAPPA = 0.6
MIN_CALIBRATION_ITEMS = 30
"""Fewer labelled items than this cannot make a judge trusted, whatever their kappa: with two classes at even odds, a
kappa of 0.75 has a 95% interval of about ±0.24 at 30 items and ±0.4 at 10 (normal approximation)."""


def _ci(interval: tuple[float, float] | None) -> str:
    return f"95% CI {interval[0]:.2f}..{interval[1]:.2f}, " if interval else ""


def sampled_note(detail: Mapping[str, Any]) -> str:
    """``judge_sample 0.25: 31 hash-chosen + 9 flagged items`` when a calibration's labelled items (its ``detail``)
    came from sampled runs, else ``""``."""
    sampled = detail.get("judge_sample")
    if not sampled:
        return ""
    items = sampled.get("items", {})
    rates = "/".join(f"{r:g}" for r in sampled.get("rates", []))
    every = f" + {items['every_trace']} from runs judging every trace" if items.get("every_trace") else ""
    return f"judge_sample {rates}: {items.get('hash', 0)} hash-chosen + {items.get('flagged', 0)} flagged items{every}"


def judge_is_trusted(calibration: Calibration | None, min_kappa: float = MIN_KAPPA) -> tuple[bool, str]:
    """(may this judge fail a gate, why): needs a calibration whose kappa is at least ``min_kappa``."""
    if calibration is None:
        return False, (
            "judge never calibrated against human labels (no calibration for this judge model and rubric version);"
            " run `tracescore calibrate` and label a sample first"
        )
    who = f"judge {calibration.judge_model} rubric {calibration.rubric_version}"
    if calibration.kappa is None:
        reason = calibration.kappa_reason or "kappa undefined"
        return False, f"{who}: agreement with humans not measurable on {calibration.n} item(s) ({reason})"
    note = sampled_note(calibration.detail) and ", " + sampled_note(calibration.detail)
    figures = (
        f"kappa {calibration.kappa:.2f} ({_ci(calibration.kappa_interval)}n={calibration.n}{note},"
        f" calibration {calibration.calibration_id[:8]} measured {calibration.measured_at.date().isoformat()})"
    )
    if calibration.kappa < min_kappa:
        return False, f"{who}: {figures} is below min_judge_kappa {min_kappa:g}"
    if calibration.n < MIN_CALIBRATION_ITEMS:
        return False, f"{who}: {figures} rests on fewer than {MIN_CALIBRATION_ITEMS} labelled items; label more"
    return True, f"{who}: {figures} meets min_judge_kappa {min_kappa:g}"


def partial_above_chance(calibration: Calibration, verdict: str = "partial") -> tuple[bool | None, str]:
    """(is the judge's PARTIAL above chance, why): False when its kappa interval includes 0, None if unmeasured."""
    stats = calibration.detail.get("per_class_kappa", {}).get(verdict)
    if not stats or stats.get("value") is None:
        reason = (stats or {}).get("reason", f"no {verdict} figures in this calibration")
        return None, f"{verdict.upper()} agreement not measured: {reason}"
    kappa = float(stats["value"])
    interval = stats.get("interval")
    if interval is None:
        return None, f"{verdict.upper()} kappa {kappa:.2f} has no interval: {stats.get('reason', 'too few items')}"
    low, high = float(interval[0]), float(interval[1])
    if low <= 0.0 <= high:
        return False, (
            f"{verdict.upper()} not above chance: kappa {kappa:.2f} (95% CI {low:.2f}..{high:.2f}) includes 0;"
            f' set [judge] merge_partial = "contradicted" to merge it'
        )
    return True, f"{verdict.upper()} kappa {kappa:.2f} (95% CI {low:.2f}..{high:.2f}) is above chance"
