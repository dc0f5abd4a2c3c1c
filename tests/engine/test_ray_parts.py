"""The pieces of ``--engine ray`` that need no cluster: the token bucket (on an injected clock), the Parquet judge
cache with its write-ahead file, the Retry-After reading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tracescore.engine.distributed import ParquetJudgeCache, TokenBucket, compact
from tracescore.engine.distributed.judging import DEFAULT_PAUSE, retry_after

pytest.importorskip("pyarrow")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def grants(bucket: TokenBucket, clock: Clock, seconds: float, step: float = 0.001) -> list[float]:
    """Ask as fast as possible (every ``step``) for ``seconds``; the times a grant came."""
    out, end = [], clock.now + seconds
    while clock.now < end:
        if bucket.try_take() == 0.0:
            out.append(clock.now)
        clock.now += step
    return out


def test_the_bucket_grants_at_most_its_rate_in_any_second() -> None:
    clock = Clock()
    bucket = TokenBucket(40, clock=clock)
    times = grants(bucket, clock, 3.0)
    assert 119 <= len(times) <= 121
    assert max(sum(1 for u in times if t <= u < t + 1.0) for t in times) <= 41


def test_without_a_rate_every_ask_is_granted_and_a_burst_is_bounded() -> None:
    clock = Clock()
    assert len(grants(TokenBucket(None, clock=clock), clock, 0.1)) == 100
    bursty = TokenBucket(10, burst=5, clock=clock)
    clock.now += 10
    assert [bursty.try_take() == 0.0 for _ in range(6)] == [True] * 5 + [False]  # at once: the burst, no more


def test_a_pause_stops_every_grant_until_it_ends_then_restarts_empty() -> None:
    clock = Clock()
    bucket = TokenBucket(40, clock=clock)
    assert bucket.try_take() == 0.0
    bucket.pause(1.5)
    assert bucket.try_take() == pytest.approx(1.5)
    times = grants(bucket, clock, 2.0)
    assert times[0] >= 101.5 + 0.025 - 1e-9 and bucket.pauses == 1
    bucket.pause(0.1)
    bucket.pause(0.05)  # a shorter pause never shortens the running one
    assert bucket.paused_until == pytest.approx(clock.now + 0.1)
    with pytest.raises(ValueError, match="per_second must be positive"):
        TokenBucket(0)


def test_retry_after_reads_milliseconds_seconds_or_falls_back() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after": "soon"}) == DEFAULT_PAUSE
    assert retry_after({}) == DEFAULT_PAUSE


def put(cache: ParquetJudgeCache, key: str, reply: str) -> None:
    cache.judge_cache_put(key, model="m", rubric="grounding-1", request="{}", reply=reply)


def test_a_reply_is_durable_the_moment_it_arrives_and_parquet_once_closed(tmp_path: Path) -> None:
    cache = ParquetJudgeCache(tmp_path, "w1")
    put(cache, "k1", '{"claims": []}')
    put(cache, "k1", '{"claims": ["rewritten"]}')  # write-once: the first reply stays
    assert cache.judge_cache_get("k1") == '{"claims": []}'
    wal = tmp_path / "wal-w1.jsonl"
    assert [json.loads(line)["key"] for line in wal.read_text().splitlines()] == ["k1"]
    # a killed worker never closes: the next run reads its write-ahead file
    assert ParquetJudgeCache(tmp_path, "w2").judge_cache_get("k1") == '{"claims": []}'
    assert cache.close() == 1
    assert not wal.exists() and (tmp_path / "w1.parquet").is_file()
    again = ParquetJudgeCache(tmp_path, "w3")
    assert again.loaded == 1 and again.judge_cache_get("k1") == '{"claims": []}'
    assert again.judge_cache_get("k2") is None
    assert again.close() == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["w1.parquet"]


def test_compact_turns_a_killed_runs_write_ahead_file_into_parquet_dropping_a_torn_line(tmp_path: Path) -> None:
    row = {"key": "k1", "model": "m", "rubric": "r", "request": "{}", "reply": "{}", "created_at": "now"}
    (tmp_path / "wal-old.jsonl").write_text(json.dumps(row) + "\n" + '{"key": "k2", "rep')
    assert compact(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.parquet"]
    cache = ParquetJudgeCache(tmp_path, "new")
    assert cache.loaded == 1 and cache.judge_cache_get("k2") is None


def test_scoring_a_jsonl_file_imports_neither_ray_nor_pyarrow(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from tracescore.cli import main\n"
        f"r = CliRunner().invoke(main, ['score', {str(SAMPLES)!r}, '-q', '--no-judge', '--store', "
        f"{str(tmp_path / 'ts.db')!r}])\n"
        "print(r.exit_code, sorted({m.split('.')[0] for m in sys.modules} & {'ray', 'pyarrow'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.split() == ["0", "[]"]
