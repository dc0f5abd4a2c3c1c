"""The one-shot run, the scheduled run, the backfill and the gap check: lock, state, windows, engine, run summary.

``score``: one window of a platform's source (a whole file: ``EVERYTHING``) through the engine without a scope (no
trace skipped, none deduplicated), results written in input order; what was scored before a stop stays stored and
delivered.

``run``: window ``[watermark - lookback, now)`` (the first run starts one lookback back), traces already marked are
skipped, the watermark advances to ``now`` once every trace of the window is written. A trace whose judge failed
stays due (``store/due``): the next runs read it again (the window reaches back to the oldest) and send only the
scores that changed (``engine/heal``), up to ``[job] judge_retries`` runs, then name it given up.
``backfill``: ``[from, to)`` in slices, newest first, cut from one paged listing of the window (``engine.slices``),
resumable by slice and by per-trace marks. The gap check is ``engine/gaps``.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tracescore.engine.batch import BatchPrefill, window_prefill
from tracescore.engine.core import Engine, JobCounts, Limits, Sink
from tracescore.engine.heal import ChangedOnly
from tracescore.engine.interrupt import listening, received
from tracescore.engine.judge_only import JudgeOnlySink, LeftOutSource, judge_only_fingerprint, left_out
from tracescore.engine.session_job import session_step
from tracescore.engine.setup import JobSetup
from tracescore.engine.slices import SlicedScan
from tracescore.engine.stage import Plan, Scored
from tracescore.engine.turns import Carry, LookBack, prefill_turns
from tracescore.errors import ConfigError, InputError, Interrupted, TracescoreError
from tracescore.judge.make import make_batches
from tracescore.judge.providers import refuse_batch
from tracescore.platforms.base import Parts
from tracescore.scorers.scored import Scorer
from tracescore.sinks.jsonl import JsonlSink
from tracescore.sinks.records import WriteReport
from tracescore.sources.base import Record, Source
from tracescore.store.db import Store
from tracescore.store.due import DueTraces
from tracescore.store.lock import StoreLock
from tracescore.store.state import Backfill, JobState, MarkReader, to_text

log = logging.getLogger("tracescore.engine")
Progress = Callable[[JobCounts], None]


@dataclass
class Outcome:
    """What a run or backfill did: its summary (stored with the run and logged as one JSON line)."""

    run_id: str
    status: str
    summary: dict[str, Any]
    backfill: Backfill | None = None

    @property
    def counts_failed(self) -> int:
        return int(self.summary.get("failed", 0)) + int(self.summary.get("scores_rejected", 0))


@dataclass
class OneShot:
    """What a one-shot run did: its counts, the sink's report summed over batches, why it stopped (if it did)."""

    run_id: str
    counts: JobCounts
    write: WriteReport
    stopped: str | None = None
    input_error: InputError | None = None  # of its own class: an input of the wrong shape keeps its exit code


