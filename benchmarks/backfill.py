"""Wall time and peak memory of ``tracescore backfill`` against the fake Langfuse and the fake Anthropic API (issue #6).

Every platform request (observation pages, score writes, score configs) waits 50 ms on the fake Langfuse, every judge
call 500 ms on the fake Messages API (the judge's own fake, reached by the real ``anthropic`` SDK). Each trace has its
own question, so the judge cache never answers for another trace. Each backfill runs as its own process (the real
CLI, a fresh store) so its peak RSS is its own; the fakes run in this process.

Prints the wall time of 1,000 traces with the concurrent pipeline ([job] judge_concurrency, batched writes) beside
one at a time (one trace in flight per stage, one write per trace), as a ratio (target >= 10x), and the peak RSS of
the concurrent backfill of 1,000 vs 20,000 traces (target: flat).

    python benchmarks/backfill.py                       # the acceptance figures (~30 minutes: the baseline is slow,
                                                        # three judge calls of 500 ms per trace, one after another)
    python benchmarks/backfill.py --n 200 --big 4000    # ~8 minutes
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fakes.anthropic import FakeAnthropic  # noqa: E402
from tests.fakes.langfuse import FakeLangfuse, env_for  # noqa: E402
from tests.fakes.langfuse_data import make_trace  # noqa: E402

START = datetime(2026, 10, 1, tzinfo=UTC)


def load(fake: FakeLangfuse, n: int) -> datetime:
    """``n`` distinct traces, 30 s apart; returns the end of their window."""
    for i in range(n):
        trace, observations = make_trace(i, START + timedelta(seconds=30 * i), size=6)
        root = observations[0]
        root["input"] = {"question": f"Case {i}: how many days do I have to return item {i * 7919 % 100_003}?"}
        fake.add_trace(trace, observations)
    return START + timedelta(seconds=30 * n + 1)


def backfill(workdir: Path, env: dict[str, str], stop: datetime, *, concurrency: int, batch: int, queue: int,
             chunks: int) -> tuple[float, float, str]:
    """Run one backfill process; (wall seconds, peak RSS MiB, its summary line)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "tracescore.toml").write_text(
        '[source]\nkind = "langfuse"\n\n'
        f"[job]\njudge_concurrency = {concurrency}\nwrite_batch = {batch}\nqueue_size = {queue}\n"
        f"backfill_chunks = {chunks}\n"
    )
    args = [sys.executable, "-m", "tracescore.cli", "backfill", "--from", START.isoformat(), "--to", stop.isoformat(),
            "-q"]
    started = time.perf_counter()
    with open(workdir / "out.txt", "w") as out, open(workdir / "err.txt", "w") as err:
        proc = subprocess.Popen(args, cwd=workdir, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS, not a max over all children
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"backfill failed ({proc.returncode}): {(workdir / 'err.txt').read_text()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, (workdir / "out.txt").read_text().strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="traces for the wall-time comparison")
    parser.add_argument("--big", type=int, default=20_000, help="traces of the large memory run")
    parser.add_argument("--concurrency", type=int, default=64, help="judge calls in flight (concurrent pipeline)")
    parser.add_argument("--platform-latency", type=float, default=0.05)
    parser.add_argument("--judge-latency", type=float, default=0.5)
    parser.add_argument("--skip-baseline", action="store_true")
    opts = parser.parse_args()
    import json

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results: dict[str, tuple[float, float, dict[str, object]]] = {}
        runs = [("concurrent", opts.n), ("one-at-a-time", opts.n), ("concurrent-big", opts.big)]
        for name, n in runs:
            if name == "one-at-a-time" and opts.skip_baseline:
                continue
            with FakeLangfuse(latency=opts.platform_latency) as lf, FakeAnthropic(latency=opts.judge_latency) as an:
                stop = load(lf, n)
                env = dict(os.environ) | env_for(lf) | {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": an.url}
                if name == "one-at-a-time":
                    knobs = {"concurrency": 1, "batch": 1, "queue": 1, "chunks": 1}
                else:
                    knobs = {"concurrency": opts.concurrency, "batch": 50, "queue": 2 * opts.concurrency,
                             "chunks": max(1, n // 1000)}
                wall, rss, line = backfill(root / name, env, stop, **knobs)  # type: ignore[arg-type]
                summary = json.loads(line)
                assert summary["scored"] == n and summary["judge_calls"] >= n, summary  # every trace judged
                results[name] = (wall, rss, summary)
                print(
                    f"{name:>15}: {n:>6} traces in {wall:7.1f} s ({n / wall:6.1f} traces/s), peak RSS {rss:6.1f} MiB,"
                    f" {summary['requests']} platform requests, {summary['judge_calls']} judge calls,"
                    f" {summary['scores_written']} scores written, judge ~${summary['judge_cost_usd']:.2f}",
                    flush=True,
                )
        if "one-at-a-time" in results:
            ratio = results["one-at-a-time"][0] / results["concurrent"][0]
            print(f"concurrent vs one-at-a-time wall time, {opts.n} traces: {ratio:.1f}x (target >= 10x)")
        big = results["concurrent-big"][1] / results["concurrent"][1]
        print(f"peak RSS {opts.big} vs {opts.n} traces: {big:.2f}x (target: flat, ~1x)")


if __name__ == "__main__":
    main()
