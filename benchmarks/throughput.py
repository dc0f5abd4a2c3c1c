"""Throughput and memory of ``tracescore score`` (issue #14): CPU time as a ratio to ``json.loads`` of the same file.

Three kinds of synthetic trace: light (one search call of 10 hits, a two-sentence answer), planted (light, with titles
and snippets dense in small numbers, "question 123 rewrite 2", as planted-fault traces have) and heavy (10 search
calls × 10 hits and 3 fetched pages of 15 KB). Each file is scored by ``tracescore score --no-judge --out`` in a child
process (read → validate → score → results JSONL → SQLite store), with ``--workers 1`` and ``--workers N``; the
baseline is ``json.loads`` of every line of the same file in this process. Printed: the 1-process ratio by CPU time
(user+sys of the child, so a loaded machine does not inflate it), the wall-clock speed-up of N workers over 1 (needs
idle cores: the load average is printed), the child's peak RSS at 2k and 20k light traces and the store's size. Every
figure is the best of 3 runs (CPU time on a shared VM varies by ±20 % run to run; the minimum is the least disturbed).

Two bounds are printed beside them, so a target can be checked against what the design allows:
- ``scorers``: decoding and scoring every line in this process with no output at all (no results file, store or
  summary), as a multiple of ``json.loads``. ``score`` can get no closer to ``json.loads`` than this.
- ``N cpu``: the CPU time of the N-worker run (all processes) over the 1-process run's. On N cores the wall-clock
  speed-up cannot exceed N divided by it.

``--compare CHECKOUT`` (a worktree of an older commit) runs that checkout's code beside this one for light and heavy
traces, 1 and N workers, the two taken in turn run for run (so the load of a shared machine falls on both alike), and
prints this checkout's CPU time and wall clock from the end of the child's imports (measured in the child itself: a
separate start-up run adds its own noise) and store size, as ratios to its, and each one's wall clock as a multiple
of ``json.loads`` of the file.

    python benchmarks/throughput.py                      # 20,000 light, 2,000 heavy, N = the cores
    python benchmarks/throughput.py --light 5000 --heavy 500 --workers 2
    git worktree add /tmp/base 7d9c36a && python benchmarks/throughput.py --light 10000 --heavy 1000 --compare /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


_SECTIONS = ("question", "rewrite", "section", "step", "item", "case", "rule", "part", "table", "row")


def _dense(rng: random.Random, size: int) -> str:
    """Short text dense in small numbers, as planted-fault traces carry: "question 123 rewrite 2", "section 4.2"."""
    out, n = [], 0
    while n < size:
        a, b = rng.sample(_SECTIONS, 2)
        piece = rng.choice((f"{a} {rng.randint(1, 400)} {b} {rng.randint(1, 9)}",
                            f"{a} {rng.randint(1, 30)}.{rng.randint(1, 9)}",
                            f"{rng.randint(2, 60)} {a}s", f"{rng.randint(1, 99)}%",
                            f"{b} {rng.randint(1, 12)}/{rng.randint(1, 28)}", " ".join(rng.choices(WORDS, k=3))))
        out.append(piece)
        n += len(piece) + 2
    return ", ".join(out)[:size]


def make_planted_trace(i: int, rng: random.Random) -> dict[str, object]:
    """A light trace of the planted-fault kind: titles and snippets dense in small numbers ("question 123 rewrite
    2"), an answer stating four numbers, two of them stated nowhere (so their closest and derived notes are made)."""
    hits = [
        {
            "rank": r,
            "doc_id": f"doc-{rng.randint(0, 5000)}",
            "url": f"https://site{rng.randint(0, 99)}.example/p/{i}/{r}",
            "title": f"Question {rng.randint(1, 400)} rewrite {rng.randint(1, 9)}",
            "snippet": _dense(rng, 120),
        }
        for r in range(1, 11)
    ]
    cited = [hits[0]["url"], hits[1]["url"]]
    answer = (f"Question {rng.randint(1, 400)} has {rng.randint(2, 60)} items in section {rng.randint(1, 30)} [1]."
              f" About {rng.randint(1, 99)}% of them changed in rewrite {rng.randint(1, 9)} [2].")
    answer += "\n\nSources:\n" + "\n".join(f"[{j + 1}] {u}" for j, u in enumerate(cited))
    return {
        "id": f"syn-{i}",
        "question": f"What changed in question {rng.randint(1, 400)}?",
        "steps": [
            {"kind": "search", "tool": "web_search", "query": f"question rewrite {i}", "hits": hits},
            {"kind": "fetch", "tool": "fetch", "url": cited[0], "text": _dense(rng, 600), "status": 200},
        ],
        "answer": answer,
        "labels": {"required_doc_ids": [hits[2]["doc_id"]], "expected_answer_contains": ["items"]},
        "metadata": {"provider": "synthetic"},
    }


def write_file(path: Path, n: int, seed: int = 1) -> int:
    """``n`` heavy traces (50 bodies reused, ids and URLs unique per trace)."""
    return _write(path, n, make_trace, seed)


def write_light_file(path: Path, n: int, seed: int = 1) -> int:
    """``n`` light traces."""
    return _write(path, n, make_light_trace, seed)


def write_planted_file(path: Path, n: int, seed: int = 1) -> int:
    """``n`` light traces of the planted-fault kind (dense in small numbers)."""
    return _write(path, n, make_planted_trace, seed)


def _write(path: Path, n: int, make: Callable[[int, random.Random], dict[str, object]], seed: int) -> int:
    rng = random.Random(seed)
    base = [json.dumps(make(i, rng)) for i in range(50)]  # page generation dominates: reuse 50 bodies
    with path.open("w") as fh:
        for i in range(n):
            # unique ids and URLs per trace, so no cache sees the same page twice
            fh.write(base[i % 50].replace('"syn-', f'"syn-{i}-', 1).replace(".example/p", f".example/q{i}-") + "\n")
    return path.stat().st_size


def parse_seconds(path: Path, repeat: int = 3) -> float:
    """CPU seconds of ``json.loads`` of every line (the floor: scoring must at least parse); the best of ``repeat``
    (a shared VM's CPU time varies by ±20 % run to run, and the minimum is the least disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
        best = min(best, time.process_time() - start)
    return best


def scoring_seconds(path: Path, repeat: int = 3) -> float:
    """CPU seconds to decode and score every line in this process, writing nothing (the best of ``repeat``)."""
    from tracescore.adapters.jsonl import trace_from_json
    from tracescore.engine.pipeline import score_trace
    from tracescore.engine.recipe import ScorerPlan

    scorers = ScorerPlan(no_judge_reason="judge turned off (--no-judge)").scorers(None)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        with path.open("rb") as fh:
            for line in fh:
                score_trace(trace_from_json(line), scorers)
        best = min(best, time.process_time() - start)
    return best


def best_child(path: Path, work: Path, workers: int, src: str | None = None, repeat: int = 3) -> dict[str, float]:
    """``score_child`` ``repeat`` times: the run with the least CPU (its wall, RSS and store size with it)."""
    return min((score_child(path, work, workers, src) for _ in range(repeat)), key=lambda run: run["cpu"])


def score_child(path: Path, work: Path, workers: int, src: str | None = None) -> dict[str, float]:
    """Score ``path`` with the CLI in a child process: its wall seconds (after the imports), CPU seconds (user+sys, its
    worker processes' included), peak RSS (MiB), store size (MB) and ``run``: the CPU seconds after the imports."""
    store = work / f"store-{time.time_ns()}.db"
    code = (
        "import resource, sys, time\n"
        "from tracescore.cli.main import main\n"
        "entry = getattr(sys.modules['tracescore.cli.main'], 'entry', main)\n"  # the program (older checkouts: main)
        "sys.argv = ['tracescore', *sys.argv[1:]]\n"
        "i = resource.getrusage(resource.RUSAGE_SELF)\n"  # the imports done: what the run itself spends starts here
        "t = time.perf_counter()\n"
        "try:\n    entry()\nexcept SystemExit:\n    pass\n"
        "r = resource.getrusage(resource.RUSAGE_SELF); c = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(time.perf_counter() - t, r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime,"
        " r.ru_maxrss / 1024, i.ru_utime + i.ru_stime, file=sys.stderr)\n"
    )
    args = ["score", str(path), "--out", str(work / "out.jsonl"), "--store", str(store), "--no-judge", "-q"]
    env = dict(os.environ)
    # bytecode compiled once, into the run's own cache (no checkout is written to), as an installed package has it:
    # with PYTHONDONTWRITEBYTECODE every run compiled every module again, and a module imported lazily, during the
    # run, had its compilation counted as the run's CPU
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    if src is not None:  # an older checkout's code, side by side (it may predate --workers)
        env["PYTHONPATH"] = f"{src}/src"
    # an older checkout may predate --workers (then it scored in 1 process); a newer one defaults to every core
    knows = src is None or "--workers" in Path(src, "src/tracescore/cli/score.py").read_text()
    extra = ["--workers", str(workers)] if knows else []
    child = subprocess.run(
        [sys.executable, "-c", code, *args, *extra], capture_output=True, text=True, check=True, env=env
    )
    wall, cpu, rss, imports = (float(x) for x in child.stderr.split()[-4:])
    size = 0
    for leftover in work.glob(store.name + "*"):
        size += leftover.stat().st_size
        leftover.unlink()
    return {"wall": wall, "cpu": cpu, "rss": rss, "store": size / 1e6, "run": cpu - imports}


def startup_child(work: Path, src: str | None = None) -> dict[str, float]:
    """The same child on an empty file: interpreter start and imports, subtracted from every run of the same code
    (an older checkout's own start-up for its runs)."""
    empty = work / "empty.jsonl"
    empty.write_text("")
    return score_child(empty, work, 1, src)


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_parallelism(workers: int) -> float:
    """The speed-up ``workers`` processes get on pure Python arithmetic right now (other users share the cores)."""
    from concurrent.futures import ProcessPoolExecutor

    start = time.perf_counter()
    for _ in range(2 * workers):
        _burn(2_000_000)
    alone = time.perf_counter() - start
    with ProcessPoolExecutor(workers) as pool:
        start = time.perf_counter()
        list(pool.map(_burn, [2_000_000] * (2 * workers)))
        together = time.perf_counter() - start
    return alone / together


def interleaved(
    path: Path, work: Path, workers: int, src: str, repeat: int = 3
) -> tuple[dict[str, float], dict[str, float]]:
    """This checkout's and ``src``'s runs of ``path`` taken in turn, ``repeat`` times: each one's least CPU and least
    wall clock (the least disturbed), so the machine's load moves both alike."""
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for _ in range(repeat):
        ours.append(score_child(path, work, workers))
        theirs.append(score_child(path, work, workers, src))
    return _least(ours), _least(theirs)


def _least(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: min(run[key] for run in runs) for key in runs[0]}


def _ratios(label: str, ours: dict[str, float], theirs: dict[str, float], parse: float) -> str:
    """One line of the comparison: CPU after the imports (measured in the same child, so no separate start-up run's
    noise), wall clock and store size, with their ratios; then each one's wall clock as a multiple of ``json.loads``
    of the same file (``parse`` seconds)."""
    line = f"{label:>20}"
    for key in ("run", "wall", "store"):
        line += f" {ours[key]:>7.2f} {theirs[key]:>7.2f} {ours[key] / max(theirs[key], 1e-9):>6.3f}x"
    return line + f" {ours['wall'] / parse:>6.1f}x {theirs['wall'] / parse:>6.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--light", type=int, default=20_000)
    parser.add_argument("--heavy", type=int, default=2_000)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--compare", metavar="CHECKOUT", help="also time this checkout's code, run for run, e.g. main")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind; the least is taken (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = min((startup_child(work) for _ in range(3)), key=lambda run: run["cpu"])
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; start-up {base['cpu']:.2f} s")
        print(f"{'file':>14} {'MB':>5} {'loads s':>8} {'1 proc cpu s':>13} {'ratio':>6} {'scorers':>8} "
              f"{'1 proc wall':>12} {f'{args.workers} wkr wall':>11} {'speed-up':>9} {f'{args.workers} cpu':>6}"
              f" {'peak RSS MiB':>13} {'store MB':>9} {f'{args.workers} wkr/loads':>12}")
        small = max(args.light // 10, 1)
        runs = (("light", args.light, write_light_file), ("planted", args.light, write_planted_file),
                ("heavy", args.heavy, write_file))
        compared: list[str] = []
        for index, (kind, n, write) in enumerate((*runs, ("light", small, write_light_file))):
            path = work / f"{kind}-{n}.jsonl"
            size = write(path, n)
            parse = parse_seconds(path)
            scorers = scoring_seconds(path)
            if args.compare and index < len(runs):  # both checkouts in the same runs, taken in turn
                one, old_one = interleaved(path, work, 1, args.compare, args.repeat)
                many, old_many = interleaved(path, work, args.workers, args.compare, args.repeat)
                compared.append(_ratios(f"{kind} {n}, 1 wkr", one, old_one, parse))
                compared.append(_ratios(f"{kind} {n}, {args.workers} wkr", many, old_many, parse))
            else:
                one = best_child(path, work, 1, repeat=args.repeat)
                many = best_child(path, work, args.workers, repeat=args.repeat) if index < len(runs) else one
            cpu = one["cpu"] - base["cpu"]
            speed = (one["wall"] - base["wall"]) / max(many["wall"] - base["wall"], 1e-9)
            spent = (many["cpu"] - base["cpu"]) / max(cpu, 1e-9)  # all processes' CPU, N workers over 1
            print(f"{kind + ' ' + str(n):>14} {size / 1e6:>5.0f} {parse:>8.2f} {cpu:>13.2f} {cpu / parse:>5.1f}x "
                  f"{scorers / parse:>7.1f}x {one['wall']:>12.2f} {many['wall']:>11.2f} {speed:>8.2f}x {spent:>5.2f}x"
                  f" {one['rss']:>13.1f} {one['store']:>9.1f} {(many['wall'] - base['wall']) / parse:>11.1f}x")
            path.unlink()
        if compared:
            print(f"this checkout vs {args.compare}, run for run (least of {args.repeat} each; CPU and wall clock from"
                  " the end of the imports; ratio = this / that, under 1 is faster or smaller):")
            print(f"{'':>20} {'cpu s':>7} {'that':>7} {'ratio':>7} {'wall s':>7} {'that':>7} {'ratio':>7}"
                  f" {'store MB':>7} {'that':>7} {'ratio':>7} {'wall/loads':>7} {'that':>7}")
            print("\n".join(compared))
        print(f"load average after: {os.getloadavg()[0]:.2f}; the same machine gives pure arithmetic a"
              f" {machine_parallelism(args.workers):.2f}x speed-up with {args.workers} processes now")

if __name__ == "__main__":
    main()
