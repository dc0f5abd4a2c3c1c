"""``backfill --judge-only``: judge the traces a judge budget left out, write only their judged scores.

The left-out traces are those whose current judged score in the store is absent for a budget (``Reasons.BUDGET``:
a run's ``max_cost``; ``Reasons.DAILY_BUDGET``: ``[job] max_cost_per_day`` / ``max_calls_per_day``), in the
backfill's window. Each is scored again in full (the store keeps the whole result, the flagged check reads the
deterministic scores), but the platform receives its judged scores only, and ``diagnosis`` (its cell reads
``grounding.rate``, so it changes once grounding is known): the deterministic ones go to the sink
absent with ``Reasons.JUDGE_ONLY``, not computed, so the sink neither writes them again nor removes them (the write
report counts them ``kept_stale``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from tracescore.adapters import Adapter
from tracescore.catalog import Reasons, entry
from tracescore.errors import InputError
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scores import Score
from tracescore.sinks.base import RemovalPreview, Sink
from tracescore.sinks.records import WriteReport
from tracescore.sources.base import Record, Source
from tracescore.store.db import Store

_BUDGETS = (Reasons.BUDGET, Reasons.DAILY_BUDGET)


def left_out(store: Store) -> set[str]:
    """The traces whose current judged scores a budget left out (absent: judge budget spent, daily or per run)."""
    like = " OR ".join("reason LIKE ?" for _ in _BUDGETS)
    rows = store.query(
        f"SELECT DISTINCT trace_id, name FROM current_scores WHERE {like}",
        tuple(r.text.split("{", 1)[0] + "%" for r in _BUDGETS),
    )
    return {str(t) for t, name in rows if (e := entry(str(name))) is not None and e.judged}


def judge_only_fingerprint(fingerprint: str, ids: set[str]) -> str:
    """A backfill of its own per set of left-out traces (a finished one is not resumed for the next day's)."""
    digest = hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:8]
    return f"{fingerprint}-judge-only-{digest}"


def _sent(name: str) -> bool:
    """A judged score, or the diagnosis (its cell reads ``grounding.rate``)."""
    return name == DIAGNOSIS or ((found := entry(name)) is not None and found.judged)


def judged_only(result: TraceResult) -> TraceResult:
    """``result`` for the platform: its judged scores (and the diagnosis cell, which reads one) as they are, every
    other one absent with the judge-only reason."""
    reason = Reasons.JUDGE_ONLY.text
    scores = {n: s if _sent(n) else Score(n, reason=reason) for n, s in result.scores.items()}
    return replace(result, scores=scores)


class LeftOutSource:
    """``source``'s records of the traces in ``ids`` only (a record ``adapter`` cannot read is left out too)."""

    def __init__(self, source: Source, adapter: Adapter, ids: set[str]) -> None:
        self.source, self.adapter, self.ids = source, adapter, ids

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        for record in self.source.records(since, until):
            try:
                trace_id = self.adapter(record.payload).id
            except InputError:
                continue
            if trace_id in self.ids:
                yield record


class JudgeOnlySink(Sink):
    """The platform ``sink``, handed each result's judged scores only (``judged_only``)."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        return self.sink.write([judged_only(r) for r in results])

    def attach(self, store: Store, run_id: str) -> None:
        self.sink.attach(store, run_id)

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview | None:
        return self.sink.preview(store, trace_ids)
