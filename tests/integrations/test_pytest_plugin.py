"""#30 item 3 / acceptance 3: the pytest plugin, loaded through its ``pytest11`` entry point by a real pytest.

The cookbook's sample suite (``cookbook/pytest_suite``: five agent traces, two of which break a stage) fails exactly
those two, naming the stage, the score, its value, the limit and the comment, with ``pytest`` and with ``pytest -n 2``;
``--tracescore-out`` writes what ``tracescore score --out`` writes for those traces, byte for byte, and ``tracescore
gate`` against the baseline run's output finds the same two cases newly failing, on the same stages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.docs_pages import page
from tests.integrations.pytest_runs import SRC, SUITE, entry_points, run_pytest
from tracescore.cli.main import main

BROKEN = {
    "test_agent_answers_from_the_right_sources[tr-0001]": (
        "trace tr-0001: 1 stage(s) broken\n  retrieval: retrieval.recall_at_5 = 0 (needs ≥ 1): missing required docs"
        " in top 5: policy-shipping-v2"
    ),
    "test_agent_answers_from_the_right_sources[tr-0008]": (
        "trace tr-0008: 1 stage(s) broken\n  citations: citation.fabricated_count = 1 (needs ≤ 0): cited but never"
        " seen in any search result or fetch: https://en.wikipedia.org/wiki/History_of_penicillin_discovery"
    ),
}


def _score_out(tmp: Path, run: str) -> bytes:
    """``tracescore score runs/<run>.jsonl --out`` (no judge): what the plugin's result file must hold."""
    out = tmp / f"score-{run}.jsonl"
    done = CliRunner().invoke(main, ["score", str(SUITE / "runs" / f"{run}.jsonl"), "--out", str(out), "--store",
                                     str(tmp / "score.db"), "-q"], env={"ANTHROPIC_API_KEY": ""})  # fmt: skip
    assert done.exit_code == 0, done.output
    return out.read_bytes()


def test_the_plugin_is_declared_as_a_pytest11_entry_point() -> None:
    assert entry_points() == {"tracescore": "tracescore.integrations.pytest_plugin"}


def test_the_readme_shows_the_cookbook_suite_and_the_commands_run_here() -> None:
    readme = page("guides/pytest.md")
    section = readme.split("## pytest: agent tests that fail on the broken stage", 1)[1].split("\n## ", 1)[0]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert example in (SUITE / "test_agent.py").read_text(encoding="utf-8")  # the README's test is the cookbook's
    assert BROKEN["test_agent_answers_from_the_right_sources[tr-0001]"] in section  # the failure it shows
    shown = [line for line in section.split("```bash\n", 1)[1].split("```")[0].splitlines() if line.strip()]
    assert [line.split("  #", 1)[0].strip() for line in shown] == [  # what the test below runs (its files in tmp)
        "AGENT_RUN=baseline pytest cookbook/pytest_suite --tracescore-out baseline.jsonl",
        "pytest cookbook/pytest_suite --tracescore-out results.jsonl",
        "pytest cookbook/pytest_suite -n 2 --tracescore-out results.jsonl",
        "tracescore gate results.jsonl --baseline baseline.jsonl",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist-2"])
def test_the_sample_suite_fails_exactly_the_two_broken_traces_and_gate_agrees(tmp_path: Path,
                                                                              workers: list[str]) -> None:
    env = {"ANTHROPIC_API_KEY": ""}
    before = run_pytest(tmp_path, str(SUITE), "--tracescore-out", "baseline.jsonl", *workers,
                        env=env | {"AGENT_RUN": "baseline"})  # fmt: skip
    assert before.code == 0 and "5 passed" in before.out, before.out
    now = run_pytest(tmp_path, str(SUITE), "--tracescore-out", "results.jsonl", *workers, env=env)
    assert now.code == 1, now.out
    assert now.failed == set(BROKEN), now.out
    assert "3 passed" in now.out and "2 failed" in now.out
    for message in BROKEN.values():
        assert message in now.out, now.out
    if workers:
        assert "bringing up nodes" in now.out, now.out  # xdist ran the tests in its workers
    assert f"tracescore: 5 trace(s) checked; 5 result line(s) in {tmp_path / 'results.jsonl'}" in now.out
    assert "judge " not in now.out  # nothing judged: no usage line
    # the result lines are `tracescore score --out`'s for the same traces, byte for byte, whichever the workers
    assert (tmp_path / "results.jsonl").read_bytes() == _score_out(tmp_path, "candidate")
    assert (tmp_path / "baseline.jsonl").read_bytes() == _score_out(tmp_path, "baseline")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.jsonl", "results.jsonl", "score-baseline.jsonl",
                                                          "score-candidate.jsonl", "score.db", "site"]  # fmt: skip
    # the gate on the session's output against the baseline session's: the same two cases, the same stages
    gate = CliRunner().invoke(main, ["gate", str(tmp_path / "results.jsonl"), "--baseline",
                                     str(tmp_path / "baseline.jsonl")])  # fmt: skip
    assert gate.exit_code == 1, gate.output
    assert "**no newly failing case — cases**: 2 case(s) that passed in the baseline fail now" in gate.output
    failing = [line for line in gate.output.splitlines() if "— stage **" in line and "passed in" in line]
    assert failing == ["  - `tr-0001` — stage **retrieval**: passed in 1 baseline run(s)",
                       "  - `tr-0008` — stage **citations**: passed in 1 baseline run(s)"]  # fmt: skip


