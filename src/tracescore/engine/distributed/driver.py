"""``--engine ray``: one Ray task per shard of a ``ShardedSource``; the judge in a pool of async actors behind one
cluster-wide limiter; results written per shard, atomically, under a name derived from the shard key.

The guarantees: a shard whose result file exists is done and is skipped on a re-run (so a killed run resumes where
it stopped, and no shard is scored twice); a shard's file appears whole or not at all (temp file, then rename); every
reply the judge API gave is in the Parquet judge cache the moment it arrives, so a re-run pays for no answered request
again. A shard that fails (unreadable file, lost worker) is reported with its key and left for the next run.
Ray is imported here only when a run starts (``pip install 'tracescore[ray]'``).
"""

from __future__ import annotations

import logging
import signal
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracescore.adapters import Adapter
from tracescore.engine.distributed.address import cluster_address, describe_init_error
from tracescore.engine.distributed.cache import compact
from tracescore.engine.distributed.judging import JudgeSpec, JudgeWorker, RemoteJudge
from tracescore.engine.distributed.limiter import LimiterActor
from tracescore.engine.interrupt import keep_handlers, listening, received
from tracescore.engine.pipeline import RunCounts
from tracescore.engine.recipe import ScorerPlan, score_stage
from tracescore.engine.sessions import may_be_turn
from tracescore.engine.stage import Stage
from tracescore.errors import ConfigError, InputError, Interrupted, SourceError
from tracescore.result import TraceResult
from tracescore.scorers.scored import Scorer
from tracescore.sinks.parquet import read_parquet_results, shard_file, write_results
from tracescore.sources.base import Record, Shard, ShardedSource

RESULTS = "results"
JUDGE_CACHE = "judge-cache"
FAILURES_KEPT = 20


@dataclass(frozen=True)
class RaySettings:
    """How wide to run: shard tasks at once, judge workers, the judge API's request rate, which cluster."""

    workers: int = 2  # CPUs of the local cluster this run starts; a running cluster is used at its own width
    judge_workers: int | None = None  # default: one per shard worker
    requests_per_second: float | None = None  # None: only a 429's Retry-After slows the judge
    address: str | None = None  # None: RAY_ADDRESS, else a local cluster of ``workers`` CPUs


@dataclass
class ShardOutcome:
    """One shard of this run: its key and result file, its trace counts, or why it failed."""

    key: str
    file: str
    counts: RunCounts = field(default_factory=RunCounts)
    error: str | None = None


@dataclass
class RayRun:
    """What a run did: shards in the source, skipped as done before, scored now, failed; judge usage summed."""

    out: Path
    shards: int = 0
    done_before: int = 0
    scored: list[ShardOutcome] = field(default_factory=list)
    failed: list[ShardOutcome] = field(default_factory=list)
    judge: dict[str, Any] = field(default_factory=dict)
    limiter: dict[str, float] = field(default_factory=dict)

    @property
    def results(self) -> Path:
        return self.out / RESULTS

    def counts(self) -> RunCounts:
        total = RunCounts()
        for shard in self.scored:
            c = shard.counts
            total.seen, total.scored = total.seen + c.seen, total.scored + c.scored
            total.failed, total.scorer_errors = total.failed + c.failed, total.scorer_errors + c.scorer_errors
            total.failures += [f"{shard.key}: {f}" for f in c.failures][: FAILURES_KEPT - len(total.failures)]
        return total

    def lines(self) -> Iterator[dict[str, Any]]:
        """Every result line under ``out`` (this run's shards and those done before), streamed."""
        return read_parquet_results(str(self.results))


