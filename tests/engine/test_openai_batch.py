"""``backfill --judge-batch`` on ``[judge] provider = "openai"`` (#47, acceptance 2): OpenAI's Batch API through the
real ``openai`` SDK over loopback HTTP against ``tests/fakes/openai_batches.py`` (written from the SDK's types).

The judge is configured on OpenAI's own API (``base_url = "http://api.openai.com/v1"``: the judge's identity is
``openai:gpt-5.4``, OpenAI's prices, and the Batch API is offered); the SDK reaches the fake through ``HTTP_PROXY``,
as through a company's proxy, so nothing leaves the machine. Killed with SIGKILL at each state of a batch and run
again: no request is billed twice (counted at the fake, by content), every trace is scored once, and the judged
scores are those of the same backfill without batches.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.engine.helpers import write_traces
from tests.fakes.base import Fault
from tests.fakes.openai_batches import FakeOpenAIBatches, content_digest
from tests.fakes.openai_chat import rate_limited, server_error
from tracescore.cli import main
from tracescore.store.db import Store

T0 = datetime(2026, 11, 1, tzinfo=UTC)
JUDGE = '[judge]\nprovider = "openai"\nmodel = "gpt-5.4"\nbase_url = "http://api.openai.com/v1"\n'


def _fate(batch: int, index: int, custom_id: str) -> str:
    """The first batch completes with some requests errored; the second expires with some requests unrun."""
    if index % 8 == 1:
        return "errored"
    if batch % 2 == 0 and index % 8 == 3:
        return "expired"
    return "succeeded"


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def _args(tmp_path: Path, name: str = "ts", *, batch: bool = True, judge: str = JUDGE) -> list[str]:
    config = tmp_path / f"{name}.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / f"{name}.db"}"\n'
        f"backfill_chunks = 2\nbatch_poll_seconds = 0.02\n\n{judge}"
    )
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
    return args + (["--judge-batch"] if batch else [])


def _env(fake: FakeOpenAIBatches) -> dict[str, str]:
    return {"OPENAI_API_KEY": "test-key", "HTTP_PROXY": fake.url, "http_proxy": fake.url}


def _summary(output: str) -> dict[str, Any]:
    return json.loads([line for line in output.splitlines() if line.startswith("{")][-1])  # type: ignore[no-any-return]


def _scores(db: Path) -> dict[str, dict[str, Any]]:
    """Every trace's scores over every run (a trace scored twice would show in ``_scored``)."""
    with Store(db) as store:
        return {r["trace_id"]: r["scores"] for run in store.runs() for r in store.results(run["id"])}


def _scored(db: Path) -> Counter[str]:
    with Store(db) as store:
        return Counter(r["trace_id"] for run in store.runs() for r in store.results(run["id"]))


