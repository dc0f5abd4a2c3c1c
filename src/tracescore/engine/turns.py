"""The engine's work items for conversations: the turns of sessions a window holds until it is read
(``HeldTurns``), then each session's turns as one item (``Session``), scored in conversation order by one thread.
``Carry`` is what a run carries: on or off, the key the store keeps its turns under, and how a backfill reads a
session's turns from before its window (``LookBack``: ``[sessions] lookback``).

A backfill scores whole sessions: a turn read from before its window that no run ever scored (the store keeps no
evidence of it) and that this backfill has not taken yet is scored with its session, and written as the window's
turns are, so the session's scores count every turn; a turn scored before (kept in the store) lends its evidence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tracescore.adapters import Adapter
from tracescore.durations import format_duration
from tracescore.engine.sessions import carried, group_turns, may_be_turn
from tracescore.engine.stage import Scored, Stage, Turn
from tracescore.session import Earlier, EarlierTurn, turn_evidence
from tracescore.sources.base import Record, Source
from tracescore.store.sessions import EvidenceReader
from tracescore.trace import Trace


@dataclass(frozen=True)
class Carry:
    """``on``: ``[sessions] carry_evidence``; ``key``: the source whose sessions the store keeps (None: ``score``,
    a file is the whole input: nothing read or kept); ``before``: a backfill's look-back (None: none)."""

    on: bool = True
    key: str | None = None
    before: LookBack | None = None


class LookBack:
    """A backfill's look-back: the turns of the given sessions in ``[since - lookback, since)`` of ``source`` (read
    again, adapted; an unreadable record is skipped: the window's own read reports it), with their records.
    ``complete``: the turns never scored are scored with their session (off: only their evidence is lent).
    ``turns`` counts the turns read there, ``scored`` those from before ``start`` (the backfill's window) scored to
    complete their sessions (a turn of an older slice of the window is scored with its session too: not counted)."""

    def __init__(
        self, source: Source, adapter: Adapter, lookback: timedelta, start: datetime, *, complete: bool = True
    ) -> None:
        self.source, self.adapter, self.lookback, self.complete = source, adapter, lookback, complete
        self.start = start
        self.turns = self.scored = 0

    def summary(self) -> dict[str, Any]:
        """What the backfill's summary says of conversations: how far back, the turns read and scored there."""
        return {"sessions": {"carry_evidence": True, "lookback": format_duration(self.lookback),
                             "turns_read_before": self.turns, "turns_scored_before": self.scored}}  # fmt: skip

    def took(self, trace: Trace) -> None:
        """``trace``, read here, is scored with its session now."""
        ts = trace.timestamp
        if ts is not None and (ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)) < self.start:
            self.scored += 1

    def __call__(self, since: datetime, sessions: set[str]) -> list[tuple[Trace, Record]]:
        if self.lookback <= timedelta(0):
            return []
        out = []
        for record in self.source.records(since - self.lookback, since):
            try:
                trace = self.adapter(record.payload)
            except Exception:  # noqa: BLE001 - a record this read cannot use is one the window it belongs to reports
                continue
            if trace.session_id in sessions:
                out.append((trace, record))
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
        self.taken: set[str] = set()  # the turns from before a window this run scored (a later window may read them)

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

    def sessions(self, chunk: int, seq: int, since: datetime, admit: Callable[[str], bool]) -> list[Session]:
        """The work items of the window from ``since``: each session's turns numbered from ``seq`` on, with the turns
        kept by earlier runs and those read from before the window (``LookBack``: one never scored and that
        ``admit`` takes its key is scored with them); the turns that cannot be placed in time, an item of their own
        (scored alone)."""
        grouped, _ = group_turns(self.read)
        if self.before is not None and grouped:
            self._look_back(since, {s.session_id for s in grouped}, admit)
            grouped, _ = group_turns(self.read)
        out = []
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

    def with_earlier(self, since: datetime, admit: Callable[[str], bool]) -> list[tuple[Trace, Earlier | None]]:
        """What ``sessions`` hands out, for the batch prefill: each turn with the evidence it is scored with."""
        out: list[tuple[Trace, Earlier | None]] = []
        for session in self.sessions(0, 0, since, admit):
            traces = [turn[3] for turn in session.turns]
            earlier = [None] * len(traces) if session.alone else carried(traces, session.stored)[0]
            out += zip(traces, earlier, strict=True)
        return out

    def slice_turns(
        self, read: Iterable[tuple[Trace, Record]], since: datetime, done: Callable[[str], bool],
        earlier: dict[str, Earlier],
    ) -> Iterator[Trace]:  # fmt: skip
        """For the batch prefill: the traces ``read`` from the slice at ``since`` not ``done``, then (once the slice is
        read) each session's turns and the turns from before it the engine scores with them, the evidence each is
        scored with put in ``earlier`` by trace id; closes this holder."""
        try:
            for trace, record in read:
                if done(trace.id):
                    self.done(trace)
                elif not self.add(trace, record, trace.id):
                    yield trace
            for trace, before in self.with_earlier(since, lambda key: not done(key)):
                if before is not None:
                    earlier[trace.id] = before
                yield trace
        finally:
            self.close()

    def _look_back(self, since: datetime, sessions: set[str], admit: Callable[[str], bool]) -> None:
        """Hold the turns from before ``since`` of ``sessions`` that no run scored (when the look-back completes
        sessions and ``admit`` takes them); lend the others' evidence."""
        assert self.before is not None
        held = {trace.id for trace, _ in self.read}
        kept: dict[str, set[str]] = {}
        for trace, record in self.before(since, sessions):
            sid = trace.session_id
            assert sid is not None
            if trace.id in held:
                continue
            if sid not in kept:
                kept[sid] = {t.trace_id for t in self.evidence.turns(sid)} if self.evidence is not None else set()
            scored = trace.id in kept[sid] or trace.id in self.taken  # (taken: maybe not written yet)
            if self.before.complete and not scored and admit(trace.id):
                self.read.append((trace, (record, trace.id)))
                held.add(trace.id)
                self.taken.add(trace.id)
                self.before.took(trace)
            else:
                self.skipped.setdefault(sid, []).append(turn_evidence(trace, 1))

    def close(self) -> None:
        if self.evidence is not None:
            self.evidence.close()


def prefill_turns(
    adapter: Adapter, source: Source, key: str, lookback: timedelta, start: datetime, path: Path
) -> Callable[[], HeldTurns]:
    """The batch prefill's holder of a slice's session turns, as the engine's (the store's earlier turns, a look-back
    of its own: its reads are not the run's to count)."""
    stage = Stage(adapter, (), "prefill", oneshot=False)
    return lambda: HeldTurns(stage, Carry(True, key, LookBack(source, adapter, lookback, start)), path)
