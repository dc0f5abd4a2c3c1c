"""SIGINT and SIGTERM stop ``run`` and ``backfill`` against the fake Langfuse (real SDK, loopback) within the bound,
with exit 130/143, one line and no traceback, the store's run ``interrupted``; the next run of the same command
resumes (backfill: its slices and marks; run: the marks under the unmoved watermark): every expected score is on
the platform, none was ever sent twice, every trace is marked once. A judge call in flight is abandoned, not awaited.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.engine.test_interrupt import LINE, STOP_BOUND_S, latest_run, start, stop, write_traces
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.platforms.langfuse.test_job import _add, _config, _expected_score_ids, _marked, _scored_traces
from tracescore.cli import main
from tracescore.cli.push import result_from_line
from tracescore.sinks.records import records_from_result
from tracescore.store.db import Store
from tracescore.store.state import JobState

N = 1000


def _wait_marked(db: Path, target: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while _marked(db) < target:
        assert proc.poll() is None, f"the job ended before {target} traces were done: {proc.communicate()}"
        assert time.monotonic() < deadline, "the job made no progress"
        time.sleep(0.01)


def _check_interrupted(proc: subprocess.Popen[str], sig: signal.Signals, db: Path) -> int:
    """The interrupted job's exit, line and stored run; the traces it marked done."""
    marked_before = _marked(db)
    err, took = stop(proc, sig)
    assert took <= STOP_BOUND_S, f"the stop took {took:.1f} s"
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and "Aborted" not in err
    *before, line = err.strip().splitlines()  # one line, after the notice of a resumed backfill
    assert all(notice.startswith("resuming backfill ") for notice in before), err
    run = latest_run(db)
    summary = run["summary"]
    assert run["status"] == "interrupted" and isinstance(summary, dict) and summary["signal"] == sig.name
    assert line == LINE.format(seen=summary["seen"], written=summary["scored"] + summary["failed"])
    assert _marked(db) >= marked_before
    print(f"{sig.name}: stopped in {took:.2f} s after {summary['scored']} traces")
    return _marked(db)


def _check_everything_once(fake: FakeLangfuse, config: Path, start: datetime, end: datetime, ids: set[str]) -> None:
    """Every expected score on the platform, no score id ever sent twice, no other score."""
    sent = Counter(str(item["id"]) for item in fake.score_writes)
    twice = sorted(score_id for score_id, n in sent.items() if n > 1)
    assert twice == []  # nothing written twice across the interrupted runs and the resumption
    assert _scored_traces(fake) == ids
    assert set(sent) == _expected_score_ids(config, start, end)  # nothing lost, nothing else


