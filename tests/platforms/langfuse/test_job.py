"""Acceptance of the job against the fake Langfuse: late arrival and gaps, two runs at once, SIGKILLed backfill.

The job runs as the real CLI (in-process with CliRunner, or as a subprocess), through the real ``langfuse`` SDK
client over loopback HTTP to ``tests/fakes/langfuse.py``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.engine.pipeline import score_trace
from tracescore.engine.setup import build_setup
from tracescore.limits import RateLimiter
from tracescore.sinks.records import records_from_result
from tracescore.store.db import Store
from tracescore.store.state import JobState

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as server:
        yield server


def _config(tmp_path: Path, **job: object) -> Path:
    lines = ["[source]", 'kind = "langfuse"', "", "[job]", f'store = "{tmp_path / "ts.db"}"']
    lines += [f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in job.items()]
    path = tmp_path / "tracescore.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _add(fake: FakeLangfuse, index: int, start: datetime) -> str:
    trace, observations = make_trace(index, start, size=6)
    fake.add_trace(trace, observations)
    return str(trace["id"])


def _scored_traces(fake: FakeLangfuse) -> set[str]:
    return {str(s["traceId"]) for s in fake.scores.values()}


def _expected_score_ids(config: Path, start: datetime, stop: datetime) -> set[str]:
    """Independently of the job: read every trace of the window, score it, and derive the ids it must write."""
    setup = build_setup(load_config(config))
    try:
        expected: set[str] = set()
        for record in setup.source.records(start, stop):
            records, refused = records_from_result(score_trace(setup.adapter(record.payload), setup.scorers))
            assert not refused
            expected |= {r.id for r in records}
        return expected
    finally:
        setup.close()


def test_late_traces_inside_the_lookback_are_scored_older_ones_reported_as_gaps(
    fake: FakeLangfuse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env_for(fake).items():
        monkeypatch.setenv(key, value)
    config = _config(tmp_path, lookback="15m")
    now = datetime.now(UTC)
    first = {_add(fake, i, now - timedelta(minutes=30) + timedelta(seconds=i)) for i in range(5)}
    runner = CliRunner()
    since = (now - timedelta(hours=1)).isoformat()
    result = runner.invoke(main, ["run", "--config", str(config), "--since", since])
    assert result.exit_code == 0, result.output
    assert _scored_traces(fake) == first
    summary = json.loads(result.output.splitlines()[-1])
    assert summary["requests"] == len(fake.requests) > 0  # every platform request went through the job's limiter
    assert summary["scores_written"] == len(fake.scores)

    late = _add(fake, 100, now - timedelta(minutes=5))  # arrived after run 1, inside the lookback
    result = runner.invoke(main, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.splitlines()[-1])
    assert summary["scored"] == 1 and summary["window"][0] < summary["watermark_before"]
    assert late in _scored_traces(fake)

    lost = _add(fake, 200, now - timedelta(minutes=45))  # arrived after its window was done, beyond the lookback
    result = runner.invoke(main, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert lost not in _scored_traces(fake)

    result = runner.invoke(main, ["run", "--config", str(config), "--check-gaps"])
    assert result.exit_code == 5, result.output
    assert f'"gap": "{lost}"' in result.output
    assert '"gaps": 1' in result.output and "never scored" in result.output
    assert late not in result.output.split('"check_gaps"')[0]


def _job(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tracescore.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_runs_at_once_one_scores_the_other_is_refused(tmp_path: Path) -> None:
    with FakeLangfuse(latency=0.3) as fake:
        now = datetime.now(UTC)
        ids = {_add(fake, i, now - timedelta(minutes=10) + timedelta(seconds=i)) for i in range(20)}
        config = _config(tmp_path)
        env = dict(os.environ) | env_for(fake)
        procs = [_job(["run", "--config", str(config)], tmp_path, env) for _ in range(2)]
        outputs = [p.communicate(timeout=120) for p in procs]
        codes = sorted(p.returncode for p in procs)
        assert codes == [0, 3], outputs
        loser = next(err for p, (_, err) in zip(procs, outputs, strict=True) if p.returncode == 3)
        assert "another run holds the lock" in loser and "tracescore run" in loser
        assert _scored_traces(fake) == ids
        assert set(fake.score_counts().values()) == {1}  # the refused run wrote nothing


@pytest.mark.slow
def test_sigkilled_backfill_resumes_to_every_score_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 traces; the backfill is SIGKILLed at 20 random points and restarted each time, then run to the end."""
    rng = random.Random(6)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    stop = start + timedelta(days=2)
    with FakeLangfuse() as fake:
        ids = {_add(fake, i, start + timedelta(seconds=86 * i)) for i in range(2000)}
        config = _config(tmp_path, backfill_chunks=40, write_batch=25)
        env = dict(os.environ) | env_for(fake)
        args = ["backfill", "--config", str(config), "--from", start.isoformat(), "--to", stop.isoformat(), "-q"]
        # 20 kill points spread over the whole work: wait until the store shows the target number of traces done,
        # then wait a random bit more so the kill lands while reading, scoring, writing to Langfuse or committing
        targets = sorted(rng.sample(range(0, 1900), 20))
        progress: list[int] = []
        for target in targets:
            proc = _job(args, tmp_path, env)
            deadline = time.monotonic() + 120
            while _marked(tmp_path / "ts.db") < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.3))
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == -signal.SIGKILL, f"ended ({proc.returncode}) before it was killed: {err}"
            progress.append(_marked(tmp_path / "ts.db"))
        assert progress == sorted(progress) and progress[-1] < 2000
        assert len(set(progress)) > 10  # the kills landed at different points of the work
        print(f"traces done at each kill: {progress}")

        proc = _job(args, tmp_path, env)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert '"status": "done"' in out

        with Store(tmp_path / "ts.db") as store:
            state = JobState(store)
            job = state.latest_unfinished_backfill(next(iter(_sources(store))))
            assert job is None  # finished
            (backfill_id,) = [r[0] for r in store.query("SELECT id FROM backfills")]
            assert state.count_marked(f"backfill:{backfill_id}") == {"scored": 2000}

        stored_ids = Counter(key[0] for key in fake.scores)
        assert set(stored_ids.values()) == {1}  # no score id twice
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        expected = _expected_score_ids(config, start, stop)
        assert len(expected) >= 2000 * 5
        assert set(stored_ids) == expected  # every expected score, nothing else
        assert _scored_traces(fake) == ids  # no trace left unscored


