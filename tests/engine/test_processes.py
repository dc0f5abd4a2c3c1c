"""``run``/``backfill`` without a judge score in worker processes (#14 "all cores"), with the same results as threads,
and a platform sink still gets every TraceResult back from the workers."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import pickle
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.engine.helpers import CountingSink, make_setup, write_traces
from tracescore.adapters import Adapter
from tracescore.config import load_config
from tracescore.engine.plan import deterministic_scorers
from tracescore.engine.runner import backfill_job
from tracescore.engine.setup import build_setup, cores
from tracescore.engine.stage import process_plan
from tracescore.platforms.registry import get_adapter
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score
from tracescore.sources.jsonl import JsonlSource
from tracescore.store.db import Store
from tracescore.trace import Trace

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def pid_scorer(trace: Trace) -> Scored:
    """Which process scored the trace (module level, so a worker process can rebuild it)."""
    return Scored((Score(name="test.pid", value=float(os.getpid())),))


def _build(with_pid: bool) -> tuple[Adapter, list[Scorer]]:
    return get_adapter("jsonl"), [*deterministic_scorers(), *([pid_scorer] if with_pid else [])]


def _lines(store_path: Path) -> dict[str, dict[str, object]]:
    with Store(store_path) as store:
        (run,) = store.runs()
        return {str(line["trace_id"]): line for line in store.results(run["id"])}


def test_a_run_without_a_judge_gets_a_process_plan_with_the_same_scorers(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text("")
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
        "\n[scoring]\njudge = false\n"
    )
    setup = build_setup(load_config(config))
    assert setup.plan is not None and setup.limits.workers == cores()
    adapter, scorers = setup.plan("run-1", "scope").build()
    names = [getattr(s, "__name__", type(s).__name__) for s in scorers]
    assert names == [getattr(s, "__name__", type(s).__name__) for s in setup.scorers]
    assert adapter is setup.adapter


def test_processes_give_the_threads_results_and_the_sink_gets_every_result(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 150, step=timedelta(seconds=20))
    runs = {}
    for mode in ("threads", "processes"):
        work = tmp_path / mode
        work.mkdir()
        sink = CountingSink()
        setup = make_setup(work, JsonlSource(traces), sink=sink, workers=2, scorers=_build(True)[1])
        if mode == "processes":
            setup = dataclasses.replace(setup, plan=process_plan(functools.partial(_build, True)))
        outcome = backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1))
        assert outcome.summary["scored"] == 150
        runs[mode] = (_lines(setup.store_path), sink)
    (threads, thread_sink), (procs, proc_sink) = runs["threads"], runs["processes"]
    pids = {line["scores"]["test.pid"] for line in procs.values()}  # type: ignore[index]
    assert float(os.getpid()) not in pids and pids  # scored in other processes
    assert {line["scores"]["test.pid"] for line in threads.values()} == {float(os.getpid())}  # type: ignore[index]
    strip = {
        k: {**v, "scores": {n: x for n, x in v["scores"].items() if n != "test.pid"}}  # type: ignore[attr-defined]
        for k, v in procs.items()
    }
    assert strip == {
        k: {**v, "scores": {n: x for n, x in v["scores"].items() if n != "test.pid"}}  # type: ignore[attr-defined]
        for k, v in threads.items()
    }
    delivered = {k: v for k, v in proc_sink.stored.items() if v.get("name") != "test.pid"}
    assert delivered and delivered == {k: v for k, v in thread_sink.stored.items() if v.get("name") != "test.pid"}


class _BatchSizes(CountingSink):
    """A CountingSink that also records how many results each write carried."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, results):  # type: ignore[no-untyped-def]
        self.sizes.append(len(results))
        return super().write(results)


def test_a_process_chunk_larger_than_write_batch_is_written_in_batches_of_write_batch(tmp_path: Path) -> None:
    """A worker returns a chunk of many records; the platform still gets at most ``write_batch`` results per write."""
    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 150, step=timedelta(seconds=20))
    sink = _BatchSizes()
    setup = make_setup(tmp_path, JsonlSource(traces), sink=sink, workers=2, write_batch=10)
    setup = dataclasses.replace(setup, plan=process_plan(functools.partial(_build, False)))
    assert backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1)).summary["scored"] == 150
    assert sum(sink.sizes) == 150 and max(sink.sizes) == 10


