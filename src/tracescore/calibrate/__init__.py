"""Judge calibration: sample judged claims for people to label, pull the labels, measure agreement, gate on it."""

from __future__ import annotations

from tracescore.calibrate.agreement import VERDICTS, Agreement, Estimate, Pair, measure
from tracescore.calibrate.labels import (
    LABELS,
    Calibration,
    Label,
    LabelSpec,
    add_labels,
    latest_calibration,
    measure_and_record,
)
from tracescore.calibrate.sampling import Candidate, Item, Sample, candidates, record_sample, sample
from tracescore.calibrate.sheet import read_agreement_sheet, read_sheet, write_sheet
from tracescore.calibrate.trust import MIN_KAPPA, judge_is_trusted, partial_above_chance

__all__ = [
    "Agreement",
    "Calibration",
    "Candidate",
    "Estimate",
    "Item",
    "LABELS",
    "Label",
    "LabelSpec",
    "MIN_KAPPA",
    "Pair",
    "Sample",
    "VERDICTS",
    "add_labels",
    "candidates",
    "judge_is_trusted",
    "latest_calibration",
    "measure",
    "measure_and_record",
    "partial_above_chance",
    "read_agreement_sheet",
    "read_sheet",
    "record_sample",
    "sample",
    "write_sheet",
]
