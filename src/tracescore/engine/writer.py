"""The engine's writing half, in the calling thread: (re)orders scored items and writes them batch by batch.

A batch goes to the platform sink first (a platform sink queues the ids it wrote and removed in the store's open
transaction), then the batch's results and per-trace marks join that transaction, which commits. A window whose
traces are all committed, and every one before it, is complete: its progress (the ``on_window`` cursor: watermark or
backfill slice) commits afterwards, in a transaction of its own, so the cursor never covers a result that is not in
the store. A crash between the two loses only the cursor's step: the re-run reads the window again and skips its
marked traces.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.engine.counts import FAILURES_KEPT, JobCounts, Limits, Windows
from tracescore.engine.heal import judge_failed
from tracescore.engine.interrupt import received
from tracescore.engine.stage import Scored
from tracescore.errors import Interrupted, SinkError, TracescoreError
from tracescore.sinks.base import Sink
from tracescore.sinks.records import WriteReport
from tracescore.store.db import Store, result_rows
from tracescore.store.due import UNJUDGED
from tracescore.store.sessions import keep_evidence
from tracescore.store.state import JobState, MarkReader

STOP = object()
"""What each scoring thread puts on the outbox when it is done."""
_POLL_S = 0.1
"""The longest the writer waits for scored items before it looks for a signal again."""

Window = tuple[datetime, datetime]


@dataclass
class Flight:
    """One run of the engine as its threads share it: the scope and run id, which windows are complete, the keys
    being scored (the reader adds them, the writer drops them once committed, both under ``lock``), the scoring
    threads the writer waits for (each puts one ``STOP``), and the first fatal error of any thread."""

    scope: str | None
    run_id: str
    tracker: Windows
    threads: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: set[str] = field(default_factory=set)
    fatal: BaseException | None = None

    def fail(self, exc: BaseException) -> None:
        """Keep ``exc`` as the run's failure, unless a thread failed first."""
        self.fatal = self.fatal or exc

    def admit(self, key: str, marks: MarkReader | None, hold: bool) -> bool:
        """Whether a turn from before the window may be scored now: not marked in the scope, not in flight; ``hold``:
        the reader keeps the keys in flight (no worker process: ``Writer.recheck`` off), so it adds this one."""
        if self.scope is None or marks is None:
            return True
        with self.lock:
            if key in self.in_flight or marks.marked(self.scope, key) is not None:
                return False
            if hold:
                self.in_flight.add(key)
        return True


