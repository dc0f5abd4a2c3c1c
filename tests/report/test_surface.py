"""Acceptance 1 of #13: one question on three providers (hand-built, every partition cell present) gives the
hand-computed partition shares, contradiction ratios and complementarity in the report's provider section, in every
format, with a fake judge returning fixed labels."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.judge import QueueJudge
from tests.scorers.test_surface import BRAVE, EXA, FIXED, TAVILY
from tracescore.cli import main
from tracescore.engine.pipeline import score_trace
from tracescore.report.render.surface import surface_table
from tracescore.report.surface import SurfaceReport, surface_to_json
from tracescore.result import TraceResult
from tracescore.scorers.answer import answer_scorer
from tracescore.scorers.surface import surface_scorer
from tracescore.store.db import Store
from tracescore.trace import Labels, Trace


def _results() -> list[TraceResult]:
    out = []
    for trace, answer in ((BRAVE, "8,849 metres."), (TAVILY, "8,848 metres."), (EXA, "8,849 metres.")):
        labels = Labels(gold_answer="8,849 metres", expected_answer_contains=["8,849"])
        meta = trace.metadata | {"question": "everest"}
        case = trace.model_copy(update={"answer": answer, "labels": labels, "metadata": meta})
        judge = QueueJudge().enqueue(FIXED[str(trace.metadata["provider"])])
        out.append(score_trace(case, [answer_scorer(), surface_scorer(judge=judge)]))
    return out


def _lines() -> list[dict[str, Any]]:
    return [r.to_json() for r in _results()]


def test_the_three_providers_give_the_hand_computed_section() -> None:
    section = SurfaceReport(group_by="metadata.provider", case_key="metadata.question")
    for line in _lines():
        section.add(line)
    got = surface_to_json(section)["columns"]
    assert list(got) == ["brave", "exa", "tavily"]
    # brave: U1 SMART, U2 MISSED, U3 BLIND (page discovered), U4 NO-OP contradicting → 1 contradicting / 2 supporting
    brave = got["brave"]
    assert {c: v["count"] for c, v in brave["cells"].items()} == {"smart": 1, "missed": 1, "blind": 1, "noop": 1}
    assert {c: v["share"] for c, v in brave["cells"].items()} == dict.fromkeys(
        ("smart", "missed", "blind", "noop"), 0.25
    )
    assert brave["contradiction_ratio"] == {"value": 0.5, "contradicting": 1.0, "supporting": 2}
    assert brave["support_any"] == {"value": 1.0, "n": 1} and brave["first_support_rank"] == {"value": 1.0, "n": 1}
    assert brave["fetch_yield"]["value"] == 1.0 and brave["discovered_support"] == 1
    # tavily: two fetched non-supporting surfaces (BLIND), one NO-OP; no support → no ratio (absent, never 0)
    tavily = got["tavily"]
    assert {c: v["count"] for c, v in tavily["cells"].items()} == {"smart": 0, "missed": 0, "blind": 2, "noop": 1}
    assert tavily["cells"]["blind"]["share"] == pytest.approx(2 / 3)
    assert tavily["contradiction_ratio"]["value"] is None and tavily["support_any"]["value"] == 0.0
    assert tavily["first_support_rank"] == {"value": None, "n": 0} and tavily["fetch_yield"]["value"] == 0.0
    # exa: U2 SMART, U1/U3/U4 NO-OP, two of them contradicting → 2 / 1
    exa = got["exa"]
    assert {c: v["count"] for c, v in exa["cells"].items()} == {"smart": 1, "missed": 0, "blind": 0, "noop": 3}
    assert exa["contradiction_ratio"] == {"value": 2.0, "contradicting": 2.0, "supporting": 1}
    assert exa["first_support_rank"]["value"] == 2.0
    # same accuracy, different evidence: brave and exa both right, their surfaces very different
    assert brave["correct"] == exa["correct"] == {"value": 1.0, "n": 1} and tavily["correct"] == {"value": 0.0, "n": 1}
    assert tavily["token_f1"]["value"] < brave["token_f1"]["value"] == 1.0
    comp = surface_to_json(section)["complementarity"]
    assert comp == {
        "questions": 1, "supported": {"brave": 1, "exa": 1, "tavily": 0},
        "only": {"brave": [], "exa": [], "tavily": []}, "union": 1, "none": [],
    }  # fmt: skip


def test_a_question_only_one_provider_supports_is_listed_alone_and_counted_in_the_union() -> None:
    section = SurfaceReport(group_by="metadata.provider", case_key="metadata.question")
    lines = _lines()
    for line in lines:
        section.add(line)
    brave_only = json.loads(json.dumps(lines[0]))
    brave_only["metadata"]["question"] = "k2"
    tavily_k2 = json.loads(json.dumps(lines[1])) | {"metadata": {"provider": "tavily", "question": "k2"}}
    for line in (brave_only, tavily_k2):
        section.add(line)
    comp = section.complementarity()
    assert comp is not None and comp.only == {"brave": ["k2"], "exa": [], "tavily": []}
    assert comp.union == 2 and comp.questions == 2


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _lines()))
    return path


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html", "json"])
def test_every_format_shows_the_section_side_by_side(tmp_path: Path, fmt: str) -> None:
    args = ["report", str(_write(tmp_path)), "--group-by", "metadata.provider", "--case-key", "metadata.question"]
    result = CliRunner().invoke(main, [*args, "--format", fmt, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    text = html.unescape((tmp_path / "out").read_text())
    if fmt == "json":
        surface = json.loads(text)["surface"]
        assert surface["columns"]["exa"]["contradiction_ratio"]["value"] == 2.0
        assert surface["complementarity"]["union"] == 1
        return
    assert "Same accuracy, different evidence" in text
    assert "0.50 (1/2)" in text and "2.00 (2/1)" in text  # brave, exa contradiction ratios
    assert "67% (2/3)" in text  # tavily's BLIND share
    assert "the union of the providers' surfaces supports 1 (100%)" in " ".join(text.split())  # prose wraps
    if fmt == "html":
        assert '<table id="surface">' in text and '<ul id="complementarity">' in text


def test_a_stored_run_adds_the_fetch_tokens(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        run = store.start_run("score")
        for result in _results():
            store.add_result(run, result)
        store.finish_run(run, {})
    out = tmp_path / "r.json"
    args = ["report", "run:latest", "--store", str(tmp_path / "t.db"), "--group-by", "metadata.provider"]
    result = CliRunner().invoke(main, [*args, "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    columns = json.loads(out.read_text())["surface"]["columns"]
    assert columns["brave"]["fetch_tokens"]["total"] > columns["exa"]["fetch_tokens"]["total"] > 0
    assert json.loads(out.read_text())["surface"]["complementarity"] is None  # no --case-key


def test_without_surface_labels_the_section_is_one_line_of_reasons(tmp_path: Path) -> None:
    unjudged: list[Trace] = [BRAVE, TAVILY]
    lines = [score_trace(t, [answer_scorer(), surface_scorer(judge=None)]).to_json() for t in unjudged]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = CliRunner().invoke(main, ["report", str(path), "--format", "markdown"])
    assert result.exit_code == 0
    assert "surface: not scored (2 × no judge configured)." in result.output
    assert "Same accuracy" not in result.output


def _zeros(value: Any, path: str = "") -> list[str]:
    """Paths of every 0 (int or float, not bool) in a JSON value."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _zeros(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _zeros(v, f"{path}[{i}]")]
    return [path] if type(value) in (int, float) and value == 0 else []


