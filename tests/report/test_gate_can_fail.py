"""Every gate rule can fail: a run whose scores are all absent, a score the baselines had and this run lost, a stage
that passed before and is undecided now, citation rules that could check no trace, and limits that could never fail."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.docs_pages import built
from tests.report.test_gate import BAD_CONFIG, CANNOT_RUN, PASSED, RULE_FAILED, case_line, clean_run, write
from tracescore import catalog
from tracescore.cli import main
from tracescore.errors import ConfigError, NoResultsError
from tracescore.report.gate import GateConfig, load_gate_config, parse_limit, run_gate

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
NO_JUDGE = "judge turned off (--no-judge)"


def absent_line(trace_id: str, **reasons: str) -> dict[str, Any]:
    """A readable result line whose every score is absent (what `score --no-judge` writes for an empty trace)."""
    missing = {
        "retrieval.recall_at_5": "no search step in trace",
        "citation.fabricated_count": "empty answer",
        "citation.unfetched_rate": "empty answer",
        "answer.correct": "no expected_answer_contains or expect_refusal label",
        "grounding.rate": NO_JUDGE,
        "diagnosis": "retrieval undecided: no search step in trace",
    } | reasons
    return {"trace_id": trace_id, "scores": {}, "missing": missing, "errors": [], "metadata": {"case_id": trace_id}}


def test_a_run_whose_every_score_is_absent_cannot_be_gated(tmp_path: Path) -> None:
    lines = [absent_line(f"t{i}") for i in range(3)]
    with pytest.raises(NoResultsError, match=r"every score is absent in all 3 trace\(s\) \(top reason: .*nothing to"):
        run_gate(lines)
    path = write(tmp_path / "absent.jsonl", lines)
    result = CliRunner().invoke(main, ["gate", str(path)])
    assert result.exit_code == CANNOT_RUN and "holds no score value" in result.output, result.output
    assert "passed" not in result.output
    # as a baseline it is named, and a run with one value among absent lines is gated as usual
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    as_baseline = CliRunner().invoke(main, ["gate", str(now), "--baseline", str(path)])
    assert as_baseline.exit_code == CANNOT_RUN and f"baseline {path} holds no score value" in as_baseline.output
    assert run_gate([*lines, case_line("c1")]).traces == 4


def test_citation_rules_fail_when_no_trace_could_be_checked_and_warn_when_some_could_not() -> None:
    blind = "search step(s) could not be read (web_search: not JSON); a cited URL may have come from it"
    line = case_line("c1")
    unchecked = {**line, "scores": {k: v for k, v in line["scores"].items() if k != "citation.fabricated_count"}}
    unchecked["missing"] = {"citation.fabricated_count": blind}
    outcome = run_gate([unchecked, {**unchecked, "trace_id": "r-c2"}])
    [fabricated] = [c for c in outcome.checks if c.rule == "fabricated"]
    assert fabricated.status == "fail" and not outcome.passed
    assert fabricated.message == (
        f"citation.fabricated_count could not be checked in any of the 2 trace(s) (top reason: {blind})"
    )
    # one trace checked, one not: the rule passes what it checked and warns about the rest
    some = run_gate([unchecked, case_line("c2")])
    [fabricated] = [c for c in some.checks if c.rule == "fabricated"]
    assert fabricated.status == "warn" and some.passed
    assert fabricated.message.startswith("no fabricated cited URL in 1 checked trace(s); 1 could not be checked")
    # an answer that cites nothing was checked: nothing in it can be unread or made up
    quiet = {**line, "scores": {"retrieval.recall_at_5": 1.0, "citation.fabricated_count": 0.0}}
    quiet["missing"] = {"citation.unfetched_rate": "answer cites no URL or doc id"}
    checks = {c.rule: c for c in run_gate([quiet]).checks}
    assert checks["fabricated"].status == checks["unread"].status == "pass"
    # a results file that never scored the citations at all cannot vouch for them
    bare = [{"trace_id": "t", "scores": {"answer.correct": True}, "missing": {}, "errors": []}]
    checks = {c.rule: c for c in run_gate(bare).checks}
    assert checks["fabricated"].status == "fail" and "(top reason: not scored)" in checks["fabricated"].message
    allowed = run_gate(bare, config=GateConfig(allow_unread=True))
    assert {c.rule: c.status for c in allowed.checks}["unread"] == "warn"


def test_a_score_the_baselines_had_and_this_run_lost_is_a_regression(tmp_path: Path) -> None:
    now = clean_run("now")
    for line in now:
        line["missing"] = {"retrieval.recall_at_5": "no search step in trace"}
        del line["scores"]["retrieval.recall_at_5"]
    outcome = run_gate(now, [clean_run("base")])
    [lost] = [c for c in outcome.checks if c.rule == "regression" and c.subject == "retrieval.recall_at_5"]
    assert lost.status == "fail" and lost.observed is None
    assert lost.message.startswith(
        "retrieval.recall_at_5 has no value in this run (absent in all 6 traces (top reason: no search step in trace))"
    )
    assert "band 0.917–0.917 over 1 baseline run(s)" in lost.message
    # a name this run never wrote at all (another k) fails the same way
    renamed = clean_run("now")
    for line in renamed:
        line["scores"]["retrieval.recall_at_10"] = line["scores"].pop("retrieval.recall_at_5")
    [gone] = [c for c in run_gate(renamed, [clean_run("base")]).checks if c.subject == "retrieval.recall_at_5"]
    assert gone.status == "fail" and "has no value in this run (never scored)" in gone.message


def test_a_stage_that_passed_in_every_baseline_and_is_undecided_now_is_newly_failing() -> None:
    now = clean_run("now")
    del now[0]["scores"]["answer.correct"], now[0]["scores"]["diagnosis"]
    now[0]["missing"] = {"answer.correct": "no expected_answer_contains or expect_refusal label"}
    outcome = run_gate(now, [clean_run("base")], GateConfig(case_key="metadata.case_id"))
    [newly] = [c for c in outcome.checks if c.rule == "newly_failing"]
    assert newly.status == "fail"
    stages = {(c.case, c.stage): c.detail for c in newly.cases}
    assert stages[("c1", "answer")] == (
        "undecided now (answer.correct: no expected_answer_contains or expect_refusal label);"
        " passed in 1 baseline run(s)"
    )
    assert "stage(s) undecided now" in newly.message
    assert run_gate(clean_run("now"), [clean_run("base")], GateConfig(case_key="metadata.case_id")).passed


@pytest.mark.parametrize(
    ("limit", "why"),
    [
        ("retrieval.recall_at_5=-inf", "outside the score's range (0..1)"),
        ("retrieval.recall_at_5=inf", "outside the score's range (0..1)"),
        ("retrieval.recall_at_5=-5", "outside the score's range (0..1)"),
        ("retrieval.recall_at_5=1.5", "outside the score's range (0..1)"),
        ("retrieval.first_hit_rank=0", "outside the score's range (≥ 1)"),
        ("citation.fabricated_count=-1", "outside the score's range (≥ 0)"),
        ("retrieval.recall_at_5=0", "can never fail: the score's values lie in 0..1"),
        ("retrieval.first_hit_rank=1", "can never fail: the score's values lie in ≥ 1"),
    ],
)
def test_a_limit_that_could_never_fail_is_a_config_error(tmp_path: Path, limit: str, why: str) -> None:
    name, value = parse_limit(limit)
    sign = -1 if "fabricated" in name or limit == "retrieval.recall_at_5=inf" else +1
    option = "--max" if sign < 0 else "--min"
    with pytest.raises(ConfigError, match=re.escape(why)):
        GateConfig(maximums={name: value}) if sign < 0 else GateConfig(minimums={name: value})
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    result = CliRunner().invoke(main, ["gate", str(now), option, limit])
    assert result.exit_code == BAD_CONFIG and why in result.output, result.output
    assert math.isfinite(value) or "inf" in limit


def test_limits_at_the_other_edge_and_inside_are_kept(tmp_path: Path) -> None:
    config = GateConfig(
        minimums={"retrieval.recall_at_5": 1.0, "retrieval.first_hit_rank": 2.0},
        maximums={"citation.fabricated_count": 0.0, "citation.coverage": 0.0, "retrieval.first_hit_rank": 3.0},
    )
    assert config.minimums["retrieval.recall_at_5"] == 1.0
    now = write(tmp_path / "now.jsonl", clean_run("now"))
    ok = CliRunner().invoke(main, ["gate", str(now), "--max", "citation.fabricated_count=0"])
    assert ok.exit_code == PASSED, ok.output
    failing = CliRunner().invoke(main, ["gate", str(now), "--min", "retrieval.recall_at_5=1"])
    assert failing.exit_code == RULE_FAILED, failing.output


def test_a_toml_limit_that_is_not_finite_is_a_config_error(tmp_path: Path) -> None:
    for raw in ("nan", "inf", "-inf"):
        bad = tmp_path / "tracescore.toml"
        bad.write_text(f'[gate.min]\n"citation.coverage" = {raw}\n')
        with pytest.raises(ConfigError, match=r"limit citation.coverage ≥ -?(nan|inf) is outside the score's range"):
            load_gate_config(bad)
        now = write(tmp_path / "now.jsonl", clean_run("now"))
        result = CliRunner().invoke(main, ["gate", str(now), "--config", str(bad)])
        assert result.exit_code == BAD_CONFIG, result.output


def test_every_catalog_range_is_the_docs_kind_and_range_columns() -> None:
    """The ranges the gate checks limits against are the docs catalog's kind and range, score by score."""
    readme = built("reference/scores.md")
    ranges = {"numeric 0 .. 1": (0.0, 1.0), "boolean 0 .. 1": (0.0, 1.0), "numeric 1 .. ∞": (1.0, math.inf),
              "numeric 0 .. ∞": (0.0, math.inf)}  # fmt: skip
    seen = 0
    for row in re.finditer(r"^\| `([^`]+)` \| (\w+) \| [^|]+ \| ([^|]*?) \|", readme, re.M):
        name, kind = row.group(1), f"{row.group(2)} {row.group(3)}"
        found = catalog.entry(name.replace("{k}", "5"))
        if found is None or found.kind == "CATEGORICAL":
            continue
        assert (found.low, found.high) == ranges[kind], (name, kind)
        seen += 1
    assert seen == sum(1 for e in catalog.entries() if e.kind != "CATEGORICAL")


def test_a_failing_trace_of_a_case_is_not_hidden_by_a_later_passing_one() -> None:
    """Several traces of one case (a question asked twice, or one id written twice): the stage passes only if it passes
    in all of them. The later line used to replace the earlier one, so a passing rerun hid a failure."""
    config = GateConfig(case_key="metadata.case_id")
    now = clean_run("now")
    failing = case_line("c1", run="now-a", right=False)
    for order in ([failing, *now], [*now, failing]):
        outcome = run_gate(order, [clean_run("base")], config)
        [newly] = [c for c in outcome.checks if c.rule == "newly_failing"]
        assert newly.status == "fail", order
        assert [(c.case, c.stage, c.trace_id) for c in newly.cases] == [("c1", "answer", "now-a-c1")]
    # two passing traces of one case stay one passing case
    assert run_gate([case_line("c1", run="x"), *now], [clean_run("base")], config).passed
