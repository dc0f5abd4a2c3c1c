"""Scorers: pure functions of a Trace that return named Scores (present, or absent with a reason)."""

from __future__ import annotations

from collections.abc import Callable

from tracescore.scorers.answer import answer_scorer
from tracescore.scorers.citations import citation_scorer
from tracescore.scorers.diagnosis import CELLS, diagnose
from tracescore.scorers.grounding import grounding_scorer
from tracescore.scorers.retrieval import retrieval_scorer
from tracescore.scorers.semantic import semantic_scorer
from tracescore.scorers.surface import surface_scorer
from tracescore.scores import Score
from tracescore.trace import Trace

__all__ = [
    "CELLS",
    "Scorer",
    "answer_scorer",
    "citation_scorer",
    "default_scorers",
    "diagnose",
    "grounding_scorer",
    "retrieval_scorer",
    "semantic_scorer",
    "surface_scorer",
]

Scorer = Callable[[Trace], list[Score]]


def default_scorers(*, k: int = 5, final_answer_prefix: str | None = "FINAL ANSWER:") -> list[Scorer]:
    """The deterministic stages: retrieval, citations, answer (no network, no key)."""
    return [retrieval_scorer(k=k), citation_scorer(), answer_scorer(final_answer_prefix=final_answer_prefix)]
