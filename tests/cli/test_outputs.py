"""Issue #43 item 1 and #45 item 4: an output never replaces an input (refused before anything is read: exit 2, one
line naming both), and a file that cannot be written is exit 4 with its path and the OS reason on every command."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.calibrate.helpers import scored_store
from tests.conftest import SAMPLES
from tracescore.cli import main


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


_CITED = ("citation.fabricated_count", "citation.unfetched_rate")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A traces file, its results and a store; a calibration store with judged claims."""
    shutil.copy(SAMPLES, tmp_path / "t.jsonl")
    done = _cli("score", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "r.jsonl"), "--store",
                str(tmp_path / "s.db"), "-q")
    assert done.exit_code == 0, done.output
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()  # the traces that pass the default gate
    clean = [line for line in lines if not any(json.loads(line)["scores"].get(name) for name in _CITED)]
    (tmp_path / "r.jsonl").write_text("\n".join(clean) + "\n", encoding="utf-8")
    store, run_id = scored_store(tmp_path / "c.db", traces=40)
    store.finish_run(run_id, {})
    store.close()
    return tmp_path


# each writing command, with {out} where the output goes and the input it must not replace
_SAME = {
    "score --out TRACES": (["score", "{t}", "--out", "{same}", "--store", "{s}"], "t.jsonl"),
    "score --out --store": (["score", "{t}", "--out", "{same}", "--store", "{s}"], "s.db"),
    "score --store TRACES": (["score", "{t}", "--store", "{same}"], "t.jsonl"),
    "score --out --config": (["score", "{t}", "--out", "{same}", "--config", "{d}/tracescore.toml", "--store", "{s}"],
                             "tracescore.toml"),
    "ray --out TRACES": (["score", "{d}/shards", "--engine", "ray", "--out", "{same}", "--store", "{s}"], "shards"),
    "report --out RESULTS": (["report", "{r}", "--out", "{same}"], "r.jsonl"),
    "report html --out RESULTS": (["report", "{r}", "--format", "html", "--out", "{same}"], "r.jsonl"),
    "report --out --store": (["report", "run:latest", "--store", "{s}", "--out", "{same}"], "s.db"),
    "gate --junit RESULTS": (["gate", "{r}", "--junit", "{same}"], "r.jsonl"),
    "gate --markdown --baseline": (["gate", "{r}", "--baseline", "{b}", "--markdown", "{same}"], "b.jsonl"),
    "gate --junit --store": (["gate", "run:latest", "--store", "{s}", "--junit", "{same}"], "s.db"),
    "calibrate sheet --store": (["calibrate", "sample", "--to", "{same}", "--store", "{d}/c.csv"], "c.csv"),
    "calibrate sheet --traces": (["calibrate", "sample", "--to", "{same}", "--traces", "{d}/t.csv", "--store", "{c}"],
                                 "t.csv"),
    "push --store RESULTS": (["push", "--to", "langfuse", "{r}", "--store", "{same}"], "r.jsonl"),
}


def _args(template: list[str], work: Path, same: str) -> list[str]:
    names = {"t": "t.jsonl", "r": "r.jsonl", "b": "b.jsonl", "s": "s.db", "c": "c.db"}
    return [a.format(same=same, d=work, **{k: str(work / v) for k, v in names.items()}) for a in template]


def _prepare(work: Path) -> None:
    shutil.copy(work / "r.jsonl", work / "b.jsonl")
    shutil.copy(work / "c.db", work / "c.csv")  # a store whose name ends like a sheet's
    shutil.copy(work / "t.jsonl", work / "t.csv")  # traces whose name ends like a sheet's
    (work / "tracescore.toml").write_text("[scorers.retrieval]\nk = 5\n", encoding="utf-8")
    (work / "shards").mkdir(exist_ok=True)
    shutil.copy(work / "t.jsonl", work / "shards" / "a.jsonl")


def _linked(kind: str) -> Callable[[Path, Path], None]:
    return {"hardlink": os.link, "symlink": lambda src, dst: os.symlink(src, dst)}[kind]


