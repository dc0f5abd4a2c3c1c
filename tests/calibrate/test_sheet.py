"""The no-platform loop through a CSV sheet: blind rows out, validated labels back, agreement sheets from anywhere."""

from __future__ import annotations

import csv
import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tests.calibrate.test_agreement import wice_pairs
from tracescore.calibrate.agreement import VERDICTS, measure
from tracescore.calibrate.labels import VERDICT_LABEL, add_labels, latest_calibration, measure_and_record
from tracescore.calibrate.sampling import Item, candidates, queued_ids, record_sample, sample
from tracescore.calibrate.sheet import read_agreement_sheet, read_sheet, write_sheet
from tracescore.errors import InputError, MissingInputError

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def _fill(path: Path, answers: dict[int, dict[str, str]]) -> None:
    """A reviewer editing the sheet: set cells of data row i (0-based) and save."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
        fields = list(rows[0])
    for i, cells in answers.items():
        rows[i].update(cells)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fields)
        writer.writeheader()
        writer.writerows(rows)


def test_sheet_loop_sample_label_pull_measure(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    drawn = sample(candidates(store, run_id), n=60, seed=9)
    record_sample(store, drawn, now=NOW)
    sheet = tmp_path / "labels.csv"
    assert write_sheet(sheet, drawn.items) == 60
    header = sheet.read_text().splitlines()[0].split(",")
    assert "judge" not in " ".join(header) and "verdict" not in header  # blind: no judge column at all
    assert header[:4] == ["item_id", "trace_id", "question", "claim"] and "reviewer" in header
    verdicts = {p.candidate.item.item_id: p.candidate.verdict for p in drawn.picked}
    with sheet.open(newline="") as fh:
        items = [row["item_id"] for row in csv.DictReader(fh)]
    _fill(
        sheet,
        {i: {VERDICT_LABEL: verdicts[item] if i % 5 else "partial", "reviewer": "ann"} for i, item in enumerate(items)},
    )
    pulled = read_sheet(sheet, now=NOW, known_items=queued_ids(store))
    assert pulled.errors == [] and len(pulled.labels) == 60
    assert add_labels(store, pulled.labels, now=NOW) == 60
    assert add_labels(store, read_sheet(sheet, now=NOW).labels, now=NOW) == 0  # pulled twice: nothing added
    cal = measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW)
    human = [verdicts[item] if i % 5 else "partial" for i, item in enumerate(items)]
    judge = [verdicts[item] for item in items]
    weight = {p.candidate.item.item_id: 1 / (p.inclusion_probability or 1) for p in drawn.picked}
    expected = cohen_kappa_score(
        human, judge, labels=list(VERDICTS), weights="linear", sample_weight=[weight[i] for i in items]
    )
    assert cal.n == 60 and cal.kappa == pytest.approx(expected)
    assert latest_calibration(store, MODEL, RUBRIC) is not None


def test_bad_rows_are_reported_by_row_number_and_the_rest_kept(tmp_path: Path) -> None:
    items = [Item(f"id{i}", f"t{i}", 0, f"claim {i}") for i in range(6)]
    sheet = tmp_path / "labels.csv"
    write_sheet(sheet, items)
    _fill(
        sheet,
        {
            0: {VERDICT_LABEL: "supported", "reviewer": "ann"},
            1: {VERDICT_LABEL: "maybe", "reviewer": "ann"},
            2: {VERDICT_LABEL: "partial", "reviewer": ""},
            3: {"answer.correct": "sort of", "reviewer": "ann", "labelled_at": "yesterday"},
            4: {"item_id": "nope", VERDICT_LABEL: "supported", "reviewer": "ann"},
            5: {
                "answer.correct": "yes",
                "grounding.grounded": "no",
                "reviewer": "bob",
                "labelled_at": "2026-11-30T18:00:00Z",
            },
        },
    )
    pulled = read_sheet(sheet, now=NOW, known_items={f"id{i}" for i in range(6)})
    assert pulled.errors == [
        "row 3: grounding.verdict 'maybe' is not one of supported, partial, unsupported, contradicted",
        "row 4: reviewer is empty; say who labelled the row",
        "row 5: labelled_at 'yesterday' is not an ISO time with a zone, e.g. 2026-11-30T20:00:00Z; "
        "answer.correct 'sort of' is not a yes/no value; expected true or false",
        "row 6: item_id 'nope' was never queued",
    ]
    got = {(lab.item_id, lab.label, lab.value, lab.author) for lab in pulled.labels}
    assert got == {
        ("id0", VERDICT_LABEL, "supported", "ann"),
        ("id5", "answer.correct", "true", "bob"),
        ("id5", "grounding.grounded", "false", "bob"),
    }
    assert next(lab for lab in pulled.labels if lab.author == "bob").labelled_at == datetime(
        2026, 11, 30, 18, tzinfo=UTC
    )


def test_formula_cells_are_escaped(tmp_path: Path) -> None:
    sheet = tmp_path / "labels.csv"
    write_sheet(sheet, [Item("id0", "t0", 0, '=HYPERLINK("http://evil")', quote="+1 more")])
    with sheet.open(newline="") as fh:
        row = next(csv.DictReader(fh))
    assert row["claim"].startswith("'=") and row["quote"] == "'+1 more"


def test_missing_columns_are_named(tmp_path: Path) -> None:
    sheet = tmp_path / "x.csv"
    sheet.write_text("id,label\n1,supported\n")
    with pytest.raises(InputError, match=r"lacks column\(s\) item_id, reviewer; its header is id, label"):
        read_sheet(sheet, now=NOW)
    with pytest.raises(InputError, match=r"lacks column\(s\) item_id, human, judge"):
        read_agreement_sheet(sheet)
    with pytest.raises(MissingInputError, match="cannot read sheet"):  # a bad argument: exit 2, as for any command
        read_sheet(tmp_path / "absent.csv", now=NOW)


def test_agreement_sheet_from_any_source_uses_the_same_code(tmp_path: Path, shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    sheet = tmp_path / "both.csv"
    with sheet.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "human", "judge", "judge_score"])
        for p in pairs:
            writer.writerow([p.item_id, p.human, p.judge, p.judge_score])
        writer.writerow(["bad-1", "supported", "", "0.3"])
        writer.writerow(["bad-2", "supported", "partial", "high"])
        writer.writerow([pairs[0].item_id, "supported", "partial", ""])
    read = read_agreement_sheet(sheet)
    n = len(pairs)
    assert read.errors == [
        f"row {n + 2}: judge is empty",
        f"row {n + 3}: judge_score 'high' is not a number",
        f"row {n + 4}: item_id 'wice-0' appears twice",
    ]
    figures = measure(read.pairs, label=VERDICT_LABEL, categories=VERDICTS, ordinal=True, resamples=100)
    human, judge = [p.human for p in pairs], [p.judge for p in pairs]
    assert figures.n == n
    assert figures.kappa.value == pytest.approx(
        cohen_kappa_score(human, judge, labels=list(VERDICTS), weights="linear")
    )
    assert math.isclose(
        figures.auroc.value or 0, roc_auc_score([h == "supported" for h in human], [p.judge_score for p in pairs])
    )
    json.dumps(figures.as_dict())