def test_a_provider_without_surface_labels_shows_no_zero_in_any_format(tmp_path: Path) -> None:
    """Surface scores absent (no judge) in one column: its sums are null in JSON and "—" in tables, never 0."""
    labelled = _lines()[0]
    unlabelled = {
        "trace_id": "t-none",
        "scores": {"answer.correct": True},
        "missing": {n: "judge turned off (--no-judge)" for n in labelled["scores"] if n.startswith("surface.")},
        "errors": [],
        "metadata": {"provider": "zzz"},
    }
    section = SurfaceReport(group_by="metadata.provider")
    for line in (labelled, unlabelled):
        section.add(line)
    columns = surface_to_json(section)["columns"]
    none = columns["zzz"]
    assert none["labelled"] == 0 and none["support_any"]["n"] == 0
    counts = {k: v for k, v in none.items() if k not in ("labelled", "support_any", "semantic_match", "token_f1",
                                                          "first_support_rank", "fetch_yield", "fetch_tokens")}
    assert _zeros(counts) == [], _zeros(counts)
    assert none["discovered_support"] is None and none["urls"] is None
    assert columns["brave"]["discovered_support"] == 1  # the labelled column keeps its sums
    header, rows = surface_table(section)
    zzz = header.index("zzz")
    shown = {row[0]: row[zzz] for row in rows}
    assert shown["discovered support (pages)"] == "—" and shown["MISSED share"] == "—"