@pytest.mark.parametrize("case", sorted(_SAME))
@pytest.mark.parametrize("how", ["same", "relative", "hardlink", "symlink"])
def test_an_output_over_an_input_is_refused_before_anything_is_read(
    work: Path, case: str, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _prepare(work)
    template, target = _SAME[case]
    real = work / target
    if how in ("hardlink", "symlink"):
        if how == "hardlink" and real.is_dir():
            pytest.skip("a folder has no hard link")
        alias = work / f"alias-{target}"
        _linked(how)(real, alias)
        same = str(alias)
    elif how == "relative":
        monkeypatch.chdir(work)
        same = f"./{target}"
    else:
        same = str(real)
    before = {p: p.stat().st_mtime_ns for p in work.rglob("*") if p.is_file()}
    sizes = {p: p.stat().st_size for p in before}
    runs_before = (work / "s.db").read_bytes()
    done = _cli(*_args(template, work, same))
    assert done.exit_code == 2, (case, done.output)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "same file" in lines[0] and same in lines[0], lines[0]
    assert {p: p.stat().st_size for p in before} == sizes  # nothing replaced, truncated or written
    assert (work / "s.db").read_bytes() == runs_before  # not even a run started in the store
    assert not list(work.rglob("*.partial"))


def test_out_dash_stays_as_it_is(work: Path) -> None:
    done = _cli("report", str(work / "r.jsonl"), "--format", "json", "--out", "-")
    assert done.exit_code == 0 and done.stdout.startswith("{")
    scored = _cli("score", str(work / "t.jsonl"), "--out", "-", "--store", str(work / "s.db"), "-q")
    assert scored.exit_code == 0 and scored.stdout.count("\n") == len(SAMPLES.read_text().splitlines())


def test_distinct_paths_still_work(work: Path) -> None:
    _prepare(work)
    assert _cli("gate", str(work / "r.jsonl"), "--baseline", str(work / "r.jsonl"), "--junit",
                str(work / "g.xml")).exit_code == 0  # the same file as results and baseline: both only read


# --- #45 item 4: a file that cannot be written ---------------------------------------------------------------------

_UNWRITABLE = {
    "score --out": ["score", "{t}", "--out", "{bad}", "--store", "{s}", "-q"],
    "report --out": ["report", "{r}", "--out", "{bad}"],
    "report html --out": ["report", "{r}", "--format", "html", "--out", "{bad}"],
    "report json --out": ["report", "{r}", "--format", "json", "--out", "{bad}"],
    "gate --junit": ["gate", "{r}", "--junit", "{bad}"],
    "gate --markdown": ["gate", "{r}", "--markdown", "{bad}"],
    "calibrate sheet": ["calibrate", "sample", "--to", "{bad}.csv", "--store", "{c}"],
    "init": ["init", "{bad}"],
}


@pytest.mark.parametrize("case", sorted(_UNWRITABLE))
def test_a_file_that_cannot_be_written_is_exit_4_with_path_and_reason(work: Path, case: str) -> None:
    (work / "afile").write_text("not a folder", encoding="utf-8")
    bad = str(work / "afile" / "x.out")  # its parent is a file: not even root can write it
    names = {"t": "t.jsonl", "r": "r.jsonl", "s": "s.db", "c": "c.db"}
    args = [a.format(bad=bad, **{k: str(work / v) for k, v in names.items()}) for a in _UNWRITABLE[case]]
    done = _cli(*args)
    assert done.exit_code == 4, (case, done.exit_code, done.output, done.exception)
    last = done.stderr.strip().splitlines()[-1]
    assert bad in last and "Not a directory" in last, last


def test_a_failed_gate_that_cannot_write_its_junit_still_exits_1(work: Path) -> None:
    (work / "afile").write_text("", encoding="utf-8")
    bad = str(work / "afile" / "g.xml")
    done = _cli("gate", str(work / "r.jsonl"), "--min", "retrieval.recall_at_5=0.999", "--junit", bad)
    assert done.exit_code == 1, done.output
    assert f"cannot write {bad!r}: Not a directory" in done.stderr