def _marked(db: Path) -> int:
    """Traces marked done, read without writing (the job may hold the write lock)."""
    if not db.exists():
        return 0
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT count(*) FROM scored_traces").fetchone()[0])
    except sqlite3.OperationalError:  # not migrated yet
        return 0
    finally:
        con.close()


def _sources(store: Store) -> set[str]:
    return {str(r[0]) for r in store.query("SELECT source_key FROM backfills")}


class _FakeClock:
    """Time that moves only when the rate limiter sleeps: the test measures spacing, never the machine's speed."""

    def __init__(self) -> None:
        self.now, self.sleeps, self._lock = 1000.0, 0, threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds
            self.sleeps += 1


def test_platform_request_rate_is_respected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _FakeClock()

    class _Limiter(RateLimiter):  # the job's real limiter, on the fake clock
        def __init__(self, per_minute: float | None = None, *, burst: int = 1) -> None:
            super().__init__(per_minute, burst=burst, clock=clock, sleep=clock.sleep)

    monkeypatch.setattr("tracescore.engine.setup.RateLimiter", _Limiter)
    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        start = datetime(2026, 11, 1, tzinfo=UTC)
        for i in range(40):
            _add(fake, i, start + timedelta(minutes=i))
        config = _config(tmp_path, requests_per_minute=600.0, backfill_chunks=4, write_batch=5)
        args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        sent = len(fake.requests)
        assert sent >= 10
        assert json.loads(result.output.splitlines()[-1])["requests"] == sent
        # 600/min = one request per 0.1 s: n requests (burst 1) need at least (n - 1) * 0.1 s of the limiter's time
        assert clock.now - 1000.0 >= (sent - 1) * 0.1 - 1e-6
        assert clock.sleeps >= sent - 1


class _Outage(FakeLangfuse):
    """Answers 503 to the score writes numbered in ``failing`` (1-based), as an outage in the middle of a run."""

    def __init__(self, failing: set[int]) -> None:
        super().__init__()
        self.failing = failing
        self.score_posts = 0

    def handle(self, request):  # type: ignore[no-untyped-def]
        if request.path == "/api/public/scores" and request.method == "POST":
            self.score_posts += 1
            if self.score_posts in self.failing:
                from tests.fakes.base import Response

                return Response(503, {"message": "service unavailable"})
        return super().handle(request)


def test_an_outage_stops_the_run_with_exit_4_and_the_next_run_writes_the_rest_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _Outage(failing={2, 3}) as fake:  # the second batch fails on both of its attempts
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        now = datetime.now(UTC)
        ids = {_add(fake, i, now - timedelta(minutes=10) + timedelta(seconds=i)) for i in range(30)}
        config = _config(tmp_path, write_batch=10, judge_concurrency=1)
        config.write_text(config.read_text() + "\n[langfuse]\nmax_attempts = 2\nbackoff = 0.01\n")
        result = CliRunner().invoke(main, ["run", "--config", str(config)])
        assert result.exit_code == 4, result.output
        assert "run stopped: Langfuse did not take" in result.output and "HTTP 503" in result.output
        with Store(tmp_path / "ts.db") as store:
            assert JobState(store).watermark(f"langfuse:{fake.url}") is None  # the window is not done
            (run,) = store.runs()
            assert run["status"] == "aborted" and "HTTP 503" in run["summary"]["error"]
        partial = _scored_traces(fake)
        assert len(partial) == 10  # the first batch

        result = CliRunner().invoke(main, ["run", "--config", str(config)])
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output.splitlines()[-1])
        assert summary["skipped"] == 10 and summary["scored"] == 20
        assert _scored_traces(fake) == ids
        assert set(Counter(key[0] for key in fake.scores).values()) == {1}
