"""The retrieval budget per report column (a provider, a model, any ``--group-by`` group): searches, fetches and
characters read per answer, and correct answers per 100,000 characters read; and the first query of each trace the
work queue names (the HTML work queue's query column).

Folded from the trajectory scores of the result lines (``trajectory.search_calls``, ``trajectory.fetch_calls``,
``trajectory.fetch_chars``, ``trajectory.query_overlap``) and ``answer.correct``; a line scored before they existed
(or under their names before #43) adds nothing. An answer is a trace with a search or fetch step
(``trajectory.search_calls`` present). A trace that fetched nothing read 0 characters; one whose
``trajectory.fetch_chars`` is absent (a fetch could not be read) is left out of the character figures. Correct answers
per 100,000 characters is over the traces with both a character count and a decided answer: 100,000 × correct / their
characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.scorers.answer import ANSWER_CORRECT
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scorers.trajectory import FETCH_CALLS, FETCH_CHARS, SEARCH_CALLS, SEARCH_QUERY_OVERLAP, first_query

PER_CHARS = 100_000  # correct answers per this many characters read


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class Budget:
    """One column's sums: answers (traces with a trajectory), their searches and fetches, the characters read."""

    answers: int = 0
    searches: float = 0.0
    fetches: float = 0.0
    read: int = 0  # answers whose characters are known
    chars: float = 0.0
    decided: int = 0  # answers with known characters and a decided answer.correct
    decided_chars: float = 0.0
    correct: int = 0

    def add(self, scores: Mapping[str, Any]) -> None:
        searches = _number(scores.get(SEARCH_CALLS))
        if searches is None:
            return
        self.answers += 1
        self.searches += searches
        fetches = _number(scores.get(FETCH_CALLS)) or 0.0
        self.fetches += fetches
        chars = 0.0 if not fetches else _number(scores.get(FETCH_CHARS))
        if chars is None:
            return
        self.read += 1
        self.chars += chars
        correct = scores.get(ANSWER_CORRECT)
        if isinstance(correct, bool):
            self.decided += 1
            self.decided_chars += chars
            self.correct += correct

    @property
    def searches_per_answer(self) -> float | None:
        return self.searches / self.answers if self.answers else None

    @property
    def fetches_per_answer(self) -> float | None:
        return self.fetches / self.answers if self.answers else None

    @property
    def chars_per_answer(self) -> float | None:
        return self.chars / self.read if self.read else None

    @property
    def correct_per_chars(self) -> float | None:
        """Correct answers per ``PER_CHARS`` characters read (None when no decided answer read any)."""
        return PER_CHARS * self.correct / self.decided_chars if self.decided_chars else None

    def to_json(self) -> dict[str, Any]:
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 6)

        return {"answers": self.answers, "searches_per_answer": rounded(self.searches_per_answer),
                "fetches_per_answer": rounded(self.fetches_per_answer), "answers_read": self.read,
                "chars_per_answer": rounded(self.chars_per_answer), "decided": self.decided, "correct": self.correct,
                "correct_per_100k_chars": rounded(self.correct_per_chars)}  # fmt: skip


@dataclass(frozen=True)
class QueueQuery:
    """The first query of a trace the work queue may name, and how much of the question it kept."""

    query: str | None
    overlap: float | None


@dataclass
class Budgets:
    """The budget overall and per group, and the first queries of the traces in a failing cell or citing a
    fabricated URL (the work queue's traces: only those are kept)."""

    overall: Budget = field(default_factory=Budget)
    groups: dict[str, Budget] = field(default_factory=dict)
    queries: dict[str, QueueQuery] = field(default_factory=dict)

    def add(self, result: Mapping[str, Any], group: str | None, queued: frozenset[str]) -> None:
        """Fold one result line in; ``group`` its group (None: not grouped), ``queued`` the work-queue cells."""
        scores: Mapping[str, Any] = result.get("scores") or {}
        self.overall.add(scores)
        if group is not None:
            self.groups.setdefault(group, Budget()).add(scores)
        if scores.get(DIAGNOSIS) in queued or scores.get(CITATION_FABRICATED_COUNT):
            comments = result.get("comments")
            comment = comments.get(SEARCH_QUERY_OVERLAP) if isinstance(comments, Mapping) else None
            query = first_query(comment if isinstance(comment, str) else None)
            overlap = _number(scores.get(SEARCH_QUERY_OVERLAP))
            if query is not None or overlap is not None:
                self.queries[str(result.get("trace_id"))] = QueueQuery(query, overlap)

    @property
    def any(self) -> bool:
        return self.overall.answers > 0
