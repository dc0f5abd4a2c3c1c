"""`tracescore gate`: each rule fails on its own and names rule, stage and cases; the noise band absorbs noise only."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.cli import main
from tracescore.errors import ConfigError
from tracescore.report.gate import GateConfig, direction, load_gate_config, parse_limit, run_gate
from tracescore.report.render import render_gate_markdown


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
            "retrieval.recall_at_5 ≥ 0.95",
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
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.threshold", "grounding.rate ≥ 0.85")]
    assert "grounding.rate has no value to check: never scored" in fails[0][2]


def test_newly_failing_case_fails_alone_and_names_case_and_stage(tmp_path: Path) -> None:
    # c3's answer breaks; c5's answer was wrong in the baseline and is right now: the means do not move.
    baseline = clean_run("base", c5={"right": False})
    current = clean_run("now", c3={"right": False})
    result = gate(tmp_path, current, [baseline])
    assert result.exit_code == 1
    fails = failed_cases(result.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.newly_failing", "cases = 0")]
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
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.fabricated", "citation.fabricated_count = 0")]
    assert fails[0][2] == "c4\tstage=citations\ttrace=now-c4\t2 fabricated cited URL(s)"
    assert "| ❌ no fabricated citation | citation.fabricated_count | 1 | = 0 |" in result.md
    assert "  - `c4` — stage **citations** (trace `now-c4`): 2 fabricated cited URL(s)" in result.md


def test_unread_citation_fails_unless_allowed(tmp_path: Path) -> None:
    baseline = clean_run("base", c2={"unread": 0.5})
    current = clean_run("now", c2={"unread": 0.5})
    strict = gate(tmp_path, current, [baseline])
    assert strict.exit_code == 1
    assert [(c, n) for c, n, _ in failed_cases(strict.junit)] == [
        ("tracescore.gate.unread", "citation.unfetched_rate = 0")
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
        "tracescore.gate.newly_failing",
        "tracescore.gate.regression",  # citation.unfetched_rate mean went up
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
        match=r"unknown key 'gate.minimum'; allowed keys in \[gate\]: allow_unread, case_key, max, min, tolerance",
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
    assert missing.exit_code == 6 and "no result file" in missing.output
    empty = write(tmp_path / "empty.jsonl", [])
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    no_baseline = CliRunner().invoke(main, ["gate", str(now), "--baseline", str(empty)])
    assert no_baseline.exit_code == 6  # could not run ≠ a rule failed (1)
    assert f"baseline {empty} holds no scored result; check the file or the run id" in no_baseline.output


# -- acceptance 3: the noise band ------------------------------------------------------------------------------


def support_run(run: str, rate: float, n: int = 50) -> list[dict[str, Any]]:
    """n cases whose citation.support_rate varies per case (±0.05) around ``rate``, with mean exactly ``rate``."""
    return [case_line(f"q{i:02d}", run=run, support=rate + (0.05 if i % 2 else -0.05)) for i in range(n)]


BASELINE_RATES = [0.88, 0.86, 0.90, 0.87, 0.89]  # spread over 4 points: 0.86–0.90, mean 0.88


def test_noise_band_two_points_lower_passes_ten_points_lower_fails(tmp_path: Path) -> None:
    baselines = [support_run(f"b{i}", r) for i, r in enumerate(BASELINE_RATES)]
    within = gate(tmp_path, support_run("now", 0.86), baselines)
    assert within.exit_code == 0, within.md
    assert "Noise band from 5 baseline runs: citation.support_rate 0.860–0.900 (4.0 pts)" in within.md

    below = gate(tmp_path, support_run("now", 0.78), baselines)
    assert below.exit_code == 1
    fails = failed_cases(below.junit)
    assert [(c, n) for c, n, _ in fails] == [("tracescore.gate.regression", "citation.support_rate ≥ 0.860")]
    assert "citation.support_rate = 0.780, outside the band 0.860–0.900 over 5 baseline run(s), 4.0 pts" in below.md
    assert "| ❌ no regression (noise band) | citation.support_rate | 0.78 | ≥ 0.860 (band 0.860–0.900, 4.0 pts) |" in (
        below.md
    )


def test_a_single_baseline_gives_a_zero_width_band_and_tolerance_widens_it(tmp_path: Path) -> None:
    one = gate(tmp_path, support_run("now", 0.87), [support_run("b", 0.88)])
    assert one.exit_code == 1
    assert "one baseline run, so zero width; repeat --baseline" in one.md
    tolerant = gate(tmp_path, support_run("now", 0.87), [support_run("b", 0.88)], "--tolerance", "0.02")
    assert tolerant.exit_code == 0, tolerant.md


def test_lower_is_better_scores_regress_upwards() -> None:
    def run(name: str, rate: float) -> list[dict[str, Any]]:
        return [case_line(f"q{i}", run=name, hallucination=rate) for i in range(4)]

    baselines = [run("b1", 0.10), run("b2", 0.14)]
    assert run_gate(run("now", 0.05), baselines).passed  # better than the band
    assert run_gate(run("now", 0.14), baselines).passed  # at its edge
    worse = run_gate(run("now", 0.20), baselines)
    assert [(c.rule, c.subject, c.limit) for c in worse.failures] == [
        ("regression", "grounding.hallucination_rate", "≤ 0.140")
    ]
    assert direction("retrieval.recall_at_10") == 1 and direction("retrieval.first_hit_rank") == -1
    assert direction("diagnosis") == 0


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