@dataclass
class Writer:
    """The calling thread's half: (re)orders scored items, delivers batches to the sink, writes the store.

    ``recheck``: worker processes, not the reader, looked at the marks and the keys in flight, so the writer looks
    again before it admits a trace; ``tally`` brings ``counts`` up to date (duration, requests, judge spend)."""

    flight: Flight
    store: Store
    sink: Sink | None
    limits: Limits
    counts: JobCounts
    report: WriteReport  # the sink's reports summed over batches
    recheck: bool
    tally: Callable[[], None]
    on_results: Callable[[list[Scored]], None] | None = None
    ordered: bool = False
    sessions: str | None = None  # the key the store keeps each session turn's evidence under (engine/turns.py Carry)
    held: dict[int, Scored] = field(default_factory=dict, init=False)  # ordered: items waiting for earlier ones
    next_seq: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.state = JobState(self.store)

    def loop(
        self,
        windows: Sequence[Window],
        outbox: queue.Queue[Any],
        on_window: Callable[[int, Window], None],
        on_progress: Callable[[JobCounts], None] | None,
    ) -> None:
        limits = self.limits
        batch: list[Scored] = []
        stopped = 0
        last_flush = time.monotonic()
        while stopped < self.flight.threads:
            signum = received()
            if signum is not None:  # SIGINT/SIGTERM: stop here, between two committed batches
                raise Interrupted(signum)
            try:  # a short wait, so that a signal is seen at once
                got = outbox.get(timeout=min(limits.write_interval, _POLL_S))
            except queue.Empty:
                got = None
            if got is STOP:
                stopped += 1
            elif got is not None:
                released = self._release(got)
                if self.flight.scope is not None:
                    released = [scored for scored in released if self._admit(scored)]
                batch += released
                while len(batch) >= limits.write_batch:  # a chunk from a process may hold more than a batch
                    self._flush(batch[: limits.write_batch])
                    batch = batch[limits.write_batch :]
                    self._complete(windows, on_window)  # the windows that batch completed: their cursor now
            due = time.monotonic() - last_flush >= limits.write_interval
            if due and batch:
                self._flush(batch)
                batch = []
            if due:
                last_flush = time.monotonic()
                self._complete(windows, on_window)
                if on_progress is not None:
                    self.tally()
                    on_progress(self.counts)
        if batch:
            self._flush(batch)
        if self.flight.fatal is None:
            self._complete(windows, on_window)
        self.tally()
        if on_progress is not None:
            on_progress(self.counts)

    def _release(self, got: list[Scored]) -> list[Scored]:
        """The items that may be written now: all of them, or (ordered) those that continue the input order."""
        if not self.ordered:
            return got
        first = self.next_seq
        if not self.held and got and got[0].seq == first and got[-1].seq == first + len(got) - 1:
            self.next_seq += len(got)  # the next chunk, whole (a chunk's items are in input order)
            return got
        for scored in got:
            self.held[scored.seq] = scored
        out = []
        while self.next_seq in self.held:
            out.append(self.held.pop(self.next_seq))
            self.next_seq += 1
        return out

    def _admit(self, scored: Scored) -> bool:
        """False for a trace a worker process found marked, or one already in flight (a repeated page)."""
        if self.flight.scope is None:
            return True
        if scored.skipped:
            self.counts.skipped += 1
        elif self.recheck and scored.key in self.flight.in_flight:
            self.counts.duplicates += 1
        elif self.recheck and self.state.marked(self.flight.scope, scored.key) is not None:
            # the worker looked before this run's own write of the key was committed (a line with no timestamp is
            # read in every window): this thread commits the marks, so its look-up is the one that cannot be stale
            self.counts.skipped += 1
        else:
            self.flight.in_flight.add(scored.key)
            return True
        self.flight.tracker.done(scored.chunk)
        return False

    def _flush(self, batch: list[Scored]) -> None:
        counts = self.counts
        rejected: dict[str, list[str]] = {}
        if self.sink is not None:
            writable = [s.result for s in batch if s.readable and s.result is not None]
            try:
                report = self.sink.write(writable) if writable else WriteReport()
            except SinkError:
                raise
            except TracescoreError:
                raise
            except Exception as exc:  # noqa: BLE001 - an SDK error must end the run with a reason, not a traceback
                raise SinkError(f"writing scores failed: {type(exc).__name__}: {exc}") from exc
            total = self.report
            total.accepted += report.accepted
            total.rejected += report.rejected
            total.retried += report.retried
            total.requests += report.requests
            total.removed += report.removed
            total.kept_stale += report.kept_stale
            total.batches += 1
            counts.scores_written += report.accepted
            counts.scores_rejected += len(report.rejected)
            counts.scores_removed += report.removed
            counts.kept_stale += report.kept_stale
            counts.sink_requests += report.requests
            for rejection in report.rejected:
                rejected.setdefault(str(rejection.trace_id), []).append(f"{rejection.name}: {rejection.reason}")
                if len(counts.rejections) < FAILURES_KEPT:
                    counts.rejections.append(str(rejection))
        marks: list[tuple[str, datetime | None, str]] = []
        scope = self.flight.scope
        for scored in batch:
            if scored.failure is not None:
                counts.fail(scored.failure)
                status = "failed"
            else:
                counts.scored += 1
                if scored.scorer_errors:
                    counts.scorer_errors += 1
                status = "scored"
                if scope is not None and scored.data is not None and judge_failed(scored.data.get("missing") or {}):
                    status = UNJUDGED  # the next runs judge it again (store/due.py)
                if scored.key in rejected and scored.result is not None:
                    status = "rejected"
                    scored.result.errors += [f"score rejected by the platform: {r}" for r in rejected[scored.key]]
                    scored.data, scored.text = scored.result.encoded()
                    scored.rows = result_rows(self.flight.run_id, scored.result, scored.text)
                if self.sink is None:
                    counts.scores_written += scored.values
            if scope is not None:
                marks.append((scored.key, scored.timestamp, status))
        self.store.add_rows([s.rows for s in batch if s.rows is not None])
        if scope is not None:
            self.state.mark(scope, marks, self.flight.run_id)
        if self.sessions is not None:  # what the later turns read, with the results
            kept = [s.evidence for s in batch if s.evidence is not None and s.failure is None]
            keep_evidence(self.store, self.sessions, self.flight.run_id, kept)
        self.store.commit()  # the ledger the sink queued, the results and the marks: one transaction
        if scope is not None:
            with self.flight.lock:
                for scored in batch:
                    self.flight.in_flight.discard(scored.key)
        done: dict[int, int] = {}
        for scored in batch:
            done[scored.chunk] = done.get(scored.chunk, 0) + 1
        for chunk, n in done.items():
            self.flight.tracker.done(chunk, n)
        if self.on_results is not None and batch:
            self.on_results(batch)

    def _complete(self, windows: Sequence[Window], on_window: Callable[[int, Window], None]) -> None:
        newest = self.flight.tracker.advance()
        self.counts.windows_done = self.flight.tracker.next
        if newest is not None:
            on_window(newest, windows[newest])
            self.store.commit()  # the cursor, after the results it covers: a transaction of its own