def score_once(
    parts: Parts,
    window: tuple[datetime, datetime | None],
    scorers: Sequence[Scorer],
    store: Store,
    *,
    workers: int = 1,
    plan: Callable[[str, str | None], Plan] | None = None,
    out: str | None = None,
    on_results: Callable[[int, list[Scored]], None] | None = None,
    counted: Callable[[Iterator[Record]], Iterable[Record]] = lambda records: records,
    extra_summary: Callable[[], dict[str, Any]] = dict,
    carry: bool = True,
) -> OneShot:
    """Score every record of ``window`` with the engine; store each result, write ``out`` and deliver to the sink.

    ``plan`` scores in ``workers`` processes (CPU-bound scoring: no judge); without it, in ``workers`` threads.
    """
    start, end = window
    label = "" if end is None else f" {start.isoformat()}..{end.isoformat()}"
    engine = Engine(
        source=_Counted(parts.source, counted),
        adapter=parts.adapter,
        scorers=scorers,
        store=store,
        sink=parts.sink,
        limits=Limits(workers=workers, queue_size=2 + 2 * workers, write_batch=500),  # chunks in flight
        processes=plan,
        oneshot=True,
        carry=Carry(carry),
    )
    # a signal from here until the output is complete interrupts the run (never the rename)
    with listening(threading.Event()):
        results_file = JsonlSink(out) if out else None  # an output that cannot be opened fails before the run starts
        run_id = store.start_run("score", source=parts.describe + label)
        run = OneShot(run_id, engine.counts, engine.write_report)
        if parts.sink is not None:
            parts.sink.attach(store, run_id)  # the sink records what it wrote and removes what this run supersedes
        done = 0

        def written(batch: list[Scored]) -> None:
            nonlocal done
            done += len(batch)
            if results_file is not None:
                results_file.write_lines([scored.text for scored in batch])
            if on_results is not None:
                on_results(done, batch)

        status = "failed"
        stop: Interrupted | None = None
        try:
            engine.process([(start, end or _FOREVER)], scope=None, run_id=run_id, on_results=written, ordered=True)
            status = "done"
            if (signum := received()) is not None:  # it came after the last batch: the output is not complete yet
                raise Interrupted(signum)
        except Interrupted as exc:
            status, stop = "interrupted", exc
        except InputError as exc:
            run.input_error = type(exc)(str(exc) + _kept(results_file, out))
        except TracescoreError as exc:
            run.stopped = str(exc) + _kept(results_file, out)
        finally:
            if results_file is not None:  # only a complete output replaces the previous one
                results_file.close(complete=status == "done")
            summary: dict[str, Any] = _oneshot_counts(engine.counts) | {"results": out}
            if parts.stats is not None:
                summary["read"] = parts.stats.as_dict()
            if parts.sink is not None:
                summary["write"] = engine.write_report.as_dict()
            if stop is not None:
                summary["signal"] = signal.Signals(stop.signum).name
            store.finish_run(run_id, summary | extra_summary(), status=status)
    if stop is not None:
        raise Interrupted(stop.signum, interrupted_line(engine.counts) + _kept(results_file, out)) from None
    return run


def _kept(results_file: JsonlSink | None, out: str | None) -> str:
    """Where an unfinished run's result lines are, and that the earlier ``--out`` file was left as it was."""
    partial = results_file.partial if results_file is not None else None
    return f"; results so far in {partial} ({out} untouched)" if partial is not None else ""


def interrupted_line(counts: JobCounts) -> str:
    """The one line an interrupted command ends with: traces read, traces written, and that a re-run finishes."""
    return (
        f"interrupted after {counts.seen} traces ({counts.scored + counts.failed} written);"
        " re-run to finish: nothing is duplicated"
    )


def _oneshot_counts(counts: JobCounts) -> dict[str, int]:
    """The counts a one-shot run reports (it skips nothing)."""
    return {k: getattr(counts, k) for k in ("seen", "scored", "failed", "scorer_errors")}


class _Counted:
    """A source whose records pass through ``counted`` (the progress bar's byte count)."""

    def __init__(self, source: Source, counted: Callable[[Iterator[Record]], Iterable[Record]]) -> None:
        self.source = source
        self.counted = counted

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        return iter(self.counted(iter(self.source.records(since, None if until is _FOREVER else until))))


_FOREVER = datetime.max.replace(tzinfo=UTC)


def run_job(
    setup: JobSetup,
    *,
    now: datetime | None = None,
    since: datetime | None = None,
    on_progress: Progress | None = None,
) -> Outcome:
    """One scheduled run over ``[watermark - lookback, now - settle)``; LockError when another run holds the store.

    Traces younger than ``settle`` may still be running (no answer yet): they are left for the next run.
    """
    until = (now := (now or datetime.now(UTC)).astimezone(UTC)) - timedelta(minutes=setup.settle_minutes)
    lookback = timedelta(minutes=setup.lookback_minutes)
    with StoreLock(setup.store_path, "tracescore run"), Store(setup.store_path) as store:
        state = JobState(store)
        mark = state.watermark(setup.source_key)
        start = since or ((mark.watermark - lookback) if mark else (until - lookback))
        if start >= until:
            raise ConfigError(f"window start {start.isoformat()} is not before its end {until.isoformat()}")
        run_id = store.start_run("run", source=setup.source_key)
        scope = run_scope(setup.source_key)
        low = min(start, mark.low) if mark else start
        due = DueTraces(store, scope)
        earlier = due.settle(setup.judge_retries, run_id)  # what a run killed before its end left to settle
        again, oldest = due.take_up(run_id)  # the traces whose judge failed: read again, the window reaching back
        store.commit()
        read_from = min(start, oldest) if oldest is not None else start

        def on_window(index: int, window: tuple[datetime, datetime]) -> None:
            state.advance(setup.source_key, low, window[1], run_id)

        def settled() -> dict[str, Any]:
            now = due.settle(setup.judge_retries, run_id)
            store.commit()
            healed, given_up = earlier.healed + now.healed, earlier.given_up + now.given_up
            return {"judge_retry": {"due": now.due, "retried": len(again), "healed": len(healed),
                                    "given_up": sorted(given_up)}}  # fmt: skip

        sink = ChangedOnly(setup.sink, store, set(again)) if again and setup.sink is not None else None
        before = to_text(mark.watermark) if mark else None
        extra = {"window": [to_text(read_from), to_text(until)], "watermark_before": before}
        return session_step(setup, store, _execute(
            setup, store, run_id, "run", [(read_from, until)], scope, on_window, on_progress, extra, sink=sink,
            on_finish=settled,
        ), now=now)  # fmt: skip


