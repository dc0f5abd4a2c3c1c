"""``run --check-gaps``: traces older than the lookback that arrived after their window was done (never scored by
``run``), and the traces ``run`` gave up judging after ``[job] judge_retries`` runs whose judge still has not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from tracescore.engine.heal import judge_failed
from tracescore.engine.pipeline import record_key
from tracescore.engine.runner import run_scope
from tracescore.engine.setup import JobSetup
from tracescore.errors import InputError
from tracescore.store.db import Store
from tracescore.store.due import DueTraces
from tracescore.store.state import JobState, MarkReader


@dataclass
class GapReport:
    """Traces older than the lookback that no run scored, in ``window``."""

    window: tuple[datetime, datetime] | None
    gaps: list[tuple[str, datetime | None]] = field(default_factory=list)
    checked: int = 0
    unreadable: list[str] = field(default_factory=list)
    given_up: list[tuple[str, datetime | None, int]] = field(default_factory=list)  # judge failed: (id, time, tries)


def check_gaps(setup: JobSetup, *, since: datetime | None = None) -> GapReport:
    """Read ``[since or low, watermark - lookback)`` again and list the traces ``run`` never marked (a trace still
    due for the judge is not a gap: the next run reads it); name every trace given up after ``judge_retries``."""
    with Store(setup.store_path) as store:
        mark = JobState(store).watermark(setup.source_key)
        if mark is None:
            return GapReport(None)
        end = mark.watermark - timedelta(minutes=setup.lookback_minutes)
        start = max(since, mark.low) if since else mark.low
        scope = run_scope(setup.source_key)
        due = DueTraces(store, scope)
        given_up = [g for g in due.given_up() if _unjudged(store, g[0])]
        report = GapReport((start, end), given_up=given_up)
        if start >= end:
            return report
        owed = due.due()
        marks = MarkReader(store)
        try:
            for record in setup.source.records(start, end):
                report.checked += 1
                try:
                    trace = setup.adapter(record.payload)
                except InputError as exc:
                    key = record_key(record)
                    if marks.marked(scope, key) is None:
                        report.unreadable.append(f"{key}: {exc}")
                    continue
                if marks.marked(scope, trace.id) is None and trace.id not in owed:
                    report.gaps.append((trace.id, trace.timestamp))
        finally:
            marks.close()
        return report


def _unjudged(store: Store, trace_id: str) -> bool:
    """True while the trace's current judged scores are still absent for a judge failure (no later run, such as a
    backfill, judged it)."""
    rows = store.query("SELECT name, reason FROM current_scores WHERE trace_id = ? AND reason IS NOT NULL", (trace_id,))
    return judge_failed({str(name): str(reason) for name, reason in rows})
