"""Issue #45 items 5, 7, 8, 9, 10, 11: what a newcomer's first hour tripped over — a "did you mean" that helps, the
judge asked for and missing, starting points (``init``), one output shape per purpose, narrow terminals, and the
cookbook without keys. Each test drives the CLI (``CliRunner``, a subprocess, or a real terminal through a pty)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.cli.terminal import on_terminal
from tests.conftest import REPO, SAMPLES
from tests.docs_pages import page
from tests.integrations.pytest_runs import run_pytest
from tracescore import catalog
from tracescore.cli import main
from tracescore.config import load_config

SRC = REPO / "src"


def _cli(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def _results(tmp_path: Path) -> Path:
    out = tmp_path / "r.jsonl"
    done = _cli("score", str(SAMPLES), "--out", str(out), "--store", str(tmp_path / "s.db"), "-q",
                env={"ANTHROPIC_API_KEY": None})  # fmt: skip
    assert done.exit_code == 0, done.output
    return out


# -- item 5 ------------------------------------------------------------------------------------------------------


def test_did_you_mean_suggests_by_the_names_parts_and_lists_the_stage_when_nothing_is_close(tmp_path: Path) -> None:
    results = _results(tmp_path)
    recall = _cli("gate", str(results), "--min", "recall=0.9")
    assert recall.exit_code == 2
    assert "did you mean retrieval.recall_at_5?" in recall.output and "fetch.calls" not in recall.output
    fabricated = _cli("gate", str(results), "--max", "fabricated=0").output
    assert "did you mean session.fabricated_count or citation.fabricated_count?" in fabricated
    nothing = _cli("gate", str(results), "--min", "grounding.sunshine=0.5")
    assert nothing.exit_code == 2 and "did you mean" not in nothing.output
    grounding = [e.name for e in catalog.entries() if e.stage == "grounding" and e.kind != "CATEGORICAL"]
    assert grounding and all(name in nothing.output for name in grounding), nothing.output
    # the pytest plugin: the same suggestion, one line, never a chained traceback
    trace = SAMPLES.read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "test_names.py").write_text(
        f"import json\nTRACE = json.loads({trace!r})\n"
        "def test_recall(tracescore):\n    tracescore.check(TRACE, min={'recall': 1.0})\n",
        encoding="utf-8",
    )
    ran = run_pytest(tmp_path, "test_names.py", env={"ANTHROPIC_API_KEY": ""})
    assert "tracescore.check: unknown score 'recall'; did you mean retrieval.recall_at_5?" in ran.out, ran.out
    assert "During handling" not in ran.out and "Traceback" not in ran.out


# -- item 7 ------------------------------------------------------------------------------------------------------


def test_a_judge_asked_for_and_missing_is_exit_2_and_otherwise_the_summary_says_why_it_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "s.db")
    required = tmp_path / "judge.toml"
    required.write_text("[scoring]\njudge = true\n", encoding="utf-8")
    no_key = {"ANTHROPIC_API_KEY": None}
    flag = _cli("score", str(SAMPLES), "--store", store, "--judge", env=no_key)
    assert flag.exit_code == 2 and "ANTHROPIC_API_KEY" in flag.output, flag.output
    config = _cli("score", str(SAMPLES), "--store", store, "--config", str(required), env=no_key)
    assert config.exit_code == 2 and "ANTHROPIC_API_KEY" in config.output and "judge = true" in config.output
    plain = _cli("score", str(SAMPLES), "--store", store, env=no_key)
    assert plain.exit_code == 0 and "judge: off (no ANTHROPIC_API_KEY set)" in plain.stdout, plain.output
    off = _cli("score", str(SAMPLES), "--store", store, "--no-judge", env={"ANTHROPIC_API_KEY": "k"})
    assert off.exit_code == 0 and "judge: off (--no-judge)" in off.stdout
    # the key set, the SDK not installed
    monkeypatch.setitem(sys.modules, "anthropic", None)  # type: ignore[arg-type]
    key = {"ANTHROPIC_API_KEY": "sk-test"}
    sdk = _cli("score", str(SAMPLES), "--store", store, "--judge", env=key)
    assert sdk.exit_code == 2 and "pip install 'tracescore[judge]'" in sdk.output, sdk.output
    assert _cli("score", str(SAMPLES), "--store", store, "--config", str(required), env=key).exit_code == 2
    warned = _cli("score", str(SAMPLES), "--store", store, env=key)
    assert warned.exit_code == 0 and "warning: the judge needs the anthropic SDK" in warned.stderr
    assert "judge: off (anthropic SDK not installed: pip install 'tracescore[judge]')" in warned.stdout
    # tracescore[all]: every extra but Ray (and the dev tools); the README's table names each extra
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (everything,) = extras["all"]
    named = set(everything.removeprefix("tracescore[").removesuffix("]").split(","))
    assert named == set(extras) - {"all", "ray", "dev", "docs"}
    readme = page("getting-started/index.md")
    for name in extras:
        if name != "dev":
            assert f"`tracescore[{name}]`" in readme, name


# -- item 8 ------------------------------------------------------------------------------------------------------


def test_init_writes_a_jsonl_starter_or_a_platforms_and_run_without_config_names_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = _cli("init")
    assert done.exit_code == 0, done.output
    source = load_config(tmp_path / "tracescore.toml").section("source")
    assert source.kind == "jsonl" and source.path == "traces.jsonl"
    for platform in ("langfuse", "langsmith"):
        written = _cli("init", f"{platform}.toml", "--platform", platform)
        assert written.exit_code == 0, written.output
        assert load_config(tmp_path / f"{platform}.toml").section("source").kind == platform
    (tmp_path / "tracescore.toml").unlink()
    bare = _cli("run")
    assert bare.exit_code == 2 and "tracescore init" in bare.output, bare.output


# -- item 9 ------------------------------------------------------------------------------------------------------


def test_score_gate_run_and_backfill_give_one_json_object_or_a_human_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "s.db")
    scored = _cli("score", str(SAMPLES), "--store", store, "--format", "json", env={"ANTHROPIC_API_KEY": None})
    assert scored.exit_code == 0, scored.output
    whole = json.loads(scored.stdout)
    assert whole["traces"] == 38 and whole["run_id"] and "retrieval.recall_at_5" in whole["scores"]
    assert whole["judge"]["on"] is False and whole["judge"]["off"] == "no ANTHROPIC_API_KEY set"
    results = _results(tmp_path)
    gated = _cli("gate", str(results), "--min", "retrieval.recall_at_5=0.9", "--format", "json")
    assert gated.exit_code == 1
    verdict = json.loads(gated.stdout)
    assert verdict["passed"] is False and verdict["traces"] == 38
    rule = next(r for r in verdict["rules"] if r["subject"] == "retrieval.recall_at_5")
    assert rule["verdict"] == "fail" and rule["limit"] == "≥ 0.9" and 0.7 < rule["observed"] < 0.8
    # run / backfill: the JSON object when piped (or --format json), a short summary on a terminal
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(SAMPLES.read_bytes())
    (tmp_path / "tracescore.toml").write_text(
        f'[source]\nkind = "jsonl"\npath = "traces.jsonl"\n[job]\nstore = "{tmp_path / "job.db"}"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    piped = _cli("run", "--since", "2020-01-01", env={"ANTHROPIC_API_KEY": None})
    assert piped.exit_code == 0 and json.loads(piped.stdout)["seen"] == 38
    code, shown = on_terminal(["backfill", "--from", "2020-01-01", "--to", "2030-01-01", "-q"], tmp_path)
    assert code == 0 and "{" not in shown, shown
    assert "backfill: 38 traces seen, 38 scored, 0 unreadable" in shown and "--format json" in shown
    code, shown = on_terminal(["run", "--since", "2020-01-01", "--format", "json"], tmp_path)
    assert code == 0 and json.loads(shown[shown.index("{"):])["command"] == "run"


# -- item 10 -----------------------------------------------------------------------------------------------------


def test_narrow_terminals_placeholders_help_texts_and_a_bad_duration(tmp_path: Path) -> None:
    code, shown = on_terminal(["score", str(SAMPLES), "--store", str(tmp_path / "s.db")], tmp_path, columns=70)
    assert code == 0, shown
    wanted = [e.name.replace("{k}", "5") for e in catalog.entries() if e.stage != "diagnosis"]
    assert [n for n in wanted if n in shown] == [n for n in wanted if n in shown and f" {n} " in shown]
    assert "grounding.hallucination_rate" in shown and "grounding.unsupported_numbers" in shown
    assert "retrieva " not in shown and "groundin " not in shown and "citation " not in shown, shown
    assert max(len(line) for line in shown.splitlines() if "│" in line) <= 70
    code, wide = on_terminal(["score", str(SAMPLES), "--store", str(tmp_path / "s.db")], tmp_path, columns=200)
    assert code == 0 and "top reason absent" in wide and "│ trajectory.fetch_calls " in wide  # room beside: one table
    piped = _cli("score", str(SAMPLES), "--store", str(tmp_path / "s.db"), env={"ANTHROPIC_API_KEY": None}).stdout
    for shown in (wide, piped):
        assert "<missing>" not in shown and "<sources>" not in shown
        assert "required doc(s) never came back in any search call" in shown
    assert "``" not in _cli("score", "--help").output
    store_help = " ".join(_cli("gate", "--help").output.split())
    assert "for report" not in store_help and "--store" in store_help
    bad = tmp_path / "bad.toml"
    bad.write_text('[scorers.stale]\nstale_after = "1 year"\n', encoding="utf-8")
    said = _cli("score", str(SAMPLES), "--config", str(bad), "--store", str(tmp_path / "b.db"))
    assert said.exit_code == 2 and said.output.count("'1 year'") == 1, said.output


# -- item 11 -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "variable"),
    [("langsmith_evaluate.py", "LANGSMITH_API_KEY"), ("langfuse_experiment.py", "LANGFUSE_PUBLIC_KEY")],
)
def test_the_cookbook_without_keys_says_which_variable_and_exits_2(script: str, variable: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "LANGFUSE_"))}
    env["PYTHONPATH"] = str(SRC)
    ran = subprocess.run([sys.executable, str(REPO / "cookbook" / script)], env=env, capture_output=True, text=True,
                         timeout=120, cwd=REPO)  # fmt: skip
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert ran.stdout == "" and len(ran.stderr.splitlines()) == 1 and variable in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr and "disabled" not in ran.stderr
    readme = (REPO / "cookbook" / "README.md").read_text(encoding="utf-8")
    for example in ("langsmith_evaluate.py", "langfuse_experiment.py", "pytest_suite", "github-actions", variable):
        assert example in readme, example
