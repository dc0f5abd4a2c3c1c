"""The engine's work items for conversations: the turns of sessions a window holds until it is read
(``HeldTurns``), then each session's turns as one item (``Session``), scored in conversation order by one thread.
``Carry`` is what a run carries: on or off, the key the store keeps its turns under, and how a backfill reads a
session's turns from before its window (``[sessions] lookback``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from tracescore.adapters import Adapter
from tracescore.engine.sessions import group_turns, may_be_turn
from tracescore.engine.stage import Scored, Stage, Turn
from tracescore.session import EarlierTurn, turn_evidence
from tracescore.sources.base import Record, Source
from tracescore.store.sessions import EvidenceReader
from tracescore.trace import Trace

Before = Callable[[datetime, set[str]], list[tuple[str, EarlierTurn]]]
"""(window start, session ids) -> the turns of those sessions from before the window, each with its session id."""


@dataclass(frozen=True)
class Carry:
    """``on``: ``[sessions] carry_evidence``; ``key``: the source whose sessions the store keeps (None: ``score``,
    a file is the whole input: nothing read or kept); ``before``: a backfill's look-back (None: none)."""

    on: bool = True
    key: str | None = None
    before: Before | None = None


class LookBack:
    """A backfill's ``Before``: the turns of the given sessions in ``[since - lookback, since)`` of ``source`` (read
    again, adapted; an unreadable record is skipped: the window's own read reports it). ``turns`` counts them."""

    def __init__(self, source: Source, adapter: Adapter, lookback: timedelta) -> None:
        self.source, self.adapter, self.lookback = source, adapter, lookback
        self.turns = 0

    def __call__(self, since: datetime, sessions: set[str]) -> list[tuple[str, EarlierTurn]]:
        if self.lookback <= timedelta(0):
            return []
        out = []
        for record in self.source.records(since - self.lookback, since):
            try:
                trace = self.adapter(record.payload)
            except Exception:  # noqa: BLE001 - a record this read cannot use is one the window it belongs to reports
                continue
            if trace.session_id in sessions:
                out.append((trace.session_id, turn_evidence(trace, 1)))
        self.turns += len(out)
        return out


@dataclass(slots=True)
class Session:
    """One session's turns of a window, in conversation order, and the turns earlier runs kept: one work item."""

    stage: Stage
    turns: list[Turn]
    stored: list[EarlierTurn]
    alone: bool = False  # a turn that cannot be placed in time: scored without its session, and leaves nothing

    def __len__(self) -> int:
        return len(self.turns)

    def score(self) -> list[Scored]:
        stage = self.stage
        if self.alone:
            return [stage.score(seq, chunk, record, trace, key, None) for seq, chunk, record, trace, key in self.turns]
        return stage.score_session(self.turns, self.stored)


class HeldTurns:
    """The turns of sessions read in a window (with the evidence of those scored before, skipped now), held until
    the window is read, then handed out session by session (``engine/sessions.py``: conversation order); with
    ``carry`` off it holds nothing. With a ``Carry.key``, the turns earlier runs kept are read from the store at
    ``path`` (a read-only connection of the reader thread's own)."""

    def __init__(self, stage: Stage, carry: Carry, path: Path | None) -> None:
        self.stage, self.carry, self.before = stage, carry.on, carry.before
        keep = carry.key if carry.on and path is not None else None
        self.evidence = EvidenceReader(path, keep) if keep is not None else None
        self.read: list[tuple[Trace, tuple[Record, str]]] = []
        self.skipped: dict[str, list[EarlierTurn]] = {}

    def add(self, trace: Trace | None, record: Record, key: str) -> bool:
        """Hold ``trace`` when it is a turn of a session (True), else leave it to be scored now (False)."""
        if not self.carry or trace is None or trace.session_id is None:
            return False
        self.read.append((trace, (record, key)))
        return True

    def take(self, record: Record) -> bool:
        """Adapt ``record`` and hold it when it is a turn of a session (True); False leaves it to a worker process
        (``may_be_turn``: most lines that are no turn are not adapted here)."""
        if not self.carry or not may_be_turn(record.payload):
            return False
        trace, key, _ = self.stage.adapt(record)
        return self.add(trace, record, key)

    def done(self, trace: Trace | None) -> None:
        """``trace`` was scored by an earlier run (skipped now): a later turn still sees what it fetched."""
        if self.carry and trace is not None and trace.session_id is not None:
            self.skipped.setdefault(trace.session_id, []).append(turn_evidence(trace, 1))

    def sessions(self, chunk: int, seq: int, since: datetime) -> list[Session]:
        """The work items of the window from ``since``: each session's turns numbered from ``seq`` on, with the turns
        kept by earlier runs and those read from before the window; the turns that cannot be placed in time, an
        item of their own (scored alone)."""
        grouped, _ = group_turns(self.read)
        out = []
        for sid, turn in self.before(since, {s.session_id for s in grouped}) if self.before and grouped else []:
            self.skipped.setdefault(sid, []).append(turn)
        for session in grouped:
            stored = self.evidence.turns(session.session_id) if self.evidence is not None else []
            ids = {s.trace_id for s in stored}
            for turn in self.skipped.get(session.session_id, []):
                if turn.trace_id not in ids:
                    stored.append(turn)
                    ids.add(turn.trace_id)
            for turns, alone in [(session.turns, False), (session.alone, True)]:
                items: list[Turn] = []
                for trace, (record, key) in turns:
                    items.append((seq, chunk, record, trace, key))
                    seq += 1
                if items:
                    out.append(Session(self.stage, items, stored, alone))
        self.read, self.skipped = [], {}
        return out

    def close(self) -> None:
        if self.evidence is not None:
            self.evidence.close()
