"""Diagnosis: the stage contingency cell of one trace, so a wrong answer points at the stage that broke.

Cells: ``retrieval_fail/{right,wrong}``; when retrieval passed, ``grounded/…`` or ``ungrounded/…`` if grounding was
judged, else ``retrieval_pass/…``. Built from the other scores of the trace, never from a stage average.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.result import TraceResult
from tracescore.scorers.answer import ANSWER_CORRECT, ANSWER_TOKEN_F1
from tracescore.scorers.grounding import GROUNDING_RATE
from tracescore.scorers.hops import RETRIEVAL_HOPS_FOUND
from tracescore.scorers.retrieval import SPECS as RETRIEVAL_SPECS
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace

DIAGNOSIS = "diagnosis"

MIN_RECALL, MIN_GROUNDING, MIN_F1 = 1.0, 0.8, 0.5  # the cuts of a passing stage; the report's verdicts read them too
CELLS = tuple(
    f"{row}/{col}"
    for row in ("retrieval_fail", "ungrounded", "grounded", "retrieval_pass")
    for col in ("right", "wrong")
)
_RECALL = RETRIEVAL_SPECS[0]  # retrieval.recall_at_{k}
SPECS = (
    ScoreSpec(DIAGNOSIS, "categorical", None, categories=CELLS,
              absent=reasons(Reasons.RETRIEVAL_NOT_SCORED, Reasons.RETRIEVAL_UNDECIDED, Reasons.NO_ANSWER_DECIDED),
              definition="the stage contingency cell (retrieval_fail/ungrounded/grounded × right/wrong)"),
)  # fmt: skip


@scorer(stage="diagnosis", version="diagnosis-1", scores=SPECS)
def diagnosis(trace: Trace, *, scores: Mapping[str, Score]) -> list[Score]:
    """The cell of ``trace`` from its other scores: registered for its declaration; the engine derives it after
    every other scorer (``engine/pipeline.score_trace``)."""
    return [diagnose(scores)]


def cell_of(result: TraceResult) -> str | None:
    """The diagnosis cell of a scored trace, or None when undecided."""
    cell = result.scores.get(DIAGNOSIS)
    return str(cell.value) if cell is not None and cell.value is not None else None


@lru_cache(maxsize=256)
def _is_recall(name: str) -> bool:
    """Whether ``name`` is a recall@k score, by the catalog's rule; cached (a run has a few dozen names)."""
    return _RECALL.matches(name)


def _recall(scores: Mapping[str, Score]) -> Score | None:
    for name, s in scores.items():
        if _is_recall(name):
            return s
    return None


# the outcomes that carry no per-trace text, built once (Scores are frozen; their metadata is only read downstream)
_NOT_SCORED = absent(DIAGNOSIS, Reasons.RETRIEVAL_NOT_SCORED.text)
_NO_LABEL = absent(DIAGNOSIS, Reasons.NO_ANSWER_DECIDED.text)
_PLAIN = MappingProxyType({cell: score(DIAGNOSIS, cell) for cell in CELLS})  # a cell without a comment


@lru_cache(maxsize=256)
def _undecided(reason: str | None) -> Score:
    """Absent because retrieval was undecided, for ``reason``; a run has a few reasons, so each is built once."""
    return absent(DIAGNOSIS, Reasons.RETRIEVAL_UNDECIDED.format(reason=reason))


def _cell(cell: str, comment: str | None) -> Score:
    return _PLAIN[cell] if comment is None else score(DIAGNOSIS, cell, comment=comment)


def diagnose(
    scores: Mapping[str, Score],
    *,
    min_recall: float = MIN_RECALL,
    min_grounding: float = MIN_GROUNDING,
    min_f1: float = MIN_F1,
) -> Score:
    """The contingency cell from a trace's scores, or absent with the reason a stage could not be decided.

    Retrieval passes when recall@k ≥ ``min_recall`` (a refusal case, with nothing required, passes) and, in a
    multi-hop case (``retrieval.hops_found``), every hop was found; grounded
    means ``grounding.rate`` ≥ ``min_grounding``; the answer is right by ``answer.correct``, else by token F1 ≥
    ``min_f1``.
    """
    recall = _recall(scores)
    if recall is None:
        return _NOT_SCORED
    hops = scores.get(RETRIEVAL_HOPS_FOUND)
    if hops is not None:  # a multi-hop case: retrieval passes only when every hop was found (and recall, if labelled)
        if hops.value is None:
            return _undecided(hops.reason)
        if float(hops.value) < 1.0 or recall.reason == Reasons.NO_REQUIRED_LABEL.text:
            recall = hops  # a hop never found fails retrieval; with hops alone, the hops decide it
    if recall.value is not None:
        retrieval_ok = float(recall.value) >= min_recall
    elif recall.reason == Reasons.REFUSAL_RECALL.text:
        retrieval_ok = True
    else:
        return _undecided(recall.reason)

    correct, f1 = scores.get(ANSWER_CORRECT), scores.get(ANSWER_TOKEN_F1)
    if correct is not None and correct.value is not None:
        right = bool(correct.value)
    elif f1 is not None and f1.value is not None:
        right = float(f1.value) >= min_f1
    else:
        return _NO_LABEL
    col = "right" if right else "wrong"

    if not retrieval_ok:
        return _cell(f"retrieval_fail/{col}", recall.comment)
    grounding = scores.get(GROUNDING_RATE)
    if grounding is not None and grounding.value is not None:
        row = "grounded" if float(grounding.value) >= min_grounding else "ungrounded"
        return _cell(f"{row}/{col}", grounding.comment if row == "ungrounded" else None)
    return _PLAIN[f"retrieval_pass/{col}"]
