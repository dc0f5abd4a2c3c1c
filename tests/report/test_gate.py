"""`tracescore gate`: each rule fails on its own and names rule, stage and cases; the noise band absorbs noise only."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.report.calibration import JUDGE, calibrated_store
from tracescore.cli import main
from tracescore.errors import ConfigError, NoResultsError, OutputError
from tracescore.report.gate import GateConfig, load_gate_config, parse_limit, run_gate
from tracescore.report.render import render_gate_markdown, render_junit
from tracescore.store.db import Store

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SAMPLES = ROOT / "cookbook" / "data" / "traces.jsonl"
PASSED, RULE_FAILED, BAD_CONFIG, CANNOT_RUN = 0, 1, 2, 6  # the README's exit-code rows for gate and report


def case_line(
    case: str,
    *,
    recall: float = 1.0,
    right: bool = True,
    fabricated: float = 0.0,
    unread: float = 0.0,
    support: float | None = None,
    hallucination: float | None = None,
    run: str = "r",
) -> dict[str, Any]:
    """A result line of one case (trace ids differ per run, the case id does not); cell consistent with scores."""
    cell = f"{'retrieval_fail' if recall < 1 else 'retrieval_pass'}/{'right' if right else 'wrong'}"
    scores: dict[str, Any] = {
        "retrieval.recall_at_5": recall,
        "answer.correct": right,
        "citation.fabricated_count": fabricated,
        "citation.unfetched_rate": unread,
        "diagnosis": cell,
    }
    if support is not None:
        scores["citation.support_rate"] = support
    if hallucination is not None:
        scores["grounding.hallucination_rate"] = hallucination
    return {
        "trace_id": f"{run}-{case}",
        "scores": scores,
        "missing": {},
        "errors": [],
        "metadata": {"case_id": case},
        "judge": JUDGE,
    }


CASES = ["c1", "c2", "c3", "c4", "c5", "c6"]


def clean_run(run: str, **overrides: dict[str, Any]) -> list[dict[str, Any]]:
    """Six cases; c6 fails retrieval (and the answer) in every run, so it is never a 'baseline-passing' case."""
    lines = []
    for case in CASES:
        options: dict[str, Any] = {"recall": 0.5, "right": False} if case == "c6" else {}
        options |= overrides.get(case, {})
        lines.append(case_line(case, run=run, **options))
    return lines


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def gate(tmp_path: Path, current: list[dict[str, Any]], baselines: list[list[dict[str, Any]]], *extra: str) -> Any:
    args = ["gate", str(write(tmp_path / "current.jsonl", current)), "--case-key", "metadata.case_id"]
    for i, lines in enumerate(baselines):
        args += ["--baseline", str(write(tmp_path / f"baseline{i}.jsonl", lines))]
    args += ["--markdown", str(tmp_path / "gate.md"), "--junit", str(tmp_path / "gate.xml"), *extra]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    result.md = (tmp_path / "gate.md").read_text()
    result.junit = ET.parse(tmp_path / "gate.xml").getroot()
    return result


def failed_cases(junit: ET.Element) -> list[tuple[str, str, str]]:
    """(classname, name, failure text) of every failing JUnit test case."""
    return [
        (tc.get("classname", ""), tc.get("name", ""), tc.find("failure").text or "")  # type: ignore[union-attr]
        for tc in junit.iter("testcase")
        if tc.find("failure") is not None
    ]


# -- acceptance 2: each rule fails on its own, and all hold → pass ------------------------------------------


def test_passes_when_every_rule_holds(tmp_path: Path) -> None:
    result = gate(tmp_path, clean_run("now"), [clean_run("base")], "--min", "retrieval.recall_at_5=0.9")
    assert result.exit_code == 0, result.output
    assert result.md.startswith("## ✅ tracescore gate passed")
    assert result.output == result.md  # the summary is also printed
    assert failed_cases(result.junit) == []
    suite = result.junit.find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and int(suite.get("tests", "0")) >= 4


def test_threshold_fails_alone(tmp_path: Path) -> None:
    # Same run as the baseline (c6 has recall 0.5: mean recall 11/12 = 0.917): only the threshold can fail.
    result = gate(tmp_path, clean_run("now"), [clean_run("base")], "--min", "retrieval.recall_at_5=0.95")
    assert result.exit_code == 1
    assert failed_cases(result.junit) == [
        (
            "tracescore.gate.threshold",
            "min: retrieval.recall_at_5",
            "retrieval.recall_at_5 = 0.917 over 6 traces, needs ≥ 0.95",
        )
    ]
    assert "| ❌ threshold | retrieval.recall_at_5 | 0.917 | ≥ 0.95 |" in result.md
    assert "**threshold — retrieval.recall_at_5**" in result.md


def test_max_threshold_and_a_score_never_computed_fail(tmp_path: Path) -> None:
    result = gate(
        tmp_path, clean_run("now"), [], "--max", "citation.unfetched_rate=0.1", "--min", "grounding.rate=0.85"
    )
    assert result.exit_code == 1
    fails = failed_cases(result.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.threshold", "min: grounding.rate")]
    assert "grounding.rate has no value to check: never scored" in fails[0][2]


def test_newly_failing_case_fails_alone_and_names_case_and_stage(tmp_path: Path) -> None:
    # c3's answer breaks; c5's answer was wrong in the baseline and is right now: the means do not move.
    baseline = clean_run("base", c5={"right": False})
    current = clean_run("now", c3={"right": False})
    result = gate(tmp_path, current, [baseline])
    assert result.exit_code == 1
    fails = failed_cases(result.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.newly_failing", "newly_failing: cases")]
    assert fails[0][2] == "c3\tstage=answer\ttrace=now-c3\tpassed in 1 baseline run(s)"
    assert "| ❌ no newly failing case | cases | 1 | = 0 |" in result.md
    assert "  - `c3` — stage **answer** (trace `now-c3`): passed in 1 baseline run(s)" in result.md
    assert "c6" not in result.md  # failing in the baseline too: not a new failure


def test_case_flaky_in_the_baselines_is_not_newly_failing(tmp_path: Path) -> None:
    baselines = [clean_run("b1"), clean_run("b2", c2={"recall": 0.5}), clean_run("b3")]
    current = clean_run("now", c2={"recall": 0.5})
    result = gate(tmp_path, current, baselines)
    assert result.exit_code == 0, result.md


def test_unreadable_case_that_passed_before_counts_as_newly_failing(tmp_path: Path) -> None:
    current = clean_run("now")[1:]
    path = write(tmp_path / "current.jsonl", current)
    with path.open("a") as fh:
        fh.write(
            '{"trace_id": "now-c1", "errors": ["line 1: answer is not a string"], "metadata": {"case_id": "c1"}}\n'
        )
    baseline = write(tmp_path / "b.jsonl", clean_run("base"))
    result = CliRunner().invoke(
        main, ["gate", str(path), "--baseline", str(baseline), "--case-key", "metadata.case_id"], catch_exceptions=False
    )
    assert result.exit_code == 1
    assert "5 traces in" in result.output and ", 1 unreadable" in result.output
    assert "  - `c1` — stage **unreadable** (trace `now-c1`): line 1: answer is not a string" in result.output


def test_fabricated_url_fails_alone(tmp_path: Path) -> None:
    # Fabricated in the baseline as well (so not newly failing): only the hard rule fails, and it is not optional.
    baseline = clean_run("base", c4={"fabricated": 2.0})
    current = clean_run("now", c4={"fabricated": 2.0})
    result = gate(tmp_path, current, [baseline], "--allow-unread")
    assert result.exit_code == 1
    fails = failed_cases(result.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.fabricated", "fabricated: citation.fabricated_count")]
    assert fails[0][2] == "c4\tstage=citations\ttrace=now-c4\t2 fabricated cited URL(s)"
    assert "| ❌ no fabricated citation | citation.fabricated_count | 1 | = 0 |" in result.md
    assert "  - `c4` — stage **citations** (trace `now-c4`): 2 fabricated cited URL(s)" in result.md


def test_unread_citation_fails_unless_allowed(tmp_path: Path) -> None:
    baseline = clean_run("base", c2={"unread": 0.5})
    current = clean_run("now", c2={"unread": 0.5})
    strict = gate(tmp_path, current, [baseline])
    assert strict.exit_code == 1
    assert [(c, n) for c, n, _ in failed_cases(strict.junit)] == [
        ("tracescore.gate.unread", "unread: citation.unfetched_rate")
    ]
    assert "`c2` — stage **citations** (trace `now-c2`): 50% of cited URLs never fetched" in strict.md

    allowed = gate(tmp_path, current, [baseline], "--allow-unread")
    assert allowed.exit_code == 0
    assert "⚠️ no unread citation" in allowed.md
    skipped = [tc for tc in allowed.junit.iter("testcase") if tc.find("skipped") is not None]
    assert [tc.get("classname") for tc in skipped] == ["tracescore.gate.unread"]


def test_newly_unread_citation_is_a_newly_failing_case_only_when_unread_is_not_allowed(tmp_path: Path) -> None:
    baseline, current = clean_run("base"), clean_run("now", c2={"unread": 0.5})
    strict = gate(tmp_path, current, [baseline])
    assert sorted(c for c, _, _ in failed_cases(strict.junit)) == [
        "tracescore.gate.newly_failing",  # (no regression: one case of six is inside the widened band, #43 item 6)
        "tracescore.gate.unread",
    ]
    assert "`c2` — stage **citations** (trace `now-c2`): passed in 1 baseline run(s)" in strict.md
    allowed = gate(tmp_path, current, [baseline], "--allow-unread")
    assert allowed.exit_code == 0, allowed.md
    assert "⚠️ no unread citation" in allowed.md


def test_thresholds_and_options_from_tracescore_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tracescore.toml").write_text(
        '[gate]\ncase_key = "metadata.case_id"\nallow_unread = true\n[gate.min]\n"retrieval.recall_at_5" = 0.95\n'
    )
    write(tmp_path / "now.jsonl", clean_run("now", c2={"unread": 0.5}))
    monkeypatch.chdir(tmp_path)
    from_file = CliRunner().invoke(main, ["gate", "now.jsonl"], catch_exceptions=False)
    assert from_file.exit_code == 1 and "| ❌ threshold | retrieval.recall_at_5 | 0.917 | ≥ 0.95 |" in from_file.output
    assert "⚠️ no unread citation" in from_file.output  # allow_unread from the file
    overridden = CliRunner().invoke(main, ["gate", "now.jsonl", "--min", "retrieval.recall_at_5=0.9"])
    assert overridden.exit_code == 0, overridden.output


def test_config_and_limit_errors_name_the_value_and_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[gate]\nminimum = 1\n")
    with pytest.raises(
        ConfigError,
        match=r"unknown key 'gate.minimum'; allowed keys in \[gate\]: allow_unread, case_key, max, min,"
        r" min_judge_kappa, tolerance",
    ):
        load_gate_config(bad)
    bad.write_text('[gate.min]\n"grounding.rate" = "high"\n')
    with pytest.raises(
        ConfigError, match=r"bad value for 'gate.min.grounding.rate': Input should be a valid number, got 'high'"
    ):
        load_gate_config(bad)
    bad.write_text("[gate]\ntolerance = -1\n")
    with pytest.raises(
        ConfigError,
        match=r"bad value for 'gate.tolerance': Input should be greater than or equal to 0, got -1 \(absolute slack",
    ):
        load_gate_config(bad)
    with pytest.raises(ConfigError, match=r"bad limit 'grounding.rate'; expected NAME=NUMBER"):
        parse_limit("grounding.rate")
    assert parse_limit(" grounding.rate = 0.85") == ("grounding.rate", 0.85)
    result = CliRunner().invoke(main, ["gate", "x.jsonl", "--min", "recall=high"])
    assert result.exit_code == 2 and "bad limit 'recall=high'" in result.output
    missing = CliRunner().invoke(main, ["gate", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2 and "no result file" in missing.output  # a missing input: a bad argument
    empty = write(tmp_path / "empty.jsonl", [])
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    no_baseline = CliRunner().invoke(main, ["gate", str(now), "--baseline", str(empty)])
    assert no_baseline.exit_code == CANNOT_RUN
    assert f"baseline {empty} is empty: no result line to read" in no_baseline.output


# -- acceptance 3: the noise band ------------------------------------------------------------------------------


def support_run(run: str, rate: float, n: int = 50) -> list[dict[str, Any]]:
    """n cases whose citation.support_rate varies per case (±0.05) around ``rate``, with mean exactly ``rate``."""
    return [case_line(f"q{i:02d}", run=run, support=rate + (0.05 if i % 2 else -0.05)) for i in range(n)]


BASELINE_RATES = [0.88, 0.86, 0.90, 0.87, 0.89]  # spread over 4 points: 0.86–0.90, mean 0.88


@pytest.fixture(scope="module")
def trusted(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A store where the judge of these lines is calibrated (kappa 0.75): its judged scores may fail the gate."""
    return calibrated_store(tmp_path_factory.mktemp("cal") / "s.db", accuracy=0.82, seed=6)[0]


