"""The scoring stage of the engine: one record in, one ``Scored`` out (adapted, scored, serialised, store rows built).

It runs in the engine's scoring threads (a judge: calls are I/O-bound) or, when scoring is CPU-bound (no judge), in
worker processes that each build their own adapter and scorers from a picklable ``Plan`` and take chunks of raw
records, so decoding, validation, scoring and serialisation all happen in parallel and the writer only writes.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tracescore.adapters import Adapter
from tracescore.engine.pipeline import guess_id, record_key, score_trace
from tracescore.engine.sessions import carried
from tracescore.errors import InputError
from tracescore.result import TraceResult
from tracescore.scorers.scored import Scorer
from tracescore.session import Earlier, EarlierTurn
from tracescore.sources.base import Record
from tracescore.store.db import ResultRows, Store, result_rows
from tracescore.store.state import MarkReader
from tracescore.trace import Trace


@dataclass(slots=True)
class Scored:
    """One record after the scoring stage: its result line (dict and text) and store rows, or why it was skipped.

    ``result`` is kept only when the writer needs the object (a platform sink); across processes only the line
    and the rows travel.
    """

    seq: int
    chunk: int
    key: str
    timestamp: datetime | None
    readable: bool
    data: dict[str, Any] | None = None
    text: str = ""
    rows: ResultRows | None = None
    result: TraceResult | None = None
    failure: str | None = None  # the run summary's line for an unreadable trace or one no scorer could score
    scorer_errors: bool = False
    values: int = 0
    skipped: bool = False  # already marked done in the run's scope (checked in the worker process)
    digest: Any = None  # on a worker chunk's last item: the plan's digest of the chunk's lines (then ``data`` is None)
    evidence: tuple[str, EarlierTurn] | None = None  # a session's turn: (session id, what it leaves for later turns)

    def __reduce__(self) -> tuple[type[Scored], tuple[Any, ...]]:
        # rebuilt by __init__ from a tuple: a slots dataclass's default pickling calls Python per field, per trace
        return Scored, (
            self.seq, self.chunk, self.key, self.timestamp, self.readable, self.data, self.text, self.rows,
            self.result, self.failure, self.scorer_errors, self.values, self.skipped, self.digest, self.evidence,
        )  # fmt: skip


@dataclass(frozen=True)
class Stage:
    """What the stage needs: the adapter, the scorers, the run id (store rows), the result format."""

    adapter: Adapter
    scorers: Sequence[Scorer]
    run_id: str
    oneshot: bool  # ``score``: an unreadable line's trace_id is its guessed id and its error "line N: reason"
    keep_result: bool = True

    def adapt(self, record: Record) -> tuple[Trace | None, str, str | None]:
        """(trace, key, error): the trace and its id, or None with the record's key and the reason it is unreadable."""
        try:
            trace = self.adapter(record.payload)
        except Exception as exc:  # noqa: BLE001 - InputError, or an adapter bug: reported on this record only
            reason = str(exc) if isinstance(exc, InputError) else f"adapter failed: {type(exc).__name__}: {exc}"
            where = f"line {record.line}" if record.line is not None else "record"
            key = record_key(record)
            return None, key, (f"{where}: {reason}" if self.oneshot else f"{where} ({key}): {reason}")
        if not _unicode(trace.id):  # a lone surrogate (JSON "\ud800"): no file, store or platform can hold it
            key = _printable(trace.id)
            where = f"line {record.line}" if record.line is not None else "record"
            return None, key, f"{where} ({key}): {_NOT_UNICODE} in its id"
        return trace, trace.id, None

    def score(
        self,
        seq: int,
        chunk: int,
        record: Record,
        trace: Trace | None,
        key: str,
        error: str | None,
        earlier: Earlier | None = None,
    ) -> Scored:
        """Score an adapted trace (or report the unreadable record) and serialise its result once; ``earlier``: the
        evidence of the earlier turns of its session (``engine/sessions.py``)."""
        if trace is None:
            guessed = guess_id(record.payload) if self.oneshot else key
            result = TraceResult(trace_id=guessed, errors=[error or "unreadable"], line=record.line)
            failure: str | None = result.errors[0]
        else:
            try:
                result = score_trace(trace, self.scorers, earlier)
            except Exception as exc:  # noqa: BLE001 - one trace's bug must neither stop the batch nor hang it
                result = TraceResult(trace_id=key, timestamp=trace.timestamp, session_id=trace.session_id)
                result.errors.append(f"scoring failed: {type(exc).__name__}: {exc}")
            result.line, result.trace_url = record.line, record.url
            failure = f"{key}: {result.errors[0]}" if not result.scores and result.errors else None
        data, text = result.encoded()
        if not _unicode(text):  # a lone surrogate in any text of the trace: reported on this trace, never written
            where = f"line {record.line}" if record.line is not None else "record"
            key = _printable(key)
            result = TraceResult(trace_id=key, errors=[f"{where} ({key}): {_NOT_UNICODE}"], line=record.line)
            data, text = result.encoded()
            trace, failure = None, result.errors[0]
        return Scored(
            seq,
            chunk,
            key,
            trace.timestamp if trace is not None else None,
            trace is not None,
            data,
            text,
            result_rows(self.run_id, result, text, data["missing"]),
            result if self.keep_result else None,
            failure,
            bool(result.errors),
            len(data["scores"]),
        )


    def score_session(self, turns: Sequence[Turn], stored: Sequence[EarlierTurn] = ()) -> list[Scored]:
        """Score one session's ``turns`` (adapted, in conversation order: ``engine.sessions.group_turns``), each with
        the evidence of the turns before it (``stored``: those kept by earlier runs); each readable turn's own
        evidence goes with its ``Scored``, for the store."""
        earlier, evidence = carried([t[3] for t in turns], stored)
        out = []
        for (seq, chunk, record, trace, key), before, own in zip(turns, earlier, evidence, strict=True):
            scored = self.score(seq, chunk, record, trace, key, None, before)
            if scored.readable and trace.session_id is not None:
                scored.evidence = (trace.session_id, own)
            out.append(scored)
        return out


