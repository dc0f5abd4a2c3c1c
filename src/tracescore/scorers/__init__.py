"""Scorers: pure functions of a Trace that return a ``Scored``: named Scores (present, or absent with a reason) and the
rows and notes behind them."""

from __future__ import annotations

from datetime import timedelta

from tracescore.scorers.answer import answer_scorer
from tracescore.scorers.citations import citation_scorer
from tracescore.scorers.diagnosis import CELLS, diagnose
from tracescore.scorers.grounding import grounding_scorer
from tracescore.scorers.numbers import numbers_scorer
from tracescore.scorers.retrieval import retrieval_scorer
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.semantic import semantic_scorer
from tracescore.scorers.stale import DEFAULT_STALE_AFTER, stale_scorer
from tracescore.scorers.surface import surface_scorer
from tracescore.scorers.trajectory import trajectory_scorer

__all__ = [
    "CELLS",
    "Scored",
    "Scorer",
    "answer_scorer",
    "citation_scorer",
    "default_scorers",
    "diagnose",
    "grounding_scorer",
    "numbers_scorer",
    "retrieval_scorer",
    "semantic_scorer",
    "stale_scorer",
    "surface_scorer",
    "trajectory_scorer",
]


def default_scorers(
    *, k: int = 5, final_answer_prefix: str | None = "FINAL ANSWER:", stale_after: timedelta = DEFAULT_STALE_AFTER
) -> list[Scorer]:
    """The deterministic stages: retrieval, citations, answer, the answer's numbers, the trajectory, stale sources
    (no network, no key)."""
    return [retrieval_scorer(k=k), citation_scorer(), answer_scorer(final_answer_prefix=final_answer_prefix),
            numbers_scorer(), trajectory_scorer(), stale_scorer(stale_after=stale_after)]
