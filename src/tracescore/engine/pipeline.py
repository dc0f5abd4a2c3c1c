"""source → adapter → Trace → scorers → results: one direction, one trace at a time, streaming.

A record that cannot be read or mapped becomes a result with an error (line and reason) and the batch goes on; a
scorer that raises is reported on its trace, never allowed to stop the batch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from tracescore.adapters import Adapter
from tracescore.engine.sampling import Sampled
from tracescore.errors import InputError
from tracescore.reasons import Reasons
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import DIAGNOSIS, diagnose
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import absent
from tracescore.session import Earlier
from tracescore.sources.base import Record
from tracescore.trace import Trace


@dataclass
class RunCounts:
    """What a run did, for the run summary: traces seen, scored, failed (unreadable) and scorer errors."""

    seen: int = 0
    scored: int = 0
    failed: int = 0
    scorer_errors: int = 0
    failures: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {"seen": self.seen, "scored": self.scored, "failed": self.failed, "scorer_errors": self.scorer_errors}


def score_trace(trace: Trace, scorers: Sequence[Scorer], earlier: Earlier | None = None) -> TraceResult:
    """Run every scorer on ``trace``, then derive the diagnosis cell from their scores.

    Each scorer's ``Scored`` brings its scores, its rows (claims, citations) and its notes: nothing else is read. A
    ``Sampled`` judged stage is also given the scores so far (``engine/sampling.py``). ``earlier``: the evidence of
    the earlier turns of the trace's session (``tracescore.session``), handed to the scorers that declare it
    (``carries``); None scores the trace alone.
    """
    result = TraceResult(
        trace_id=trace.id, timestamp=trace.timestamp, metadata=dict(trace.metadata), session_id=trace.session_id
    )
    scores = result.scores
    notes: list[str] = []
    for scorer in scorers:
        try:
            # a sampled judged stage reads the scores before it (judge_flagged); type(): the hot path's cheapest test
            if type(scorer) is Sampled:
                scored = scorer.given(trace, scores, earlier)
            elif earlier is not None and getattr(scorer, "carries", False):
                carrying: Callable[..., Scored] = scorer  # it declares ``earlier`` (engine/plan.py ``carries``)
                scored = carrying(trace, earlier=earlier)
            else:
                scored = scorer(trace)
        except Exception as exc:  # noqa: BLE001 - a scorer bug must not stop the batch
            scored = _raised(scorer, exc, result)
        for s in scored.scores:  # a plain loop: on 3.11 it beats dict.update(zip(map(attrgetter)...)) 3x
            scores[s.name] = s
        if scored.claims:
            result.claims += scored.claims
        if scored.citations:
            result.citations += scored.citations
        if scored.notes:
            notes += scored.notes
    scores[DIAGNOSIS] = diagnose(scores)
    if notes:
        result.notes += notes
    return result


def _raised(scorer: Scorer, exc: Exception, result: TraceResult) -> Scored:
    """What a scorer that raised on a trace leaves: its declared scores absent with ``scorer error: <type>: <first
    line>`` (not computed: earlier platform scores stay), and the error on the result line (counted per scorer)."""
    name = getattr(scorer, "__name__", repr(scorer))
    first = next(iter(str(exc).strip().splitlines()), "")
    error = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    result.errors.append(f"scorer {name} failed: {error}")
    reason = Reasons.SCORER_ERROR.format(error=error)
    return Scored(tuple(absent(n, reason) for n in getattr(scorer, "score_names", ())))


def score_records(
    records: Iterable[Record], adapter: Adapter, scorers: Sequence[Scorer], counts: RunCounts | None = None
) -> Iterator[TraceResult]:
    """Adapt and score each record; unreadable ones yield a result carrying only the error, with its line."""
    counts = counts if counts is not None else RunCounts()
    for record in records:
        counts.seen += 1
        try:
            trace = adapter(record.payload)
        except InputError as exc:
            counts.failed += 1
            where = f"line {record.line}" if record.line is not None else "record"
            message = f"{where}: {exc}"
            counts.failures.append(message)
            yield TraceResult(trace_id=guess_id(record.payload), errors=[message], line=record.line)
            continue
        result = score_trace(trace, scorers)
        result.line, result.trace_url = record.line, record.url
        if result.errors:
            counts.scorer_errors += 1
        counts.scored += 1
        yield result


def guess_id(payload: object) -> str | None:
    """Best-effort id of a record that failed validation, so the report can name it."""
    try:
        data = json.loads(payload) if isinstance(payload, str | bytes | bytearray) else payload
    except (ValueError, RecursionError):  # RecursionError: a line nested thousands deep
        return None
    if isinstance(data, dict) and isinstance(data.get("id"), str | int):
        return str(data["id"])
    return None


def record_key(record: Record) -> str:
    """A stable key for a record that could not be adapted: its id when readable, else its line or content hash."""
    guessed = guess_id(record.payload)
    if guessed:
        return guessed
    if record.line is not None:
        return f"line:{record.line}"
    raw = record.payload if isinstance(record.payload, bytes) else repr(record.payload).encode()
    return "sha1:" + hashlib.sha1(raw).hexdigest()[:16]  # noqa: S324 - a key, not security
