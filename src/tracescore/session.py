"""The evidence a turn carries from the earlier turns of its conversation: ``Earlier``.

A trace with a ``session_id`` is one turn of a conversation. It is scored against its own steps plus every search hit
and every successful fetch of the earlier turns of its session (by timestamp; never a later turn). A scorer sees
them only when it declares a keyword-only parameter ``earlier`` on the function that scores a trace (a plugin's
``f(trace, *, earlier, ...)``, or the function a built-in's factory returns): it is handed an ``Earlier``, or None
for a trace with no earlier turn (no session, the first turn, ``[sessions] carry_evidence = false``). Retrieval does
not declare it, so recall and first-hit rank judge the turn's own searches by construction.

``EarlierTurn`` is what one turn leaves for the next ones (its hits and its successful fetches, nothing else: not
its answer, not its failed fetches); it is what the store keeps per turn (``session_evidence``), so a turn that
arrives in a later run is scored with the evidence of the turns scored before it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from tracescore.trace import FetchStep, Hit, SearchStep, Step, Trace, fetch_failed
from tracescore.urls import normalize_url


class EarlierTurn(BaseModel):
    """One earlier turn's evidence: its searches (with their hits) and its successful fetches, in step order;
    ``turn`` is its 1-based place in its session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn: int = Field(ge=1)
    trace_id: str
    timestamp: datetime | None = None
    steps: list[Step] = Field(default_factory=list)

    @property
    def where(self) -> str:
        """Where it came from, as a comment says it: ``turn 1, trace t-17``."""
        return f"turn {self.turn}, trace {self.trace_id}"


def turn_evidence(trace: Trace, turn: int) -> EarlierTurn:
    """What ``trace``, turn ``turn`` of its session, leaves for the later turns: its searches with hits and its
    fetches that did not fail and have an address (the hot path's msgspec mirror of a trace too)."""
    steps: list[Any] = []
    for step in trace.steps:
        if step.kind == "search":
            if step.hits:
                steps.append(step if isinstance(step, SearchStep) else msgspec.to_builtins(step))
        elif not fetch_failed(step.status) and (step.url or step.doc_id):
            steps.append(step if isinstance(step, FetchStep) else msgspec.to_builtins(step))
    return EarlierTurn.model_validate({"turn": turn, "trace_id": trace.id, "timestamp": trace.timestamp,
                                       "steps": steps})  # fmt: skip


class Earlier:
    """The evidence of the earlier turns of a trace's session, read-only: each cited key (a normalised URL or a doc
    id) looked up once in an index built on first use; the first (earliest) turn that has it answers."""

    __slots__ = ("turns", "_fetched", "_seen")

    def __init__(self, turns: Sequence[EarlierTurn]) -> None:
        self.turns: tuple[EarlierTurn, ...] = tuple(turns)
        self._fetched: dict[str, EarlierTurn] | None = None
        self._seen: dict[str, EarlierTurn] | None = None

    def __bool__(self) -> bool:
        return bool(self.turns)

    def __len__(self) -> int:
        return len(self.turns)

    def __repr__(self) -> str:
        return f"Earlier({', '.join(t.where for t in self.turns)})"

    def fetched(self, key: str) -> EarlierTurn | None:
        """The earliest turn that fetched ``key`` (a normalised URL or a doc id) successfully, or None."""
        if self._fetched is None:
            self._index()
        assert self._fetched is not None
        return self._fetched.get(key)

    def seen(self, key: str) -> EarlierTurn | None:
        """The earliest turn that had ``key`` among its search hits or fetched it, or None."""
        if self._seen is None:
            self._index()
        assert self._seen is not None
        return self._seen.get(key)

    def pages(self) -> Iterator[tuple[EarlierTurn, FetchStep]]:
        """Every successful fetch of the earlier turns, oldest turn first."""
        for turn in self.turns:
            for step in turn.steps:
                if step.kind == "fetch":
                    yield turn, step

    def hits(self) -> Iterator[tuple[EarlierTurn, Hit]]:
        """Every search hit of the earlier turns, oldest turn first."""
        for turn in self.turns:
            for step in turn.steps:
                if step.kind == "search":
                    for hit in step.hits:
                        yield turn, hit

    def _index(self) -> None:
        fetched: dict[str, EarlierTurn] = {}
        seen: dict[str, EarlierTurn] = {}
        for turn, page in self.pages():
            for key in _keys(page.url, page.doc_id):
                fetched.setdefault(key, turn)
        for turn, hit in self.hits():
            for key in _keys(hit.url, hit.doc_id):
                seen.setdefault(key, turn)
        for key, turn in fetched.items():  # a page fetched in turn 1 and listed again in turn 2: seen in turn 1
            if key not in seen or seen[key].turn > turn.turn:
                seen[key] = turn
        self._fetched, self._seen = fetched, seen


def _keys(url: str | None, doc_id: str | None) -> list[str]:
    keys = [normalize_url(url)] if url else []
    if doc_id:
        keys.append(doc_id)
    return keys


def carried_comment(found: dict[str, str], limit: int = 5) -> str | None:
    """The comment naming what a trace found in its earlier turns (key -> where): ``from earlier turns: <url>
    (fetched in turn 1, trace t1)``; None when nothing."""
    if not found:
        return None
    items = [f"{key} ({where})" for key, where in sorted(found.items())]
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"from earlier turns: {'; '.join(items[:limit])}{more}"


def joined(*comments: str | None) -> str | None:
    """The comments that are given, joined with ``; `` (None when none is)."""
    return "; ".join(c for c in comments if c) or None