@pytest.mark.parametrize("kind", ["langfuse", "langsmith", "otel"])
def test_every_platform_adapter_can_be_sent_to_a_worker_process(kind: str) -> None:
    """Each platform's adapter pickles, so ``run``/``backfill`` over it score in processes when there is no judge."""
    adapter = get_adapter(kind)
    assert process_plan(functools.partial(_pair, adapter)) is not None
    assert pickle.loads(pickle.dumps(adapter)).func is adapter.func  # type: ignore[attr-defined]


def _pair(adapter: Adapter) -> tuple[Adapter, list[Scorer]]:
    return adapter, deterministic_scorers()


_SIGNALS: list[Path] = []  # set before the pool forks, so the workers inherit it


def signalling_scorer(trace: Trace) -> Scored:
    """In a worker: leave a file each time the trace ``dup`` is scored (the test waits for the second one)."""
    if trace.id == "dup" and _SIGNALS:
        (_SIGNALS[0] / f"{os.getpid()}-{time.monotonic_ns()}").touch()
    return Scored(())


def _build_signalling() -> tuple[Adapter, list[Scorer]]:
    return get_adapter("jsonl"), [*deterministic_scorers(), signalling_scorer]


class _HoldFirst(CountingSink):
    """Holds the first write until the worker processes have scored ``dup`` twice (once per window), so the second
    copy was looked up in the marks before the first copy's mark was committed."""

    def __init__(self, signals: Path) -> None:
        super().__init__()
        self.signals = signals

    def write(self, results):  # type: ignore[no-untyped-def]
        if self.batches == 0:
            deadline = time.monotonic() + 60
            while len(list(self.signals.iterdir())) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
        return super().write(results)


def test_a_line_read_in_two_windows_is_scored_once_even_when_a_worker_checked_its_mark_too_early(
    tmp_path: Path,
) -> None:
    """A line without a timestamp is read in every window; the worker's mark look-up for the second copy ran before
    the first copy was committed, so the writer (which commits the marks) must catch it."""
    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 2, step=timedelta(minutes=40))  # one trace in each of two windows
    with traces.open("a") as fh:
        fh.write(json.dumps({"id": "dup", "question": "q", "answer": "A sentence."}) + "\n")
    signals = tmp_path / "signals"
    signals.mkdir()
    _SIGNALS[:] = [signals]
    try:
        sink = _HoldFirst(signals)
        setup = make_setup(tmp_path, JsonlSource(traces), sink=sink, workers=2, chunks=2, write_batch=1)
        setup = dataclasses.replace(setup, plan=process_plan(_build_signalling))
        summary = backfill_job(setup, start=T0, stop=T0 + timedelta(minutes=80)).summary
    finally:
        _SIGNALS.clear()
    assert len(list(signals.iterdir())) == 2  # the race happened: both copies were scored by a worker
    assert summary["scored"] == 3 and summary["skipped"] == 1
    assert max(sink.deliveries.values()) == 1  # every score record delivered once


class _Moved(JsonlSource):
    """A JSONL source whose records name a file the workers cannot read (moved away after the parent read it)."""

    def __init__(self, path: Path, gone: Path) -> None:
        super().__init__(path)
        self.gone = gone

    def records(self, since, until=None):  # type: ignore[no-untyped-def]
        for record in super().records(since, until):
            assert record.at is not None
            yield dataclasses.replace(record, at=(dataclasses.replace(record.at[0], path=str(self.gone)), record.at[1]))


def test_lines_a_worker_cannot_read_from_their_file_are_sent_as_bytes(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 150, step=timedelta(seconds=20))
    runs = {}
    for name, source in (("file", JsonlSource(traces)), ("moved", _Moved(traces, tmp_path / "gone.jsonl"))):
        work = tmp_path / name
        work.mkdir()
        setup = make_setup(work, source, workers=2)
        setup = dataclasses.replace(setup, plan=process_plan(functools.partial(_build, False)))
        assert backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1)).summary["scored"] == 150
        runs[name] = _lines(setup.store_path)
    assert runs["moved"] == runs["file"] and len(runs["file"]) == 150
