"""Issue #35 item 9: the smaller rough edges a new user hits (init, report --out, gate on a terminal, a gate with no
baseline, --no-judge and score --help, a misspelt trace field)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tests.cli.terminal import on_terminal
from tests.conftest import REPO
from tracescore import catalog
from tracescore.cli import main

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _results(tmp_path: Path) -> Path:
    out = tmp_path / "r.jsonl"
    assert _cli("score", str(SAMPLES), "--out", str(out), "--store", str(tmp_path / "s.db"), "-q").exit_code == 0
    return out


def test_init_for_a_file_source_asks_for_no_credentials(tmp_path: Path) -> None:
    jsonl = _cli("init", str(tmp_path / "a.toml"), "--source", "jsonl", "--traces", "t.jsonl")
    assert jsonl.exit_code == 0 and "set credentials" not in jsonl.output and "no credentials needed" in jsonl.output
    langfuse = _cli("init", str(tmp_path / "b.toml"), "--source", "langfuse")
    assert "set the langfuse credentials in the environment" in langfuse.output


def test_report_out_says_where_it_wrote(tmp_path: Path) -> None:
    results = _results(tmp_path)
    for fmt in ("markdown", "html", "json", "terminal"):
        out = tmp_path / f"report.{fmt}"
        done = _cli("report", str(results), "--format", fmt, "--out", str(out))
        assert done.exit_code == 0 and out.stat().st_size > 0
        assert done.stderr == f"wrote the {fmt} report to {out}\n"


def test_gate_on_a_terminal_renders_the_markdown(tmp_path: Path) -> None:
    results = _results(tmp_path)
    code, shown = on_terminal(["gate", str(results), "--store", str(tmp_path / "x.db")], tmp_path, stderr=False)
    assert code == 1  # the samples cite fabricated URLs
    assert "tracescore gate failed" in shown and "no fabricated citation" in shown
    assert "**" not in shown and "`tr-0010`" not in shown and "| --- |" not in shown  # rendered, not raw Markdown
    piped = _cli("gate", str(results))
    assert "**no fabricated citation" in piped.stdout  # a pipe or a file still gets the Markdown


def test_a_gate_with_no_baseline_names_the_rules_that_did_not_run(tmp_path: Path) -> None:
    results = _results(tmp_path)
    alone = _cli("gate", str(results))
    assert (
        "Did not run: no regression (noise band) (no --baseline given); no newly failing case (no --baseline given);"
        " threshold (no --min/--max or [gate.min]/[gate.max])."
    ) in alone.stdout
    full = _cli("gate", str(results), "--baseline", str(results), "--min", "retrieval.recall_at_5=0.1")
    assert "Did not run" not in full.stdout


def test_score_help_names_every_judged_score_and_langfuse_base_url_first() -> None:
    shown = " ".join(_cli("score", "--help").output.split())
    judged = [e.name for e in catalog.entries() if e.judged]
    for name in judged:
        family = name.split(".")[0]
        assert name in shown or f"{family}.*" in shown, name
    assert "answer.semantic_match" in shown and "surface.*" in shown
    assert "LANGFUSE_BASE_URL" in shown and "_HOST" not in shown
    assert shown.index("LANGFUSE_BASE_URL") < shown.index("LANGFUSE_PUBLIC_KEY")


def test_a_misspelt_trace_field_suggests_the_closest(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    lines = [
        {"id": "a", "question": "q", "steps": [], "anwser": "x"},
        {"id": "b", "question": "q", "steps": [{"kind": "search", "qurey": "x", "hits": []}], "answer": "x"},
        {"id": "c", "question": "q", "steps": [], "answer": "x", "zzzz": 1},
    ]
    traces.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = _cli("score", str(traces), "--store", str(tmp_path / "s.db"), "--out", str(tmp_path / "o.jsonl"))
    errors = [json.loads(line)["errors"][0] for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert done.exit_code == 1
    assert "unknown field at anwser: Extra inputs are not permitted; did you mean answer?" in errors[0]
    assert "unknown field at steps.0.search.qurey" in errors[1] and "did you mean query?" in errors[1]
    assert "did you mean" not in errors[2]
