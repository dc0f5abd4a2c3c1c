"""Human labels and calibration records in the local store.

Labels are append-only, each with its author and time: pulling the same labels again adds nothing, a reviewer who
changes their mind adds a row and the latest one counts. A calibration (one judge model × rubric version × label)
is stored with its figures and read back as the ``agreement`` a judged score carries:
``{kappa, raw, n, measured_at, calibration_id}``. Only items of the random slice feed it, never "find the failures".
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from tracescore import catalog
from tracescore.calibrate.agreement import VERDICTS, Agreement, Pair, human_pairs, measure
from tracescore.scorers.answer import ANSWER_CORRECT
from tracescore.store.db import Store


@dataclass(frozen=True)
class LabelSpec:
    """One human label of the schema: its name (as the judged score's), kind and allowed values."""

    name: str
    kind: Literal["categorical", "boolean", "text"]
    categories: tuple[str, ...] = ()
    ordinal: bool = False
    positive: str | None = None  # the class AUROC ranks for
    description: str = ""

    def normalise(self, raw: str) -> str:
        """The one stored form of a value (a yes/no label is stored true/false; yes, y, 1 and no, n, 0 are its
        synonyms), for every reader: sheets, agreement sheets, platform queues; ValueError naming the value and what
        is allowed."""
        value = raw.strip().lower()
        if self.kind == "boolean":
            if value in ("true", "yes", "y", "1"):
                return "true"
            if value in ("false", "no", "n", "0"):
                return "false"
            raise ValueError(f"{self.name} {raw!r} is not a yes/no value; expected true or false")
        if self.kind == "categorical":
            if value not in self.categories:
                raise ValueError(f"{self.name} {raw!r} is not one of {', '.join(self.categories)}")
            return value
        return raw.strip()


VERDICT_LABEL = "grounding.verdict"
LABELS: tuple[LabelSpec, ...] = (
    LabelSpec(
        VERDICT_LABEL,
        "categorical",
        VERDICTS,
        ordinal=True,
        positive="supported",
        description="does the document support the claim? supported / partial / unsupported / contradicted",
    ),
    LabelSpec(
        "grounding.grounded",
        "boolean",
        ("true", "false"),
        positive="true",
        description="is the claim backed by the document shown (quote included)?",
    ),
    LabelSpec(
        "citation.supports",
        "categorical",
        ("yes", "partial", "no"),
        ordinal=True,
        positive="yes",
        description="does the cited source support the claim?",
    ),
    LabelSpec(
        ANSWER_CORRECT,
        "boolean",
        ("true", "false"),
        positive="true",
        description="is the answer to the question correct?",
    ),
    LabelSpec(
        "retrieval.required_doc_ids",
        "text",
        description="ids or URLs of the documents needed to answer, separated by spaces or commas",
    ),
)


def label_spec(name: str) -> LabelSpec:
    """The schema entry of a label name: tracescore's own, else a judged score of the catalog whose values a person
    can give (a ``[[criteria]]`` criterion, a plugin's judged score: boolean, categorical, or whole numbers in a
    range such as 1-5); ValueError naming the known ones."""
    for spec in LABELS:
        if spec.name == name:
            return spec
    if (judged := _judged_label(name)) is not None:
        return judged
    raise ValueError(f"unknown label {name!r}; expected one of {', '.join(s.name for s in LABELS)} or a judged"
                     " score's name")  # fmt: skip


def _judged_label(name: str) -> LabelSpec | None:
    entry = catalog.entry(name)
    if entry is None or not entry.judged or entry.name != name:
        return None
    what = entry.definition or name
    if entry.kind == "BOOLEAN":
        return LabelSpec(name, "boolean", ("true", "false"), positive="true", description=what)
    if entry.kind == "CATEGORICAL" and entry.categories:
        return LabelSpec(name, "categorical", entry.categories, description=what)
    low, high = entry.low, entry.high
    if math.isfinite(low) and math.isfinite(high) and low.is_integer() and high.is_integer() and 2 <= high - low <= 10:
        grades = tuple(str(g) for g in range(int(high), int(low) - 1, -1))  # best first, as the verdicts
        better = grades if entry.direction >= 0 else grades[::-1]
        return LabelSpec(name, "categorical", better, ordinal=True, positive=better[0], description=what)
    return None


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


@dataclass(frozen=True)
class Label:
    """One human answer: which item, which label, the value, who gave it and when (``source``: sheet, platform)."""

    item_id: str
    label: str
    value: str
    author: str
    labelled_at: datetime
    source: str = "sheet"
    external_id: str | None = None


def add_labels(store: Store, labels: Iterable[Label], *, now: datetime) -> int:
    """Append labels, skipping one whose author's latest value for that item and label is already this value."""
    latest: dict[tuple[str, str, str], str] = {}
    for item_id, label, author, value in store.query(
        "SELECT item_id, label, author, value FROM calibration_labels ORDER BY labelled_at, rowid"
    ):
        latest[(item_id, label, author)] = value
    rows: list[tuple[Any, ...]] = []
    for lab in sorted(labels, key=lambda x: (x.labelled_at, x.item_id, x.label, x.author)):
        key = (lab.item_id, lab.label, lab.author)
        if latest.get(key) == lab.value:
            continue
        latest[key] = lab.value
        rows.append(
            (
                lab.item_id,
                lab.label,
                lab.value,
                lab.author,
                lab.source,
                _text(lab.labelled_at),
                lab.external_id,
                _text(now),
            )
        )
    if rows:
        store.write("INSERT INTO calibration_labels VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        store.commit()
    return len(rows)


def stored_labels(store: Store, label: str | None = None) -> list[Label]:
    """Every stored label row (of one label name, or all), oldest first."""
    sql = "SELECT item_id, label, value, author, labelled_at, source, external_id FROM calibration_labels"
    params: tuple[Any, ...] = ()
    if label is not None:
        sql, params = sql + " WHERE label = ?", (label,)
    return [
        Label(r[0], r[1], r[2], r[3], datetime.fromisoformat(r[4]), r[5], r[6])
        for r in store.query(sql + " ORDER BY labelled_at, rowid", params)
    ]


def _current(labels: Sequence[Label]) -> dict[str, list[tuple[str, str, datetime]]]:
    """Per item: each author's latest value, ordered by when the author first labelled the item."""
    first: dict[tuple[str, str], datetime] = {}
    value: dict[tuple[str, str], str] = {}
    for lab in labels:
        first.setdefault((lab.item_id, lab.author), lab.labelled_at)
        value[(lab.item_id, lab.author)] = lab.value
    out: dict[str, list[tuple[str, str, datetime]]] = {}
    for (item_id, author), v in value.items():
        out.setdefault(item_id, []).append((author, v, first[(item_id, author)]))
    for reviewers in out.values():
        reviewers.sort(key=lambda r: (r[2], r[0]))
    return out


def labelled_pairs(
    store: Store, *, label: str, judge_model: str, rubric_version: str
) -> tuple[list[Pair], list[tuple[str, str, str]]]:
    """Judge–human pairs of the random slice for one judge and label, each weighted by 1/inclusion probability (the
    first reviewer of an item gives its human label), and the reviewer–reviewer pairs of items several people
    labelled."""
    judged: dict[str, tuple[str, float | None, float]] = {}
    for item_id, judge_json, probability in store.query(
        "SELECT item_id, judge, inclusion_probability FROM calibration_items WHERE slice = 'random' AND"
        " judge_model = ? AND rubric_version = ?",
        (judge_model, rubric_version),
    ):
        values = json.loads(judge_json)
        if label in values.get("values", {}):
            weight = 1.0 / probability if probability else 1.0
            judged[item_id] = (values["values"][label], values.get("scores", {}).get(label), weight)
    current = _current([lab for lab in stored_labels(store, label) if lab.item_id in judged])
    pairs = [
        Pair(item_id, reviewers[0][1], judged[item_id][0], judged[item_id][1], judged[item_id][2])
        for item_id, reviewers in sorted(current.items())
    ]
    between = human_pairs([(item_id, a, v) for item_id, rs in current.items() for a, v, _ in rs])
    return pairs, between


@dataclass(frozen=True)
class Calibration:
    """One stored measurement of a judge (model × rubric version) against human labels on one label."""

    calibration_id: str
    judge_model: str
    rubric_version: str
    label: str
    n: int
    kappa: float | None
    kappa_interval: tuple[float, float] | None
    raw: float | None
    raw_interval: tuple[float, float] | None
    measured_at: datetime
    detail: dict[str, Any]

    @property
    def agreement(self) -> dict[str, Any]:
        """What a judged score carries in its metadata; kappa left out (with its reason) when undefined."""
        out: dict[str, Any] = {
            "raw": self.raw,
            "n": self.n,
            "measured_at": _text(self.measured_at),
            "calibration_id": self.calibration_id,
        }
        if self.kappa is not None:
            out["kappa"] = self.kappa
        else:
            out["kappa_reason"] = self.detail.get("kappa", {}).get("reason", "kappa undefined")
        return out

    @classmethod
    def of(cls, figures: Agreement, judge_model: str, rubric_version: str, measured_at: datetime) -> Calibration:
        """A new calibration (fresh id) from measured figures."""
        k, r = figures.kappa, figures.raw
        return cls(
            uuid.uuid4().hex,
            judge_model,
            rubric_version,
            figures.label,
            figures.n,
            k.value,
            (k.low, k.high) if k.low is not None and k.high is not None else None,
            r.value,
            (r.low, r.high) if r.low is not None and r.high is not None else None,
            measured_at,
            figures.as_dict(),
        )

    @property
    def kappa_reason(self) -> str | None:
        """Why kappa or its interval is missing, when it is."""
        reason = self.detail.get("kappa", {}).get("reason")
        return str(reason) if reason else None


def measure_and_record(
    store: Store, *, judge_model: str, rubric_version: str, label: str, now: datetime, seed: int = 0
) -> Calibration:
    """Measure the judge against the stored labels of the random slice and store the calibration."""
    spec = label_spec(label)
    pairs, between = labelled_pairs(store, label=label, judge_model=judge_model, rubric_version=rubric_version)
    figures = measure(
        pairs,
        label=label,
        categories=spec.categories or None,
        ordinal=spec.ordinal,
        positive=spec.positive,
        human_human=between,
        seed=seed,
    )
    detail = figures.as_dict()
    sampled = sampled_at(store, judge_model, rubric_version, {p.item_id for p in pairs})
    if sampled is not None:
        detail["judge_sample"] = sampled
    calibration = replace(Calibration.of(figures, judge_model, rubric_version, now), detail=detail)
    k, r = figures.kappa, figures.raw
    store.write(
        "INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                calibration.calibration_id,
                judge_model,
                rubric_version,
                label,
                figures.n,
                k.value,
                k.low,
                k.high,
                r.value,
                r.low,
                r.high,
                _text(now),
                json.dumps(detail),
            )
        ],
    )
    store.commit()
    return calibration


