"""Issue #10 item 4: the ``tracescore.toml`` that ``init`` writes works with every command, for every source, and
``score FILE --config`` honours ``[scoring]`` (and refuses a misspelt key) like ``run`` does."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import REPO
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.cli import main

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder with both fake platforms up and their credentials set, as the current directory."""
    with FakeLangfuse() as langfuse, FakeLangSmith() as langsmith:
        seed(langsmith, load_samples())
        for key, value in env_for(langfuse).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_config_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", langsmith.url)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.chdir(tmp_path)
        yield tmp_path


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=dict(os.environ))


def _init(kind: str) -> None:
    extra = {"jsonl": ["--traces", str(SAMPLES)], "langsmith": ["--project", "search-agent"], "langfuse": []}[kind]
    done = _cli("init", "--source", kind, *extra)
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("kind", ["jsonl", "langfuse", "langsmith"])
def test_every_command_reads_the_file_init_wrote(folder: Path, kind: str) -> None:
    _init(kind)
    scored = _cli("score", str(SAMPLES), "--config", "tracescore.toml", "--out", "r.jsonl", "-q")
    assert scored.exit_code == 0, scored.output
    gate = _cli("gate", "r.jsonl")
    assert gate.exit_code in (0, 1) and "unknown section" not in gate.output, gate.output
    assert "Gate" in gate.output or "gate" in gate.output
    for source in ("langfuse", "langsmith"):
        extra = ["--project", "search-agent"] if source == "langsmith" else []
        platform = _cli("score", "--source", source, *extra, *WINDOW, "--store", "p.db", "-q")
        assert platform.exit_code == 0, (source, platform.output)
    run = _cli("run", "--since", "2026-11-01T00:00:00Z", "-q")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout.strip().splitlines()[-1])["failed"] == 0


def test_score_with_config_honours_the_retrieval_k_and_refuses_a_misspelt_key(folder: Path) -> None:
    _init("jsonl")
    path = folder / "tracescore.toml"
    path.write_text(path.read_text() + "\n[scorers.retrieval]\nk = 3\n")
    scored = _cli("score", str(SAMPLES), "--config", str(path), "--out", "r.jsonl", "-q")
    assert scored.exit_code == 0, scored.output
    first = json.loads((folder / "r.jsonl").read_text().splitlines()[0])
    names = set(first["scores"]) | set(first.get("missing", {}))
    assert "retrieval.recall_at_3" in names and "retrieval.recall_at_5" not in names
    path.write_text(path.read_text().replace("k = 3\n", "kk = 3\n"))
    bad = _cli("score", str(SAMPLES), "--config", str(path), "-q")
    assert bad.exit_code == 2 and "unknown key 'kk' in [scorers.retrieval]" in bad.output, bad.output


def test_missing_credentials_exit_the_same_from_score_and_run(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _init("langfuse")
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY")
    score = _cli("score", "--source", "langfuse", *WINDOW, "-q")
    run = _cli("run", "-q")
    assert score.exit_code == run.exit_code == 2, (score.output, run.output)
    assert "LANGFUSE_PUBLIC_KEY" in score.output and "LANGFUSE_PUBLIC_KEY" in run.output


def test_run_on_an_empty_window_says_which_window_and_what_to_do(folder: Path) -> None:
    _init("jsonl")
    run = _cli("run")
    assert run.exit_code == 0, run.output
    assert "held 0 traces" in run.stderr and "--since" in run.stderr and "backfill" in run.stderr
