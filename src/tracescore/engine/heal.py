"""What the scheduled job owes a trace whose judge failed (#43): which traces those are, and what their next judging
sends to the platform.

A trace is owed a judgement when a judged score of its result is absent because the judge failed this time: an
error after the judge's retries (an outage) or the run's judge budget (``max_cost``). A trace ``[scoring]
judge_sample`` left out is not (it is judged on another run by design), nor one the daily budget left out (``[job]
max_cost_per_day``: ``backfill --judge-only`` judges those; a run the same day would be refused again). The store
keeps the due list (``store/due.py``); ``run`` takes the due traces up again (``engine/runner.py``).

Judged again, a trace's scores go to the platform only where their value changed since the platform got them (the
written-score ledger says which run wrote each live score, the store what that run computed): the others go absent
as ``Reasons.UNCHANGED``, not computed, so the sink neither writes them again nor removes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from tracescore.catalog import Reasons, declared_reason, entry
from tracescore.result import TraceResult
from tracescore.scores import Score
from tracescore.sinks.base import RemovalPreview, Sink
from tracescore.sinks.records import WriteReport
from tracescore.store.db import Store
from tracescore.store.written import live_values

_FAILED = (Reasons.JUDGE_ERROR, Reasons.BUDGET)


def judge_failed(missing: Mapping[str, str]) -> bool:
    """True when a judged score of a result line's ``missing`` ({name: reason}) is absent because the judge failed."""
    return any(
        (found := entry(name)) is not None and found.judged and declared_reason(reason) in _FAILED
        for name, reason in missing.items()
    )


def _same(score: Score, written: float | str | None) -> bool:
    if score.value is None or written is None:
        return False
    if isinstance(score.value, str) or isinstance(written, str):
        return score.value == written
    return float(score.value) == float(written)


class ChangedOnly(Sink):
    """The platform ``sink``, handed only the changed scores of the traces in ``keys`` (judged again): a score of
    the same value as our live one on the platform goes absent as unchanged. Other traces pass as they are."""

    def __init__(self, sink: Sink, store: Store, keys: set[str]) -> None:
        self.sink, self.store, self.keys = sink, store, keys

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        again = [r.trace_id for r in results if r.trace_id in self.keys]
        if not again:
            return self.sink.write(results)
        live = live_values(self.store, again)
        unchanged = Reasons.UNCHANGED.text
        out = []
        for result in results:
            if result.trace_id in self.keys:
                scores = {
                    n: Score(n, reason=unchanged) if _same(s, live.get((result.trace_id, n))) else s
                    for n, s in result.scores.items()
                }
                result = replace(result, scores=scores)
            out.append(result)
        return self.sink.write(out)

    def attach(self, store: Store, run_id: str) -> None:
        self.sink.attach(store, run_id)

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview | None:
        return self.sink.preview(store, trace_ids)
