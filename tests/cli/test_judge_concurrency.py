"""``tracescore score`` with a judge keeps ``[job] judge_concurrency`` calls in flight, as ``backfill`` does (#29):
it scored one trace at a time with one judge, so 38 sample traces and 69 calls at 0.5 s took ~37 s."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Request, Response
from tracescore.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
LATENCY = 0.5


class _CountingJudge(FakeAnthropic):
    """The fake judge, counting how many of its replies are being prepared at once (``latency`` held inside)."""

    def __init__(self, latency: float) -> None:
        super().__init__()
        self.hold = latency
        self.now = self.peak = 0
        self._count = threading.Lock()

    def handle(self, request: Request) -> Response:
        with self._count:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.hold)
            return super().handle(request)
        finally:
            with self._count:
                self.now -= 1


def _score(tmp_path: Path, name: str, judge: FakeAnthropic, config: str) -> tuple[float, bytes]:
    (tmp_path / f"{name}.toml").write_text(config)
    out = tmp_path / f"{name}.jsonl"
    args = ["score", str(SAMPLES), "--store", str(tmp_path / f"{name}.db"), "--out", str(out), "-q",
            "--config", str(tmp_path / f"{name}.toml")]
    started = time.monotonic()
    result = CliRunner().invoke(main, args, env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url})
    elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    return elapsed, out.read_bytes()


def test_score_with_a_judge_keeps_judge_concurrency_calls_in_flight_and_writes_the_same_lines(tmp_path: Path) -> None:
    with _CountingJudge(0.0) as serial:
        _, one_at_a_time = _score(tmp_path, "serial", serial, "[job]\njudge_concurrency = 1\n")
    assert serial.peak == 1
    calls = len(serial.messages())
    assert calls >= 60  # the sample traces need ~69 judge calls

    with _CountingJudge(LATENCY) as slow:
        elapsed, concurrent = _score(tmp_path, "concurrent", slow, "[job]\njudge_concurrency = 8\n")
    assert len(slow.messages()) == calls  # the same calls, none twice (each run has its own store: no cache)
    # 8 threads, 38 traces, each reply held 0.5 s: several calls at once (one at a time before). Counted at the fake,
    # not timed: the wall time (5-9 s here, >= 34.5 s one at a time) goes in the closing note, never in an assertion.
    assert slow.peak >= 4, (slow.peak, elapsed)
    # threads change the speed, never a score, a row or the order; only which trace's call wrote the shared prompt
    # prefix to the cache first (and so paid its creation) depends on timing: the per-trace cost moves, not the sum
    serial_lines, threaded_lines = _lines(one_at_a_time), _lines(concurrent)
    assert [_without_cost(r) for r in threaded_lines] == [_without_cost(r) for r in serial_lines]
    assert sum(_cost(r) for r in threaded_lines) == pytest.approx(sum(_cost(r) for r in serial_lines), abs=1e-6)


def _lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def _cost(line: dict[str, Any]) -> float:
    return float((line.get("judge") or {}).get("cost_usd", 0.0))


def _without_cost(line: dict[str, Any]) -> dict[str, Any]:
    judge = {k: v for k, v in (line.get("judge") or {}).items() if k != "cost_usd"}
    return line | {"judge": judge}