def test_backfill_interrupted_by_sigint_then_sigterm_resumes_to_every_score_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    end = start + timedelta(days=1)
    db = tmp_path / "ts.db"
    with FakeLangfuse(latency=0.002) as fake:
        ids = {_add(fake, i, start + timedelta(seconds=80 * i)) for i in range(N)}
        config = _config(tmp_path, backfill_chunks=20, write_batch=25)
        args = ["backfill", "--config", str(config), "--from", start.isoformat(), "--to", end.isoformat(), "-q"]
        done = 0
        for sig, target in ((signal.SIGINT, N // 4), (signal.SIGTERM, N // 2)):
            proc = start_job(args, tmp_path, fake)
            _wait_marked(db, target, proc)
            done = _check_interrupted(proc, sig, db)
            assert done < N
        proc = start_job(args, tmp_path, fake)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["status"] == "done" and summary["resumed_from"] is not None  # the same backfill, resumed
        assert summary["scored"] + summary["skipped"] <= N and summary["scored"] == N - done  # only what was left
        with Store(db) as store:
            (backfill_id,) = [r[0] for r in store.query("SELECT id FROM backfills")]
            assert JobState(store).count_marked(f"backfill:{backfill_id}") == {"scored": N}
            assert [r["status"] for r in store.runs()] == ["interrupted", "interrupted", "done"]
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        _check_everything_once(fake, config, start, end, ids)


def test_run_interrupted_by_sigterm_then_sigint_resumes_under_the_same_watermark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.now(UTC)
    first = now - timedelta(minutes=50)
    db = tmp_path / "ts.db"
    with FakeLangfuse(latency=0.002) as fake:
        ids = {_add(fake, i, first + timedelta(seconds=2 * i)) for i in range(N)}  # 50 to ~17 minutes old
        config = _config(tmp_path, lookback="2h", write_batch=25)
        args = ["run", "--config", str(config), "-q"]
        done = 0
        for sig, target in ((signal.SIGTERM, N // 4), (signal.SIGINT, N // 2)):
            proc = start_job(args, tmp_path, fake)
            _wait_marked(db, target, proc)
            done = _check_interrupted(proc, sig, db)
            with Store(db) as store:
                assert JobState(store).watermark(str(latest_run(db)["summary"]["source"])) is None  # not advanced
        proc = start_job(args, tmp_path, fake)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["status"] == "done" and summary["watermark"] is not None
        assert summary["scored"] == N - done and summary["skipped"] == done  # resumed from the marks
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        _check_everything_once(fake, config, first - timedelta(seconds=1), now, ids)


def test_an_interrupt_abandons_judge_calls_in_flight_and_leaves_their_traces_unmarked(tmp_path: Path) -> None:
    """Every judge call takes longer than the stop bound: the stop cannot have waited for them."""
    start = datetime(2026, 11, 1, tzinfo=UTC)
    end = start + timedelta(days=1)
    db = tmp_path / "ts.db"
    with FakeLangfuse() as fake, FakeAnthropic(latency=3 * STOP_BOUND_S) as judge:
        ids = {_add(fake, i, start + timedelta(minutes=10 * i)) for i in range(40)}
        config = _config(tmp_path, backfill_chunks=2, write_batch=5)
        args = ["backfill", "--config", str(config), "--from", start.isoformat(), "--to", end.isoformat(), "-q"]
        judged = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
        proc = start_job(args, tmp_path, fake, judged)
        deadline = time.monotonic() + 120
        while not judge.requests_to("/v1/messages"):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.01)
        assert _check_interrupted(proc, signal.SIGINT, db) == 0  # the traces being judged stay unmarked
        assert fake.score_writes == []
        judge.latency = 0.0
        proc = start_job(args, tmp_path, fake, judged)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert _marked(db) == 40 and _scored_traces(fake) == ids
        sent = Counter(str(item["id"]) for item in fake.score_writes)
        assert set(sent.values()) == {1}
        assert any(name.startswith("grounding.") for name in {str(i["name"]) for i in fake.score_writes})


def start_job(
    args: list[str], cwd: Path, fake: FakeLangfuse, extra: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return start(args, cwd, env_for(fake) | (extra or {}))


def test_push_interrupted_by_sigterm_stops_after_its_write_and_a_rerun_delivers_every_score(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    write_traces(traces, 2000)
    scored = CliRunner().invoke(
        main, ["score", str(traces), "--out", str(tmp_path / "all.jsonl"), "--store", str(tmp_path / "s.db"), "-q"]
    )
    assert scored.exit_code == 0, scored.output
    lines = (tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()
    folder = tmp_path / "results"
    folder.mkdir()
    for n in range(10):  # 10 result files of 200 traces
        (folder / f"part-{n}.jsonl").write_text("\n".join(lines[200 * n : 200 * (n + 1)]) + "\n", encoding="utf-8")
    args = ["push", str(folder), "--to", "langfuse", "--store", "push.db", "--batch", "10"]
    db = tmp_path / "push.db"
    with FakeLangfuse(latency=0.01) as fake:
        proc = start_job(args, tmp_path, fake)
        deadline = time.monotonic() + 120
        while len(fake.score_writes) < 1000:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.01)
        err, took = stop(proc, signal.SIGTERM)
        assert took <= STOP_BOUND_S and proc.returncode == 143, err
        assert "Traceback" not in err
        (line,) = err.strip().splitlines()
        assert line.startswith("tracescore: interrupted after ") and line.endswith(
            "re-run to finish: nothing is duplicated"
        )
        run = latest_run(db)
        assert run["status"] == "interrupted" and run["summary"]["signal"] == "SIGTERM"  # type: ignore[index]
        sent = len(fake.score_writes)
        assert sent < 10 * 200 * 5
        proc = start_job(args, tmp_path, fake)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert latest_run(db)["status"] == "done"
        expected = {
            record.id
            for text in lines
            for record in records_from_result(result_from_line(json.loads(text)))[0]
        }
        assert {str(item["id"]) for item in fake.scores.values()} == expected  # every score, each once
        assert len(fake.scores) == len(expected)
