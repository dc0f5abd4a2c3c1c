"""The numbers check alone (``numbers_scorer``, #44): CPU time per trace on the light, planted and heavy traces of
``throughput.py``, as a multiple of ``json.loads`` of the same lines in the same process.

Each kind's traces are validated first (not timed); then every trace is scored, and every line parsed, 9 times in
turn, and the least of each is kept (CPU time of this process: a loaded machine inflates it least). ``--compare
CHECKOUT`` runs the same in a child process with that checkout's ``src`` first on its path, the two taken in turn, and
prints both and this checkout's time over its.

    PYTHONPATH=src python benchmarks/numbers_speed.py --compare /tmp/base44
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.throughput import make_light_trace, make_planted_trace, make_trace  # noqa: E402

KINDS = {"light": (make_light_trace, 300), "planted": (make_planted_trace, 300), "heavy": (make_trace, 30)}


def lines(kind: str) -> list[str]:
    """The kind's lines as ``throughput.py`` writes them: 50 bodies, ids and URLs unique per trace."""
    make, n = KINDS[kind]
    rng = random.Random(1)
    base = [json.dumps(make(i, rng)) for i in range(50)]
    return [base[i % 50].replace('"syn-', f'"syn-{i}-', 1).replace(".example/p", f".example/q{i}-") for i in range(n)]


def measure(kind: str, repeat: int = 9) -> tuple[float, float]:
    """(µs per trace scored, µs per line parsed), each the least of ``repeat``."""
    from tracescore.scorers.numbers import numbers_scorer
    from tracescore.trace import Trace

    texts = lines(kind)
    traces = [Trace.model_validate(json.loads(text)) for text in texts]
    scorer, scored, parsed = numbers_scorer(), float("inf"), float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for trace in traces:
            scorer(trace)
        scored = min(scored, (time.process_time() - start) / len(traces))
        start = time.process_time()
        for text in texts:
            json.loads(text)
        parsed = min(parsed, (time.process_time() - start) / len(texts))
    return scored * 1e6, parsed * 1e6


def child(src: str, kind: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run([sys.executable, __file__, "--one", kind], env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    scored, parsed = out.stdout.split()
    return float(scored), float(parsed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", metavar="CHECKOUT", help="also time that checkout's numbers check, in turn")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each checkout, taken in turn (the least kept)")
    parser.add_argument("--one", choices=sorted(KINDS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(*measure(args.one))
        return
    ours_src = str(Path(__file__).resolve().parents[1] / "src")
    print(f"{'kind':8} {'this µs':>9} {'x loads':>8}" + (f" {'other µs':>9} {'x loads':>8} {'ratio':>6}" if args.compare
                                                        else ""))  # fmt: skip
    for kind in KINDS:
        ours = theirs = (float("inf"), 1.0)
        for _ in range(args.rounds):
            ours = min(ours, child(ours_src, kind))
            if args.compare:
                theirs = min(theirs, child(str(Path(args.compare) / "src"), kind))
        row = f"{kind:8} {ours[0]:9.0f} {ours[0] / ours[1]:7.1f}x"
        if args.compare:
            row += f" {theirs[0]:9.0f} {theirs[0] / theirs[1]:7.1f}x {ours[0] / theirs[0]:5.2f}x"
        print(row, flush=True)


if __name__ == "__main__":
    main()
