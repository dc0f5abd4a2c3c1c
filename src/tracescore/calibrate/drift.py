"""Drift: re-judge the human-labelled items with the configured judge and compare its agreement with the stored one.

Run it before switching judge models (or after a rubric edit): the items of the random slice that people labelled
are judged again from their traces, the new verdicts are measured against the same human labels, and the check
fails when the new kappa falls below the interval of the stored calibration it is compared with (by default the
latest calibration of the configured judge model, else the latest of this rubric version from any model: the one
being replaced). The judge goes through the store's cache, so an unchanged judge on unchanged traces costs nothing.
An item whose trace is not given, whose judge call fails, or whose claim the new judgement no longer has is skipped
and named; nothing is guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tracescore.calibrate.agreement import Agreement, Pair, measure
from tracescore.calibrate.labels import VERDICT_LABEL, Calibration, label_spec, labelled_pairs, latest_calibration
from tracescore.judge.protocol import Judge
from tracescore.judge.redact import Redactor
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.scorers.grounding import GROUNDING_RATE, grounding_scorer
from tracescore.store.db import Store
from tracescore.trace import Trace

_SUPPORTS = {"supported": "yes", "partial": "partial"}


@dataclass(frozen=True)
class DriftResult:
    """The outcome: ``ok``, ``drift`` (kappa below the stored interval) or ``unknown`` (could not compare), why,
    and the figures behind it."""

    status: Literal["ok", "drift", "unknown"]
    reason: str
    judge_model: str
    rubric_version: str
    label: str
    baseline: Calibration | None = None
    figures: Agreement | None = None
    changed: int = 0  # items whose judge value differs from the one the baseline measured
    skipped: list[str] = field(default_factory=list)  # "item_id: why"

    @property
    def passed(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form for the command's output."""
        return {
            "status": self.status,
            "reason": self.reason,
            "judge_model": self.judge_model,
            "rubric_version": self.rubric_version,
            "label": self.label,
            "baseline": None
            if self.baseline is None
            else {
                "calibration_id": self.baseline.calibration_id,
                "judge_model": self.baseline.judge_model,
                "kappa": self.baseline.kappa,
                "kappa_interval": list(self.baseline.kappa_interval) if self.baseline.kappa_interval else None,
                "n": self.baseline.n,
            },
            "kappa": None if self.figures is None else self.figures.kappa.as_dict(),
            "n": 0 if self.figures is None else self.figures.n,
            "changed": self.changed,
            "skipped": self.skipped,
        }


def baseline_for(
    store: Store, judge_model: str, rubric_version: str, label: str = VERDICT_LABEL, against: str | None = None
) -> Calibration | None:
    """The stored calibration to compare with: of model ``against`` when given, else of ``judge_model``, else the
    latest one of this rubric version and label from any model."""
    if against is not None:
        return latest_calibration(store, against, rubric_version, label)
    own = latest_calibration(store, judge_model, rubric_version, label)
    if own is not None:
        return own
    rows = store.query(
        "SELECT judge_model FROM calibrations WHERE rubric_version = ? AND label = ?"
        " ORDER BY measured_at DESC, rowid DESC LIMIT 1",
        (rubric_version, label),
    )
    return latest_calibration(store, rows[0][0], rubric_version, label) if rows else None


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _values(row: Mapping[str, Any]) -> dict[str, str]:
    """The judge's value of each label for one claim row (as sampling records them)."""
    verdict = str(row["verdict"])
    out = {VERDICT_LABEL: verdict, "grounding.grounded": str(verdict == "supported").lower()}
    if row.get("cited"):
        out["citation.supports"] = _SUPPORTS.get(row.get("cited_verdict") or "", "no")
    return out


