"""Issue #35 item 7: terminal tables fit the terminal (80, 100, 160 columns), wrap at words and never crop a value
with an ellipsis; piped output has a fixed readable layout with its right border."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tracescore.cli import main
from tracescore.report.render.terminal import render_report_terminal
from tracescore.report.safe import PIPED_WIDTH, console
from tracescore.report.summary import Summary, build_report, render_terminal

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"
LONG_REASON = (
    "no expected answer label: the trace carries no labels object and no top-level keys, so correctness cannot be"
    " decided for this trace"
)
LONG_GROUP = "a-search-provider-with-a-long-name"


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    tmp = tmp_path_factory.mktemp("fit")
    out = tmp / "r.jsonl"
    done = CliRunner().invoke(main, ["score", str(SAMPLES), "--out", str(out), "--store", str(tmp / "s.db"), "-q"])
    assert done.exit_code == 0, done.output
    results = [json.loads(line) for line in out.read_text().splitlines()]
    for i, line in enumerate(results[:8]):
        line["scores"].pop("answer.correct", None)
        line["missing"]["answer.correct"] = LONG_REASON
        line["metadata"]["provider"] = LONG_GROUP if i % 2 else line["metadata"]["provider"]
    return results


def _cropped(text: str) -> list[str]:
    """Lines with an ellipsis that is not the "… and N more" of a cut list (a cropped value)."""
    return [line for line in text.splitlines() if "…" in re.sub(r"… and \d+ more", "", line)]


def _check(text: str, width: int, *, reason: bool = True) -> None:
    # `score`'s closing status line ("run … stored in PATH") stays one line a CI log can grep: not a table
    rows = [row for row in text.splitlines() if not row.startswith("run ")]
    assert max(len(row) for row in rows) <= width, [row for row in rows if len(row) > width][:3]
    assert _cropped(text) == []
    for row in rows:  # every table row keeps its right border
        if row[:1] in "│┃┏┡└":
            assert row.rstrip()[-1] in "│┃┓┩┘", row
    for name in ("retrieval.recall_at_5", "grounding.hallucination_rate", "surface.contradiction_ratio"):
        assert name in text  # names are never wrapped or cut
    if reason:
        words = set(re.findall(r"[\w-]+", text))
        assert {"correctness", "cannot", "decided", "top-level"} <= words  # the reason wraps at words


@pytest.mark.parametrize("width", [80, 100, 160])
def test_the_score_summary_and_the_report_fit_the_terminal(lines: list[dict[str, object]], width: int) -> None:
    summary = Summary()
    for line in lines:
        summary.add(line)
    buf = io.StringIO()
    render_terminal(summary, console(file=buf, width=width, force_terminal=True, color_system=None))
    _check(buf.getvalue(), width)
    buf = io.StringIO()
    report = build_report(lines, group_by="metadata.provider")
    render_report_terminal(report, console(file=buf, width=width, force_terminal=True, color_system=None))
    text = buf.getvalue()
    _check(text, width, reason=False)  # the report's score table has no reason column


def test_piped_output_uses_the_fixed_layout(lines: list[dict[str, object]], tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for args in (["report", str(results), "--group-by", "metadata.provider"], ["score", str(SAMPLES), "--no-judge"]):
        done = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "s.db")], env={"COLUMNS": "300"})
        assert done.exit_code == 0, done.output
        _check(done.stdout, PIPED_WIDTH, reason=False)
    out = tmp_path / "report.txt"
    done = CliRunner().invoke(main, ["report", str(results), "--out", str(out), "--store", str(tmp_path / "s.db")])
    assert done.exit_code == 0
    _check(out.read_text(), PIPED_WIDTH, reason=False)
