"""The concurrent pipeline over a real JSONL source, the real adapter and scorers, and an in-memory idempotent sink."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.engine.helpers import CountingSink, DoublingSource, make_setup, write_traces
from tracescore.engine.plan import deterministic_scorers
from tracescore.engine.runner import backfill_job, run_job
from tracescore.errors import SinkError
from tracescore.limits import RateLimiter
from tracescore.scorers.scored import Scored
from tracescore.sources.jsonl import JsonlSource
from tracescore.store.db import Store
from tracescore.store.state import JobState
from tracescore.trace import Trace

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def test_backfill_scores_every_trace_once_and_completes(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    ids = write_traces(traces, T0, 120, step=timedelta(minutes=1))
    sink = CountingSink()
    setup = make_setup(tmp_path, JsonlSource(traces), sink=sink)
    outcome = backfill_job(setup, start=T0, stop=T0 + timedelta(hours=2))
    s = outcome.summary
    assert (s["seen"], s["scored"], s["failed"], s["skipped"]) == (120, 120, 0, 0)
    assert s["scores_written"] == sum(sink.deliveries.values()) > 120
    assert set(sink.deliveries.values()) == {1}
    assert {v["trace_id"] for v in sink.stored.values()} == set(ids)
    assert outcome.backfill is not None and outcome.backfill.status == "done"
    with Store(setup.store_path) as store:
        assert JobState(store).count_marked(outcome.backfill.scope) == {"scored": 120}
        (run,) = store.runs()
        assert run["status"] == "done" and run["summary"]["scored"] == 120
    again = backfill_job(setup, start=T0, stop=T0 + timedelta(hours=2))
    assert again.summary["seen"] == 0 and again.summary["slices_left"] == 0


def test_judge_calls_in_flight_are_bounded_and_overlap(tmp_path: Path) -> None:
    """Overlap is proven by a barrier that only opens when 3 judge calls are in flight at once (a serial engine
    would break it), the bound by a count that never exceeds the 5 scoring threads; no wall-clock timing."""
    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 40)
    lock, state = threading.Lock(), {"now": 0, "peak": 0, "met": 0, "entered": 0}
    together = threading.Barrier(3)

    def slow_judged(trace: Trace) -> Scored:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            state["entered"] += 1
            first_three = state["entered"] <= 3
        if first_three:
            try:
                together.wait(timeout=30)  # a judge call that returns only once 3 are in flight
                with lock:
                    state["met"] += 1
            except threading.BrokenBarrierError:
                pass
        with lock:
            state["now"] -= 1
        return Scored(())

    setup = make_setup(tmp_path, JsonlSource(traces), workers=5, scorers=[*deterministic_scorers(), slow_judged])
    outcome = backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1))
    assert outcome.summary["scored"] == 40
    assert state["met"] >= 3 and not together.broken  # three calls were in flight together
    assert 3 <= state["peak"] <= 5


def test_one_scoring_thread_never_overlaps_judge_calls(tmp_path: Path) -> None:
    """The check above can fail: with one scoring thread the barrier never opens."""
    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 3)
    together = threading.Barrier(2)
    broke: list[bool] = []

    def judged(trace: Trace) -> Scored:
        try:
            together.wait(timeout=0.2)
        except threading.BrokenBarrierError:
            broke.append(True)
            together.reset()
        return Scored(())

    setup = make_setup(tmp_path, JsonlSource(traces), workers=1, scorers=[*deterministic_scorers(), judged])
    backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1))
    assert broke == [True, True, True]


def test_failed_write_keeps_cursor_and_resume_writes_the_rest_once(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    ids = write_traces(traces, T0, 60, step=timedelta(minutes=1))
    failing = CountingSink(fail_on_batch=3)
    setup = make_setup(tmp_path, JsonlSource(traces), sink=failing, workers=2, chunks=1)
    with pytest.raises(SinkError, match="platform unavailable"):
        backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1))
    with Store(setup.store_path) as store:
        (run,) = store.runs()
        assert run["status"] == "aborted" and "platform unavailable" in run["summary"]["error"]
        state = JobState(store)
        job = state.latest_unfinished_backfill("test-source")
        assert job is not None and job.done_until == T0  # the only slice is not done
        done_before = state.count_marked(job.scope)["scored"]
    assert done_before == 20  # two batches of 10 committed before the third failed
    healthy = CountingSink()
    setup.sink = healthy
    outcome = backfill_job(setup, start=None, stop=None, resume=True)
    assert outcome.summary["skipped"] == 20 and outcome.summary["scored"] == 40
    written = {v["trace_id"] for v in failing.stored.values()} | {v["trace_id"] for v in healthy.stored.values()}
    assert written == set(ids)
    assert not set(failing.stored) & set(healthy.stored)  # nothing written twice


def test_duplicate_pages_and_unreadable_lines_are_counted_not_repeated(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    now = datetime.now(UTC)
    write_traces(traces, now - timedelta(minutes=10), 10, step=timedelta(seconds=5))
    with traces.open("a") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"id": "no-question", "timestamp": now.isoformat(), "steps": 3}) + "\n")
    sink = CountingSink()
    setup = make_setup(tmp_path, DoublingSource(traces), sink=sink)
    first = run_job(setup, now=now + timedelta(seconds=1))
    s = first.summary
    assert (s["scored"], s["failed"], s["duplicates"]) == (10, 2, 12)
    assert any("line 11" in f and "not JSON" in f for f in s["failures"])
    assert any("no-question" in f for f in s["failures"])
    assert s["watermark"] == s["window"][1]  # failed records are reported, they do not hold the watermark back
    second = run_job(setup, now=now + timedelta(seconds=2))
    assert (second.summary["scored"], second.summary["failed"], second.summary["skipped"]) == (0, 0, 24)
    assert set(sink.deliveries.values()) == {1}


def test_rate_limiter_spaces_requests_and_counts_them() -> None:
    clock = FakeClock()
    limiter = RateLimiter(per_minute=600, clock=clock.now, sleep=clock.sleep)  # one request per 0.1 s
    for _ in range(4):
        limiter.acquire()
    assert limiter.count == 4
    assert limiter.waited == pytest.approx(0.3)
    assert clock.t == pytest.approx(0.3)  # the limiter slept exactly the spacing, on the fake clock
    free = RateLimiter(clock=clock.now, sleep=clock.sleep)
    for _ in range(100):
        free.acquire()
    assert free.count == 100 and free.waited == 0 and clock.t == pytest.approx(0.3)


class FakeClock:
    """A clock that moves only when the limiter sleeps."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def test_an_adapter_bug_on_one_record_is_reported_on_it_and_the_batch_goes_on(tmp_path: Path) -> None:
    from tracescore.platforms.registry import get_adapter

    traces = tmp_path / "t.jsonl"
    write_traces(traces, T0, 10)
    real = get_adapter("jsonl")

    def buggy(payload: object) -> Trace:
        trace = real(payload)
        if trace.id == "t-00004":
            raise KeyError("observations")
        return trace

    sink = CountingSink()
    setup = make_setup(tmp_path, JsonlSource(traces), sink=sink)
    setup.adapter = buggy
    outcome = backfill_job(setup, start=T0, stop=T0 + timedelta(hours=1))
    s = outcome.summary
    assert (s["scored"], s["failed"]) == (9, 1)
    assert "line 5 (t-00004): adapter failed: KeyError" in s["failures"][0]
    assert "t-00004" not in {v["trace_id"] for v in sink.stored.values()}


def test_traces_younger_than_settle_are_left_for_the_next_run(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    traces = tmp_path / "t.jsonl"
    old = write_traces(traces, now - timedelta(minutes=5), 3, step=timedelta(seconds=1))
    young = write_traces(traces, now - timedelta(seconds=20), 1, prefix="young")
    sink = CountingSink()
    setup = make_setup(tmp_path, JsonlSource(traces), sink=sink)
    setup.settle_minutes = 1.0
    first = run_job(setup, now=now)
    assert first.summary["scored"] == 3 and first.summary["watermark"] == first.summary["window"][1]
    assert {v["trace_id"] for v in sink.stored.values()} == set(old)
    second = run_job(setup, now=now + timedelta(minutes=2))
    assert second.summary["scored"] == 1 and second.summary["skipped"] == 3
    assert {v["trace_id"] for v in sink.stored.values()} == set(old) | set(young)