def backfill_job(
    setup: JobSetup,
    *,
    start: datetime | None,
    stop: datetime | None,
    resume: bool = False,
    judge_batch: bool = False,
    on_progress: Progress | None = None,
    on_start: Callable[[Backfill, bool], None] | None = None,
    judge_only: bool = False,
    now: datetime | None = None,
) -> Outcome:
    """Score ``[start, stop)`` in slices, newest first; an unfinished backfill of the same window and setup is resumed.

    With ``judge_batch`` each slice's judge calls go through the provider's batch API before the slice is scored;
    ``judge_only``: only the traces a judge budget left out, only their judged scores written (``engine/judge_only``).
    Once every slice is done, the session scores of the sessions idle at ``now`` are written, as a scheduled run
    writes them (``engine/session_job``); a session still active is left to the next run.
    """
    if (judge_batch or judge_only) and setup.judge is None:
        flag = "--judge-batch" if judge_batch else "--judge-only"
        raise ConfigError(f"{flag} needs the judge, which is off: {setup.judge_off}")
    if judge_batch:
        refuse_batch(setup.judge_provider)
    with StoreLock(setup.store_path, "tracescore backfill"), Store(setup.store_path) as store:
        state = JobState(store)
        source, fingerprint = setup.source, setup.fingerprint
        if judge_only:
            ids = left_out(store)
            source, fingerprint = LeftOutSource(source, setup.adapter, ids), judge_only_fingerprint(fingerprint, ids)
        if start is None or stop is None:
            if not resume:
                raise ConfigError("backfill needs --from and --to (or --resume to continue the last unfinished one)")
            found = state.latest_unfinished_backfill(setup.source_key)
            if found is None:
                raise ConfigError(f"no unfinished backfill of {setup.source_key} to resume; give --from and --to")
            job, resumed = found, True
        else:
            if start >= stop:
                raise ConfigError(f"--from {start.isoformat()} must be before --to {stop.isoformat()}")
            job, resumed = state.open_backfill(setup.source_key, fingerprint, start, stop, setup.chunks)
        if on_start is not None:
            on_start(job, resumed)
        run_id = store.start_run("backfill", source=setup.source_key)
        windows = job.windows()

        def on_window(index: int, window: tuple[datetime, datetime]) -> None:
            state.backfill_progress(job.id, window[0], "done" if index == len(windows) - 1 else "running")

        extra: dict[str, Any] = {
            "backfill_id": job.id,
            "window": [to_text(job.start), to_text(job.stop)],
            "resumed_from": to_text(windows[0][1] if windows else job.start) if resumed else None,
            "slices_left": len(windows),
        } | ({"judge_only": {"left_out": len(ids)}} if judge_only else {})
        before = None
        marks = MarkReader(store)
        if judge_batch:
            assert setup.judge is not None and setup.judge.cache is not None

            prefill = BatchPrefill(
                model=setup.judge.model,
                cache=setup.judge.cache,
                usage=setup.judge.batch_usage,
                store_path=setup.store_path,
                scope=job.scope,
                poll_seconds=setup.batch_poll_seconds,
                rubrics=setup.rubrics,
                redact=setup.redact,
                plan=setup.scorer_plan,
                api=make_batches(setup.judge_provider, setup.judge_model_id),
            )
            scan = SlicedScan(setup.source, windows[-1][0] if windows else job.start)  # the prefill's own listing
            turns = prefill_turns(setup.adapter, setup.source, setup.source_key, setup.session_lookback, job.start,
                                  setup.store_path)  # fmt: skip
            before = window_prefill(
                prefill, scan.records, setup.adapter, lambda key: marks.marked(job.scope, key) is not None,
                setup.judges, turns if setup.carry else None,
            )
            extra["judge_batch"] = True
            extra["judge_batches"] = prefill.summary  # kept current by the prefill, so the stored summary has it too
        # a window's sessions completed from their turns before it (slices go newest first: older ones come later)
        # (a judge-only backfill only lends their evidence: it writes no other scores)
        look = (
            LookBack(setup.source, setup.adapter, setup.session_lookback, job.start, complete=not judge_only)
            if setup.carry
            else None
        )
        try:
            sliced = SlicedScan(source, windows[-1][0] if windows else job.start)
            outcome = _execute(
                setup, store, run_id, "backfill", windows, job.scope, on_window, on_progress, extra, before, sliced,
                JudgeOnlySink(setup.sink) if judge_only and setup.sink is not None else setup.sink,
                on_finish=lambda: look.summary() if look else {"sessions": {"carry_evidence": False}},
                sessions_before=look,
            )
        finally:
            marks.close()
        if judge_batch:
            prefill.close()
        outcome.backfill = state.backfill(job.id)
        return session_step(setup, store, outcome, now=(now or datetime.now(UTC)).astimezone(UTC))


