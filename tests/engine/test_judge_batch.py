"""``backfill --judge-batch`` survives a SIGKILL: the batch in flight is recorded in the store before anything waits
on it, a restart resumes it (nothing submitted twice), and a batch lost server-side is submitted again once.

The real ``anthropic`` SDK talks to ``tests/fakes/anthropic_batches.py``, which counts every custom_id submitted.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anthropic
from click.testing import CliRunner

from tests.engine.helpers import write_traces
from tests.fakes.anthropic_batches import FakeAnthropicBatches
from tracescore.cli import main
from tracescore.engine.batch import BatchPrefill, judge_request, judge_requests
from tracescore.judge.cache import MemoryJudgeCache
from tracescore.judge.protocol import JudgeUsage
from tracescore.platforms.registry import get_adapter
from tracescore.store.batches import JudgeBatches
from tracescore.store.db import Store

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MODEL = "claude-sonnet-4-6"


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "tracescore.toml"
    path.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
        "backfill_chunks = 1\nbatch_poll_seconds = 0.02\n"
    )
    return path


def _args(tmp_path: Path) -> list[str]:
    config = _config(tmp_path)
    return ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q", "--judge-batch"]


def _env(fake: FakeAnthropicBatches) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}


def _summary(output: str) -> dict[str, Any]:
    return json.loads([line for line in output.splitlines() if line.startswith("{")][-1])  # type: ignore[no-any-return]


def _batch_rows(db: Path) -> list[tuple[str, str, int]]:
    """(id, status, number of keys) of every recorded batch, read without writing."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [(r[0], r[1], len(json.loads(r[2]))) for r in con.execute("SELECT id, status, keys FROM judge_batches")]
    finally:
        con.close()


def _kill_while_in_flight(tmp_path: Path, fake: FakeAnthropicBatches) -> str:
    """Start the backfill in a subprocess, SIGKILL it while the fake reports its batch in_progress; the batch id."""
    fake.hold = True
    env = dict(os.environ) | _env(fake)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracescore.cli", *_args(tmp_path)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert fake.polled.wait(timeout=120), "the backfill never polled its batch"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    (batch_id,) = fake.batches
    # recorded before it was polled, and still live: the killed run never saw it end
    assert _batch_rows(tmp_path / "ts.db") == [(batch_id, "in_progress", len(fake.batches[batch_id]["requests"]))]
    fake.hold = False
    return batch_id


def test_a_backfill_killed_before_it_learnt_its_batch_id_adopts_that_batch_not_a_second_one(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 15, step=timedelta(minutes=5))
    with FakeAnthropicBatches(polls_to_end=2) as fake:
        fake.create_gate = threading.Event()  # the batch is created server-side, its answer never reaches the job
        env = dict(os.environ) | _env(fake)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tracescore.cli", *_args(tmp_path)],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert fake.created.wait(timeout=120), "the backfill never submitted its batch"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=60)
            fake.create_gate.set()
        (batch_id,) = fake.batches
        ((intent, status, n),) = _batch_rows(tmp_path / "ts.db")
        assert intent.startswith("submitting:") and status == "submitting" and n == sum(fake.submitted.values())
        fake.create_gate = None

        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        batches = _summary(result.output)["judge_batches"]
        assert batches["recovered"] == 1 and batches["resumed"] == 1
        assert batches["batches"] == 1 and batches["submitted"] == n  # the API's account: one batch, sent once
        assert set(fake.submitted.values()) == {1} and list(fake.batches) == [batch_id]
    assert _judged(tmp_path) == _expected_judged(tmp_path)
    assert _batch_rows(tmp_path / "ts.db") == [(batch_id, "ended", n)]


def _expected_judged(tmp_path: Path) -> set[str]:
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    return {t.id for t in traces if judge_request(t) is not None}


def _judged(tmp_path: Path) -> set[str]:
    with Store(tmp_path / "ts.db") as store:
        run = store.runs()[-1]
        return {r["trace_id"] for r in store.results(run["id"]) if "grounding.rate" in r["scores"]}


def test_a_sigkilled_backfill_resumes_its_batch_and_submits_no_request_twice(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 15, step=timedelta(minutes=5))
    with FakeAnthropicBatches(polls_to_end=2) as fake:
        batch_id = _kill_while_in_flight(tmp_path, fake)
        submitted = sum(fake.submitted.values())
        assert submitted >= 10

        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        batches = _summary(result.output)["judge_batches"]
        assert batches["resumed"] == 1 and batches["batches"] == 1 and batches["submitted"] == submitted
        assert batches["succeeded"] == submitted and batches["resubmitted"] == []
        assert set(fake.submitted.values()) == {1}  # counted at the fake: no request submitted twice
        assert list(fake.batches) == [batch_id]
        assert [r for r in fake.requests if r.path == "/v1/messages"] == []  # and none judged synchronously
    assert _judged(tmp_path) == _expected_judged(tmp_path)  # every trace judged, from the resumed batch
    assert _batch_rows(tmp_path / "ts.db") == [(batch_id, "ended", submitted)]


