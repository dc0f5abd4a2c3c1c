"""Turns grouped by session and put in conversation order: what each turn carries from the turns before it.

The order of a session's turns is their timestamps' (ties: the order they were read in). When no turn of the
session has a timestamp, the order they were read in is the conversation's (a file or a list written turn by turn).
When only some have one, those without are scored alone: there is no saying which turns came before them, and a
turn must never see a later one. A turn's ``Earlier`` holds every turn of its session before it: the turns stored by
earlier runs (``store/sessions.py``) and those of this batch, numbered together from 1.

``group_turns`` is the one grouping every path uses (the engine's windows, the Ray shards, the Python API and the
evaluators; the session scores read it too); ``carried`` gives each turn its ``Earlier``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, TypeVar

from tracescore.session import Earlier, EarlierTurn, turn_evidence
from tracescore.trace import Trace

T = TypeVar("T")


@dataclass
class SessionTurns(Generic[T]):
    """One session's turns of a batch, each with what it came with (a record, a position), in conversation order;
    ``alone``: its turns without a timestamp when others have one (scored without carried evidence)."""

    session_id: str
    turns: list[tuple[Trace, T]] = field(default_factory=list)
    alone: list[tuple[Trace, T]] = field(default_factory=list)


def turn_order(turns: Sequence[tuple[Trace, T]]) -> tuple[list[tuple[Trace, T]], list[tuple[Trace, T]]]:
    """(ordered, alone): ``turns`` (as read) in conversation order, and those that cannot be placed."""
    timed = [t for t in turns if t[0].timestamp is not None]
    if not timed:
        return list(turns), []
    untimed = [t for t in turns if t[0].timestamp is None]
    return sorted(timed, key=lambda t: _when(t[0])), untimed  # sorted() is stable: ties keep the reading order


def group_turns(items: Iterable[tuple[Trace, T]]) -> tuple[list[SessionTurns[T]], list[tuple[Trace, T]]]:
    """(sessions, singles): the traces with a session id grouped by it, each group in conversation order (sessions
    in the order their first turn was read), and the traces without one, as read."""
    groups: dict[str, list[tuple[Trace, T]]] = {}
    singles: list[tuple[Trace, T]] = []
    for trace, extra in items:
        if trace.session_id is None:
            singles.append((trace, extra))
        else:
            groups.setdefault(trace.session_id, []).append((trace, extra))
    sessions = []
    for session_id, turns in groups.items():
        ordered, alone = turn_order(turns)
        sessions.append(SessionTurns(session_id, ordered, alone))
    return sessions, singles


def carried(
    turns: Sequence[Trace], stored: Sequence[EarlierTurn] = ()
) -> tuple[list[Earlier | None], list[EarlierTurn]]:
    """(earlier, evidence): for each of ``turns`` (one session's, in conversation order) the evidence of every turn
    before it (None for none), and each turn's own evidence to keep (numbered in the session).

    ``stored``: the session's turns kept by earlier runs; those with a trace id of ``turns`` are replaced by them (a
    turn scored again), the others are placed among ``turns`` by timestamp (one without a timestamp, or any when a
    turn of ``turns`` has none, before them all: it was scored in an earlier run)."""
    ids = {t.id for t in turns}
    kept = [s for s in stored if s.trace_id not in ids]
    merged: list[tuple[int, Trace | EarlierTurn]] = []  # (rank, turn): the batch's turns keep their order
    batch_timed = all(t.timestamp is not None for t in turns)
    for s in kept:
        merged.append((0, s))
    for t in turns:
        merged.append((1, t))
    if batch_timed:
        merged.sort(key=lambda m: (_when(m[1]), m[0]))
    evidence: list[EarlierTurn] = []
    earlier: list[Earlier | None] = []
    so_far: list[EarlierTurn] = []
    for number, (_, turn) in enumerate(merged, start=1):
        if not isinstance(turn, EarlierTurn):
            earlier.append(Earlier(so_far) if so_far else None)
            own = turn_evidence(turn, number)
            evidence.append(own)
        else:
            own = turn.model_copy(update={"turn": number})
        so_far = [*so_far, own]
    return earlier, evidence


_DAWN = datetime.min.replace(tzinfo=UTC)


def _when(turn: Trace | EarlierTurn) -> datetime:
    """The turn's timestamp (a naive one read as UTC, as the adapters write them); none: before every other."""
    ts = turn.timestamp
    if ts is None:
        return _DAWN
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


_SESSION_WORDS = (b"session", b"thread", b"conversation")


def may_be_turn(payload: object) -> bool:
    """False only when ``payload`` (a file's line) cannot carry a session id: no adapter reads one from a line without
    one of these words (``session_id``, ``sessionId``, ``session.id``, the thread keys ``thread_id`` and
    ``conversation_id``). The worker processes adapt the lines for which it is False; the reader adapts the others."""
    if isinstance(payload, bytes | bytearray):
        return any(word in payload for word in _SESSION_WORDS)
    if isinstance(payload, str):
        return any(word.decode() in payload for word in _SESSION_WORDS)
    return True