def test_an_absent_score_a_limit_names_fails_with_its_reason_or_skips(tmp_path: Path) -> None:
    trace = json.loads((SUITE / "runs" / "baseline.jsonl").read_text(encoding="utf-8").splitlines()[0])
    (tmp_path / "test_absent.py").write_text(
        "TRACE = " + repr(trace) + "\n"
        "def test_fails(tracescore):\n"
        "    tracescore.check(TRACE, min={'grounding.rate': 0.9, 'retrieval.recall_at_5': 1.0})\n"
        "def test_skips(tracescore):\n"
        "    tracescore.check(TRACE, min={'grounding.rate': 0.9}, absent='skip')\n"
        "def test_broken_beats_skip(tracescore):\n"
        "    tracescore.check(TRACE, min={'grounding.rate': 0.9}, max={'citation.coverage': 0.5},\n"
        "                     absent='skip')\n"
        "def test_passes_and_returns_the_result(tracescore):\n"
        "    result = tracescore.check(TRACE, min={'retrieval.recall_at_5': 1.0}, max={'citation.unfetched_rate': 0})\n"
        "    assert result.scores['retrieval.recall_at_5'].value == 1.0\n"
        "def test_unknown_name(tracescore):\n"
        "    tracescore.check(TRACE, min={'retrieval.recal_at_5': 1.0})\n"
        "def test_not_a_trace(tracescore):\n"
        "    tracescore.check({'id': 'x', 'steps': 'nope'}, min={'retrieval.recall_at_5': 1.0})\n",
        encoding="utf-8",
    )
    ran = run_pytest(tmp_path, "test_absent.py", env={"ANTHROPIC_API_KEY": ""})
    assert ran.failed == {"test_fails", "test_broken_beats_skip", "test_unknown_name", "test_not_a_trace"}, ran.out
    assert ("trace tr-0000: 1 stage(s) broken\n  grounding: grounding.rate absent (needs ≥ 0.9): no judge configured\n"
            ) in ran.out  # the one absent stage; the retrieval limit held  # fmt: skip
    assert ran.skipped == ["test_absent.py:5: trace tr-0000: grounding.rate absent (needs ≥ 0.9): no judge configured"]
    # absent="skip" with a broken stage: it fails on that stage alone
    assert "trace tr-0000: 1 stage(s) broken\n  citations: citation.coverage = 1 (needs ≤ 0.5)\n" in ran.out
    assert "\ntracescore.check: unknown score 'retrieval.recal_at_5'; did you mean retrieval.recall_at_5?\n" in ran.out
    assert "\ntrace x not scored: record: wrong value at steps: Input should be a valid list\n" in ran.out
    assert "1 passed" in ran.out
    bad = run_pytest(tmp_path, "test_absent.py", "--tracescore-out", "nowhere/results.jsonl")
    assert bad.code == 4 and f"--tracescore-out {tmp_path / 'nowhere/results.jsonl'}: no such folder" in bad.out


def test_importing_tracescore_and_its_integrations_never_imports_pytest(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import tracescore, tracescore.integrations.langsmith, tracescore.integrations.langfuse\n"
        "import tracescore.integrations.session, tracescore.integrations.checks, tracescore.integrations.records\n"
        "from tracescore.cli import main\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'pluggy', 'xdist')))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env=env)  # fmt: skip
    assert out.stdout.strip() == "[]"
