"""Throughput and memory of ``tracescore score`` on large synthetic files (issue #2, acceptance 6).

Each synthetic trace has 10 search calls × 10 hits and 3 fetched pages of 15 KB. Prints traces/second of the full
scoring path (read → validate → score → SQLite store → results JSONL) beside merely ``json.loads``-ing every line of
the same file, and the peak RSS of scoring files of growing size (each in its own process): flat means streaming.

    python benchmarks/throughput.py            # 10,000 traces, memory at 2,500 / 10,000
    python benchmarks/throughput.py --n 2000   # quicker
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "policy return refund window days shipping express warranty claim defect order price match retailer "
    "delivery item package original payment method business support contact number photo"
).split()


def _page(rng: random.Random, size: int = 15_000) -> str:
    out, n = [], 0
    while n < size:
        sentence = " ".join(rng.choices(WORDS, k=12)).capitalize() + f" {rng.randint(1, 90)} days."
        out.append(sentence)
        n += len(sentence) + 1
    return " ".join(out)[:size]


def make_trace(i: int, rng: random.Random) -> dict[str, object]:
    steps: list[dict[str, object]] = []
    for s in range(10):
        hits = [
            {
                "rank": r,
                "doc_id": f"doc-{rng.randint(0, 5000)}",
                "url": f"https://site{rng.randint(0, 99)}.example/p/{i}/{s}/{r}",
                "title": f"Result {r}",
                "snippet": _page(rng, 200),
            }
            for r in range(1, 11)
        ]
        steps.append({"kind": "search", "tool": "web_search", "query": f"query {i} {s}", "hits": hits})
    for f in range(3):
        steps.append(
            {
                "kind": "fetch",
                "tool": "fetch",
                "url": steps[f]["hits"][0]["url"],  # type: ignore[index]
                "text": _page(rng),
                "status": 200,
            }
        )
    cited = [steps[f]["hits"][0]["url"] for f in range(4)]  # type: ignore[index]
    answer = " ".join(f"Claim {j} about returns within {j * 10} days [{j + 1}]." for j in range(4))
    answer += "\n\nSources:\n" + "\n".join(f"[{j + 1}] {u}" for j, u in enumerate(cited))
    return {
        "id": f"syn-{i}",
        "question": "How long is the returns window?",
        "steps": steps,
        "answer": answer,
        "labels": {
            "required_doc_ids": [steps[0]["hits"][2]["doc_id"]],
            "expected_answer_contains": ["30 days"],  # type: ignore[index]
            "gold_answer": "30 days",
        },
        "metadata": {"provider": "synthetic"},
    }


def make_light_trace(i: int, rng: random.Random) -> dict[str, object]:
    """A light trace: one search call of 10 hits with short snippets, one short fetch, a two-sentence answer."""
    hits = [
        {
            "rank": r,
            "doc_id": f"doc-{rng.randint(0, 5000)}",
            "url": f"https://site{rng.randint(0, 99)}.example/p/{i}/{r}",
            "title": f"Result {r}",
            "snippet": _page(rng, 120),
        }
        for r in range(1, 11)
    ]
    cited = [hits[0]["url"], hits[1]["url"]]
    answer = f"Returns are accepted within 30 days [1]. Refunds take {rng.randint(2, 9)} business days [2]."
    answer += "\n\nSources:\n" + "\n".join(f"[{j + 1}] {u}" for j, u in enumerate(cited))
    return {
        "id": f"syn-{i}",
        "question": "How long is the returns window?",
        "steps": [
            {"kind": "search", "tool": "web_search", "query": f"returns window {i}", "hits": hits},
            {"kind": "fetch", "tool": "fetch", "url": cited[0], "text": _page(rng, 600), "status": 200},
        ],
        "answer": answer,
        "labels": {"required_doc_ids": [hits[2]["doc_id"]], "expected_answer_contains": ["30 days"]},
        "metadata": {"provider": "synthetic"},
    }


def write_file(path: Path, n: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    base = [json.dumps(make_trace(i, rng)) for i in range(50)]  # page generation dominates: reuse 50 bodies
    with path.open("w") as fh:
        for i in range(n):
            # unique ids and URLs per trace, so no cache sees the same page twice
            fh.write(base[i % 50].replace('"syn-', f'"syn-{i}-', 1).replace(".example/p/", f".example/p{i}/") + "\n")
    return path.stat().st_size


def _score_in_process(path: Path, workdir: Path) -> float:
    from tracescore.engine.pipeline import RunCounts, score_records
    from tracescore.platforms.registry import get_adapter
    from tracescore.scorers import default_scorers
    from tracescore.sinks import JsonlSink
    from tracescore.sources.jsonl import read_jsonl
    from tracescore.store import Store

    store = Store(workdir / f"bench-{time.time_ns()}.db")
    run_id = store.start_run("bench")
    sink = JsonlSink(workdir / "results.jsonl")
    counts = RunCounts()
    start = time.perf_counter()
    for n, result in enumerate(score_records(read_jsonl(path), get_adapter("jsonl"), default_scorers(), counts), 1):
        store.add_result(run_id, result)
        sink.write(result)
        if n % 500 == 0:
            store.commit()
    sink.close()
    store.finish_run(run_id, counts.as_dict())
    store.close()
    elapsed = time.perf_counter() - start
    assert counts.scored == counts.seen and counts.failed == 0, counts
    return elapsed


def _parse_only(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--child", nargs=2, metavar=("FILE", "WORKDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        elapsed = _score_in_process(Path(args.child[0]), Path(args.child[1]))
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"elapsed": elapsed, "peak_mib": peak_kib / 1024}))
        return

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sizes = sorted({max(args.n // 4, 1), args.n})
        rows = []
        for n in sizes:
            path = work / f"traces-{n}.jsonl"
            size = write_file(path, n)
            parse = _parse_only(path)
            child = subprocess.run(
                [sys.executable, __file__, "--child", str(path), str(work)], check=True, capture_output=True, text=True
            )
            got = json.loads(child.stdout)
            rows.append((n, size, parse, got["elapsed"], got["peak_mib"]))
            path.unlink()
        print(f"{'traces':>8} {'file MB':>8} {'json.loads/s':>13} {'scored/s':>9} {'ratio':>6} {'peak RSS MiB':>13}")
        for n, size, parse, elapsed, peak in rows:
            print(
                f"{n:>8} {size / 1e6:>8.0f} {n / parse:>13.0f} {n / elapsed:>9.0f} "
                f"{parse / elapsed:>6.2f} {peak:>13.1f}"
            )
        (n0, *_, p0), (n1, *_, p1) = rows[0], rows[-1]
        print(
            f"scoring runs at {rows[-1][2] / rows[-1][3]:.2f}× the speed of json.loads alone; "
            f"peak RSS {p0:.1f} MiB at {n0} traces vs {p1:.1f} MiB at {n1} ({p1 / p0:.2f}×)"
        )


if __name__ == "__main__":
    main()