def _scored(records: Iterable[Record], adapter: Adapter, scorers: Sequence[Scorer], threads: int,
            counts: RunCounts, carry: bool = True) -> Iterator[TraceResult]:
    """The engine's stage (as ``score --engine local``), ``threads`` records at once (judge calls in flight), results
    in input order; with ``carry``, a session's turns (of this shard) together, in order, after the shard's others."""
    stage = Stage(adapter, scorers, "", oneshot=True)
    if threads <= 1:
        yield from score_stage(stage, records, counts, carry=carry)
        return
    turns: list[Record] = []

    def one(record: list[Record]) -> tuple[list[TraceResult], RunCounts]:
        mine = RunCounts()
        return list(score_stage(stage, record, mine, carry=carry)), mine

    def held(records: Iterable[Record]) -> Iterator[list[Record]]:
        """Each record alone, a session's turn kept back; then the turns, as one task (they carry in order)."""
        for record in records:
            if carry and may_be_turn(record.payload) and (trace := stage.adapt(record)[0]) and trace.session_id:
                turns.append(record)
            else:
                yield [record]
        if turns:
            yield turns

    window: deque[Future[tuple[list[TraceResult], RunCounts]]] = deque()
    with ThreadPoolExecutor(threads, thread_name_prefix="score") as pool:
        def drain(keep: int) -> Iterator[TraceResult]:
            while len(window) > keep:
                results, mine = window.popleft().result()
                counts.seen, counts.scored = counts.seen + mine.seen, counts.scored + mine.scored
                counts.failed += mine.failed
                counts.scorer_errors += mine.scorer_errors
                counts.failures += mine.failures
                yield from results

        for task in held(records):
            window.append(pool.submit(one, task))
            yield from drain(2 * threads)
        yield from drain(0)


def score_shard(source: ShardedSource, shard: Shard, adapter: Adapter, spec: ScorerPlan, judges: list[Any],
                model: str, target: str, threads: int) -> ShardOutcome:
    """The body of one Ray task: read, adapt and score one shard, then write its result file atomically."""
    judge = RemoteJudge(judges, model) if judges else None
    scorers = spec.scorers(judge)
    outcome = ShardOutcome(shard.key, target)
    results = _scored(source.read(shard), adapter, scorers, threads if judge else 1, outcome.counts,
                      spec.carry_evidence)
    write_results(target, (r.to_json() for r in results))
    outcome.counts.failures = outcome.counts.failures[:FAILURES_KEPT]
    return outcome


