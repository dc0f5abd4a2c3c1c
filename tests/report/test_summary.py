"""`tracescore report`: the cells, their trace ids and the stage rates match a hand count, in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.cli import main
from tracescore.report.summary import build_report, field_value, report_to_json, stage_verdicts, work_queue

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
CANNOT_RUN = 6  # the README's exit code of a report that could not run (missing input, nothing to report)


def result_line(
    tid: str,
    cell: str | None,
    provider: str,
    hour: int,
    *,
    fabricated: float = 0.0,
    unread: float = 0.0,
    day: int = 20,
) -> dict[str, Any]:
    """A result line in the documented format whose scores are consistent with its cell."""
    scores: dict[str, Any] = {"citation.fabricated_count": fabricated, "citation.unfetched_rate": unread}
    missing: dict[str, str] = {}
    if cell is None:
        missing = {"retrieval.recall_at_5": "no required_doc_ids label", "diagnosis": "retrieval was not scored"}
    else:
        row, col = cell.split("/")
        scores["retrieval.recall_at_5"] = 0.5 if row == "retrieval_fail" else 1.0
        scores["answer.correct"] = col == "right"
        if row in ("grounded", "ungrounded"):
            scores["grounding.rate"] = 0.9 if row == "grounded" else 0.5
        scores["diagnosis"] = cell
    return {
        "trace_id": tid,
        "scores": scores,
        "missing": missing,
        "errors": [],
        "timestamp": f"2026-11-{day:02d}T{hour:02d}:15:00+00:00",
        "metadata": {"provider": provider, "model": "m1"},
    }


# The result set and, written out by hand, what every format must show for it.
LINES = [
    result_line("t01", "retrieval_fail/wrong", "exa", 9),
    result_line("t02", "retrieval_fail/wrong", "brave", 9),
    result_line("t03", "retrieval_fail/right", "exa", 9),
    result_line("t04", "grounded/right", "exa", 10),
    result_line("t05", "grounded/right", "brave", 10),
    result_line("t06", "grounded/right", "brave", 10),
    result_line("t07", "grounded/wrong", "exa", 11, unread=0.5),
    result_line("t08", "ungrounded/wrong", "brave", 11, fabricated=1.0),
    result_line("t09", "ungrounded/right", "exa", 11),
    result_line("t10", None, "brave", 11),
]
HAND_CELLS = {
    "retrieval_fail/wrong": ["t01", "t02"],
    "retrieval_fail/right": ["t03"],
    "grounded/right": ["t04", "t05", "t06"],
    "grounded/wrong": ["t07"],
    "ungrounded/wrong": ["t08"],
    "ungrounded/right": ["t09"],
}
HAND_BY_GROUP = {  # cell → (brave, exa)
    "retrieval_fail/right": (0, 1),
    "retrieval_fail/wrong": (1, 1),
    "ungrounded/right": (0, 1),
    "ungrounded/wrong": (1, 0),
    "grounded/right": (2, 1),
    "grounded/wrong": (0, 1),
    "no cell": (1, 0),
}
HAND_STAGES = {  # stage → (passed, decided), overall
    "retrieval": (6, 9),
    "grounding": (4, 6),
    "answer": (5, 9),
    "citations": (8, 10),
}
HAND_QUEUE = [  # most urgent first
    ("retrieval_fail/right", ["t03"]),
    ("retrieval_fail/wrong", ["t01", "t02"]),
    ("ungrounded/wrong", ["t08"]),
    ("ungrounded/right", ["t09"]),
    ("grounded/wrong", ["t07"]),
    ("citation.fabricated", ["t08"]),
]


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    text = "".join(json.dumps(line) + "\n" for line in LINES[:5])
    text += "{not json at all\n"  # an unreadable line in the middle: reported, never a crash
    text += "".join(json.dumps(line) + "\n" for line in LINES[5:])
    path.write_text(text)
    return path


def _run(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def test_json_matches_the_hand_count(results_file: Path) -> None:
    result = _run("report", str(results_file), "--group-by", "metadata.provider", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    overall = data["overall"]
    assert overall["traces"] == 10 and overall["unreadable"] == 1
    assert "line 6: not JSON" in overall["errors"][0]
    got = {c: v["trace_ids"] for c, v in overall["cells"].items() if v["count"]}
    assert got == HAND_CELLS
    assert all(v["count"] == len(v["trace_ids"]) for v in overall["cells"].values())
    assert {s: (v["passed"], v["decided"]) for s, v in overall["stages"].items()} == HAND_STAGES
    assert overall["stages"]["grounding"]["failed_trace_ids"] == ["t08", "t09"]
    assert list(data["groups"]) == ["brave", "exa"]
    for cell, (brave, exa) in HAND_BY_GROUP.items():
        if cell == "no cell":
            counts = [sum(data["groups"][g]["undiagnosed"].values()) for g in ("brave", "exa")]
        else:
            counts = [data["groups"][g]["cells"][cell]["count"] for g in ("brave", "exa")]
        assert counts == [brave, exa], cell
    assert [(w["key"], w["trace_ids"]) for w in overall["work_queue"]] == HAND_QUEUE
    assert data["timeline"]["granularity"] == "hour"
    assert [b["bucket"] for b in data["timeline"]["buckets"]] == [
        "2026-11-20T09:00",
        "2026-11-20T10:00",
        "2026-11-20T11:00",
    ]
    nine = data["timeline"]["buckets"][0]["stages"]["retrieval"]
    assert (nine["passed"], nine["decided"]) == (0, 3)


def test_markdown_matches_the_hand_count(results_file: Path) -> None:
    result = _run("report", str(results_file), "--group-by", "metadata.provider", "--format", "markdown")
    assert result.exit_code == 0, result.output
    md = result.output
    assert "| cell | brave | exa |" in md
    for cell, (brave, exa) in HAND_BY_GROUP.items():
        assert f"| {cell} | {brave} | {exa} |" in md, cell
    for cell, ids in HAND_CELLS.items():
        listed = re.search(rf"^- `{re.escape(cell)}` \((\d+)\): (.*)$", md, re.M)
        assert listed, cell
        assert int(listed.group(1)) == len(ids)
        assert re.findall(r"`(t\d\d)`", listed.group(2)) == ids
    rates = {
        m.group(1): tuple(int(x) for x in m.group(2, 3, 4, 5))
        for m in re.finditer(r"^\| (\w+) \| .*?\((\d+)/(\d+)\) \| .*?\((\d+)/(\d+)\) \|$", md, re.M)
    }
    # by hand, (brave passed, decided, exa passed, decided):
    # brave t02 t05 t06 t08 (t10 undecided), exa t01 t03 t04 t07 t09
    assert rates == {
        "retrieval": (3, 4, 3, 5),
        "grounding": (2, 3, 2, 3),
        "answer": (2, 4, 3, 5),
        "citations": (4, 5, 4, 5),
    }
    queue = re.findall(r"^- \*\*(\d+) (.+?)\*\* — .*?: (.*)$", md, re.M)
    assert [re.findall(r"`(t\d\d)`", ids) for _, _, ids in queue] == [ids for _, ids in HAND_QUEUE]
    assert queue[0][1] == "right answers with retrieval failing — check these first"
    assert queue[1][:2] == ("2", "retrieval bugs")


def test_terminal_matches_the_hand_count(results_file: Path) -> None:
    result = _run("report", str(results_file), "--group-by", "metadata.provider")
    assert result.exit_code == 0, result.output
    out = result.output
    for cell, (brave, exa) in HAND_BY_GROUP.items():
        row = next(line for line in out.splitlines() if re.match(rf"│ {re.escape(cell)}\s+│", line))
        assert [int(x) for x in row.split("│")[2:4]] == [brave, exa], cell
    for cell, ids in HAND_CELLS.items():
        listed = re.search(rf"^\s+{re.escape(cell)} \((\d+)\): (.*)$", out, re.M)
        assert listed and int(listed.group(1)) == len(ids)
        assert listed.group(2).split(", ") == ids
    assert "2 retrieval bugs — fix the retriever" in out
    assert "1 right answers with retrieval failing — check these first" in out


def test_html_matches_the_hand_count(results_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = _run("report", str(results_file), "--group-by", "metadata.provider", "--format", "html", "--out", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text()
    rows = dict(re.findall(r'<tr data-cell="([^"]+)">(.*?)</tr>', page))
    for cell, (brave, exa) in HAND_BY_GROUP.items():
        tds = re.findall(r"<td[^>]*>(.*?)</td>", rows["none" if cell == "no cell" else cell])
        assert [int(tds[1]), int(tds[2])] == [brave, exa], cell
        if cell != "no cell":  # grouped: the ids per group (issue #35), together the cell's ids
            per_group = re.findall(r'<div data-group="\w+"><b>\w+</b>: ([^<]*)</div>', tds[3])
            assert sorted(i for ids in per_group for i in ids.split(", ")) == sorted(HAND_CELLS[cell])
    bars = re.findall(r'<rect class="bar" data-group="(\w+)" data-stage="(\w+)" data-value="([\d.]+)"', page)
    by = {(g, s): float(v) for g, s, v in bars}
    assert by[("brave", "grounding")] == pytest.approx(2 / 3, abs=1e-4)  # t05, t06 grounded; t08 not
    assert by[("exa", "retrieval")] == pytest.approx(3 / 5, abs=1e-4)
    assert len(bars) == 8
    queue = re.findall(r'<li data-key="([^"]+)">.*?: (.*?)</li>', page)
    assert [(k, re.findall(r"<code>(t\d\d)</code>", ids)) for k, ids in queue] == HAND_QUEUE


def test_stored_run_reports_like_the_result_file(tmp_path: Path) -> None:
    """Score the sample traces; the report of the stored run equals the report of --out and an independent count."""
    store, out = tmp_path / "ts.db", tmp_path / "r.jsonl"
    scored = _run("score", str(SAMPLES), "--store", str(store), "--out", str(out), "-q")
    assert scored.exit_code == 0, scored.output
    from_store = json.loads(_run("report", "run:latest", "--store", str(store), "--format", "json").output)
    from_file = json.loads(_run("report", str(out), "--format", "json").output)
    assert from_store["overall"] == from_file["overall"]
    expected: dict[str, list[str]] = {}
    for raw in out.read_text().splitlines():
        line = json.loads(raw)
        if "diagnosis" in line["scores"]:
            expected.setdefault(line["scores"]["diagnosis"], []).append(line["trace_id"])
    got = {c: v["trace_ids"] for c, v in from_file["overall"]["cells"].items() if v["count"]}
    assert got == expected and sum(map(len, got.values())) > 20


def test_bad_specs_name_the_fix(tmp_path: Path) -> None:
    missing = _run("report", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "give a results JSONL file (from --out) or run:latest" in missing.output
    no_store = _run("report", "run:latest", "--store", str(tmp_path / "none.db"))
    assert no_store.exit_code == 2 and "pass --store PATH" in no_store.output  # a missing input: a bad argument
    _run("score", str(SAMPLES), "--store", str(tmp_path / "a.db"), "-q")
    too_far = _run("report", "run:latest~3", "--store", str(tmp_path / "a.db"))
    assert too_far.exit_code == CANNOT_RUN and "holds only 1 finished run(s)" in too_far.output
    a_store = _run("report", str(tmp_path / "a.db"))
    assert a_store.exit_code == CANNOT_RUN and "is a store, not a result file; use run:latest --store" in a_store.output
    unknown = _run("report", "run:zzz", "--store", str(tmp_path / "a.db"))
    assert unknown.exit_code == CANNOT_RUN and "'run:zzz' matches no finished run" in unknown.output


def test_stage_verdicts_follow_the_cell_then_the_scores() -> None:
    assert stage_verdicts(LINES[0]) == {"retrieval": False, "grounding": None, "answer": False, "citations": True}
    assert stage_verdicts(LINES[7])["citations"] is False  # fabricated
    assert stage_verdicts(LINES[6])["citations"] is False  # unread
    assert stage_verdicts(LINES[9]) == {"retrieval": None, "grounding": None, "answer": None, "citations": True}
    judged_no_cell = {"scores": {"grounding.rate": 0.7, "retrieval.recall_at_10": 1.0}}
    assert stage_verdicts(judged_no_cell) == {"retrieval": True, "grounding": False, "answer": None, "citations": None}


def test_field_value_paths() -> None:
    line = LINES[0] | {"metadata": {"provider": "exa", "tags": ["a", "b"], "flag": True, "deep": {"x": 1}}}
    assert field_value(line, "metadata.provider") == "exa"
    assert field_value(line, "provider") == "exa"  # bare names look in metadata
    assert field_value(line, "metadata.tags") == "a,b"
    assert field_value(line, "metadata.flag") == "true"
    assert field_value(line, "metadata.deep.x") == "1"
    assert field_value(line, "trace_id") == "t01"
    assert field_value(line, "metadata.nope") is None


def test_timeline_is_per_day_across_days_and_missing_group_goes_last() -> None:
    lines = [result_line("a", "grounded/right", "exa", 9, day=d) for d in (20, 21, 23)]
    lines.append({k: v for k, v in result_line("b", "grounded/wrong", "x", 9).items() if k != "metadata"})
    report = build_report(lines, group_by="metadata.provider")
    granularity, buckets = report.timeline()
    assert granularity == "day" and [b for b, _ in buckets] == ["2026-11-20", "2026-11-21", "2026-11-23"]
    assert [name for name, _ in report.columns()] == ["exa", "(none)"]
    assert report_to_json(report)["groups"]["(none)"]["cells"]["grounded/wrong"]["trace_ids"] == ["b"]
    assert [w.key for w in work_queue(report.overall)] == ["grounded/wrong"]


def test_judge_usage_is_summed_and_shown(tmp_path: Path) -> None:
    path = tmp_path / "judged.jsonl"
    usage = {"calls": 2, "input_tokens": 1500, "output_tokens": 300, "cost_usd": 0.0123}
    path.write_text("".join(json.dumps(line | {"judge": usage}) + "\n" for line in LINES[:3]))
    data = json.loads(_run("report", str(path), "--format", "json").output)
    assert data["overall"]["judge"] == {"calls": 6, "input_tokens": 4500, "output_tokens": 900, "cost_usd": 0.0369}
    md = _run("report", str(path), "--format", "markdown").output
    assert "Judge: 6 calls, 4,500 input + 900 output tokens, ≈ $0.0369." in md


def test_time_buckets_are_utc_hours() -> None:
    line = result_line("a", "grounded/right", "exa", 9) | {"timestamp": "2026-11-20T23:30:00-05:00"}
    naive = result_line("b", "grounded/wrong", "exa", 9) | {"timestamp": "2026-11-21T04:10:00"}
    bad = result_line("c", "grounded/wrong", "exa", 9) | {"timestamp": "yesterday"}
    granularity, buckets = build_report([line, naive, bad]).timeline()
    assert granularity == "hour" and [b for b, _ in buckets] == ["2026-11-21T04:00"]
    assert (buckets[0][1]["answer"].passed, buckets[0][1]["answer"].decided) == (1, 2)


def test_line_chart_breaks_at_missing_values() -> None:
    from tracescore.report.render.svg import line_chart

    svg = line_chart("t", ["h1", "h2", "h3", "h4"], ["answer"], {("answer", "h1"): 1.0, ("answer", "h3"): 0.5})
    assert svg.count('<circle class="point"') == 2
    assert svg.count('<polyline class="series"') == 2  # h1 alone, h3 alone: no line drawn across the gap


def test_scores_are_listed_by_catalog_stage_and_verdicts_use_the_diagnosis_cuts(results_file: Path) -> None:
    from tracescore import catalog
    from tracescore.report.summary import STAGES
    from tracescore.scorers.diagnosis import MIN_GROUNDING, diagnose
    from tracescore.scores import score

    md = _run("report", str(results_file), "--format", "markdown").output
    rows = re.findall(r"^\| (\w+) \| ([\w.]+) \| \d+ \|", md[md.index("### Scores") :], re.M)
    assert rows == [
        ("retrieval", "retrieval.recall_at_5"),
        ("grounding", "grounding.rate"),
        ("citations", "citation.fabricated_count"),
        ("citations", "citation.unfetched_rate"),
        ("answer", "answer.correct"),
    ]
    assert [s for s in catalog.STAGES if s in STAGES] == list(STAGES)
    rates = re.findall(r"^\| (\w+) \| \d+% \(", md[md.index("### Stage pass rates") :], re.M)
    assert rates == list(STAGES)
    # the report's grounding verdict and the diagnosis cell cut at the same rate
    for rate in (MIN_GROUNDING - 0.01, MIN_GROUNDING, MIN_GROUNDING + 0.01):
        cell = diagnose(
            {
                "retrieval.recall_at_5": score("retrieval.recall_at_5", 1.0),
                "grounding.rate": score("grounding.rate", rate),
                "answer.correct": score("answer.correct", True),
            }
        )
        verdict = stage_verdicts({"scores": {"grounding.rate": rate}})["grounding"]
        assert verdict is (str(cell.value).startswith("grounded/"))
