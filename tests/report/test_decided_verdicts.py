"""``decided_verdicts`` (the verdicts a line's cell and four scores decide, remembered by their values and types)
equals the decided pairs of ``verdicts_of`` on many varied lines, each seen many times."""

from __future__ import annotations

import random
from typing import Any

from tracescore.report.verdicts import decided_verdicts, verdicts_of
from tracescore.scorers.answer import ANSWER_CORRECT
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scorers.grounding import GROUNDING_RATE
from tracescore.scorers.retrieval import RECALL_PREFIX

_CELLS: list[Any] = ["retrieval_pass/right", "retrieval_fail/wrong", "grounded/right", "ungrounded/wrong", "", "/x",
                     "grounded", "retrieval_pass/", 3, None]  # fmt: skip
_VALUES: list[Any] = [None, True, False, 0, 1, 2, 0.0, -0.0, 0.5, 1.0, 0.69, 0.7, float("nan"), "yes", [1]]


def _line(rng: random.Random) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    if rng.random() < 0.9:
        scores[DIAGNOSIS] = rng.choice(_CELLS)
    for name in (GROUNDING_RATE, ANSWER_CORRECT, CITATION_FABRICATED_COUNT,
                 CITATION_UNFETCHED_RATE, RECALL_PREFIX + "5"):  # fmt: skip
        value = rng.choice(_VALUES)
        if value is not None:
            scores[name] = value
    return scores


def test_decided_verdicts_equal_verdicts_of() -> None:
    rng = random.Random(2)
    lines = [_line(rng) for _ in range(400)]
    for _ in range(5):  # each line again: the remembered verdicts answer
        for scores in lines:
            want = tuple((s, v) for s, v in verdicts_of(scores).items() if v is not None)
            assert decided_verdicts(scores) == want, scores


def test_a_wrong_verdict_would_be_seen() -> None:
    scores = {DIAGNOSIS: "retrieval_fail/wrong"}
    assert decided_verdicts(scores) != decided_verdicts({DIAGNOSIS: "retrieval_pass/right"})