def _start(settings: RaySettings) -> bool:
    """Connect to (or start) the cluster; True when this call started it (and so must shut it down)."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--engine ray needs Ray ({exc}): pip install 'tracescore[ray]'") from exc
    if ray.is_initialized():
        return False
    address, origin = cluster_address(settings.address)  # an empty or unreachable address: one line, at once
    try:
        with keep_handlers():  # SIGINT/SIGTERM stay the command's (``engine.interrupt``): ray.init sets SIGTERM's
            ray.init(
                address=address,
                num_cpus=None if address else settings.workers,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
        raise SourceError(describe_init_error(address, origin, exc)) from exc
    return True


def score_shards(
    source: ShardedSource,
    adapter: Adapter,
    out: str | Path,
    spec: ScorerPlan,
    judge: JudgeSpec | None,
    settings: RaySettings,
    *,
    on_shard: Callable[[ShardOutcome], None] | None = None,
) -> RayRun:
    """Score every shard not yet done under ``out`` (``out/results/<shard>.parquet``, ``out/judge-cache/``)."""
    run = RayRun(Path(out))
    shards = source.shards()
    keys = [s.key for s in shards]
    if len(set(keys)) != len(keys):
        raise InputError("the source lists a shard key twice; shard keys must be unique and stable")
    run.shards = len(shards)
    todo = [(s, run.results / shard_file(s.key)) for s in shards]
    pending = [(s, f) for s, f in todo if not f.is_file()]
    run.done_before = run.shards - len(pending)
    if not pending:
        return run
    run.results.mkdir(parents=True, exist_ok=True)
    for stale in run.results.glob(".*.tmp"):  # what a killed run's shard tasks were writing
        stale.unlink(missing_ok=True)
    started = _start(settings)
    import ray

    width = settings.workers
    if not started:  # a running cluster: as wide as its CPUs
        width = max(1, int(ray.cluster_resources().get("CPU", width)))  # type: ignore[no-untyped-call]

    workers: list[Any] = []
    limiter: Any = None
    stop = threading.Event()  # a first SIGINT/SIGTERM sets it; the loop below raises Interrupted at its next wait
    listen = ExitStack()
    try:
        listen.enter_context(listening(stop))
        if judge is not None:
            cache = run.out / JUDGE_CACHE
            cache.mkdir(parents=True, exist_ok=True)
            compact(cache)
            limiter = ray.remote(LimiterActor).options(num_cpus=0).remote(settings.requests_per_second)
            token = uuid.uuid4().hex[:12]
            actor = ray.remote(JudgeWorker).options(num_cpus=0, max_concurrency=max(64, 4 * judge.in_flight))
            workers = [actor.remote(judge, str(cache), f"{token}-{n}", limiter)
                       for n in range(settings.judge_workers or width)]
        task = ray.remote(score_shard).options(num_cpus=1, max_retries=0)
        model = judge.model if judge is not None else ""
        threads = judge.in_flight if judge is not None else 1
        waiting: dict[Any, ShardOutcome] = {}
        queue = deque(pending)
        while queue or waiting:
            while queue and len(waiting) < 2 * width:
                shard, target = queue.popleft()
                ref = task.remote(source, shard, adapter, spec, workers, model, str(target), threads)
                waiting[ref] = ShardOutcome(shard.key, str(target))
            ready = _ready(ray, list(waiting), stop)
            for ref in ready:
                placeholder = waiting.pop(ref)
                try:
                    outcome: ShardOutcome = ray.get(ref)
                    run.scored.append(outcome)
                except Exception as exc:  # noqa: BLE001 - one shard's failure is reported, the others go on
                    cause = getattr(exc, "cause", None) or exc
                    placeholder.error = f"{type(cause).__name__}: {str(cause).strip().splitlines()[-1][:300]}"
                    outcome = placeholder
                    run.failed.append(outcome)
                if on_shard is not None:
                    on_shard(outcome)
        _close(run, workers, limiter)
    except (Interrupted, SystemError) as caught:  # the shards in flight end with the driver (never renamed in place)
        stopped = caught if isinstance(caught, Interrupted) else caught.__cause__
        if not isinstance(stopped, Interrupted):  # a second signal raised inside Ray's C code: it wraps ours
            raise
        done = run.counts()
        raise Interrupted(
            stopped.signum,
            f"interrupted after {done.seen} traces ({done.scored + done.failed} written, {len(run.scored)} shard(s)"
            " complete); re-run to finish: nothing is duplicated",
        ) from None
    finally:
        listen.close()
        for handle in [*workers, limiter]:
            if handle is not None:
                ray.kill(handle)
        if started:
            ray.shutdown()
    return run


def _ready(ray: Any, waiting: list[Any], stop: threading.Event) -> list[Any]:
    """The next finished shard task(s), waiting in short steps so that a signal (``stop``) is seen within one: the
    handler never raises inside Ray's own C code (there a raised ``Interrupted`` comes out as a ``SystemError``)."""
    while True:
        if stop.is_set():
            raise Interrupted(received() or signal.SIGINT)
        ready, _ = ray.wait(waiting, num_returns=1, timeout=0.2)
        if ready:
            return list(ready)


def _close(run: RayRun, workers: list[Any], limiter: Any) -> None:
    """Flush every judge worker's cache and sum their usage; the limiter's grants and pauses."""
    import ray

    if not workers:
        return
    total: dict[str, Any] = {}
    for usage in ray.get([w.close.remote() for w in workers]):
        for name, value in usage.items():
            if name == "cache_loaded":  # every worker loads the same cache
                total[name] = max(total.get(name, 0), value)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                total[name] = total.get(name, 0) + value
            else:
                total.setdefault(name, value)
    run.judge = total
    run.limiter = ray.get(limiter.stats.remote())
