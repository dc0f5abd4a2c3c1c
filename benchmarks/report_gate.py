"""Report and gate throughput on synthetic result lines, beside merely parsing the same file with ``json.loads``.

Run on demand: ``python benchmarks/report_gate.py [N]`` (default 100,000 result lines). Prints lines/second for
parsing alone, ``build_report`` (grouped by provider) and ``run_gate`` (one baseline), their ratios to parsing, and
the peak traced memory of the report at N and 4·N lines (it keeps the trace ids of each cell, nothing else per line).
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from tracescore.report.gate import GateConfig, run_gate
from tracescore.report.runs import read_results
from tracescore.report.summary import build_report

CELLS = ("retrieval_fail/right", "retrieval_fail/wrong", "grounded/right", "grounded/wrong", "ungrounded/wrong")


def make(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w") as fh:
        for i in range(n):
            cell = rng.choice(CELLS)
            line = {
                "trace_id": f"t{i:07d}",
                "scores": {
                    "retrieval.recall_at_5": 0.5 if cell.startswith("retrieval_fail") else 1.0,
                    "retrieval.first_hit_rank": float(rng.randint(1, 5)),
                    "grounding.rate": rng.random(),
                    "citation.coverage": rng.random(),
                    "citation.unfetched_rate": 0.0,
                    "citation.fabricated_count": 0.0,
                    "answer.correct": cell.endswith("right"),
                    "diagnosis": cell,
                },
                "missing": {"answer.token_f1": "no gold_answer label"},
                "errors": [],
                "timestamp": f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00",
                "metadata": {"provider": rng.choice(("exa", "brave", "tavily")), "case_id": f"c{i}"},
            }
            fh.write(json.dumps(line) + "\n")


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def peak(fn) -> int:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        current, baseline, big = Path(tmp) / "c.jsonl", Path(tmp) / "b.jsonl", Path(tmp) / "big.jsonl"
        make(current, n, 1)
        make(baseline, n, 2)
        make(big, 4 * n, 3)

        def parse() -> None:
            for raw in current.open("rb"):
                json.loads(raw)

        t_parse = timed(parse)
        t_report = timed(lambda: build_report(read_results(current), group_by="metadata.provider"))
        config = GateConfig(minimums={"retrieval.recall_at_5": 0.5}, case_key="metadata.case_id")
        t_gate = timed(lambda: run_gate(read_results(current), [read_results(baseline)], config))
        m_small = peak(lambda: build_report(read_results(current), group_by="metadata.provider"))
        m_big = peak(lambda: build_report(read_results(big), group_by="metadata.provider"))
    print(f"{n:,} result lines")
    print(f"json.loads only     {n / t_parse:12,.0f} lines/s")
    print(f"report (grouped)    {n / t_report:12,.0f} lines/s   {t_report / t_parse:5.1f}× parse time")
    print(f"gate (1 baseline)   {2 * n / t_gate:12,.0f} lines/s   {t_gate / (2 * t_parse):5.1f}× parse time")
    print(f"report peak memory  {m_small / 1e6:8.1f} MB at {n:,}   {m_big / 1e6:8.1f} MB at {4 * n:,}")


if __name__ == "__main__":
    main()
