"""#33 item 4: the retrieval budget per group beside the stage split in every report format, and the HTML work queue's
query column sortable with no script, on hand-built result lines whose every figure is worked out by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.report.test_html import CHROMIUM, SKIP_REASON, _chromium
from tracescore.cli import main


def _line(tid: str, provider: str, scores: dict[str, Any], query: str | None = None) -> dict[str, Any]:
    comments = {"trajectory.query_overlap": f"first query: {json.dumps(query)}"} if query is not None else {}
    return {"trace_id": tid, "scores": scores, "missing": {}, "errors": [], "comments": comments,
            "metadata": {"provider": provider}}  # fmt: skip


LINES = [
    _line("L1", "tavily", {"trajectory.search_calls": 2.0, "trajectory.fetch_calls": 1.0,
                           "trajectory.fetch_chars": 30000.0, "answer.correct": True,
                           "trajectory.query_overlap": 0.9, "diagnosis": "retrieval_fail/right"}, "zeta"),
    _line("L2", "tavily", {"trajectory.search_calls": 1.0, "trajectory.fetch_calls": 0.0, "answer.correct": False,
                           "trajectory.query_overlap": 0.25, "diagnosis": "retrieval_pass/wrong"}, "mid"),
    _line("L3", "tavily", {"trajectory.search_calls": 3.0, "trajectory.fetch_calls": 2.0,  # fetch_chars absent
                           "answer.correct": True,
                           "diagnosis": "retrieval_pass/right"}, "not queued"),
    _line("L4", "exa", {"trajectory.search_calls": 1.0, "trajectory.fetch_calls": 1.0,
                        "trajectory.fetch_chars": 50000.0,
                        "trajectory.query_overlap": 0.5, "diagnosis": "retrieval_fail/wrong"}, "Alpha"),
    _line("L5", "exa", {"answer.correct": True}),  # scored before the trajectory scores: adds nothing
]  # fmt: skip
# tavily: 3 answers; searches 6/3 = 2.00, fetches 3/3 = 1.00; characters known for L1 (30,000) and L2 (0: it fetched
# nothing), 15,000 per answer; decided among them: L1 right, L2 wrong over 30,000 characters: 100,000 × 1 / 30,000.
# exa: L4 alone (L5 has no trajectory): 1.00, 1.00, 50,000, no decided answer. Overall: 4 answers, 7/4 = 1.75 searches,
# 4/4 = 1.00 fetches, 80,000 / 3 = 26,667 characters, 3.33 (1/2).
ROWS = {
    "answers": ["3", "1"], "searches per answer": ["2.00", "1.00"], "fetches per answer": ["1.00", "1.00"],
    "characters read per answer": ["15,000", "50,000"],
    "correct answers per 100,000 characters read": ["3.33 (1/2)", "—"],
}  # fmt: skip
COLUMNS = ["tavily", "exa"]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return path


def _report(results: Path, fmt: str, *extra: str) -> str:
    run = CliRunner().invoke(main, ["report", str(results), "--group-by", "metadata.provider", "--format", fmt,
                                    "--store", str(results.parent / "s.db"), *extra])  # fmt: skip
    assert run.exit_code == 0, run.output
    return run.output


def test_json_budget_per_group_and_overall(results: Path) -> None:
    budget = json.loads(_report(results, "json"))["retrieval_budget"]
    assert budget["groups"]["tavily"] == {
        "answers": 3,
        "searches_per_answer": 2.0,
        "fetches_per_answer": 1.0,
        "answers_read": 2,
        "chars_per_answer": 15000.0,
        "decided": 2,
        "correct": 1,
        "correct_per_100k_chars": pytest.approx(3.333333),
    }
    assert budget["groups"]["exa"]["chars_per_answer"] == 50000.0 and budget["groups"]["exa"]["decided"] == 0
    assert budget["groups"]["exa"]["correct_per_100k_chars"] is None
    overall = budget["overall"]
    assert (overall["answers"], overall["searches_per_answer"], overall["chars_per_answer"]) == (
        4, 1.75, pytest.approx(26666.666667))  # fmt: skip


def test_markdown_and_terminal_tables_beside_the_stage_split(results: Path) -> None:
    markdown = _report(results, "markdown")
    after = markdown.split("### Stage pass rates", 1)[1]
    assert after.index("### Retrieval budget") < after.index("### Work queue")
    header = "| budget | " + " | ".join(sorted(COLUMNS)) + " |"  # the report's columns are its groups, sorted
    assert header in markdown
    for label, (tavily, exa) in ROWS.items():
        assert f"| {label} | {exa} | {tavily} |" in markdown
    terminal = _report(results, "terminal")
    assert terminal.index("Stage pass rates") < terminal.index("Retrieval budget") < terminal.index("Work queue")
    assert "3.33 (1/2)" in terminal and "15,000" in terminal and "50,000" in terminal


def _rows(page: str, table_id: str) -> list[tuple[str, str, str]]:
    table = page.split(f'<table id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-key="[^"]+"><td>[^<]*</td><td><code>(\w+)</code></td>'
                      r'<td class="query">([^<]*)</td><td>([^<]*)</td></tr>', table)  # fmt: skip


def test_html_budget_and_the_query_column_sorted_three_ways_with_no_script(results: Path) -> None:
    page = _html(results)
    budget = page.split('<table id="budget">', 1)[1].split("</table>", 1)[0]
    for label, (tavily, exa) in ROWS.items():
        assert f"<tr><td>{label}</td><td>{exa}</td><td>{tavily}</td></tr>" in budget
    assert page.index('id="stages"') < page.index('id="budget"') < page.index('id="queue"')
    # queued: L1 (retrieval_fail/right), L4 (retrieval_fail/wrong), L2 (retrieval_pass/wrong); L3 is in no queue cell
    assert _rows(page, "queue-table") == [("L1", "zeta", "0.90"), ("L4", "Alpha", "0.50"), ("L2", "mid", "0.25")]
    assert _rows(page, "queue-by-query") == [("L4", "Alpha", "0.50"), ("L2", "mid", "0.25"), ("L1", "zeta", "0.90")]
    assert _rows(page, "queue-by-overlap") == [("L2", "mid", "0.25"), ("L4", "Alpha", "0.50"), ("L1", "zeta", "0.90")]
    assert page.count('<a href="#queue-by-query">first query</a>') == 3  # every order's header links to each order
    assert page.count('<a href="#queue-by-overlap">query overlap</a>') == 3
    assert "<script" not in page and not re.search(r"<[^>]+\son\w+\s*=", page)  # no script, no handler
    assert ".wq-sort:target~#queue-table{display:none}" in page


def _html(results: Path) -> str:
    out = results.parent / "report.html"
    run = CliRunner().invoke(main, ["report", str(results), "--group-by", "metadata.provider", "--format", "html",
                                    "--out", str(out), "--store", str(results.parent / "s.db")])  # fmt: skip
    assert run.exit_code == 0, run.output
    return out.read_text()


def test_a_header_link_shows_that_order_in_headless_chromium(results: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.skip(SKIP_REASON)
    page = results.parent / "report.html"
    _html(results)
    shots = {}
    for fragment in ("", "#queue-by-query", "#queue-by-overlap", "#queue-table"):
        shot = tmp_path / f"shot{len(shots)}.png"
        taken = _chromium(
            CHROMIUM, tmp_path, "--window-size=1000,8000", f"--screenshot={shot}", page.as_uri() + fragment
        )  # tall enough that no fragment scrolls
        assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
        shots[fragment] = shot.read_bytes()
    # the three orders paint differently; the queue's order is the default one
    assert len({shots[""], shots["#queue-by-query"], shots["#queue-by-overlap"]}) == 3
    from PIL import Image, ImageChops

    def image(fragment: str) -> Image.Image:
        return Image.open(tmp_path / f"shot{list(shots).index(fragment)}.png").convert("RGB")

    assert ImageChops.difference(image(""), image("#queue-table")).getbbox() is None
