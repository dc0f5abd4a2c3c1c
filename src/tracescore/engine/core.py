"""The concurrent pipeline: reading, scoring (judge calls) and writing overlap, joined by bounded queues.

One reader thread pulls native records window by window, adapts them and drops those already done (marks in the
store) or already in flight (duplicate pages); ``workers`` threads score (so at most ``workers`` judge calls are in
flight; the scorers stay pure); the calling thread writes batches to the platform sink, then, in one store
transaction, the results, the per-trace marks and the window progress. A window is complete once the reader has
finished it and every one of its traces is written; only complete, contiguous windows advance the cursor.
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tracescore.adapters import Adapter
from tracescore.engine.counts import FAILURES_KEPT, JobCounts, Limits, UsageMeter, Windows
from tracescore.engine.pipeline import _guess_id, score_trace
from tracescore.errors import InputError, SinkError, SourceError, TracescoreError
from tracescore.platforms.base import BatchSink
from tracescore.result import TraceResult
from tracescore.scorers import Scorer
from tracescore.sinks.records import WriteReport
from tracescore.sources.base import Record, Source
from tracescore.store.db import Store
from tracescore.store.state import JobState, MarkReader
from tracescore.trace import Trace

__all__ = ["Engine", "JobCounts", "Limits", "Sink", "UsageMeter"]


Window = tuple[datetime, datetime]


Sink = BatchSink


@dataclass
class _Item:
    chunk: int
    key: str
    timestamp: datetime | None
    trace: Trace | None = None
    error: str | None = None
    line: int | None = None


_STOP = object()


class Engine:
    """Streams windows of a source through adapter, scorers and sinks, with bounded queues and threads."""

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
    ) -> None:
        self.before_window = before_window
        self.source = source
        self.adapter = adapter
        self.scorers = scorers
        self.store = store
        self.state = JobState(store)
        self.sink = sink
        self.limits = limits or Limits()
        self.usage = usage
        self._requests = requests
        self.counts = JobCounts()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._fatal: BaseException | None = None

    # -- public -------------------------------------------------------------------------------------------
    def process(
        self,
        windows: Sequence[Window],
        *,
        scope: str,
        run_id: str,
        on_window: Callable[[int, Window], None],
        on_progress: Callable[[JobCounts], None] | None = None,
    ) -> JobCounts:
        """Score every not-yet-done trace of ``windows`` (oldest first) and call ``on_window`` as each completes.

        ``on_window`` runs inside the store transaction that commits the window's last results, so cursor state
        and results become durable together. Raises the first SourceError/SinkError/StoreError after the threads
        stopped; everything committed before it stays done.
        """
        started = time.monotonic()
        tracker = Windows(len(windows))
        inbox: queue.Queue[Any] = queue.Queue(self.limits.queue_size)
        outbox: queue.Queue[Any] = queue.Queue(self.limits.queue_size)
        marks = MarkReader(self.store)
        in_flight: set[str] = set()
        reader = threading.Thread(
            target=self._read, args=(windows, scope, marks, tracker, inbox, in_flight), name="tracescore-reader"
        )
        workers = [
            threading.Thread(target=self._score, args=(inbox, outbox), name=f"tracescore-score-{i}")
            for i in range(self.limits.workers)
        ]
        reader.start()
        for w in workers:
            w.start()
        try:
            self._write_loop(windows, scope, run_id, tracker, outbox, in_flight, on_window, on_progress, started)
        except BaseException as exc:
            self._stop.set()
            self._fatal = self._fatal or exc
            _drain(inbox, outbox)
        finally:
            self._stop.set()
            reader.join()
            for w in workers:
                w.join()
            marks.close()
            self._tally(started)
        if self._fatal is not None:
            raise self._fatal
        return self.counts

    # -- reader -------------------------------------------------------------------------------------------
    def _read(
        self,
        windows: Sequence[Window],
        scope: str,
        marks: MarkReader,
        tracker: Windows,
        inbox: queue.Queue[Any],
        in_flight: set[str],
    ) -> None:
        try:
            for chunk, (since, until) in enumerate(windows):
                if self.before_window is not None:
                    self.before_window(since, until)
                for record in self.source.records(since, until):
                    if self._stop.is_set():
                        return
                    item = self._adapt(chunk, record)
                    with self._lock:
                        self.counts.seen += 1
                        if item.key in in_flight:
                            self.counts.duplicates += 1
                            continue
                        if marks.marked(scope, item.key) is not None:
                            self.counts.skipped += 1
                            continue
                        in_flight.add(item.key)
                    tracker.add(chunk)
                    if not _put(inbox, item, self._stop):
                        return
                tracker.close(chunk)
        except TracescoreError as exc:
            self._fatal = self._fatal or exc
            self._stop.set()
        except Exception as exc:  # noqa: BLE001 - an SDK bug in a source ends the run with its reason, not a hang
            self._fatal = self._fatal or SourceError(f"reading failed: {type(exc).__name__}: {exc}")
            self._stop.set()
        finally:
            for _ in range(self.limits.workers):
                _put(inbox, _STOP, None)

    def _adapt(self, chunk: int, record: Record) -> _Item:
        try:
            trace = self.adapter(record.payload)
        except Exception as exc:  # noqa: BLE001 - InputError, or an adapter bug: reported on this record only
            where = f"line {record.line}" if record.line is not None else "record"
            key = _record_key(record)
            reason = str(exc) if isinstance(exc, InputError) else f"adapter failed: {type(exc).__name__}: {exc}"
            return _Item(chunk, key, None, error=f"{where} ({key}): {reason}", line=record.line)
        return _Item(chunk, trace.id, trace.timestamp, trace=trace, line=record.line)

    # -- scoring ------------------------------------------------------------------------------------------
    def _score(self, inbox: queue.Queue[Any], outbox: queue.Queue[Any]) -> None:
        while True:
            item = inbox.get()
            if item is _STOP:
                _put(outbox, _STOP, None)
                return
            if self._stop.is_set():
                continue
            if item.trace is None:
                result = TraceResult(trace_id=item.key, errors=[item.error or "unreadable"], line=item.line)
            else:
                try:
                    result = score_trace(item.trace, self.scorers)
                except Exception as exc:  # noqa: BLE001 - one trace's bug must neither stop the batch nor hang it
                    result = TraceResult(trace_id=item.key, timestamp=item.timestamp)
                    result.errors.append(f"scoring failed: {type(exc).__name__}: {exc}")
                result.line = item.line
            _put(outbox, (item, result), None)

    # -- writing ------------------------------------------------------------------------------------------
    def _write_loop(
        self,
        windows: Sequence[Window],
        scope: str,
        run_id: str,
        tracker: Windows,
        outbox: queue.Queue[Any],
        in_flight: set[str],
        on_window: Callable[[int, Window], None],
        on_progress: Callable[[JobCounts], None] | None,
        started: float,
    ) -> None:
        batch: list[tuple[_Item, TraceResult]] = []
        stopped = 0
        last_flush = time.monotonic()
        while stopped < self.limits.workers:
            try:
                got = outbox.get(timeout=self.limits.write_interval)
            except queue.Empty:
                got = None
            if got is _STOP:
                stopped += 1
            elif got is not None:
                batch.append(got)
            due = time.monotonic() - last_flush >= self.limits.write_interval
            if len(batch) >= self.limits.write_batch or (due and batch):
                self._flush(batch, scope, run_id, tracker, in_flight)
                batch = []
            if due or got is None:
                last_flush = time.monotonic()
                self._complete(windows, tracker, on_window)
                if on_progress is not None:
                    self._tally(started)
                    on_progress(self.counts)
        if batch:
            self._flush(batch, scope, run_id, tracker, in_flight)
        if self._fatal is None:
            self._complete(windows, tracker, on_window)
        self._tally(started)
        if on_progress is not None:
            on_progress(self.counts)

    def _flush(
        self,
        batch: list[tuple[_Item, TraceResult]],
        scope: str,
        run_id: str,
        tracker: Windows,
        in_flight: set[str],
    ) -> None:
        rejected: dict[str, list[str]] = {}
        if self.sink is not None:
            writable = [r for item, r in batch if item.trace is not None]
            try:
                report = self.sink.write(writable) if writable else WriteReport()
            except SinkError:
                raise
            except TracescoreError:
                raise
            except Exception as exc:  # noqa: BLE001 - an SDK error must end the run with a reason, not a traceback
                raise SinkError(f"writing scores failed: {type(exc).__name__}: {exc}") from exc
            self.counts.scores_written += report.accepted
            self.counts.scores_rejected += len(report.rejected)
            self.counts.sink_requests += report.requests
            for rejection in report.rejected:
                rejected.setdefault(str(rejection.trace_id), []).append(f"{rejection.name}: {rejection.reason}")
                if len(self.counts.rejections) < FAILURES_KEPT:
                    self.counts.rejections.append(str(rejection))
        marks: list[tuple[str, datetime | None, str]] = []
        for item, result in batch:
            if item.trace is None or (not result.scores and result.errors):
                self.counts.fail(f"{item.key}: {result.errors[0]}" if item.trace is not None else result.errors[0])
                status = "failed"
            else:
                self.counts.scored += 1
                if result.errors:
                    self.counts.scorer_errors += 1
                status = "rejected" if item.key in rejected else "scored"
                result.errors += [f"score rejected by the platform: {r}" for r in rejected.get(item.key, [])]
                if self.sink is None:
                    self.counts.scores_written += len(result.values)
            self.store.add_result(run_id, result)
            marks.append((item.key, item.timestamp, status))
        self.state.mark(scope, marks, run_id)
        self.store.commit()
        with self._lock:
            for item, _ in batch:
                in_flight.discard(item.key)
        for item, _ in batch:
            tracker.done(item.chunk)

    def _complete(self, windows: Sequence[Window], tracker: Windows, on_window: Callable[[int, Window], None]) -> None:
        newest = tracker.advance()
        self.counts.windows_done = tracker.next
        if newest is not None:
            on_window(newest, windows[newest])
            self.store.commit()

    def _tally(self, started: float) -> None:
        self.counts.duration_s = time.monotonic() - started
        if self._requests is not None:
            self.counts.requests = self._requests()
        else:
            self.counts.requests = self.counts.sink_requests
        if self.usage is not None:
            spent = self.usage()
            self.counts.judge_calls = spent.get("calls", 0)
            self.counts.judge_cache_hits = spent.get("cache_hits", 0)
            self.counts.judge_input_tokens = spent.get("input_tokens", 0)
            self.counts.judge_output_tokens = spent.get("output_tokens", 0)
            self.counts.judge_cost_usd = float(spent.get("cost_usd", 0.0))


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


def _record_key(record: Record) -> str:
    """A stable key for a record that could not be adapted: its id when readable, else its line or content hash."""
    guessed = _guess_id(record.payload)
    if guessed:
        return guessed
    if record.line is not None:
        return f"line:{record.line}"
    raw = record.payload if isinstance(record.payload, bytes) else repr(record.payload).encode()
    return "sha1:" + hashlib.sha1(raw).hexdigest()[:16]  # noqa: S324 - a key, not security