def sampled_at(store: Store, judge_model: str, rubric_version: str, items: set[str]) -> dict[str, Any] | None:
    """The ``[scoring] judge_sample`` of the runs these calibration items came from: the rates, and how many items
    came from traces the hash chose, a deterministic stage flagged, or a run judging every trace; None when every
    item came from such a run (no sample)."""
    rates: set[float] = set()
    by = {"hash": 0, "flagged": 0, "every_trace": 0}
    for item_id, judge_json in store.query(
        "SELECT item_id, judge FROM calibration_items WHERE slice = 'random' AND judge_model = ? AND"
        " rubric_version = ?",
        (judge_model, rubric_version),
    ):
        if item_id not in items:
            continue
        tag = json.loads(judge_json).get("judge_sample")
        if isinstance(tag, dict) and tag.get("by") in by:
            rates.add(float(tag["rate"]))
            by[tag["by"]] += 1
        else:
            by["every_trace"] += 1
    return {"rates": sorted(rates), "items": by} if rates else None


def latest_calibration(
    store: Store, judge_model: str, rubric_version: str, label: str = VERDICT_LABEL
) -> Calibration | None:
    """The most recent calibration of this judge model and rubric version on ``label``, or None if never measured."""
    rows = store.query(
        "SELECT id, n, kappa, kappa_low, kappa_high, raw, raw_low, raw_high, measured_at, detail FROM calibrations"
        " WHERE judge_model = ? AND rubric_version = ? AND label = ? ORDER BY measured_at DESC, rowid DESC LIMIT 1",
        (judge_model, rubric_version, label),
    )
    if not rows:
        return None
    cid, n, kappa, k_lo, k_hi, raw, r_lo, r_hi, measured_at, detail = rows[0]
    return Calibration(
        cid,
        judge_model,
        rubric_version,
        label,
        n,
        kappa,
        (k_lo, k_hi) if k_lo is not None and k_hi is not None else None,
        raw,
        (r_lo, r_hi) if r_lo is not None and r_hi is not None else None,
        datetime.fromisoformat(measured_at),
        json.loads(detail),
    )
