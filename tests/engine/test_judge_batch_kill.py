"""``backfill --judge-batch`` SIGKILLed at each state of a batch, then restarted: nothing sent twice, counted at the
server; every trace judged once; the summary's ``judge_batches`` equal to what the Message Batches API reports.

The real ``anthropic`` SDK talks to ``tests/fakes/anthropic_batches.py``, which counts every request it receives by
its content (batch or direct), processes each batch request once, and answers some with errored, expired and
canceled results. The backfill has two slices, so two batches; the kill comes at the first or the second.
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

import anthropic
import pytest
from click.testing import CliRunner

from tests.engine.helpers import write_traces
from tests.fakes.anthropic_batches import FakeAnthropicBatches, content_digest
from tracescore.cli import main
from tracescore.engine.batch import BatchPrefill, judge_request, judge_requests
from tracescore.judge.cache import MemoryJudgeCache
from tracescore.judge.protocol import JudgeUsage
from tracescore.judge.request import message_params
from tracescore.platforms.registry import get_adapter
from tracescore.store.db import Store

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MODEL = "claude-sonnet-4-6"
FATES = {1: "errored", 3: "expired", 5: "canceled"}  # by a request's index in its batch, modulo 8


def _fate(index: int, custom_id: str) -> str:
    return FATES.get(index % 8, "succeeded")


def _args(tmp_path: Path) -> list[str]:
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
        "backfill_chunks = 2\nbatch_poll_seconds = 0.02\n"
    )
    return ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q", "--judge-batch"]


def _env(fake: FakeAnthropicBatches) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}


def _kill_at(tmp_path: Path, fake: FakeAnthropicBatches, state: str) -> None:
    """Run the backfill in a subprocess and SIGKILL it when its gated batch is in ``state``."""
    gate = threading.Event()
    if state == "submitted":  # created server-side, its id never reached the job
        fake.create_gate, reached = gate, fake.created
    elif state == "in_progress":  # recorded and polled, not ended
        fake.hold, reached = True, fake.polled
    else:  # ended: the job asked for its results and never got them
        fake.results_gate, reached = gate, fake.results_asked
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracescore.cli", *_args(tmp_path)],
        cwd=tmp_path, env=dict(os.environ) | _env(fake), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert reached.wait(timeout=120), f"the backfill never reached a batch {state}"
        _no_direct_call_in_flight(fake, tmp_path / "ts.db")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        fake.create_gate = fake.results_gate = None
        fake.hold = False
        gate.set()
    assert proc.returncode == -signal.SIGKILL


def _no_direct_call_in_flight(fake: FakeAnthropicBatches, db: Path) -> None:
    """Wait until the direct judge has answered, and the store cached, every request the earlier batches failed.

    A direct call whose reply has not been stored when the kill comes is sent again by the restart: the Messages API
    has no idempotency key, so that window cannot be closed; the kills here come at the batch states, outside it
    (the earlier slice, scored while the next one's batch is prepared, has finished its direct calls).
    """
    earlier = [item for batch in fake._all if not batch["gated"] for item in batch["requests"]]
    keys = {content_digest(item["params"]): item["custom_id"] for item in earlier}
    due = {keys[d] for d in keys if fake.outcomes.get(d, "succeeded") != "succeeded"}
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


def _stored(tmp_path: Path) -> tuple[list[str], set[str]]:
    """Every trace id with a result in any run (once per result), and those with a judged grounding score."""
    with Store(tmp_path / "ts.db") as store:
        rows = [r for run in store.runs() for r in store.results(run["id"])]
    return [r["trace_id"] for r in rows], {r["trace_id"] for r in rows if "grounding.rate" in r["scores"]}


@pytest.mark.parametrize("gate_from", [1, 2], ids=["first-batch", "second-batch"])
@pytest.mark.parametrize("state", ["submitted", "in_progress", "ended_not_fetched"])
def test_a_backfill_sigkilled_at_any_batch_state_sends_nothing_twice_and_reports_what_the_api_counted(
    tmp_path: Path, state: str, gate_from: int
) -> None:
    ids = write_traces(tmp_path / "t.jsonl", T0, 30, step=timedelta(minutes=45))
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    with FakeAnthropicBatches(polls_to_end=2) as fake:
        fake.fate, fake.gate_from = _fate, gate_from
        _kill_at(tmp_path, fake, state)

        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        summary = json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])
        batches = summary["judge_batches"]
        counts = fake.counts()
        assert counts["batches"] == 2 and counts["processing"] == counts["deleted"] == 0
        assert all(counts[kind] > 0 for kind in ("succeeded", "errored", "expired", "canceled"))
        assert {k: batches[k] for k in counts} == counts  # the summary says what the API says
        assert batches["unresolved"] == 0 and batches["resubmitted"] == []
        if state == "submitted":
            assert batches["recovered"] == 1

        # counted at the server, by content: every request sent in one batch, once; directly only if it failed there
        batched = fake.sent - fake.direct
        assert batched and set(batched.values()) == {1}
        failed = {digest for digest, kind in fake.outcomes.items() if kind != "succeeded"}
        assert set(fake.direct) == failed and set(fake.direct.values()) == {1}  # judged directly, once each
        assert len(failed) == counts["errored"] + counts["expired"] + counts["canceled"]
        wanted = {json.dumps(message_params(r, MODEL), sort_keys=True) for t in traces for r in judge_requests(t)}
        assert len(batched) == len(wanted)

        # the cost counts every billed reply: the batches' in the ledger's account, the run's own in its judge
        billed = fake.billed["batch"]
        assert batches["billed"]["calls"] == billed["replies"] == counts["succeeded"]
        assert batches["billed"]["input_tokens"] == billed["input_tokens"] > 0
        assert batches["billed"]["output_tokens"] == billed["output_tokens"] > 0
        assert batches["billed"]["cache_read_tokens"] == billed["cache_read_input_tokens"]
        assert batches["billed"]["cache_write_tokens"] == billed["cache_creation_input_tokens"]
        if gate_from == 1:  # the killed run read and judged nothing: the restart paid for everything
            direct = fake.billed["direct"]
            assert summary["judge_calls"] == billed["replies"] + direct["replies"]
            assert summary["judge_input_tokens"] == billed["input_tokens"] + direct["input_tokens"]

    scored, judged = _stored(tmp_path)
    assert Counter(scored) == Counter(ids)  # every trace scored once over both runs
    assert judged == {t.id for t in traces if judge_request(t) is not None}


def test_an_unrecorded_create_is_told_from_a_stranger_batch_of_the_same_size_by_its_custom_ids(
    tmp_path: Path,
) -> None:
    """A run killed after its create reached the API, while another client created a batch just as large: the restart
    watches both, adopts the one holding its custom_ids, submits nothing and takes nothing from the other."""
    from tracescore.store.batches import BATCH_SUBMITTING, JudgeBatch, JudgeBatches

    write_traces(tmp_path / "t.jsonl", T0, 6)
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    requests = {r.key(MODEL): r for t in traces for r in judge_requests(t)}
    with FakeAnthropicBatches(polls_to_end=2) as fake, anthropic.Anthropic(api_key="k", base_url=fake.url) as client:
        with Store(tmp_path / "ts.db") as store:  # what the killed run left: its intent, and its batch on the server
            JudgeBatches(store).record(
                JudgeBatch("submitting:killed", None, None, MODEL, tuple(requests), BATCH_SUBMITTING)
            )
        body = [{"custom_id": k, "params": message_params(r, MODEL)} for k, r in requests.items()]
        ours = client.messages.batches.create(requests=body).id  # type: ignore[arg-type]
        stranger = [{"custom_id": f"other-{i}", "params": item["params"]} for i, item in enumerate(body)]
        theirs = client.messages.batches.create(requests=stranger).id  # type: ignore[arg-type]
        before = Counter(fake.submitted)

        cache = MemoryJudgeCache()
        prefill = BatchPrefill(
            model=MODEL, cache=cache, usage=JudgeUsage(), store_path=tmp_path / "ts.db", client=client,
            poll_seconds=1.0, sleep=lambda seconds: None,
        )
        prefill.prefill(traces)
        assert fake.submitted == before  # nothing submitted again
        assert prefill.report.recovered == 1 and set(cache.entries) == set(requests)
        assert prefill.summary["batches"] == 1 and prefill.summary["submitted"] == len(requests)
        with Store(tmp_path / "ts.db") as store:
            rows = [(b.id, b.status) for b in JudgeBatches(store).batches(MODEL)]
        assert rows == [(ours, "ended")] and theirs not in dict(rows)


def test_a_create_that_never_arrived_frees_its_requests_and_they_are_submitted_once(tmp_path: Path) -> None:
    from tracescore.store.batches import BATCH_SUBMITTING, JudgeBatch, JudgeBatches

    write_traces(tmp_path / "t.jsonl", T0, 4)
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    keys = tuple(dict.fromkeys(r.key(MODEL) for t in traces for r in judge_requests(t)))
    with FakeAnthropicBatches(polls_to_end=1) as fake, anthropic.Anthropic(api_key="k", base_url=fake.url) as client:
        with Store(tmp_path / "ts.db") as store:
            JudgeBatches(store).record(JudgeBatch("submitting:lost", None, None, MODEL, keys, BATCH_SUBMITTING))
        prefill = BatchPrefill(
            model=MODEL, cache=MemoryJudgeCache(), usage=JudgeUsage(), store_path=tmp_path / "ts.db", client=client,
            poll_seconds=1.0, sleep=lambda seconds: None,
        )
        prefill.prefill(traces)
        assert set(fake.submitted) == set(keys) and set(fake.submitted.values()) == {1}
        with Store(tmp_path / "ts.db") as store:
            statuses = sorted(b.status for b in JudgeBatches(store).batches(MODEL))
        assert statuses == ["ended", "not_submitted"]


def test_a_batch_that_outlasts_the_wait_is_canceled_and_its_unprocessed_requests_go_to_the_direct_judge(
    tmp_path: Path,
) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 4)
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    with FakeAnthropicBatches(polls_to_end=1) as fake, anthropic.Anthropic(api_key="k", base_url=fake.url) as client:
        fake.hold = True  # never ends by itself
        sleeps: list[float] = []
        cache = MemoryJudgeCache()
        prefill = BatchPrefill(
            model=MODEL, cache=cache, usage=JudgeUsage(), store_path=tmp_path / "ts.db", client=client,
            poll_seconds=10.0, max_wait_seconds=30.0, sleep=sleeps.append,
        )
        prefill.prefill(traces)
        assert prefill.report.canceled_by_us == 1 and sum(sleeps) == 40.0  # canceled at 30 s, ended at the next poll
        assert prefill.summary["canceled"] == len(fake.submitted) and cache.entries == {}
        assert prefill.summary["processing"] == 0  # read to the end: no request left in a batch and judged directly


def _summary_of(result: Any) -> dict[str, Any]:
    return json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])  # type: ignore[no-any-return]


def test_a_batch_deleted_twice_leaves_its_requests_to_the_direct_judge_never_a_third_batch(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 6, step=timedelta(minutes=5))  # all in the first slice: one batch
    with FakeAnthropicBatches(polls_to_end=1000) as fake:  # never ends before it is deleted

        class _Deleting(threading.Thread):
            """Deletes each of the first two batches as soon as it is created (the API's retention, an operator)."""

            def run(self) -> None:
                for number in (1, 2):
                    batch_id = f"msgbatch_{number:04d}"
                    while batch_id not in fake.batches:
                        fake.created.wait(0.01)
                    fake.forget(batch_id)

        deleter = _Deleting(daemon=True)
        deleter.start()
        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        deleter.join(timeout=60)
        assert result.exit_code == 0, result.output
        batches = _summary_of(result)["judge_batches"]
        assert set(fake.submitted.values()) == {2} and fake.counts()["batches"] == 2
        assert batches["deleted"] == batches["submitted"] == 2 * len(fake.submitted)
        assert len(batches["resubmitted"]) == 1 and "deleted server-side (404)" in batches["resubmitted"][0]
        assert set(fake.direct) == set(fake.sent) and set(fake.direct.values()) == {1}  # then directly, once


def test_two_traces_with_the_same_judge_request_left_to_the_direct_judge_make_one_call(tmp_path: Path) -> None:
    from tests.conftest import SAMPLES

    samples = [json.loads(line) for line in SAMPLES.read_text().splitlines()][:10]
    with (tmp_path / "t.jsonl").open("w") as fh:  # each trace twice in a row: scored at the same moment
        for n in range(20):
            trace = dict(samples[n // 2], id=f"t-{n:05d}", timestamp=(T0 + n * timedelta(seconds=10)).isoformat())
            fh.write(json.dumps(trace) + "\n")
    with FakeAnthropicBatches(polls_to_end=1, latency=0.2) as fake:
        fake.fate = lambda index, custom_id: "errored"  # every request left to the direct judge
        result = CliRunner(env=_env(fake)).invoke(main, _args(tmp_path))
        assert result.exit_code == 0, result.output
        assert fake.direct and set(fake.direct.values()) == {1}
        assert set(fake.direct) == set(fake.sent) and set((fake.sent - fake.direct).values()) == {1}


class _LostAnswer(FakeAnthropicBatches):
    """Creates the batch, then answers 500 (the API did the work; its answer was lost on the way)."""

    def _create(self, request: Any) -> Any:
        from tests.fakes.base import Response

        super()._create(request)
        return Response(500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}})


def test_a_create_whose_answer_was_lost_is_found_in_the_list_not_sent_again(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 4)
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    with _LostAnswer(polls_to_end=1) as fake, anthropic.Anthropic(api_key="k", base_url=fake.url) as client:
        cache = MemoryJudgeCache()
        prefill = BatchPrefill(
            model=MODEL, cache=cache, usage=JudgeUsage(), store_path=tmp_path / "ts.db", client=client,
            poll_seconds=1.0, sleep=lambda seconds: None,
        )
        prefill.prefill(traces)
        assert len(fake.batches) == 1 and set(fake.submitted.values()) == {1}  # the SDK did not retry the create
        assert prefill.report.recovered == 1 and set(cache.entries) == set(fake.submitted)
        assert prefill.summary["submitted"] == prefill.summary["succeeded"] == len(fake.submitted)