def test_noise_band_two_points_lower_passes_ten_points_lower_fails(tmp_path: Path, trusted: Store) -> None:
    baselines = [support_run(f"b{i}", r) for i, r in enumerate(BASELINE_RATES)]
    within = gate(tmp_path, support_run("now", 0.86), baselines, "--store", str(trusted.path))
    assert within.exit_code == 0, within.md
    assert "Noise band from 5 baseline runs: citation.support_rate 0.860–0.900 (4.0 pts)" in within.md

    below = gate(tmp_path, support_run("now", 0.78), baselines, "--store", str(trusted.path))
    assert below.exit_code == 1
    fails = failed_cases(below.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.regression", "regression: citation.support_rate")]
    assert "citation.support_rate = 0.780, outside the band 0.860–0.900 over 5 baseline run(s), 4.0 pts" in below.md
    assert "needs ≥ 0.860" in fails[0][2]  # the limit is in the message, not in the test name
    assert "| ❌ no regression (noise band) | citation.support_rate | 0.78 | ≥ 0.860 (band 0.860–0.900, 4.0 pts) |" in (
        below.md
    )


def test_a_single_baseline_gives_a_zero_width_band_and_tolerance_widens_it(tmp_path: Path, trusted: Store) -> None:
    # one case of 50 flipping moves the mean by 0.02 (#43 item 6): the zero-width band is widened by that much
    inside = gate(tmp_path, support_run("now", 0.87), [support_run("b", 0.88)], "--store", str(trusted.path))
    assert inside.exit_code == 0, inside.md
    one = gate(tmp_path, support_run("now", 0.85), [support_run("b", 0.88)], "--store", str(trusted.path))
    assert one.exit_code == 1
    assert "one baseline run, an estimate from one run" in one.md and "repeat --baseline" in one.md
    assert "widened by one case flipping, 2.0 pts" in one.md
    tolerant = gate(tmp_path, support_run("now", 0.85), [support_run("b", 0.88)], "--tolerance", "0.02")
    assert tolerant.exit_code == 0, tolerant.md


def test_lower_is_better_scores_regress_upwards(trusted: Store) -> None:
    def run(name: str, rate: float) -> list[dict[str, Any]]:
        return [case_line(f"q{i}", run=name, hallucination=rate) for i in range(4)]

    baselines = [run("b1", 0.10), run("b2", 0.14)]
    assert run_gate(run("now", 0.05), baselines).passed  # better than the band
    assert run_gate(run("now", 0.14), baselines).passed  # at its edge
    worse = run_gate(run("now", 0.20), baselines, store=trusted)
    assert [(c.rule, c.subject, c.limit) for c in worse.failures] == [
        ("regression", "grounding.hallucination_rate", "≤ 0.140")
    ]


def test_markdown_summary_fits_one_screen_with_many_failures() -> None:
    current = [case_line(f"q{i}", fabricated=1.0, unread=1.0, run="now") for i in range(200)]
    outcome = run_gate(current, [], GateConfig(minimums={"grounding.rate": 0.8}))
    md = render_gate_markdown(outcome)
    assert len(md.splitlines()) <= 40
    assert "… and 192 more (see the JUnit report)" in md


def test_gate_on_stored_runs_of_the_sample_traces(tmp_path: Path) -> None:
    samples = str(Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl")
    store = str(tmp_path / "ts.db")
    for _ in range(2):
        assert CliRunner().invoke(main, ["score", samples, "--store", store, "-q"]).exit_code == 0
    args = ["gate", "run:latest", "--baseline", "run:latest~1", "--store", store, "--junit", str(tmp_path / "j.xml")]
    result = CliRunner().invoke(main, [*args, "--allow-unread"], catch_exceptions=False)
    assert result.exit_code == 1
    fails = failed_cases(ET.parse(tmp_path / "j.xml").getroot())
    assert [c for c, _, _ in fails] == ["tracescore.gate.fabricated"]  # same agent, same cases: nothing else moved
    assert "tr-0010\tstage=citations" in fails[0][2] and "tr-0029\tstage=citations" in fails[0][2]
    assert "38 traces in run " in result.output and "1 baseline run(s)" in result.output


# -- issue #10.1: the gate cannot pass on nothing --------------------------------------------------------------


def _nothing_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Files that hold no scored trace, and the reason each must be named by."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n\n")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\x01\xff\xfebinary\n\x89PNG\r\n\x1a\n" * 5 + b"{not json\n")
    errors_only = write(
        tmp_path / "errors.jsonl",
        [{"trace_id": None, "scores": {}, "missing": {}, "errors": [f"line {i}: not JSON"]} for i in (1, 2)],
    )
    return {
        "empty": (empty, "is empty: no result line to read"),
        "blank lines": (blank, "is empty: no result line to read"),
        "binary garbage": (garbage, "none of its 16 line(s) could be read (line 1: not JSON (binary data); line 2"),
        "a traces file": (SAMPLES, "is a traces file, not a results file (38 of 38 line(s) are trace lines)"),
        "only error lines": (errors_only, "holds no scored trace: all 2 result line(s) are errors (line 1: not JSON"),
    }


@pytest.mark.parametrize("kind", ["empty", "blank lines", "binary garbage", "a traces file", "only error lines"])
def test_gate_and_report_refuse_a_file_with_no_scored_trace(tmp_path: Path, kind: str) -> None:
    path, reason = _nothing_files(tmp_path)[kind]
    for command in (
        ["gate", str(path)],
        ["gate", str(path), "--min", "retrieval.recall_at_5=0.5"],
        ["report", str(path)],
    ):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == CANNOT_RUN, (command, result.output)
        assert reason in result.output, (command, result.output)
        assert "passed" not in result.output and "nothing to fix" not in result.output
    # the same file given as a baseline is named as the baseline
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    as_baseline = CliRunner().invoke(main, ["gate", str(now), "--baseline", str(path)])
    assert as_baseline.exit_code == CANNOT_RUN and f"baseline {path} " in as_baseline.output


def test_a_traces_file_tells_to_score_it_first(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(SAMPLES)])
    assert result.exit_code == CANNOT_RUN
    assert f"score it first: tracescore score {SAMPLES} --out results.jsonl" in result.output


def test_gate_on_nothing_raises_in_the_library_too() -> None:
    with pytest.raises(NoResultsError, match="holds no scored trace: nothing to gate"):
        run_gate([], [clean_run("base")])
    unreadable = [{"trace_id": None, "errors": ["line 1: not JSON"], "line": 1}]
    with pytest.raises(NoResultsError, match="nothing to gate"):
        run_gate(unreadable, [clean_run("base")])


def test_unreadable_lines_among_good_ones_fail_the_gate_and_are_listed(tmp_path: Path) -> None:
    path = write(tmp_path / "now.jsonl", clean_run("now"))
    with path.open("ab") as fh:
        fh.write(b"\x00\xffgarbage\n")
        fh.write(b'{"question": "a trace line by mistake", "steps": []}\n')
        fh.write(json.dumps(case_line("c9")).encode()[:60] + b"\n")  # cut short
        fh.write(b"[" * 50_000 + b"]" * 50_000 + b"\n")  # deeper than the parser goes: reported, no crash
    junit = tmp_path / "gate.xml"
    result = CliRunner().invoke(main, ["gate", str(path), "--junit", str(junit)])
    assert result.exit_code == RULE_FAILED, result.output
    assert "6 traces in" in result.output and ", 4 unreadable" in result.output
    assert "| ❌ every result line read | results | 4 | = 0 |" in result.output
    assert "**every result line read — results**: 4 of 10 result line(s) could not be read or scored" in result.output
    assert "  - `line 7` — stage **unreadable**: " in result.output and "not JSON (binary data)" in result.output
    assert (
        "  - `line 8` — stage **unreadable**: " in result.output and "a trace line, not a result line" in result.output
    )
    assert "  - `line 9` — stage **unreadable**: " in result.output
    assert "not JSON (truncated: the line ends before its JSON does)" in result.output
    assert "  - `line 10` — stage **unreadable**: " in result.output and "nested too deeply to read" in result.output
    fails = failed_cases(ET.parse(junit).getroot())
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.readable", "readable: results")]
    assert fails[0][2].splitlines()[0].startswith("line 7\tstage=unreadable\t")


# -- issue #10.1: a score name the catalog does not hold ---------------------------------------------------------


def test_unknown_score_name_is_an_error_naming_the_closest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    typo = CliRunner().invoke(main, ["gate", str(now), "--min", "retrieval.recal_at_5=0.9"])
    assert typo.exit_code == BAD_CONFIG, typo.output
    assert "unknown score 'retrieval.recal_at_5'; did you mean retrieval.recall_at_5?" in typo.output
    assert "never scored" not in typo.output
    maxed = CliRunner().invoke(main, ["gate", str(now), "--max", "grounding.halucination_rate=0.1"])
    assert maxed.exit_code == BAD_CONFIG
    assert "unknown score 'grounding.halucination_rate'; did you mean grounding.hallucination_rate?" in maxed.output
    (tmp_path / "tracescore.toml").write_text('[gate.min]\n"citation.coverag" = 0.5\n')
    monkeypatch.chdir(tmp_path)
    from_file = CliRunner().invoke(main, ["gate", "now.jsonl"])
    assert from_file.exit_code == BAD_CONFIG
    assert "unknown score 'citation.coverag'; did you mean citation.coverage?" in from_file.output
    with pytest.raises(ConfigError, match=r"unknown score 'zzz'; see the score catalog in the README"):
        GateConfig(maximums={"zzz": 1.0})
    with pytest.raises(ConfigError, match=r"'diagnosis' is categorical"):
        GateConfig(minimums={"diagnosis": 1.0})
    # any k of recall is a catalog name; a known score that was never computed still fails as "never scored"
    assert GateConfig(minimums={"retrieval.recall_at_10": 0.5}).minimums == {"retrieval.recall_at_10": 0.5}
    (tmp_path / "tracescore.toml").write_text("")
    never = CliRunner().invoke(main, ["gate", "now.jsonl", "--min", "grounding.rate=0.5"])
    assert never.exit_code == RULE_FAILED and "grounding.rate has no value to check: never scored" in never.output


# -- the gate's directions come from the score catalog -------------------------------------------------------------


def test_regression_directions_come_from_the_catalog() -> None:
    from tracescore import catalog

    # citation.fabricated_count is lower-is-better in the catalog: its mean going up is a regression too
    baselines = [clean_run("b1"), clean_run("b2")]
    worse = run_gate(clean_run("now", c1={"fabricated": 3.0}), baselines, GateConfig(case_key="metadata.case_id"))
    regressions = [c for c in worse.checks if c.rule == "regression"]
    assert {c.subject for c in regressions} == {
        n for n in ("retrieval.recall_at_5", "answer.correct", "citation.fabricated_count", "citation.unfetched_rate")
    }
    assert [c.subject for c in regressions if c.failed] == ["citation.fabricated_count"]
    for check in regressions:
        found = catalog.entry(check.subject)
        assert found is not None and check.limit.startswith("≥" if found.direction > 0 else "≤")
    # a score outside the catalog is reported, never regression-checked in a guessed direction
    odd = [
        case_line(f"q{i}", run="now") | {"scores": {"custom.metric": 0.1, "retrieval.recall_at_5": 1.0}}
        for i in range(3)
    ]
    base = [
        case_line(f"q{i}", run="b") | {"scores": {"custom.metric": 0.9, "retrieval.recall_at_5": 1.0}} for i in range(3)
    ]
    assert "custom.metric" not in {c.subject for c in run_gate(odd, [base]).checks}


# -- issue #18.2: a case that vanished is a newly failing case ---------------------------------------------------


def hundred(run: str, skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [case_line(f"case{i:03d}", run=run) for i in range(100) if f"case{i:03d}" not in skip]


def test_a_case_missing_from_the_run_is_newly_failing(tmp_path: Path) -> None:
    baselines = [hundred(f"b{i}") for i in range(5)]
    result = gate(tmp_path, hundred("now", skip=("case007", "case042")), baselines)
    assert result.exit_code == RULE_FAILED, result.output
    detail = "missing from this run; passed retrieval, citations, answer in 5 baseline run(s)"
    for case in ("case007", "case042"):
        assert f"  - `{case}` — stage **missing**: {detail}" in result.md  # Markdown (and the terminal: same text)
        assert f"  - `{case}` — stage **missing**: {detail}" in result.output
    assert "2 case(s) that passed in the baseline fail now, 2 missing from this run" in result.md
    fails = failed_cases(result.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.newly_failing", "newly_failing: cases")]
    assert fails[0][2].splitlines() == [f"case007\tstage=missing\t{detail}", f"case042\tstage=missing\t{detail}"]


def test_a_missing_case_fails_the_stages_that_always_passed_not_its_flaky_one(tmp_path: Path) -> None:
    # case007 got one wrong answer in one baseline run; case042 only shows up in some baseline runs but always passes
    baselines = [hundred("b0"), hundred("b1", skip=("case042",)), hundred("b2")]
    baselines[2][7] = case_line("case007", run="b2", right=False)
    result = gate(tmp_path, hundred("now", skip=("case007", "case042")), baselines)
    assert result.exit_code == RULE_FAILED, result.md
    assert "  - `case007` — stage **missing**: missing from this run; passed retrieval, citations in 3" in result.md
    assert "  - `case042` — stage **missing**: missing from this run; passed retrieval, citations, answer in 2" in (
        result.md
    )


def test_a_vanished_case_whose_answer_was_flaky_is_still_named(tmp_path: Path) -> None:
    """Issue 35.3: retrieval and citations passed in all 5 baselines, the answer flipped in two of them; the case is
    missing from the candidate: its retrieval and citation stages are newly failing (exit 1), not forgotten."""
    baselines = [hundred(f"b{i}") for i in range(5)]
    for i in (1, 3):
        baselines[i][42] = case_line("case042", run=f"b{i}", right=False)
    result = gate(tmp_path, hundred("now", skip=("case042",)), baselines)
    assert result.exit_code == RULE_FAILED, result.output
    detail = "missing from this run; passed retrieval, citations in 5 baseline run(s)"
    assert f"  - `case042` — stage **missing**: {detail}" in result.output
    assert "1 case(s) that passed in the baseline fail now, 1 missing from this run" in result.md
    assert [(c, n) for c, n, _ in failed_cases(result.junit)] == [
        ("tracescore.gate.newly_failing", "newly_failing: cases")
    ]


def test_a_case_failing_every_stage_in_the_baselines_may_go_missing(tmp_path: Path) -> None:
    baselines = [hundred(f"b{i}") for i in range(3)]
    for run in baselines:  # wrong answer and failed retrieval everywhere; citations fail too (fabricated URL)
        run[9] = case_line("case009", run="b", recall=0.5, right=False, fabricated=1.0)
    current = hundred("now", skip=("case009",))
    result = gate(tmp_path, current, baselines)
    assert "`case009`" not in result.md  # nothing of it ever passed: its absence breaks nothing


@pytest.mark.parametrize("candidate", ["empty", "fully unreadable"])
def test_five_baselines_and_an_empty_candidate_never_pass(tmp_path: Path, candidate: str) -> None:
    now = tmp_path / "now.jsonl"
    now.write_bytes(b"" if candidate == "empty" else b"\x00\x9c\xff garbage\n" * 100)
    args = ["gate", str(now), "--case-key", "metadata.case_id"]
    for i in range(5):
        args += ["--baseline", str(write(tmp_path / f"b{i}.jsonl", hundred(f"b{i}")))]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == CANNOT_RUN, result.output
    assert "passed" not in result.output


def test_default_trace_id_key_with_no_case_in_common_warns_instead_of_listing_every_case(tmp_path: Path) -> None:
    args = ["gate", str(write(tmp_path / "now.jsonl", hundred("now")))]
    args += ["--baseline", str(write(tmp_path / "b.jsonl", hundred("b"))), "--junit", str(tmp_path / "j.xml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == PASSED, result.output
    assert "⚠️ no newly failing case" in result.output
    assert "no case of this run is in the baselines by trace_id (new trace ids each run?); set --case-key" in (
        result.output
    )


# -- issue #18.3: JUnit test names do not move with the baselines -------------------------------------------------


def test_junit_test_names_are_stable_when_the_baselines_move() -> None:
    def names(baselines: list[list[dict[str, Any]]]) -> list[str]:
        config = GateConfig(minimums={"citation.support_rate": 0.95}, maximums={"citation.support_rate": 0.99})
        junit = ET.fromstring(render_junit(run_gate(support_run("now", 0.80), baselines, config)))
        return [f"{tc.get('classname')}/{tc.get('name')}" for tc in junit.iter("testcase")]

    first = names([support_run(f"b{i}", r) for i, r in enumerate(BASELINE_RATES)])
    moved = names([support_run("b9", 0.70)])
    assert first == moved
    assert "tracescore.gate.regression/regression: citation.support_rate" in first
    assert "tracescore.gate.threshold/min: citation.support_rate" in first
    assert "tracescore.gate.threshold/max: citation.support_rate" in first
    assert not any(ch.isdigit() for name in first for ch in name.replace("recall_at_5", ""))


# -- exit codes: rule failed ≠ could not run ≠ bad config ------------------------------------------------------


def test_exit_codes_say_which_kind_of_failure(tmp_path: Path) -> None:
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    base = write(tmp_path / "base.jsonl", clean_run("base"))
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("[gate]\ntolerance = -1\n")
    cases = {
        PASSED: [["gate", str(now), "--baseline", str(base)]],
        RULE_FAILED: [["gate", str(now), "--min", "retrieval.recall_at_5=0.99"]],
        BAD_CONFIG: [
            ["gate", str(now), "--min", "recall=high"],
            ["gate", str(now), "--min", "retrieval.recal_at_5=0.9"],
            ["gate", str(now), "--config", str(bad_toml)],
            # a missing input is a bad argument, the same code for every command (issue #35)
            ["gate", str(now), "--baseline", str(tmp_path / "gone.jsonl")],
            ["gate", str(now), "--baseline", "run:latest", "--store", str(tmp_path / "none.db")],
            ["report", str(tmp_path / "gone.jsonl")],
        ],
        CANNOT_RUN: [
            ["gate", str(SAMPLES)],
            ["report", str(SAMPLES)],
        ],
        OutputError.exit_code: [  # an output that cannot be written (issue #45 item 4)
            ["gate", str(now), "--markdown", str(tmp_path / "no-such-dir" / "gate.md")],
        ],
    }
    for code, commands in cases.items():
        for command in commands:
            result = CliRunner().invoke(main, command)
            assert result.exit_code == code, (command, result.output)
