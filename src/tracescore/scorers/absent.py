"""Every score of a judged stage absent for one reason: one builder for grounding, surface and semantic.

A run without a judge gives the same absent scores on every trace; they are built once per reason and shared
(``Score`` is frozen and nothing downstream mutates a score's metadata: writers copy or serialise it).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from tracescore.scores import Score


def all_absent(names: Iterable[str], reason: str, comment: str | None = None, **meta: Any) -> list[Score]:
    """Each of ``names`` absent with ``reason`` (and ``comment``, ``meta``), built afresh."""
    return [Score(name=n, reason=reason, comment=comment, metadata=meta) for n in names]


@lru_cache(maxsize=256)
def absent_for(names: tuple[str, ...], reason: str) -> tuple[Score, ...]:
    """Each of ``names`` absent with ``reason`` and nothing else, built once per (names, reason) and shared."""
    return tuple(all_absent(names, reason))
