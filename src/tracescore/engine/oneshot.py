"""A one-shot run (``tracescore score``): one window of a platform's source through its adapter, the scorers, the
local store, an optional results file and the platform's batch sink; results stream in input order.

What was scored before a stop (a source or sink failure) stays stored and delivered: the pending batch is flushed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.calibrate.required import with_human_required
from tracescore.engine.pipeline import RunCounts, score_records
from tracescore.errors import InputError, TracescoreError
from tracescore.platforms.base import Parts
from tracescore.result import TraceResult
from tracescore.scorers import Scorer
from tracescore.sinks import JsonlSink
from tracescore.sinks.records import Rejection, WriteReport
from tracescore.sources.base import Record
from tracescore.store import Store

__all__ = ["OneShot", "score_once"]

WRITE_BATCH = 50
COMMIT_EVERY = 500


@dataclass
class OneShot:
    """What a one-shot run did: trace counts, the sink's report summed over batches, why it stopped (if it did)."""

    run_id: str
    counts: RunCounts = field(default_factory=RunCounts)
    write: WriteReport = field(default_factory=WriteReport)
    stopped: str | None = None
    input_error: str | None = None

    @property
    def rejected(self) -> list[Rejection]:
        return self.write.rejected


def score_once(
    parts: Parts,
    window: tuple[datetime, datetime | None],
    scorers: Sequence[Scorer],
    store: Store,
    *,
    out: str | None = None,
    on_result: Callable[[int, TraceResult], None] | None = None,
    counted: Callable[[Iterator[Record]], Iterable[Record]] = lambda records: records,
    extra_summary: Callable[[], dict[str, Any]] = dict,
) -> OneShot:
    """Score every record of ``window``; store each result, write ``out``, deliver to the sink in batches."""
    start, end = window
    label = "" if end is None else f" {start.isoformat()}..{end.isoformat()}"
    run = OneShot(store.start_run("score", source=parts.describe + label))
    results_file = JsonlSink(out) if out else None
    if callable(attach := getattr(parts.sink, "attach", None)):
        attach(store, run.run_id)  # the sink records what it wrote in the store and removes what this run supersedes
    pending: list[TraceResult] = []
    status = "failed"
    try:
        records = counted(iter(parts.source.records(start, end)))
        adapter = with_human_required(store, parts.adapter)  # reviewer-entered required doc ids (#12)
        for n, result in enumerate(score_records(records, adapter, scorers, run.counts), start=1):
            store.add_result(run.run_id, result)
            if results_file is not None:
                results_file.write(result)
            if on_result is not None:
                on_result(n, result)
            if parts.sink is not None and result.scores:
                pending.append(result)
                if len(pending) >= WRITE_BATCH:
                    _deliver(parts, pending, run.write)
            if n % COMMIT_EVERY == 0:
                store.commit()
        status = "done"
    except InputError as exc:
        run.input_error = str(exc)
    except TracescoreError as exc:
        run.stopped = str(exc)
    finally:
        try:
            if pending:
                _deliver(parts, pending, run.write)
        except TracescoreError as exc:
            run.stopped = run.stopped or str(exc)
            status = "failed"
        finally:
            if results_file is not None:
                results_file.close()
            summary: dict[str, Any] = run.counts.as_dict() | {"results": out}
            if hasattr(parts.stats, "as_dict"):
                summary["read"] = parts.stats.as_dict()
            if parts.sink is not None:
                summary["write"] = run.write.as_dict()
            store.finish_run(run.run_id, summary | extra_summary(), status=status)
    return run


def _deliver(parts: Parts, pending: list[TraceResult], total: WriteReport) -> None:
    """One batch to the platform sink, its report added to the run's; undelivered scores raise SinkError."""
    assert parts.sink is not None
    batch = list(pending)
    pending.clear()
    report = parts.sink.write(batch)
    total.accepted += report.accepted
    total.rejected += report.rejected
    total.retried += report.retried
    total.requests += report.requests
    total.removed += report.removed
    total.batches += 1
