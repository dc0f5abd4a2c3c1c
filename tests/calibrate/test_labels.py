"""Labels append-only in the store; calibrations stored and read back as the ``agreement`` a judged score carries."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.labels import (
    VERDICT_LABEL,
    Label,
    add_labels,
    label_spec,
    labelled_pairs,
    latest_calibration,
    measure_and_record,
    stored_labels,
)
from tracescore.calibrate.sampling import candidates, record_sample, sample
from tracescore.store.db import Store

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def _queued(tmp_path: Path) -> tuple[Store, dict[str, tuple[str, str]]]:
    """A store with 60 random + 10 failure items queued; item id → (slice, judge verdict)."""
    store, run_id = scored_store(tmp_path / "s.db")
    drawn = sample(candidates(store, run_id), n=60, seed=4, failures=10)
    record_sample(store, drawn, now=NOW)
    return store, {p.candidate.item.item_id: (p.slice, p.candidate.verdict) for p in drawn.picked}


def _reviewer(items: dict[str, tuple[str, str]], author: str, seed: int, accuracy: float) -> list[Label]:
    """A simulated reviewer: agrees with the judge with probability ``accuracy``, else picks another verdict."""
    rng = random.Random(seed)
    out = []
    for n, (item_id, (_, verdict)) in enumerate(sorted(items.items())):
        value = verdict if rng.random() < accuracy else rng.choice([v for v in VERDICTS if v != verdict])
        out.append(Label(item_id, VERDICT_LABEL, value, author, NOW + timedelta(minutes=n), "sheet"))
    return out


def test_labels_are_append_only_and_a_repull_adds_nothing(tmp_path: Path) -> None:
    store, items = _queued(tmp_path)
    labels = _reviewer(items, "ann", 1, 0.8)
    assert add_labels(store, labels, now=NOW) == 70
    assert add_labels(store, labels, now=NOW + timedelta(hours=1)) == 0
    first = labels[0]
    changed = Label(
        first.item_id,
        first.label,
        "contradicted" if first.value != "contradicted" else "partial",
        "ann",
        NOW + timedelta(days=1),
    )
    assert add_labels(store, [changed], now=NOW) == 1
    back = Label(first.item_id, first.label, first.value, "ann", NOW + timedelta(days=2))
    assert add_labels(store, [back], now=NOW) == 1  # changed back: appended, and the latest one counts
    rows = [lab for lab in stored_labels(store, VERDICT_LABEL) if lab.item_id == first.item_id]
    assert [r.value for r in rows] == [first.value, changed.value, first.value]
    assert all(r.author == "ann" and r.labelled_at.tzinfo is not None for r in rows)


def test_only_the_random_slice_feeds_agreement(tmp_path: Path) -> None:
    store, items = _queued(tmp_path)
    add_labels(store, _reviewer(items, "ann", 1, 0.8), now=NOW)
    pairs, between = labelled_pairs(store, label=VERDICT_LABEL, judge_model=MODEL, rubric_version=RUBRIC)
    assert {p.item_id for p in pairs} == {i for i, (s, _) in items.items() if s == "random"}
    assert len(pairs) == 60 and between == []
    assert all(p.judge == items[p.item_id][1] for p in pairs)
    other, _ = labelled_pairs(store, label=VERDICT_LABEL, judge_model="another-model", rubric_version=RUBRIC)
    assert other == []


def test_measure_and_record_then_read_the_agreement(tmp_path: Path) -> None:
    store, items = _queued(tmp_path)
    assert latest_calibration(store, MODEL, RUBRIC) is None  # never measured: nothing, not 0
    labels = _reviewer(items, "ann", 1, 0.8)
    add_labels(store, labels, now=NOW)
    add_labels(store, _reviewer(dict(list(sorted(items.items()))[:20]), "bob", 2, 0.7), now=NOW)
    cal = measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW, seed=3)
    human = {lab.item_id: lab.value for lab in labels}
    pairs, _ = labelled_pairs(store, label=VERDICT_LABEL, judge_model=MODEL, rubric_version=RUBRIC)
    expected = cohen_kappa_score(
        [human[p.item_id] for p in pairs],
        [p.judge for p in pairs],
        labels=list(VERDICTS),
        weights="linear",
        sample_weight=[p.weight for p in pairs],
    )
    assert len({round(p.weight, 6) for p in pairs}) > 1  # strata of different sizes: the design weights differ
    assert cal.kappa == pytest.approx(expected) and cal.n == 60
    assert cal.kappa_interval is not None and cal.kappa_interval[0] < cal.kappa < cal.kappa_interval[1]
    assert cal.detail["human_human"]["n"] > 0  # bob relabelled some random items: the ceiling is measured
    read = latest_calibration(store, MODEL, RUBRIC)
    assert read is not None and read.calibration_id == cal.calibration_id
    assert read.agreement == cal.agreement
    assert set(read.agreement) == {"kappa", "raw", "n", "measured_at", "calibration_id"}
    json.dumps(read.agreement)
    later = measure_and_record(
        store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW + timedelta(days=1)
    )
    assert (latest_calibration(store, MODEL, RUBRIC) or cal).calibration_id == later.calibration_id
    assert latest_calibration(store, MODEL, "grounding-2") is None


def test_undefined_kappa_is_carried_as_a_reason_not_zero(tmp_path: Path) -> None:
    store, items = _queued(tmp_path)
    only_supported = {i: v for i, v in items.items() if v == ("random", "supported")}
    add_labels(store, _reviewer(only_supported, "ann", 1, 1.0), now=NOW)
    cal = measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW)
    assert cal.kappa is None and cal.raw == 1.0
    assert "kappa" not in cal.agreement and "undefined" in cal.agreement["kappa_reason"]


def test_label_schema_validates_values() -> None:
    assert label_spec("answer.correct").normalise(" Yes ") == "true"
    with pytest.raises(ValueError, match=r"grounding.verdict 'maybe' is not one of supported, partial"):
        label_spec(VERDICT_LABEL).normalise("maybe")
    with pytest.raises(ValueError, match=r"unknown label 'verdict'; expected one of grounding.verdict"):
        label_spec("verdict")
