"""The concurrent pipeline: reading, scoring and writing overlap, joined by bounded queues.

One reader thread pulls native records window by window. With threads (a judge: calls are I/O-bound) it adapts them
and drops those already done (marks in the store) or already in flight (duplicate pages), and ``workers`` threads
score (so at most ``workers`` judge calls are in flight). With processes (``Engine(processes=Plan)``: CPU-bound
scoring, no judge) it sends chunks of raw records to ``workers`` processes that adapt, check the marks, score and
serialise them; at most ``workers`` chunks are in flight, so memory stays flat. The calling thread (``Writer``) writes
each batch to the platform sink, then commits its results and per-trace marks in one store transaction. A window is
complete once the reader has finished it and every one of its traces is committed; only complete, contiguous windows
advance the cursor, in a transaction of its own after those results. ``ordered`` writes results in input order
(``score``: its output follows the file).
A run without a ``scope`` (``score``) neither skips marked traces nor drops repeated ids. The turns of a session
(``[sessions] carry_evidence``) are held until their window is read, then scored together in order (engine/turns.py).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence, Sized
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from tracescore.adapters import Adapter
from tracescore.engine.counts import JobCounts as JobCounts, Limits as Limits, UsageMeter as UsageMeter, Windows
from tracescore.engine.interrupt import ABANDON_S, end_pool, ignore_in_worker, listening
from tracescore.engine.stage import Plan, Scored, Stage
from tracescore.engine.turns import Carry, HeldTurns, Session
from tracescore.engine.wire import Unread, pack_records, score_packed, unpack
from tracescore.engine.writer import STOP, Flight, Writer
from tracescore.errors import Interrupted, SourceError, TracescoreError
from tracescore.scorers.scored import Scorer
from tracescore.sinks.base import Sink as Sink
from tracescore.sinks.records import WriteReport
from tracescore.sources.base import Record, Source
from tracescore.store.db import Store
from tracescore.store.state import MarkReader
from tracescore.trace import Trace

CHUNK = 256
"""Records per chunk: a task for a worker process, or scored in turn by the reader. Large enough that a chunk's trip
to a worker and back costs little next to scoring it (at 64 light traces, ``--workers 2`` gained 1.6x, at 256 1.8x)."""
CHUNK_BYTES = 4 << 20
"""...and a chunk ends once its records reach this many bytes (about 50 heavy traces), so the chunks in flight and
queued hold tens of MiB at most, whatever the size of a trace."""


Window = tuple[datetime, datetime]


@dataclass(slots=True)
class _Item:
    seq: int
    chunk: int
    key: str
    record: Record
    trace: Trace | None = None
    error: str | None = None


_POLL_S = 0.1  # how long a scoring thread waits for work before it looks whether the run was interrupted


class Engine:
    """Streams windows of a source through adapter, scorers and sinks, with bounded queues and threads or processes."""

    def __init__(
        self,
        *,
        source: Source,
        adapter: Adapter,
        scorers: Sequence[Scorer],
        store: Store,
        sink: Sink | None = None,
        limits: Limits | None = None,
        usage: UsageMeter | None = None,
        requests: Callable[[], int] | None = None,
        before_window: Callable[[datetime, datetime], None] | None = None,
        processes: Callable[[str, str | None], Plan] | None = None,
        oneshot: bool = False,
        carry: Carry | None = None,
    ) -> None:
        self.before_window = before_window
        self.source = source
        self.adapter = adapter  # reviewer-entered labels already applied (engine/recipe.py ``labelled``)
        self.scorers = scorers
        self.store = store
        self.sink = sink
        self.limits = limits or Limits()
        self.usage = usage
        self.processes = processes  # (run_id, scope) → the workers' plan; None: score in threads
        self.oneshot = oneshot
        self.carry = carry or Carry()  # [sessions]: a session's turns are scored together (engine/turns.py)
        self._requests = requests
        self.counts = JobCounts()
        self.write_report = WriteReport()  # the sink's reports summed over batches
        self._stop = threading.Event()
        self._abandon = threading.Event()  # SIGINT/SIGTERM: threads hand nothing more over, they only end

    # -- public -------------------------------------------------------------------------------------------
    def process(
        self,
        windows: Sequence[Window],
        *,
        scope: str | None,
        run_id: str,
        on_window: Callable[[int, Window], None] = lambda index, window: None,
        on_progress: Callable[[JobCounts], None] | None = None,
        on_results: Callable[[list[Scored]], None] | None = None,
        ordered: bool = False,
    ) -> JobCounts:
        """Score every not-yet-done trace of ``windows`` (oldest first) and call ``on_window`` as each completes.

        ``on_window`` runs once the window's last results and marks are committed; what it queues in the store (the
        cursor) commits right after it, in a transaction of its own. ``on_results`` sees each batch of written
        results once it is committed (in input order when ``ordered``). Raises the first SourceError/SinkError/
        StoreError after the threads stopped; everything committed before it stays done. SIGINT/SIGTERM
        (``engine.interrupt``) stop it between two committed batches with ``Interrupted``.
        """
        with listening(self._stop):
            return self._process(windows, scope, run_id, on_window, on_progress, on_results, ordered)

    def _process(
        self,
        windows: Sequence[Window],
        scope: str | None,
        run_id: str,
        on_window: Callable[[int, Window], None],
        on_progress: Callable[[JobCounts], None] | None,
        on_results: Callable[[list[Scored]], None] | None,
        ordered: bool,
    ) -> JobCounts:
        started = time.monotonic()
        tracker = Windows(len(windows))
        inbox: queue.Queue[Any] = queue.Queue(self.limits.queue_size)
        outbox: queue.Queue[Any] = queue.Queue(self.limits.queue_size)
        marks = MarkReader(self.store) if scope is not None else None
        stage = Stage(self.adapter, self.scorers, run_id, self.oneshot, self.sink is not None)
        self._turns = HeldTurns(stage, self.carry, self.store.path)
        pool = None
        if self.processes is not None:
            plan = self.processes(run_id, scope)
            store_path = str(self.store.path) if scope else None
            sink = self.sink is not None
            # a digest only where every scored line is written as scored: no sink (it may reject a score and change
            # the line) and no scope (the writer may drop a line another window already wrote)
            digest = plan.digest if not sink and scope is None else None
            plan = Plan(plan.build, run_id, plan.oneshot, store_path, scope, sink, digest)
            pool = _start_pool(self.limits.workers)

            def work(items: Any) -> list[Scored]:
                assert pool is not None
                try:
                    return unpack(pool.submit(score_packed, plan, pack_records(items)).result())
                except Unread:  # the worker could not read the lines from their file: send their bytes
                    return unpack(pool.submit(score_packed, plan, pack_records(items, inline=True)).result())

        else:

            def work(items: Any) -> list[Scored]:
                return [stage.score(i.seq, i.chunk, i.record, i.trace, i.key, i.error) for i in items]
        # one scoring thread and no processes: the reader scores each chunk itself (two threads taking turns on the
        # GIL per chunk cost more CPU than the scoring they overlapped)
        inline = self.processes is None and self.limits.workers == 1
        # with processes, two chunks in flight per worker: the next one waits in the pool while this one comes back
        flight = Flight(scope, run_id, tracker, 1 if inline else self.limits.workers * (2 if pool is not None else 1))
        target: Any = _Inline(self, outbox, work, flight) if inline else inbox
        # daemon threads: after an interrupt, one blocked in a judge call or a platform page is abandoned, not awaited
        reader = threading.Thread(
            target=self._read, args=(windows, flight, stage, marks, target), name="tracescore-reader", daemon=True
        )
        workers = [
            threading.Thread(
                target=self._score, args=(inbox, outbox, work, flight), name=f"tracescore-score-{i}", daemon=True
            )
            for i in range(0 if inline else flight.threads)
        ]
        reader.start()
        for w in workers:
            w.start()
        writer = Writer(
            flight, self.store, self.sink, self.limits, self.counts, self.write_report, recheck=pool is not None,
            tally=lambda: self._tally(started), on_results=on_results, ordered=ordered,
            sessions=self.carry.key if self.carry.on else None,
        )  # fmt: skip
        try:
            writer.loop(windows, outbox, on_window, on_progress)
        except BaseException as exc:
            if isinstance(exc, Interrupted):
                self._abandon.set()
            self._stop.set()
            flight.fatal = exc if isinstance(exc, Interrupted) else flight.fatal or exc
            _drain(inbox, outbox)
        finally:
            self._stop.set()
            self._end([reader, *workers], marks, pool)
            self._tally(started)
        if flight.fatal is not None:
            raise flight.fatal
        return self.counts

    def _end(
        self,
        threads: list[threading.Thread],
        marks: MarkReader | None,
        pool: ProcessPoolExecutor | None,
    ) -> None:
        """Wait for the threads and the pool; after an interrupt, at most ``ABANDON_S`` (the rest are abandoned: their
        traces were never written, so they stay unmarked) and the worker processes are ended at once."""
        interrupted = self._abandon.is_set()
        deadline = time.monotonic() + ABANDON_S
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()) if interrupted else None)
        if marks is not None and not threads[0].is_alive():  # the reader may still hold the marks reader
            marks.close()
        if pool is not None:
            if interrupted:
                end_pool(pool)
            else:
                pool.shutdown(cancel_futures=True)

    # -- reader -------------------------------------------------------------------------------------------
    def _read(
        self, windows: Sequence[Window], flight: Flight, stage: Stage, marks: MarkReader | None, inbox: queue.Queue[Any]
    ) -> None:
        scope, tracker, in_flight = flight.scope, flight.tracker, flight.in_flight
        seq = 0
        pending: list[Any] = []
        seen = 0  # records read since the counts were last updated (once per chunk, not per record)
        size = CHUNK if self.processes is not None or (self.oneshot and self.limits.workers == 1) else 1  # threads: 1
        held = 0  # bytes of the records pending
        chunk = 0
        admit = partial(flight.admit, marks=marks, hold=self.processes is None)  # turns from before the window
        try:
            for chunk, (since, until) in enumerate(windows):
                if self.before_window is not None:
                    self.before_window(since, until)
                pending = []
                turns = self._turns  # this window's turns of sessions, scored together once it is read
                for record in self.source.records(since, until):
                    if self._stop.is_set():
                        return
                    seen += 1
                    if self.processes is not None:  # the worker process adapts it and checks the marks
                        if turns.take(record):  # ...unless it is a session's turn (the writer checks its marks)
                            continue
                        pending.append((seq, chunk, record))
                    else:
                        trace, key, error = stage.adapt(record)
                        if scope is not None and marks is not None:
                            with flight.lock:
                                if key in in_flight:
                                    self.counts.duplicates += 1
                                    continue
                                if marks.marked(scope, key) is not None:
                                    self.counts.skipped += 1
                                    turns.done(trace)  # a turn scored before: what it fetched still counts
                                    continue
                                in_flight.add(key)
                        if turns.add(trace, record, key):
                            continue
                        pending.append(_Item(seq, chunk, key, record, trace, error))
                    seq += 1
                    held += record.size
                    if len(pending) >= size or held >= CHUNK_BYTES:
                        sent = self._send(inbox, pending, seen, flight, chunk)
                        pending, seen, held = [], 0, 0
                        if not sent:
                            return
                sent = self._send(inbox, pending, seen, flight, chunk)
                pending, seen, held = [], 0, 0
                if not sent:
                    return
                for session in turns.sessions(chunk, seq, since, admit):  # numbered after the window's traces
                    if not self._send(inbox, session, 0, flight, chunk):
                        return
                    seq += len(session)
                tracker.close(chunk)
        except TracescoreError as exc:  # what was read before the failure is still scored and written
            flight.fail(exc)
        except Exception as exc:  # noqa: BLE001 - an SDK bug in a source ends the run with its reason, not a hang
            flight.fail(SourceError(f"reading failed: {type(exc).__name__}: {exc}"))
        finally:
            self._turns.close()
            if pending and not self._stop.is_set():
                self._send(inbox, pending, seen, flight, chunk)
            elif seen:
                self._send(inbox, [], seen, flight, chunk)
            for _ in range(flight.threads):
                _put(inbox, STOP, self._abandon)

    def _send(self, inbox: queue.Queue[Any], items: Sized, seen: int, flight: Flight, chunk: int) -> bool:
        """Count ``seen`` records read and ``items`` outstanding in their window (once per chunk, not per record,
        and before the writer can see them done), then pass the items on; False when the run stopped."""
        if seen:
            with flight.lock:
                self.counts.seen += seen
        if not items:
            return True
        flight.tracker.add(chunk, len(items))
        return _put(inbox, items, self._stop)

    # -- scoring ------------------------------------------------------------------------------------------
    def _score(
        self, inbox: queue.Queue[Any], outbox: queue.Queue[Any], work: Callable[[Any], list[Scored]], flight: Flight
    ) -> None:
        while True:
            try:
                items = inbox.get(timeout=_POLL_S)
            except queue.Empty:
                if self._abandon.is_set() or self._stop.is_set():  # a fatal error drains the inbox, STOP with it
                    return
                continue
            if items is STOP:
                _put(outbox, STOP, self._abandon)
                return
            self._score_one(items, outbox, work, flight)

    def _score_one(
        self, items: Any, outbox: queue.Queue[Any], work: Callable[[Any], list[Scored]], flight: Flight
    ) -> None:
        if self._stop.is_set():
            return
        try:
            done = items.score() if type(items) is Session else work(items)  # a session: its turns in order, here
        except Exception as exc:  # noqa: BLE001 - a dead worker process ends the run with its reason
            flight.fail(TracescoreError(f"scoring failed: {type(exc).__name__}: {exc}"))
            self._stop.set()
            return
        _put(outbox, done, self._abandon)  # an interrupted run drops it: the writer no longer takes any

    def _tally(self, started: float) -> None:
        requests = self._requests() if self._requests is not None else self.counts.sink_requests
        self.counts.tally(time.monotonic() - started, requests, self.usage)


class _Inline:
    """The reader's inbox when it scores itself: ``put`` scores a chunk and passes it to the writer."""

    def __init__(
        self, engine: Engine, outbox: queue.Queue[Any], work: Callable[[Any], list[Scored]], flight: Flight
    ) -> None:
        self.engine, self.outbox, self.work, self.flight = engine, outbox, work, flight

    def put(self, items: Any, timeout: float | None = None) -> None:
        if items is STOP:
            _put(self.outbox, STOP, self.engine._abandon)
        else:
            self.engine._score_one(items, self.outbox, self.work, self.flight)


def _start_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes, forked now (before the reader and scoring threads start: a fork copies no running thread)."""
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent, initargs=(os.getpid(),)
    )
    for future in [pool.submit(int) for _ in range(workers)]:
        future.result()
    return pool


def _die_with_parent(parent: int) -> None:
    """In a worker: exit as soon as the job process is gone (SIGKILLed jobs must not leave workers behind; a forked
    worker holds the pool's pipes open itself, so it would never see them close). SIGINT and SIGTERM, sent to the
    whole process group, are the parent's to handle: it ends its workers itself."""
    ignore_in_worker()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="tracescore-parent-watch", daemon=True).start()


def _put(q: queue.Queue[Any], item: Any, stop: threading.Event | None) -> bool:
    """Put with back-pressure; gives up (False) when ``stop`` is set so a failed run never hangs on a full queue."""
    while True:
        try:
            q.put(item, timeout=0.1)
            return True
        except queue.Full:
            if stop is not None and stop.is_set():
                return False


def _drain(*queues: queue.Queue[Any]) -> None:
    for q in queues:
        try:
            while True:
                q.get_nowait()
        except queue.Empty:
            pass
