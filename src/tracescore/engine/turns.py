"""The engine's work items for conversations: the turns of sessions a window holds until it is read
(``HeldTurns``), then each session's turns as one item (``Session``), scored in conversation order by one thread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tracescore.engine.sessions import group_turns, may_be_turn
from tracescore.engine.stage import Scored, Stage, Turn
from tracescore.session import EarlierTurn, turn_evidence
from tracescore.sources.base import Record
from tracescore.store.sessions import EvidenceReader
from tracescore.trace import Trace

__all__ = ["HeldTurns", "Session"]


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
    ``carry`` off it holds nothing. With a ``scope``, the turns earlier runs kept are read from the store at ``path``
    (a read-only connection of the reader thread's own)."""

    def __init__(self, stage: Stage, carry: bool, path: Path | None, scope: str | None) -> None:
        self.stage, self.carry = stage, carry
        self.evidence = EvidenceReader(path, scope) if carry and scope is not None and path is not None else None
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

    def sessions(self, chunk: int, seq: int) -> list[Session]:
        """The work items: each session's turns numbered from ``seq`` on, with the turns kept by earlier runs; the
        turns that cannot be placed in time, an item of their own (scored alone)."""
        grouped, _ = group_turns(self.read)
        out = []
        for session in grouped:
            stored = self.evidence.turns(session.session_id) if self.evidence is not None else []
            ids = {s.trace_id for s in stored}
            stored += [s for s in self.skipped.get(session.session_id, []) if s.trace_id not in ids]
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
