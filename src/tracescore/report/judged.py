"""The gate's rule for judged scores: only a judge calibrated against human labels may fail a gate.

A failing threshold or regression rule on a judged catalog score stays failing only when every judge model + rubric
version of the run has a calibration in the store with kappa ≥ ``min_judge_kappa`` (a ``[[criteria]]`` criterion:
its own calibration, on its label at its version). Otherwise the rule is demoted
to the review list (``warn``), its failing cases named and the reason said; a rule with no value to check (the
score never computed) is a data problem, not a judge verdict, and keeps failing.
"""

from __future__ import annotations

from collections.abc import Mapping

from tracescore import catalog
from tracescore.calibrate.labels import VERDICT_LABEL, latest_calibration
from tracescore.calibrate.trust import judge_is_trusted
from tracescore.store.db import Store


def judge_trust(
    judges: set[tuple[str, str]], store: Store | None, min_kappa: float, label: str = VERDICT_LABEL
) -> tuple[bool, str]:
    """(may judged scores fail the gate, why): every judge of the run needs its per-claim verdict (or ``label``, with
    the rubric version each pair names) calibrated."""
    if store is None:
        return False, "no calibration: no store given (pass --store) to look up the judge's agreement with humans"
    if not judges:
        return False, "no calibration: the result lines name no judge model and rubric version"
    reasons: list[str] = []
    for model, rubric in sorted(judges):
        trusted, why = judge_is_trusted(latest_calibration(store, model, rubric, label), min_kappa)
        if not trusted:
            return False, why
        reasons.append(why)
    return True, "; ".join(reasons)


def review(
    subject: str,
    judges: set[tuple[str, str]],
    cases: Mapping[str, tuple[str, Mapping[str, bool | None]]],
    store: Store | None,
    min_kappa: float,
) -> tuple[bool, str, str, list[tuple[str, str]]] | None:
    """For a failing rule on ``subject``: None when the score is not judged, else (may it fail, the words to add to
    its message, its stage, the (case, trace id) pairs that failed that stage: the review list when demoted)."""
    known = catalog.entry(subject.split("@", 1)[0])
    if known is None or not known.judged:
        return None
    if known.scorer == known.name:  # a score that is its scorer's one verdict (a [[criteria]] criterion): its own
        judges, label = {(model, known.version) for model, _ in judges}, known.name  # calibration, at its version
    else:
        label = VERDICT_LABEL
    trusted, why = judge_trust(judges, store, min_kappa, label)
    if trusted:
        return True, f" (judge trusted: {why})", known.stage, []
    failing = [(case, tid) for case, (tid, verdicts) in sorted(cases.items()) if verdicts.get(known.stage) is False]
    return False, f"; demoted to review, the judge may not fail the gate: {why}", known.stage, failing
