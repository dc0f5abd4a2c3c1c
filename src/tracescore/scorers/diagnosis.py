"""Diagnosis: the stage contingency cell of one trace, so a wrong answer points at the stage that broke.

Cells: ``retrieval_fail/{right,wrong}``; when retrieval passed, ``grounded/…`` or ``ungrounded/…`` if grounding was
judged, else ``retrieval_pass/…``. Built from the other scores of the trace, never from a stage average.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from tracescore.catalog import ANSWER_CORRECT, ANSWER_TOKEN_F1, DIAGNOSIS, GROUNDING_RATE, entry, recall_name
from tracescore.scores import Score, absent, score

__all__ = ["CELLS", "MIN_F1", "MIN_GROUNDING", "MIN_RECALL", "SCORER_VERSION", "diagnose"]

SCORER_VERSION = "diagnosis-1"
MIN_RECALL, MIN_GROUNDING, MIN_F1 = 1.0, 0.8, 0.5  # the cuts of a passing stage; the report's verdicts read them too
CELLS = tuple(
    f"{row}/{col}"
    for row in ("retrieval_fail", "ungrounded", "grounded", "retrieval_pass")
    for col in ("right", "wrong")
)
_REFUSAL_CASE = "refusal case"
_RECALL = entry(recall_name(1))


@lru_cache(maxsize=256)
def _is_recall(name: str) -> bool:
    """Whether ``name`` is a recall@k score, by the catalog's rule; cached (a run has a few dozen names)."""
    return _RECALL is not None and _RECALL.matches(name)


def _recall(scores: Mapping[str, Score]) -> Score | None:
    return next((s for n, s in scores.items() if _is_recall(n)), None)


def diagnose(
    scores: Mapping[str, Score],
    *,
    min_recall: float = MIN_RECALL,
    min_grounding: float = MIN_GROUNDING,
    min_f1: float = MIN_F1,
) -> Score:
    """The contingency cell from a trace's scores, or absent with the reason a stage could not be decided.

    Retrieval passes when recall@k ≥ ``min_recall`` (a refusal case, with nothing required, passes); grounded
    means ``grounding.rate`` ≥ ``min_grounding``; the answer is right by ``answer.correct``, else by token F1 ≥
    ``min_f1``.
    """
    recall = _recall(scores)
    if recall is None:
        return absent(DIAGNOSIS, "retrieval was not scored")
    if recall.present:
        retrieval_ok = float(recall.value) >= min_recall  # type: ignore[arg-type]
    elif recall.reason and recall.reason.startswith(_REFUSAL_CASE):
        retrieval_ok = True
    else:
        return absent(DIAGNOSIS, f"retrieval undecided: {recall.reason}")

    correct, f1 = scores.get(ANSWER_CORRECT), scores.get(ANSWER_TOKEN_F1)
    if correct is not None and correct.present:
        right = bool(correct.value)
    elif f1 is not None and f1.present:
        right = float(f1.value) >= min_f1  # type: ignore[arg-type]
    else:
        return absent(DIAGNOSIS, "answer undecided: no answer label")
    col = "right" if right else "wrong"

    if not retrieval_ok:
        return score(DIAGNOSIS, f"retrieval_fail/{col}", comment=recall.comment)
    grounding = scores.get(GROUNDING_RATE)
    if grounding is not None and grounding.present:
        row = "grounded" if float(grounding.value) >= min_grounding else "ungrounded"  # type: ignore[arg-type]
        return score(DIAGNOSIS, f"{row}/{col}", comment=grounding.comment if row == "ungrounded" else None)
    return score(DIAGNOSIS, f"retrieval_pass/{col}")