def test_a_batch_deleted_while_the_backfill_was_down_is_resubmitted_once(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 15, step=timedelta(minutes=5))
    with FakeAnthropicBatches(polls_to_end=2) as fake:
        batch_id = _kill_while_in_flight(tmp_path, fake)
        submitted = sum(fake.submitted.values())
        fake.forget(batch_id)  # gone server-side while the backfill was down

        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        batches = _summary(result.output)["judge_batches"]
        (again,) = batches["resubmitted"]
        assert again.startswith(f"{batch_id}: deleted server-side (404); {submitted} request(s) re-submitted as")
        assert batches["resumed"] == 1 and batches["batches"] == 2 and batches["submitted"] == 2 * submitted
        assert batches["deleted"] == submitted and batches["succeeded"] == submitted
        assert set(fake.submitted.values()) == {2}  # every request re-submitted exactly once
        assert [r for r in fake.requests if r.path == "/v1/messages"] == []
    assert _judged(tmp_path) == _expected_judged(tmp_path)
    statuses = sorted(status for _, status, _ in _batch_rows(tmp_path / "ts.db"))
    assert statuses == ["deleted", "ended"]


def _prefill(
    tmp_path: Path, fake: FakeAnthropicBatches, usage: JudgeUsage, cache: MemoryJudgeCache, traces: list[Any]
) -> BatchPrefill:
    """Prefill ``traces`` with a client of the test's own (closed after) and a sleep that never waits."""
    sleeps: list[float] = []
    with anthropic.Anthropic(api_key="test-key", base_url=fake.url) as client:
        prefill = BatchPrefill(
            model=MODEL, cache=cache, usage=usage, store_path=tmp_path / "ts.db", client=client,
            poll_seconds=7.0, sleep=sleeps.append,  # no wall-clock wait: the poll interval is only recorded
        )
        prefill.prefill(traces)
    assert set(sleeps) <= {7.0}
    return prefill


def _traces(tmp_path: Path, n: int) -> list[Any]:
    write_traces(tmp_path / "t.jsonl", T0, n)
    adapter = get_adapter("jsonl")
    return [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]


def test_expired_errored_and_canceled_requests_are_not_batched_again_but_left_to_the_direct_judge(
    tmp_path: Path,
) -> None:
    traces = _traces(tmp_path, 8)
    wanted = {r.key(MODEL) for t in traces for r in judge_requests(t)}
    fates = ("succeeded", "errored", "expired", "canceled")
    with FakeAnthropicBatches(polls_to_end=1) as fake:
        fake.fate = lambda index, custom_id: fates[index % 4]
        cache = MemoryJudgeCache()
        prefill = _prefill(tmp_path, fake, JudgeUsage(), cache, traces)
        assert set(fake.submitted) == wanted and set(fake.submitted.values()) == {1} and len(fake.batches) == 1
        counts = fake.counts()
        assert {k: prefill.summary[k] for k in counts if k != "processing"} == {
            k: v for k, v in counts.items() if k != "processing"
        }
        assert counts["errored"] and counts["expired"] and counts["canceled"] and counts["succeeded"]
        assert len(cache.entries) == counts["succeeded"]  # the rest is judged directly when its trace is scored

        prefill = _prefill(tmp_path, fake, JudgeUsage(), cache, traces)  # the same slice again: nothing re-sent
        assert set(fake.submitted.values()) == {1} and len(fake.batches) == 1
        assert prefill.summary["submitted"] == len(wanted)


class _Watching(FakeAnthropicBatches):
    """Notes, at every poll, whether the polled batch was already in the store."""

    db: Path
    recorded_at_poll: list[bool]

    def _retrieve(self, batch_id: str) -> Any:
        with Store(self.db) as store:
            known = {b.id for b in JudgeBatches(store).batches(MODEL)}
        self.recorded_at_poll.append(batch_id in known)
        return super()._retrieve(batch_id)


def test_a_batch_is_in_the_store_before_its_first_poll(tmp_path: Path) -> None:
    traces = _traces(tmp_path, 4)
    with _Watching(polls_to_end=2) as fake:
        fake.db, fake.recorded_at_poll = tmp_path / "ts.db", []
        _prefill(tmp_path, fake, JudgeUsage(), MemoryJudgeCache(), traces)
        assert fake.recorded_at_poll and all(fake.recorded_at_poll)


def test_a_billed_batch_reply_that_does_not_parse_still_counts_in_tokens_and_cost(tmp_path: Path) -> None:
    traces = _traces(tmp_path, 3)
    with FakeAnthropicBatches(polls_to_end=1) as fake:
        fake.tamper = lambda output, body: {"claims": [{"text": "no sentence number"}]}
        usage = JudgeUsage()
        prefill = _prefill(tmp_path, fake, usage, MemoryJudgeCache(), traces)
        n = sum(fake.submitted.values())
        assert prefill.summary["unreadable"] == n and prefill.summary["succeeded"] == n
        assert usage.calls == n and usage.input_tokens > 0 and usage.output_tokens > 0 and usage.cost_usd > 0


def test_a_poll_that_fails_transiently_is_polled_again_not_abandoned(tmp_path: Path) -> None:
    from tests.fakes.anthropic import server_error

    traces = _traces(tmp_path, 4)
    with FakeAnthropicBatches(polls_to_end=1) as fake:
        fake.faults.add("/v1/messages/batches/msgbatch_0001", server_error(), server_error())
        cache = MemoryJudgeCache()
        sleeps: list[float] = []
        with anthropic.Anthropic(api_key="test-key", base_url=fake.url, max_retries=0) as client:
            prefill = BatchPrefill(
                model=MODEL, cache=cache, usage=JudgeUsage(), store_path=tmp_path / "ts.db", client=client,
                poll_seconds=1.0, sleep=sleeps.append,
            )
            prefill.prefill(traces)
        assert sleeps == [1.0, 1.0]  # two failed polls, then the batch ended
        assert set(fake.submitted.values()) == {1} and len(cache.entries) == len(fake.submitted)
        assert sum("InternalServerError" in e for e in prefill.report.errors) == 2
