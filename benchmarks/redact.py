"""``[judge] redact``: how fast each built-in kind scans text, and what redacting a whole trace costs.

    python benchmarks/redact.py [--repeat 3]

1. Prose with every kind in it (the docs' pages, several times over): MB/s per kind and for all five together.
2. The sample traces (``cookbook/data/traces.jsonl``): milliseconds per trace to make the redacted copy the judged
   stages read (every text of the trace, all five kinds).
The best of ``--repeat`` runs is shown. Redaction runs only on traces the judge will see, once per trace.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tracescore.judge.redact import BUILT_IN, Redaction, redactor  # noqa: E402
from tracescore.trace import Trace  # noqa: E402


def _best(repeat: int, run: object) -> float:
    assert callable(run)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pages = sorted((ROOT / "docs").rglob("*.md"))  # the prose the README held before #49, and more
    prose = "\n".join(page.read_text(encoding="utf-8") for page in pages) * 4
    megabytes = len(prose.encode()) / 1e6
    print(f"prose: {megabytes:.2f} MB")
    for kind, find in BUILT_IN.items():
        seconds = _best(args.repeat, lambda f=find: sum(1 for _ in f(prose)))
        print(f"  {kind:6s} {megabytes / seconds:7.2f} MB/s")
    every = redactor(list(BUILT_IN))
    assert every is not None
    seconds = _best(args.repeat, lambda: every.text(prose, Redaction()))
    print(f"  {'all':6s} {megabytes / seconds:7.2f} MB/s")
    lines = (ROOT / "cookbook" / "data" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    traces = [Trace.model_validate_json(line) for line in lines]
    seconds = _best(args.repeat, lambda: [every.trace(t) for t in traces])
    print(f"sample traces: {len(traces)}, {1000 * seconds / len(traces):.2f} ms per trace redacted")


if __name__ == "__main__":
    main()
