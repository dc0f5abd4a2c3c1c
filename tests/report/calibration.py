"""A store holding a judge calibration at a chosen agreement, made through calibrate's real sample/label/measure."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.labels import VERDICT_LABEL, Calibration, Label, add_labels, measure_and_record
from tracescore.calibrate.sampling import candidates, record_sample, sample
from tracescore.store.db import Store

__all__ = ["JUDGE", "MODEL", "RUBRIC", "calibrated_store"]

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
JUDGE = {"model": MODEL, "rubric_version": RUBRIC}  # what a result line of this judge carries


def calibrated_store(path: Path, accuracy: float, seed: int = 1) -> tuple[Store, Calibration]:
    """60 sampled claims labelled by a simulated reviewer agreeing with the judge at ``accuracy``, then measured."""
    store, run_id = scored_store(path, traces=120)
    drawn = sample(candidates(store, run_id), n=60, seed=4)
    record_sample(store, drawn, now=NOW)
    rng = random.Random(seed)
    labels = []
    for n, picked in enumerate(sorted(drawn.picked, key=lambda p: p.candidate.item.item_id)):
        verdict = picked.candidate.verdict
        value = verdict if rng.random() < accuracy else rng.choice([v for v in VERDICTS if v != verdict])
        labels.append(Label(picked.candidate.item.item_id, VERDICT_LABEL, value, "ann", NOW + timedelta(minutes=n)))
    add_labels(store, labels, now=NOW)
    cal = measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW, seed=3)
    return store, cal