@pytest.fixture(scope="module")
def without_batches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The same backfill, judged one call at a time (no batches): the scores the batch runs must give."""
    tmp_path = tmp_path_factory.mktemp("direct")
    write_traces(tmp_path / "t.jsonl", T0, 30, step=timedelta(minutes=45))
    with FakeOpenAIBatches() as fake:
        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path, "direct", batch=False))
        assert result.exit_code == 0, result.output
        assert fake.direct and not fake.batches
    scores = _scores(tmp_path / "direct.db")
    assert any("grounding.rate" in s for s in scores.values())
    return scores


def _kill_at(tmp_path: Path, fake: FakeOpenAIBatches, state: str) -> None:
    """Run the backfill in a subprocess; SIGKILL it when its gated batch is in ``state``."""
    gate = threading.Event()
    if state == "created":  # created server-side, its id never reached the job
        fake.create_gate, reached = gate, fake.created
    elif state == "ended_unread":  # ended; the job asked for its output file and never got it
        fake.content_gate, reached = gate, fake.content_asked
    else:  # validating, in_progress, finalizing: polled and held there
        fake.stop_at, reached = state, fake.reached
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracescore.cli", *_args(tmp_path)],
        cwd=tmp_path, env=dict(os.environ) | _env(fake), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert reached.wait(timeout=120), f"the backfill never reached a batch {state}"
        _no_direct_call_in_flight(fake, tmp_path / "ts.db")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        fake.create_gate = fake.content_gate = None
        fake.stop_at = None
        gate.set()
    assert proc.returncode == -signal.SIGKILL


def _no_direct_call_in_flight(fake: FakeOpenAIBatches, db: Path) -> None:
    """Wait until the store holds the direct judge's reply to every request the earlier batches did not answer.

    A direct call answered but not yet stored when the kill comes is sent again by the restart (Chat Completions has
    no idempotency key): the kills here come at the batch states, outside that window, as in the Anthropic test."""
    earlier = [line for batch in fake.batches.values() if not batch["gated"] for line in batch["lines"]]
    due = {line["custom_id"] for line in earlier if fake.outcomes.get(content_digest(line["body"])) != "succeeded"}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            cached = {k for (k,) in con.execute("SELECT key FROM judge_cache")}
        finally:
            con.close()
        if due <= cached:
            return
        time.sleep(0.05)
    raise AssertionError("the direct judge's replies never reached the store")


def _billed_once(fake: FakeOpenAIBatches) -> None:
    """Counted at the server, by content: every request in one batch, once; directly only if its batch did not
    answer it, once."""
    batched = fake.sent - fake.direct
    assert batched and set(batched.values()) == {1}
    unanswered = {digest for digest, kind in fake.outcomes.items() if kind != "succeeded"}
    assert set(fake.direct) == unanswered and set(fake.direct.values()) <= {1}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("state", "gate_from"),
    [("created", 1), ("validating", 1), ("in_progress", 1), ("finalizing", 1), ("ended_unread", 1),
     ("created", 2), ("in_progress", 2), ("ended_unread", 2)],
)  # fmt: skip
def test_a_backfill_on_openai_sigkilled_at_each_batch_state_bills_nothing_twice_and_scores_as_without_batches(
    tmp_path: Path, state: str, gate_from: int, without_batches: dict[str, dict[str, Any]]
) -> None:
    ids = write_traces(tmp_path / "t.jsonl", T0, 30, step=timedelta(minutes=45))
    with FakeOpenAIBatches() as fake:
        fake.fate, fake.gate_from = _fate, gate_from
        _kill_at(tmp_path, fake, state)

        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        batches = _summary(result.output)["judge_batches"]
        counts = fake.counts()
        assert counts["batches"] == 2 and counts["processing"] == 0
        assert all(counts[kind] > 0 for kind in ("succeeded", "errored", "expired"))
        assert {k: batches[k] for k in counts} == counts  # the summary says what the API says
        assert batches["unresolved"] == 0 and batches["resubmitted"] == []
        if state == "created":
            assert batches["recovered"] == 1  # found by the intent id in its metadata, never created again
        _billed_once(fake)
        assert batches["billed"]["calls"] == fake.billed["batch"]["replies"] == counts["succeeded"]
        assert batches["billed"]["input_tokens"] + batches["billed"]["cache_read_tokens"] == (
            fake.billed["batch"]["prompt_tokens"]
        )
        assert batches["billed"]["output_tokens"] == fake.billed["batch"]["completion_tokens"] > 0
        assert batches["billed"]["cost_usd"] > 0  # OpenAI's price of gpt-5.4, halved

    assert _scored(tmp_path / "ts.db") == Counter(ids)  # every trace scored once over both runs
    assert _scores(tmp_path / "ts.db") == without_batches


def test_faults_on_the_files_and_batches_endpoints_lose_nothing_and_bill_nothing_twice(
    tmp_path: Path, without_batches: dict[str, dict[str, Any]]
) -> None:
    """429 + Retry-After on the create (it was not made: made again), a cut answer to a create (it was made: found
    by its metadata, not made again), 500 on polls, a cut output file (read again, billed once)."""
    write_traces(tmp_path / "t.jsonl", T0, 30, step=timedelta(minutes=45))
    with FakeOpenAIBatches() as fake:
        fake.faults.add("/v1/batches", rate_limited(0.01), Fault.truncated(), server_error(), server_error())
        fake.faults.add("/v1/files/file-fake0002/content", Fault.truncated())
        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        assert fake.faults.pending() == 0
        batches = _summary(result.output)["judge_batches"]
        assert fake.counts()["batches"] == 2 and batches["recovered"] == 1
        assert batches["succeeded"] == batches["submitted"] == sum(fake.sent.values()) and not fake.direct
        _billed_once(fake)
        assert batches["billed"]["calls"] == fake.billed["batch"]["replies"]
    assert _scores(tmp_path / "ts.db") == without_batches


def test_a_batch_that_outlasts_the_wait_is_cancelled_and_its_requests_are_judged_directly_once(
    tmp_path: Path,
) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 4)
    with FakeOpenAIBatches() as fake:
        fake.stop_at = "in_progress"
        from tracescore.engine.batch import BatchPrefill, judge_requests
        from tracescore.judge.cache import MemoryJudgeCache
        from tracescore.judge.make import make_batches
        from tracescore.judge.protocol import JudgeUsage
        from tracescore.judge.providers import ProviderSettings
        from tracescore.platforms.registry import get_adapter

        adapter = get_adapter("jsonl")
        traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
        os.environ.update(_env(fake))
        try:
            api = make_batches(ProviderSettings("openai", base_url="http://api.openai.com/v1"), "gpt-5.4")
        finally:
            for name in _env(fake):
                os.environ.pop(name, None)
        sleeps: list[float] = []
        cache = MemoryJudgeCache()
        prefill = BatchPrefill(
            model=api.model, cache=cache, usage=JudgeUsage(), store_path=tmp_path / "ts.db", api=api,
            poll_seconds=10.0, max_wait_seconds=30.0, sleep=sleeps.append,
        )  # fmt: skip
        try:
            prefill.prefill(traces)
        finally:
            prefill.close()
        wanted = {r.key(api.model) for t in traces for r in judge_requests(t)}
        assert prefill.report.canceled_by_us == 1 and cache.entries == {}
        assert prefill.summary["canceled"] == len(wanted) and prefill.summary["processing"] == 0
        assert [b["status"] for b in fake.batches.values()] == ["cancelled"] and not fake.billed["batch"]


def test_a_batch_that_fails_validation_leaves_its_requests_to_the_direct_judge_once_never_to_another_batch(
    tmp_path: Path, without_batches: dict[str, dict[str, Any]]
) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 30, step=timedelta(minutes=45))
    with FakeOpenAIBatches() as fake:
        fake.fail_next = 1
        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        batches = _summary(result.output)["judge_batches"]
        failed = [b for b in fake.batches.values() if b["status"] == "failed"]
        assert len(fake.batches) == 2 and len(failed) == 1  # one per slice, the failed one not submitted again
        held = {content_digest(line["body"]) for line in failed[0]["lines"]}
        assert set(fake.direct) == held and set(fake.direct.values()) == {1}  # each judged directly, once
        assert batches["billed"]["calls"] == fake.billed["batch"]["replies"] > 0
        assert any("not available to batches" in e for e in batches["errors"]), batches["errors"]
    assert _scores(tmp_path / "ts.db") == without_batches


def test_judge_batch_on_another_openai_compatible_server_is_refused_in_one_line_exit_2(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 2)
    judge = '[judge]\nprovider = "openai"\nmodel = "qwen3-32b"\nbase_url = "http://127.0.0.1:8000/v1"\n'
    result = CliRunner().invoke(main, _args(tmp_path, judge=judge))
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--judge-batch" in lines[0] and "127.0.0.1" in lines[0], result.output
    assert not (tmp_path / "ts.db").exists() or _scored(tmp_path / "ts.db") == Counter()
