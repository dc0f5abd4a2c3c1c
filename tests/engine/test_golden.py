"""Every result line of ``tracescore score`` is byte-identical to the goldens recorded on main before the lean hot
path and the worker processes (#14): the cookbook sample, the planted faults (malformed lines, adversarial traces,
synthetic light and heavy traces) and every ExpertQA answer, with 1 worker and with 2.

Regenerate the goldens (only when a deliberate change of a value is named in the commit)::

    PYTHONPATH=src python -m tests.engine.test_golden
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.throughput import make_light_trace, make_trace
from benchmarks.worst_case import brackets, explicit_citations, wide_search
from tests.conftest import SAMPLES, SHARED_DATA
from tests.scorers.test_citations import _expertqa_traces
from tracescore.cli import main

GOLDEN = Path(__file__).parent / "golden"
CASES = ("cookbook", "faults", "expertqa")


def faults_lines() -> list[bytes]:
    """Planted faults: malformed lines of every kind, the adversarial traces, synthetic light and heavy traces."""
    good = SAMPLES.read_bytes().splitlines()
    rng = random.Random(7)
    lines = [
        b"\xef\xbb\xbf" + good[0],  # a BOM before the first line
        b'{"id": "x1", "steps": [',  # truncated JSON
        b"[1, 2, 3]",  # JSON, not an object
        b'{"question": "no id"}',  # id missing
        b'{"id": "x4", "steps": [{"kind": "search", "hits": [{"rank": "first"}]}]}',  # wrong type
        b'{"id": "x5", "steps": [{"kind": "browse"}]}',  # unknown step kind
        b'{"id": "x6", "question": "q", "answer": "a", "steps": [{"kind": "search", "hits": [{"score": NaN}]}]}',
        b'{"id": "x7", "question": "q", "answer": "a", "metadata": {"big": 1e400}}',  # non-finite
        b'{"id": "x8", "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}",  # nested too deeply
        b'{"id": "x9", "unknown_field": 1}',  # unknown field
        b"\xff\xfe not utf8",
        b'{"id": 10, "question": "numeric id", "answer": "a"}',
        *good[1:6],
        brackets().model_dump_json().encode(),
        explicit_citations(200).model_dump_json().encode(),
        wide_search(20, 20, 60).model_dump_json().encode(),
        *[json.dumps(make_trace(i, rng)).encode() for i in range(3)],
        *[json.dumps(make_light_trace(i, rng)).encode() for i in range(5)],
    ]
    return lines


def expertqa_lines() -> list[bytes]:
    """Every ExpertQA answer as a canonical trace (reference list, one search of the listed URLs, fetched evidence)."""
    traces = _expertqa_traces(SHARED_DATA / "expertqa" / "rand_val.jsonl")
    return [trace.model_dump_json().encode() for trace, _, _ in traces]


def write_input(case: str, directory: Path) -> Path:
    """The input file of ``case`` in ``directory``."""
    if case == "cookbook":
        return SAMPLES
    lines = faults_lines() if case == "faults" else expertqa_lines()
    path = directory / f"{case}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def score_file(path: Path, directory: Path, *extra: str) -> tuple[int, bytes]:
    """Exit code and the ``--out`` bytes of ``tracescore score`` on ``path`` without a judge."""
    out = directory / f"{path.stem}-{'-'.join(extra) or 'default'}.out.jsonl"
    args = ["score", str(path), "--out", str(out), "--store", str(directory / f"{out.stem}.db"), "--no-judge", "-q"]
    result = CliRunner().invoke(main, [*args, *extra])
    return result.exit_code, out.read_bytes()


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("case", CASES)
def test_result_lines_are_byte_identical_to_the_goldens(case: str, workers: str, tmp_path: Path) -> None:
    golden = json.loads((GOLDEN / f"{case}.json").read_text())
    code, got = score_file(write_input(case, tmp_path), tmp_path, "--workers", workers)
    assert code == golden["exit_code"]
    expected = (GOLDEN / f"{case}.jsonl").read_bytes()
    got_lines, want_lines = got.splitlines(), expected.splitlines()
    assert len(got_lines) == len(want_lines)
    for n, (mine, theirs) in enumerate(zip(got_lines, want_lines, strict=True), start=1):
        assert mine == theirs, f"{case} result line {n} differs"


def test_a_changed_value_fails_the_comparison(tmp_path: Path) -> None:
    """The comparison can fail: one altered sample trace changes its result line."""
    lines = SAMPLES.read_bytes().splitlines()
    first = json.loads(lines[0])
    first["answer"] = "Something else entirely."
    path = tmp_path / "altered.jsonl"
    path.write_bytes(b"\n".join([json.dumps(first).encode(), *lines[1:]]) + b"\n")
    _, got = score_file(path, tmp_path)
    assert got.splitlines()[0] != (GOLDEN / "cookbook.jsonl").read_bytes().splitlines()[0]
    assert got.splitlines()[1:] == (GOLDEN / "cookbook.jsonl").read_bytes().splitlines()[1:]


def regenerate(directory: Path) -> None:
    """Write the goldens from the code as it is."""
    GOLDEN.mkdir(exist_ok=True)
    for case in CASES:
        code, got = score_file(write_input(case, directory), directory)
        (GOLDEN / f"{case}.jsonl").write_bytes(got)
        (GOLDEN / f"{case}.json").write_text(json.dumps({"exit_code": code}) + "\n")
        print(f"{case}: exit {code}, {len(got.splitlines())} lines", file=sys.stderr)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        regenerate(Path(tmp))


def test_the_report_of_two_workers_equals_one_worker(tmp_path: Path) -> None:
    """``--workers 2`` folds each chunk's lines in its worker and merges the chunks: the printed report (cells, stage
    table, absent reasons, failures) is the one a single process prints. The file spans several chunks."""
    path = tmp_path / "mixed.jsonl"
    lines = [*faults_lines(), *expertqa_lines(), *faults_lines(), *expertqa_lines()]
    path.write_bytes(b"\n".join(lines) + b"\n")
    reports = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.jsonl"
        args = ["score", str(path), "--out", str(out), "--store", str(tmp_path / f"w{workers}.db"), "--no-judge"]
        result = CliRunner().invoke(main, [*args, "--workers", workers])
        assert result.exit_code == json.loads((GOLDEN / "faults.json").read_text())["exit_code"]
        shown = result.output.replace(out.name, "OUT").replace(f"w{workers}.db", "DB").splitlines()
        reports.append([line for line in shown if " stored in " not in line])
    assert len(lines) > 256 and len(reports[0]) > 20
    assert reports[0] == reports[1]
