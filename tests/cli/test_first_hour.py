"""Issue #45 items 1, 2, 3, 6 and 12: what a new user trips over in the first hour, one test per item, each driving
the command line as the user did (``CliRunner``, or a subprocess where the environment must differ)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import tracescore
from tests.conftest import REPO
from tests.docs_pages import page
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langfuse import FakeLangfuse, env_for
from tracescore import __version__
from tracescore.cli import main

CODE = str(Path(tracescore.__file__).parents[1])  # the code under test, for the subprocesses
SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"
_NO_KEYS = {"ANTHROPIC_API_KEY": None, "LANGFUSE_PUBLIC_KEY": None, "LANGSMITH_API_KEY": None}


def _cli(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner(env=_NO_KEYS | (env or {})).invoke(main, list(args))


def _runs(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT command, status FROM runs ORDER BY started_at").fetchall()


def _results(tmp_path: Path, name: str = "r.jsonl") -> Path:
    out = tmp_path / name
    done = _cli("score", str(SAMPLES), "--out", str(out), "--store", str(tmp_path / "s.db"), "-q")
    assert done.exit_code == 0, done.output
    return out


# -- 1: push of JSONL results needs no pyarrow -------------------------------------------------------------------

_WITHOUT_PYARROW = (
    "import sys\n"
    "class _NoPyarrow:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'pyarrow' or name.startswith('pyarrow.'):\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "sys.meta_path.insert(0, _NoPyarrow())\n"
    "from tracescore.cli.main import main\n"
    "main(sys.argv[1:], prog_name='tracescore')\n"
)


def test_push_of_jsonl_results_needs_no_pyarrow(tmp_path: Path) -> None:
    """As on an install without ``tracescore[export]``: pyarrow cannot be imported in the pushing process."""
    results = _results(tmp_path)
    gz = tmp_path / "more" / "r2.jsonl.gz"
    gz.parent.mkdir()
    gz.write_bytes(gzip.compress(results.read_bytes()))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "LANGFUSE", "LANGSMITH"))}
    env["PYTHONPATH"] = os.pathsep.join([CODE, env.get("PYTHONPATH", "")])
    with FakeLangfuse() as server:
        done = subprocess.run(
            [sys.executable, "-c", _WITHOUT_PYARROW, "push", "--to", "langfuse", str(results), str(gz.parent),
             "--store", str(tmp_path / "push.db")],
            env=env | env_for(server), capture_output=True, text=True, cwd=tmp_path, timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "from 2 file(s) to langfuse" in done.stdout
        ids = {json.loads(line)["trace_id"] for line in results.read_text().splitlines()}
        assert ids and all(server.scores_of(i) for i in ids)
        parquet = tmp_path / "r.parquet"
        parquet.write_bytes(b"PAR1")
        refused = subprocess.run(
            [sys.executable, "-c", _WITHOUT_PYARROW, "push", "--to", "langfuse", str(parquet),
             "--store", str(tmp_path / "push.db")],
            env=env | env_for(server), capture_output=True, text=True, cwd=tmp_path, timeout=300,
        )
    assert refused.returncode == 2, refused.stderr
    assert "pyarrow" in refused.stderr and "tracescore[export]" in refused.stderr
    helped = " ".join(_cli("push", "--help").output.split())
    assert "JSONL results (also .jsonl.gz) need nothing more" in helped
    assert "Parquet results and s3:// need pyarrow" in helped


# -- 2: a trace downloaded from the platform ---------------------------------------------------------------------


def _run_tree() -> dict[str, Any]:
    """A LangSmith run tree as ``client.read_run(id, load_child_runs=True)`` returns it, saved as JSON."""
    from langsmith.schemas import Run

    root, search, fetch = "0b5b6c1e-0000-4000-8000-000000000001", "0b5b6c1e-0000-4000-8000-000000000002", (
        "0b5b6c1e-0000-4000-8000-000000000003")
    common = {"trace_id": root, "start_time": "2026-11-20T09:07:00Z", "end_time": "2026-11-20T09:07:05Z"}
    child_search = Run(
        id=search, name="web_search", run_type="retriever", parent_run_id=root, **common,
        inputs={"query": "acme return window days"},
        outputs={"documents": [{"page_content": "You can return most items within 30 days.",
                                "metadata": {"url": "https://help.acme-shop.com/returns", "id": "policy-returns-v4"}}]},
    )
    child_fetch = Run(
        id=fetch, name="fetch_page", run_type="tool", parent_run_id=root, **common,
        inputs={"url": "https://help.acme-shop.com/returns"}, outputs={"output": "Return most items within 30 days."},
    )
    tree = Run(
        id=root, name="agent", run_type="chain", **common, inputs={"question": "How many days to return an item?"},
        outputs={"answer": "Within 30 days [1].\n\n[1] https://help.acme-shop.com/returns"},
        extra={"metadata": {"labels": {"required_doc_ids": ["policy-returns-v4"]}}},
        child_runs=[child_search, child_fetch],
    )
    return json.loads(tree.model_dump_json())


def test_score_reads_a_trace_downloaded_from_langfuse_langsmith_or_otel(tmp_path: Path, shared_data: Path) -> None:
    agno = shared_data / "langfuse_traces" / "agno-2025-06-11.json"
    trace_id = json.loads(agno.read_text())["trace"]["id"]
    store = str(tmp_path / "s.db")
    out = tmp_path / "lf.jsonl"
    given = _cli("score", str(agno), "--source", "langfuse", "--out", str(out), "--store", store)
    assert given.exit_code == 0, given.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["trace_id"] for line in lines] == [trace_id]
    assert lines[0]["scores"]["retrieval.retrieved_any"] is True  # agno's DuckDuckGo search read as a search
    # found without --source: one note, the same result
    found = _cli("score", str(agno), "--out", str(tmp_path / "found.jsonl"), "--store", store)
    assert found.exit_code == 0, found.output
    assert found.output.count("note:") == 1
    assert f"note: {agno} is a Langfuse trace download: read as --source langfuse" in found.output
    assert (tmp_path / "found.jsonl").read_text() == out.read_text()
    # a list of downloads: every trace
    pair = [json.loads(p.read_text()) for p in sorted((shared_data / "langfuse_traces").glob("*.json"))[:2]]
    (tmp_path / "two.json").write_text(json.dumps(pair, indent=2))
    two = _cli("score", str(tmp_path / "two.json"), "--out", str(tmp_path / "two.jsonl"), "--store", store)
    assert two.exit_code == 0, two.output
    assert [json.loads(x)["trace_id"] for x in (tmp_path / "two.jsonl").read_text().splitlines()] == [
        p["trace"]["id"] for p in pair]
    # a LangSmith run tree, one or a list
    tree = _run_tree()
    (tmp_path / "run.json").write_text(json.dumps(tree, indent=2))
    (tmp_path / "runs.json").write_text(json.dumps([tree]))
    for name in ("run.json", "runs.json"):
        smith = _cli("score", str(tmp_path / name), "--out", str(tmp_path / "ls.jsonl"), "--store", store)
        assert smith.exit_code == 0, smith.output
        assert "is a LangSmith run download: read as --source langsmith" in smith.output
        line = json.loads((tmp_path / "ls.jsonl").read_text())
        assert line["trace_id"] == tree["id"]
        assert line["scores"]["retrieval.recall_at_5"] == 1.0  # the child retriever run is a search step
        assert line["scores"]["citation.unfetched_rate"] == 0.0  # the child tool run is a fetch
    # an OTel span file, found
    spans = shared_data / "openinference" / "all-spans.json"
    otel = _cli("score", str(spans), "--out", str(tmp_path / "ot.jsonl"), "--store", store)
    assert otel.exit_code == 0, otel.output
    assert "read as --source otel" in otel.output
    # a file that is none of them keeps the JSONL hint; --source langfuse on a canonical trace says what it wants
    (tmp_path / "array.json").write_text(json.dumps([{"question": "q"}]))
    other = _cli("score", str(tmp_path / "array.json"), "--store", store)
    assert other.exit_code == 1 and "jq -c" in other.output
    wrong = _cli("score", str(SAMPLES), "--source", "langfuse", "--store", store)
    assert wrong.exit_code == 1
    assert "is not a Langfuse trace download" in wrong.output
    assert '{"trace": ..., "observations": [...]}' in wrong.output


# -- 3: the store: prune, info, none, a read-only folder -------------------------------------------------------


def _age(store: Path, days_ago: str, command: str | None = None) -> None:
    """Date every finished run (of ``command``) back to ``days_ago`` (an ISO time)."""
    with sqlite3.connect(store) as db:
        sql = "UPDATE runs SET started_at = ?, finished_at = ? WHERE status != 'running'"
        db.execute(sql + (" AND command = ?" if command else ""), (days_ago, days_ago, *([command] if command else [])))


def test_store_prune_info_and_store_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "s.db"
    _results(tmp_path)
    _age(store, "2026-01-10T00:00:00+00:00")
    _results(tmp_path, "new.jsonl")
    with sqlite3.connect(store) as db:  # a job still running, begun long ago, and an unfinished backfill's marks
        db.execute("INSERT INTO runs (id, started_at, command, status) VALUES ('live', '2026-01-01T00:00:00+00:00',"
                   " 'run', 'running')")
        old = db.execute("SELECT id FROM runs WHERE started_at LIKE '2026-01-10%'").fetchone()[0]
        db.execute("INSERT INTO backfills VALUES ('bf', 'k', 'f', '2026-01-01', '2026-01-09', 4, '2026-01-01',"
                   " 'running', '2026-01-10', '2026-01-10', NULL)")
        db.execute("INSERT INTO scored_traces VALUES ('backfill:bf', 't1', NULL, 'done', ?, '2026-01-10')", (old,))
        db.execute("INSERT INTO scored_traces VALUES ('run:k', 't2', '2026-01-09', 'done', ?, '2026-01-10')", (old,))
    info = _cli("store", "info", "--store", str(store))
    assert info.exit_code == 0, info.output
    assert "3 runs (2 done, 1 running)" in info.output and "oldest run 2026-01-01" in info.output
    assert "76 results" in info.output and "size " in info.output
    dry = _cli("store", "prune", "--before", "2026-02-01", "--dry-run", "--store", str(store))
    assert dry.exit_code == 0, dry.output
    assert "would prune 1 run (38 results, 1 mark)" in dry.output
    assert len(_runs(store)) == 3
    pruned = _cli("store", "prune", "--before", "2026-02-01", "--store", str(store))
    assert pruned.exit_code == 0, pruned.output
    assert "pruned 1 run (38 results, 1 mark)" in pruned.output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == 38
        assert db.execute("SELECT scope FROM scored_traces").fetchall() == [("backfill:bf",)]
        assert db.execute("SELECT status FROM runs WHERE id = 'live'").fetchone() == ("running",)
    bad = _cli("store", "prune", "--before", "last week", "--store", str(store))
    assert bad.exit_code == 2 and "'last week'" in bad.output
    # --store none: no file, and the summary says nothing was kept
    none_dir = tmp_path / "none"
    none_dir.mkdir()
    monkeypatch.chdir(none_dir)
    kept = _cli("score", str(SAMPLES), "--store", "none", "--out", "r.jsonl")
    assert kept.exit_code == 0, kept.output
    assert "nothing stored (--store none): no run, no cache" in kept.output
    assert sorted(p.name for p in none_dir.iterdir()) == ["r.jsonl"]


def test_score_in_a_read_only_folder_names_store(tmp_path: Path) -> None:
    """A folder the user cannot write to (root writes anywhere but in sysfs, so root runs it there)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    traces = shutil.copy(SAMPLES, tmp_path / "t.jsonl")
    folder.chmod(0o555)
    cwd = Path("/sys") if os.geteuid() == 0 else folder
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["PYTHONPATH"] = os.pathsep.join([CODE, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "score", str(traces), "-q"], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300,
    )
    assert done.returncode == 4, done.stderr
    assert "unable to open database file" not in done.stderr
    assert f"cannot create the store 'tracescore.db' in '{cwd}': the folder is not writable" in done.stderr
    assert "give --store PATH" in done.stderr and done.stderr.count("\n") == 1


