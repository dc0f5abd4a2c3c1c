"""The ``agreement`` a run's judged grounding scores carry: the latest calibration of this judge model + rubric."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracescore import catalog
from tracescore.calibrate.labels import latest_calibration
from tracescore.judge.rubrics import load_rubric
from tracescore.scorers.criteria import Criterion
from tracescore.store.db import Store


def grounding_agreement(
    store: Store, judge_model: str, rubric_version: str | None = None
) -> dict[str, dict[str, Any]] | None:
    """Per judged grounding-scorer score, the agreement to carry: the latest calibration of this judge model and
    grounding rubric version (default: the bundled rubric's); None (absent, never 0) when never calibrated."""
    calibration = latest_calibration(store, judge_model, rubric_version or load_rubric("grounding").version)
    if calibration is None:
        return None
    return {e.name: calibration.agreement for e in catalog.entries() if e.judged and e.scorer == "grounding"}


def criteria_agreement(store: Store, judge_model: str, criteria: Iterable[Criterion]) -> dict[str, dict[str, Any]]:
    """Per ``[[criteria]]`` criterion, the agreement its score carries: the latest calibration of this judge model on
    the criterion's own label (its score name) and version (its rubric and scale); a criterion never calibrated, or
    calibrated only under an earlier rubric, carries none."""
    out: dict[str, dict[str, Any]] = {}
    for c in criteria:
        if (calibration := latest_calibration(store, judge_model, c.version, c.name)) is not None:
            out[c.name] = calibration.agreement
    return out
