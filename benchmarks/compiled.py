"""What compiling the hot modules with mypyc would give ``tracescore score`` (issue #14): an experiment, not the build.

Copies ``src/`` (and the rubrics folder) to a temporary directory, compiles ``--modules`` there with mypyc (part of
mypy, a dev dependency; it needs a C compiler), then scores the same light traces with the installed, pure-Python
code and with the compiled copy, in child processes as ``benchmarks/throughput.py`` does. Printed: CPU per run (start-up
subtracted, best of ``--repeat``) as a multiple of ``json.loads``, and whether the two results files are
byte-identical (they must be: compiling changes no value).

    python benchmarks/compiled.py                 # 20,000 light traces, the default modules
    python benchmarks/compiled.py --light 5000 --modules tracescore/scorers/sentences.py
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from throughput import best_child, parse_seconds, startup_child, write_light_file

REPO = Path(__file__).resolve().parent.parent
HOT = (
    "tracescore/scorers/sentences.py tracescore/scorers/citations.py tracescore/scorers/retrieval.py"
    " tracescore/scorers/answer.py tracescore/urls.py tracescore/result.py tracescore/report/tally.py"
    " tracescore/report/verdicts.py tracescore/scorers/diagnosis.py tracescore/engine/pipeline.py"
    " tracescore/store/scores_view.py tracescore/store/citations_view.py"
).split()


def compile_copy(root: Path, modules: list[str]) -> None:
    """``src/`` and the rubrics under ``root``, with ``modules`` (paths under ``src/``) compiled in place."""
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(REPO / "scorers", root / "scorers")
    subprocess.run([sys.executable, "-m", "mypyc", *modules], cwd=root / "src", check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "src")], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--light", type=int, default=20_000)
    parser.add_argument("--modules", nargs="+", default=HOT, help="paths under src/ to compile")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        compiled = work / "compiled"
        try:
            compile_copy(compiled, args.modules)
        except subprocess.CalledProcessError as exc:
            sys.exit(f"mypyc failed (it needs a C compiler):\n{exc.stderr.decode(errors='replace')[-2000:]}")
        path = work / "light.jsonl"
        write_light_file(path, args.light)
        parse = parse_seconds(path)
        print(f"{args.light} light traces; json.loads {parse:.2f} s; {len(args.modules)} modules compiled")
        digests = {}
        for label, src in (("pure Python", None), ("compiled", str(compiled))):
            try:
                base = min((startup_child(work, src) for _ in range(args.repeat)), key=lambda run: run["cpu"])
                run = best_child(path, work, 1, src, repeat=args.repeat)
            except subprocess.CalledProcessError as exc:  # e.g. an interpreted class inheriting from a compiled one
                sys.exit(f"the {label} run failed:\n{(exc.stderr or '')[-2000:]}")
            digests[label] = hashlib.sha256((work / "out.jsonl").read_bytes()).hexdigest()
            cpu = run["cpu"] - base["cpu"]
            print(f"{label:>12}: {cpu:6.2f} s CPU, {cpu / parse:5.1f}x json.loads")
        same = len(set(digests.values())) == 1
        print(f"results files byte-identical: {same}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
