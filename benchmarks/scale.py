"""``--engine ray`` with 1 vs 2 workers on the same shards, and a projection for 100 workers (issue #15).

Writes ``--shards`` JSONL shards of ``--per-shard`` distinct traces (the samples, each with its own question, so the
judge cache never answers for another trace) and scores them three ways, each on a fresh output folder:

1. in this process, one thread, deterministic stages only: the per-trace CPU cost of the scorers (the baseline);
2. Ray with 1 worker, then with 2 (a fresh local cluster of that many CPUs each; start-up not timed): deterministic
   stages only, then with the judge against the fake Anthropic API answering each call after ``--latency`` seconds,
   ``--in-flight`` judge calls in flight per worker;
3. the projection for 100 workers from the measured per-trace costs, and what then limits throughput.

The machine's load average is printed beside the figures: on a shared machine the 1 vs 2 ratio understates what
two free cores give.

    python benchmarks/scale.py                                # 8 x 100 judged, 8 x 1,000 deterministic (~3 min)
    python benchmarks/scale.py --shards 16 --per-shard 200    # longer, steadier
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fakes.anthropic import FakeAnthropic  # noqa: E402
from tracescore.adapters import trace_from_json  # noqa: E402
from tracescore.engine.distributed import JudgeSpec, RaySettings, score_shards  # noqa: E402
from tracescore.engine.pipeline import RunCounts, score_records  # noqa: E402
from tracescore.engine.recipe import ScorerPlan  # noqa: E402
from tracescore.sources.folder import FolderSource  # noqa: E402

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"
MODEL = "claude-sonnet-4-6"
TRACES_PER_DAY = 10_000_000
PROVIDER_RPS = TRACES_PER_DAY / 86_400  # one judge call per trace: ~116 calls/s


def write_shards(root: Path, shards: int, per_shard: int) -> int:
    samples = [json.loads(line) for line in SAMPLES.read_text().splitlines() if line.strip()]
    for s in range(shards):
        path = root / f"day={s // 4:02d}" / f"part-{s}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fh:
            for n in range(per_shard):
                trace = dict(samples[(s * per_shard + n) % len(samples)])
                trace["id"] = f"t-{s}-{n}"
                trace["question"] = f"{trace['question']} (case {s}-{n})"
                fh.write(json.dumps(trace) + "\n")
    return shards * per_shard


def local_cost(root: Path) -> float:
    """Seconds of one thread per trace, deterministic stages, in this process (no Ray)."""
    source = FolderSource(root)
    scorers = ScorerPlan().scorers(None)
    counts = RunCounts()
    started = time.perf_counter()
    for shard in source.shards():
        for _ in score_records(source.read(shard), trace_from_json, scorers, counts):
            pass
    return (time.perf_counter() - started) / counts.seen


def ray_runs(big: Path, root: Path, workers: int, latency: float, in_flight: int, work: Path
             ) -> tuple[float, float, int]:
    """(deterministic seconds on ``big``, judged seconds on ``root``, judge calls) with ``workers`` Ray workers."""
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        settings = RaySettings(workers=workers)
        # warm-up (not timed): start the worker processes and import tracescore in them
        score_shards(FolderSource(root), trace_from_json, work / f"warm-{workers}", ScorerPlan(), None, settings)
        started = time.perf_counter()
        run = score_shards(FolderSource(big), trace_from_json, work / f"det-{workers}", ScorerPlan(), None, settings)
        det = time.perf_counter() - started
        assert not run.failed and run.counts().scored > 0
        with FakeAnthropic(latency=latency) as fake:
            spec = JudgeSpec(MODEL, "bench-key", fake.url, in_flight=in_flight)
            started = time.perf_counter()
            run = score_shards(FolderSource(root), trace_from_json, work / f"judge-{workers}", ScorerPlan(), spec,
                               settings)
            judged = time.perf_counter() - started
            calls = len(fake.messages())
        assert not run.failed
    finally:
        ray.shutdown()
    return det, judged, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--per-shard", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.25, help="seconds the fake judge takes per call")
    parser.add_argument("--det-scale", type=int, default=10, help="the deterministic runs score this many times more")
    parser.add_argument("--in-flight", type=int, default=8, help="judge calls in flight per worker")
    parser.add_argument("--real-latency", type=float, default=6.0,
                        help="seconds a real judge call takes, for the projection (assumed, not measured here)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root, big, work = Path(tmp) / "traces", Path(tmp) / "big", Path(tmp) / "out"
        n = write_shards(root, args.shards, args.per_shard)
        n_big = write_shards(big, args.shards, args.per_shard * args.det_scale)
        per_trace = local_cost(root)
        figures = {w: ray_runs(big, root, w, args.latency, args.in_flight, work) for w in (1, 2)}
    load_after = os.getloadavg()
    (d1, j1, calls), (d2, j2, _) = figures[1], figures[2]
    per_call = calls / n
    print(f"{n_big} traces (deterministic) and {n} (judged) in {args.shards} shards; {os.cpu_count()} cores;"
          f" load average {load_before[0]:.1f} before,"
          f" {load_after[0]:.1f} after (other work shares these cores)")
    print(f"in-process, one thread, deterministic: {per_trace * 1000:.2f} ms/trace ({1 / per_trace:,.0f} traces/s)")
    judged = f"with judge (fake, {args.latency:.2f} s/call, {args.in_flight} in flight/worker)"
    print(f"| Ray | deterministic | traces/s | {judged} | traces/s |")
    print("| --- | --- | --- | --- | --- |")
    for w, (d, j, c) in figures.items():
        print(f"| {w} worker(s) | {d:.1f} s | {n_big / d:,.0f} | {j:.1f} s ({c} judge calls) | {n / j:,.0f} |")
    print(f"2 vs 1 workers: deterministic x{d1 / d2:.2f}, judged x{j1 / j2:.2f}")
    det_rate_100 = 100 * (n_big / d1)  # measured per-worker rate, times 100 (Ray's per-task overhead included)
    judge_rate_100 = 100 * args.in_flight / args.real_latency
    print()
    print(f"Projection for 100 workers (from the 1-worker figures; {per_call:.1f} judge calls per trace here):")
    print(f"- deterministic stages: 100 x {n_big / d1:,.0f} = {det_rate_100:,.0f} traces/s"
          f" ({det_rate_100 * 86_400 / 1e6:,.0f}M traces/day): the CPU side is not the limit")
    needed = PROVIDER_RPS * per_call
    print(f"- judge calls in flight: 100 x {args.in_flight} = {100 * args.in_flight}; at ~{args.real_latency:.0f} s per"
          f" real call that is {judge_rate_100:,.0f} calls/s;"
          f" {needed:.0f} calls/s need {needed * args.real_latency:,.0f}"
          f" in flight ({needed * args.real_latency / 100:.0f} per worker: [job] judge_concurrency; I/O, not CPU)")
    print(f"- 10M traces/day needs {PROVIDER_RPS:.0f} judge calls/s at one call per trace"
          f" ({PROVIDER_RPS * per_call:.0f}"
          f" at {per_call:.1f}; ~{PROVIDER_RPS * 60:,.0f} requests/min per call) sustained:"
          " throughput is then capped by the provider's rate limit (requests and tokens per minute of the account),"
          " which the one cluster-wide limiter enforces; adding workers past that only queues more calls."
          " Past it: Message Batches for backfills, a larger rate tier, or fewer judged traces (sampling).")


if __name__ == "__main__":
    main()
