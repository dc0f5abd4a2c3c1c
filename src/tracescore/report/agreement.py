"""The report's agreement section: how far each judge's labels can be trusted, from the calibrations in the store.

One entry per judge model × rubric version × label (its latest calibration): n, raw agreement with its Wilson
interval, kappa with its bootstrap interval, the confusion matrix (human rows, judge columns), per-label precision
and recall, AUROC where the judge gives a graded value, the human–human ceiling, and for the per-claim verdict
whether PARTIAL is above chance. Judges named by the reported results come first; one of them never calibrated is
listed too, so an unmeasured judge is visible rather than silently missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.calibrate.labels import LABELS, VERDICT_LABEL, Calibration, latest_calibration
from tracescore.calibrate.trust import partial_above_chance
from tracescore.store.db import Store

_ORDER = {spec.name: n for n, spec in enumerate(LABELS)}


@dataclass(frozen=True)
class AgreementEntry:
    """One judge model × rubric version × label: its latest calibration (None: never calibrated) and the PARTIAL
    finding (verdict label only: above chance True/False/None, and the sentence)."""

    judge_model: str
    rubric_version: str
    label: str
    calibration: Calibration | None
    used: bool = False  # the judge of the reported results
    partial: tuple[bool | None, str] | None = None

    @property
    def figures(self) -> dict[str, Any]:
        """The stored figures (``Agreement.as_dict()``), empty when never calibrated."""
        return self.calibration.detail if self.calibration is not None else {}


@dataclass
class AgreementSection:
    """Every entry to show, judges of the results first."""

    entries: list[AgreementEntry] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.entries)


def judges_of(results: Iterable[Mapping[str, Any]], into: set[tuple[str, str]]) -> Iterator[Mapping[str, Any]]:
    """Pass result lines through unchanged, adding each line's judge (model, rubric version) to ``into``."""
    for result in results:
        judge = result.get("judge")
        if isinstance(judge, Mapping) and judge.get("model"):
            into.add((str(judge["model"]), str(judge.get("rubric_version") or "")))
        yield result


def agreement_section(store: Store, judges: Iterable[tuple[str, str]] = ()) -> AgreementSection:
    """The latest calibration of every judge model × rubric version × label in ``store``, plus an uncalibrated entry
    for each judge in ``judges`` (those of the reported results) that has none."""
    used = set(judges)
    measured = {
        (model, rubric, label)
        for model, rubric, label in store.query("SELECT DISTINCT judge_model, rubric_version, label FROM calibrations")
    }
    keys = set(measured)
    for model, rubric in used:
        if not any(k[0] == model and k[1] == rubric for k in measured):
            keys.add((model, rubric, VERDICT_LABEL))
    entries = []
    for model, rubric, label in sorted(
        keys, key=lambda k: ((k[0], k[1]) not in used, k not in measured, k[0], k[1], _ORDER.get(k[2], 99))
    ):
        calibration = latest_calibration(store, model, rubric, label)
        partial = partial_above_chance(calibration) if calibration is not None and label == VERDICT_LABEL else None
        entries.append(AgreementEntry(model, rubric, label, calibration, (model, rubric) in used, partial))
    return AgreementSection(entries)


def agreement_to_json(section: AgreementSection) -> list[dict[str, Any]]:
    """The section as JSON (``report --format json`` puts it under ``agreement``)."""
    out = []
    for e in section.entries:
        c = e.calibration
        item: dict[str, Any] = {
            "judge_model": e.judge_model,
            "rubric_version": e.rubric_version,
            "label": e.label,
            "used_by_results": e.used,
        }
        if c is None:
            item["calibration"] = None
        else:
            item["calibration"] = {"calibration_id": c.calibration_id, "measured_at": c.measured_at.isoformat()}
            item["figures"] = c.detail
        if e.partial is not None:
            item["partial_above_chance"] = {"value": e.partial[0], "reason": e.partial[1]}
        out.append(item)
    return out