def run_scope(source_key: str) -> str:
    return f"run:{source_key}"


def _execute(
    setup: JobSetup,
    store: Store,
    run_id: str,
    command: str,
    windows: list[tuple[datetime, datetime]],
    scope: str,
    on_window: Callable[[int, tuple[datetime, datetime]], None],
    on_progress: Progress | None,
    extra: dict[str, Any],
    before_window: Callable[[datetime, datetime], None] | None = None,
    source: Source | None = None,
    sink: Sink | None = None,
    on_finish: Callable[[], dict[str, Any]] | None = None,
    sessions_before: LookBack | None = None,
) -> Outcome:
    """Run the engine over ``windows`` and store the run's summary (``on_finish`` adds to it, last)."""
    sink = sink or setup.sink
    engine = Engine(
        before_window=before_window,
        source=source or setup.source,
        adapter=setup.adapter,
        scorers=setup.scorers,
        store=store,
        sink=sink,
        limits=setup.limits,
        usage=setup.usage,
        requests=lambda: setup.limiter.count,
        processes=setup.plan,
        carry=Carry(setup.carry, setup.source_key, sessions_before),
    )
    summary: dict[str, Any] = {"run_id": run_id, "command": command, "source": setup.source_key} | extra
    if sink is not None:
        sink.attach(store, run_id)  # the sink records what it wrote and removes what this run supersedes
    status, error = "done", None
    with listening(threading.Event()):  # a signal once the engine is done waits for the run's summary to be stored
        try:
            engine.process(windows, scope=scope, run_id=run_id, on_window=on_window, on_progress=on_progress)
        except Interrupted as exc:
            status, summary["signal"] = "interrupted", signal.Signals(exc.signum).name
            raise Interrupted(exc.signum, interrupted_line(engine.counts)) from None
        except BaseException as exc:
            status, error = "aborted", str(exc) or type(exc).__name__
            raise
        finally:
            summary |= engine.counts.as_dict() | {"status": status, "error": error}
            if setup.stats is not None:
                summary["read"] = setup.stats.as_dict()  # what the source did (e.g. the query backend it read)
            if setup.judge is not None and (allowance := setup.judge.allowance) is not None:
                allowance.record(setup.judge.usage)  # [job] max_cost_per_day: the day's spend, the traces left
                summary["judge_budget"] = allowance.summary()
            if command == "run":
                mark = JobState(store).watermark(setup.source_key)
                summary["watermark"] = to_text(mark.watermark) if mark else None
            if on_finish is not None:
                summary |= on_finish()
            store.finish_run(run_id, summary, status=status)
            log.info("run summary", extra={"summary": summary})
    return Outcome(run_id, status, summary)