# -- 6: the wrong file, named as such ----------------------------------------------------------------------------


def test_score_names_a_results_file_a_csv_and_reads_gzip(tmp_path: Path) -> None:
    results = _results(tmp_path)
    store = str(tmp_path / "s.db")
    wrong = _cli("score", str(results), "--store", store)
    assert wrong.exit_code == 1
    assert wrong.output.count("\n") == 1, wrong.output
    assert f"{results} is a tracescore results file: use `tracescore report {results}`" in wrong.output
    csv = tmp_path / "traces.csv"
    csv.write_text("id,question,answer\ntr-1,How many days?,30 days\n")
    said = _cli("score", str(csv), "--store", store)
    assert said.exit_code == 1 and said.output.count("\n") == 1, said.output
    assert "this looks like CSV; tracescore reads JSONL (one trace per line)" in said.output
    gz = tmp_path / "traces.jsonl.gz"
    gz.write_bytes(gzip.compress(SAMPLES.read_bytes()))
    read = _cli("score", str(gz), "--out", str(tmp_path / "gz.jsonl"), "--store", store, "-q")
    assert read.exit_code == 0, read.output
    assert (tmp_path / "gz.jsonl").read_text() == results.read_text()


# -- 12: the smaller ones ------------------------------------------------------------------------------------------