def rejudge(
    items: Mapping[str, tuple[str, str]],
    traces: Mapping[str, Trace],
    judge: Judge,
    merge_partial: str | None = None,
    rubric: Rubric | None = None,
    redact: Redactor | None = None,
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Judge the traces of ``items`` (item id → (trace id, claim text)) again, as scoring does (``merge_partial``,
    the grounding ``rubric`` and ``redact``, so the claims compare with the stored ones, included): per item the new
    judge values, and one "item_id: why" per item that could not be re-judged."""
    scorer = grounding_scorer(judge=judge, merge_partial=merge_partial, rubric=rubric)
    if redact is not None:
        scorer = redact.around([scorer])[0]
    by_trace: dict[str, list[tuple[str, str]]] = {}
    for item, (trace_id, claim) in sorted(items.items()):
        by_trace.setdefault(trace_id, []).append((item, claim))
    values: dict[str, dict[str, str]] = {}
    skipped: list[str] = []
    for trace_id, wanted in sorted(by_trace.items()):
        trace = traces.get(trace_id)
        if trace is None:
            skipped += [f"{item}: trace {trace_id} not among the traces given" for item, _ in wanted]
            continue
        scored = scorer(trace)
        rate = next((s for s in scored if s.name == GROUNDING_RATE), None)
        if rate is None or rate.value is None:
            why = "no grounding score" if rate is None else (rate.reason or "not judged")
            why += f" ({rate.comment})" if rate is not None and rate.comment else ""
            skipped += [f"{item}: trace {trace_id} not judged: {why}" for item, _ in wanted]
            continue
        rows = {_norm(r.text): r.as_dict() for r in scored.claims}
        for item, claim in wanted:
            row = rows.get(_norm(claim))
            if row is None:
                skipped.append(f"{item}: the new judgement of trace {trace_id} has no claim {claim!r}")
            else:
                values[item] = _values(row)
    return values, skipped


def check_drift(
    store: Store,
    traces: Mapping[str, Trace],
    judge: Judge,
    *,
    label: str = VERDICT_LABEL,
    against: str | None = None,
    seed: int = 0,
    merge_partial: str | None = None,
    rubric: Rubric | None = None,
    redact: Redactor | None = None,
) -> DriftResult:
    """Re-judge the labelled items of the baseline calibration with ``judge`` and the grounding ``rubric`` (default
    the bundled one) and compare kappa with its interval."""
    chosen = rubric or load_rubric("grounding")
    rubric_version = chosen.version
    base = baseline_for(store, judge.model, rubric_version, label, against)
    result: dict[str, Any] = {
        "judge_model": judge.model, "rubric_version": rubric_version, "label": label, "baseline": base
    }
    if base is None:
        whose = against or f"{judge.model} or any other model"
        return DriftResult(
            "unknown",
            f"no stored calibration of {whose} on rubric {rubric_version} label {label} to compare with;"
            " label a sample and run `calibrate measure` first",
            **result,
        )
    pairs, _ = labelled_pairs(store, label=label, judge_model=base.judge_model, rubric_version=base.rubric_version)
    claims = {
        item: (trace_id, _claim(item_json))
        for item, trace_id, item_json in store.query(
            "SELECT item_id, trace_id, item FROM calibration_items WHERE slice = 'random'"
        )
    }
    wanted = {p.item_id: claims[p.item_id] for p in pairs if p.item_id in claims}
    new, skipped = rejudge(wanted, traces, judge, merge_partial, chosen, redact)
    fresh: list[Pair] = []
    changed = 0
    for p in pairs:
        value = new.get(p.item_id, {}).get(label)
        if value is None:
            if p.item_id in new:
                skipped.append(f"{p.item_id}: the new judgement gives no {label} value")
            continue
        fresh.append(Pair(p.item_id, p.human, value, None, p.weight))
        changed += value != p.judge
    if not fresh:
        why = f"none of the {len(pairs)} labelled item(s) could be re-judged"
        return DriftResult("unknown", why, skipped=skipped, **result)
    spec = label_spec(label)
    figures = measure(
        fresh, label=label, categories=spec.categories or None, ordinal=spec.ordinal, positive=spec.positive, seed=seed
    )
    result |= {"figures": figures, "changed": changed, "skipped": skipped}
    kappa = figures.kappa.value
    was = f"calibration {base.calibration_id[:8]} of {base.judge_model} (n={base.n})"
    if kappa is None:
        return DriftResult("unknown", f"kappa undefined on the re-judged items: {figures.kappa.reason}", **result)
    if base.kappa_interval is None:
        why = base.kappa_reason or "no interval"
        return DriftResult("unknown", f"kappa {kappa:.2f} (n={figures.n}), but {was} has no interval: {why}", **result)
    low, high = base.kappa_interval
    now = f"kappa {kappa:.2f} on {figures.n} re-judged item(s) ({changed} verdict(s) changed)"
    if kappa < low:
        return DriftResult("drift", f"{now} is below the stored interval {low:.2f}..{high:.2f} of {was}", **result)
    return DriftResult("ok", f"{now} is within or above the stored interval {low:.2f}..{high:.2f} of {was}", **result)


def _claim(item_json: str) -> str:
    return str(json.loads(item_json).get("claim", ""))