Turn = tuple[int, int, Record, Trace, str]
"""A session's turn as the stage takes it: (seq, chunk, record, trace, key)."""

_NOT_UNICODE = "holds text that is not valid Unicode (a lone surrogate, such as a JSON \\ud800 escape)"


def _unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogate); ASCII text, the common case, in O(1)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _printable(text: str) -> str:
    """``text`` with each lone surrogate spelled as an escape (``\\ud800``), so it can be reported and stored."""
    return text.encode("utf-8", "backslashreplace").decode()


@dataclass(frozen=True)
class Plan:
    """A picklable recipe for a worker process's stage: ``build()`` returns the adapter and the scorers."""

    build: Callable[[], tuple[Adapter, Sequence[Scorer]]]
    run_id: str
    oneshot: bool
    store_path: str | None = None  # marks are read from here when the run has a scope
    scope: str | None = None
    keep_result: bool = False  # a platform sink needs the TraceResult back, not only the line and rows
    # folds a chunk's result lines in the worker (``score``'s summary): the parent merges one digest per chunk instead
    # of folding, and receiving, every line's dict. Only where the parent changes no result after scoring (no sink)
    digest: Callable[[list[dict[str, Any]]], Any] | None = None


def process_plan(
    build: Callable[[], tuple[Adapter, Sequence[Scorer]]],
    digest: Callable[[list[dict[str, Any]]], Any] | None = None,
) -> Callable[[str, str | None], Plan] | None:
    """The worker processes' plan from ``build`` (adapter and scorers without a judge) and ``digest`` (see ``Plan``),
    or None when they cannot be sent to another process (then scoring stays in this one)."""
    try:
        pickle.dumps((build, digest))
    except (pickle.PicklingError, AttributeError, TypeError):
        return None
    return lambda run_id, scope: Plan(build, run_id, oneshot=scope is None, digest=digest)


_WORKER: dict[str, Any] = {}


def _worker_stage(plan: Plan) -> tuple[Stage, MarkReader | None]:
    """The stage of this worker process, built once per plan (its adapter, scorers and marks reader)."""
    if _WORKER.get("plan") != (plan.run_id, plan.scope, plan.keep_result):
        adapter, scorers = plan.build()
        marks = None
        if plan.scope is not None and plan.store_path is not None:
            with Store(Path(plan.store_path)) as store:
                marks = MarkReader(store)
        stage = Stage(adapter, scorers, plan.run_id, plan.oneshot, keep_result=plan.keep_result)
        _WORKER.update(plan=(plan.run_id, plan.scope, plan.keep_result), stage=stage, marks=marks)
    return _WORKER["stage"], _WORKER["marks"]


def score_chunk(plan: Plan, chunk: list[tuple[int, int, Record]]) -> list[Scored]:
    """In a worker process: adapt, check the marks, score and serialise each record of ``chunk``."""
    stage, marks = _worker_stage(plan)
    out = []
    for seq, window, record in chunk:
        trace, key, error = stage.adapt(record)
        if marks is not None and plan.scope is not None and marks.marked(plan.scope, key) is not None:
            out.append(Scored(seq, window, key, None, trace is not None, skipped=True))
            continue
        out.append(stage.score(seq, window, record, trace, key, error))
    if plan.digest is not None and out:
        lines = []
        for scored in out:
            if scored.data is not None:
                lines.append(scored.data)
                scored.data = None
        out[-1].digest = plan.digest(lines)
    return out