def test_the_smaller_first_hour_edges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.jsonl").write_text("")
    empty = _cli("score", "empty.jsonl", "-q")
    assert empty.exit_code == 0 and empty.output.count("warning:") == 1, empty.output
    # stdout is not a terminal and no --out: where the results are
    piped = _cli("score", str(SAMPLES))
    assert piped.exit_code == 0
    assert ("note: results are in the store only (tracescore.db): add --out results.jsonl, or get them with"
            " `tracescore report run:latest --format json`") in " ".join(piped.output.split())
    assert "results are in the store only" not in _cli("score", str(SAMPLES), "--out", "r.jsonl").output
    # --out in a folder that does not exist: refused before the run starts
    before = _runs(tmp_path / "tracescore.db")
    nodir = _cli("score", str(SAMPLES), "--out", "nodir/x.jsonl")
    assert nodir.exit_code == 4 and "nodir/x.jsonl" in nodir.output
    assert _runs(tmp_path / "tracescore.db") == before
    # calibrate to a sheet from stored judged results: no judge key needed
    with FakeAnthropic() as judge:
        judged = _cli("score", str(SAMPLES), "--store", "j.db", "-q",
                      env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": judge.url})
    assert judged.exit_code == 0, judged.output
    sheet = _cli("calibrate", "sample", "--to", "sheet.csv", "--run", "latest", "--store", "j.db", "--n", "12")
    assert sheet.exit_code == 0, sheet.output
    assert (tmp_path / "sheet.csv").read_text().count("\n") >= 12
    # -V is --version; completion is documented
    assert _cli("-V").output.strip() == f"tracescore, version {__version__}"
    readme = page("getting-started/index.md")
    assert "_TRACESCORE_COMPLETE=bash_source tracescore" in readme
    assert "_TRACESCORE_COMPLETE=zsh_source tracescore" in readme and "_TRACESCORE_COMPLETE=fish_source" in readme
