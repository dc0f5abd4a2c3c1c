"""``tracescore score`` with the judge: on by default with a key, cached in the store, budgeted, and optional."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.judge.test_anthropic_judge import deprecated_priced_model
from tracescore.cli import main
from tracescore.scorers.grounding import JUDGED_SCORES, NO_JUDGE
from tracescore.store.db import Store

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _run(tmp_path: Path, env: dict[str, str | None], *args: str) -> tuple[int, str, list[dict]]:
    out = tmp_path / "results.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        main, ["score", str(SAMPLES), "--store", str(tmp_path / "t.db"), "--out", str(out), *args], env=env
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result.exit_code, result.output, lines


def _env(fake: FakeAnthropic) -> dict[str, str | None]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}


def test_with_a_key_the_judge_runs_by_default_and_reports_its_cost(fake: FakeAnthropic, tmp_path: Path) -> None:
    code, output, lines = _run(tmp_path, _env(fake))
    assert code == 0
    judged = [r for r in lines if "grounding.rate" in r["scores"]]
    assert len(judged) == 36  # all but the two empty answers
    assert "judge:" in output and "API calls" in output and "~$" in output
    with Store(tmp_path / "t.db") as store:
        (run,) = store.runs()
        assert run["summary"]["judge"]["calls"] == len(fake.messages())
        assert run["summary"]["judge"]["input_tokens"] > 0
        claims = store.claims(run["id"], "tr-0000")
        assert [c["verdict"] for c in claims] == ["supported", "supported"]
        assert claims[0]["doc"] == "policy-returns-v4" and claims[0]["cited"] == [
            "https://help.acme-shop.com/policies/returns"
        ]


def test_per_trace_judge_usage_reaches_result_lines_store_and_report(fake: FakeAnthropic, tmp_path: Path) -> None:
    from tracescore.report.summary import summarize

    _, _, lines = _run(tmp_path, _env(fake))
    usage = [r["judge"] for r in lines if "judge" in r]
    called = [u for u in usage if u["calls"] >= 1]  # summed over the judged stages: grounding, surface, semantic
    assert sum(u["calls"] for u in usage) == len(fake.messages()) and all(u["input_tokens"] > 0 for u in called)
    assert any(u["calls"] > 1 for u in usage)  # a trace whose several stages called the judge counts every call
    assert all(u["input_tokens"] == 0 for u in usage if u["calls"] == 0)  # answered from the cache
    with Store(tmp_path / "t.db") as store:
        (run,) = store.runs()
        stored = list(store.results(run["id"]))
    assert stored == lines  # the store keeps the very lines --out wrote
    total = summarize(stored).judge
    assert total.calls == run["summary"]["judge"]["calls"]
    assert total.input_tokens == run["summary"]["judge"]["input_tokens"]
    assert total.cost_usd == pytest.approx(run["summary"]["judge"]["cost_usd"], abs=1e-5)


def test_scoring_the_same_traces_twice_sends_zero_requests_the_second_time(fake: FakeAnthropic, tmp_path: Path) -> None:
    _, _, first = _run(tmp_path, _env(fake))
    sent = len(fake.messages())
    assert sent > 0
    _, output, second = _run(tmp_path, _env(fake))
    assert len(fake.messages()) == sent  # zero new requests
    assert "judge: 0 API calls" in output
    assert [r["scores"] for r in second] == [r["scores"] for r in first]


def test_without_a_key_judged_scores_are_absent_and_the_run_succeeds(tmp_path: Path) -> None:
    code, output, lines = _run(tmp_path, {"ANTHROPIC_API_KEY": None})
    assert code == 0
    by_id = {r["trace_id"]: r for r in lines}
    assert all(by_id["tr-0000"]["missing"][n] == NO_JUDGE for n in JUDGED_SCORES)
    assert by_id["tr-0000"]["scores"]["retrieval.recall_at_5"] == 1.0
    assert by_id["tr-0000"]["scores"]["citation.coverage"] == 1.0
    assert by_id["tr-0000"]["scores"]["answer.correct"] is True
    judge_lines = [line for line in output.splitlines() if line.startswith("judge:")]
    assert judge_lines == ["judge: off (no ANTHROPIC_API_KEY set)"]  # why, and no usage line (#45)


def test_no_judge_turns_the_judge_off_even_with_a_key(fake: FakeAnthropic, tmp_path: Path) -> None:
    code, _, lines = _run(tmp_path, _env(fake), "--no-judge")
    assert code == 0 and fake.messages() == []
    assert lines[0]["missing"]["grounding.rate"] == "judge turned off (--no-judge)"


def test_max_cost_stops_judging_between_traces_and_reports_the_rest(fake: FakeAnthropic, tmp_path: Path) -> None:
    code, output, lines = _run(tmp_path, _env(fake), "--max-cost", "0.01")
    assert code == 0
    judged = [r["trace_id"] for r in lines if "grounding.rate" in r["scores"]]
    unjudged = [r["trace_id"] for r in lines if r["missing"].get("grounding.rate", "").startswith("judge budget spent")]
    assert 0 < len(judged) < 36 and len(unjudged) > 0
    assert all("retrieval.retrieved_any" in r["scores"] for r in lines)  # deterministic stages still ran
    assert f"{len(unjudged)} traces left unjudged" in output and unjudged[0] in output
    with Store(tmp_path / "t.db") as store:
        assert store.runs()[0]["summary"]["unjudged"] == unjudged


def test_a_deprecated_judge_model_draws_a_warning_with_its_end_of_life(fake: FakeAnthropic, tmp_path: Path) -> None:
    model, end = deprecated_priced_model()
    code, output, _ = _run(tmp_path, _env(fake), "--judge-model", model, "-q")
    assert code == 0
    assert f"judge model '{model}' is deprecated and reaches end of life on {end}" in output
    assert {r.json()["model"] for r in fake.messages()} == {model}


def test_deterministic_scoring_never_imports_the_sdks(tmp_path: Path) -> None:
    code = (
        "import sys; from click.testing import CliRunner; from tracescore.cli import main; "
        f"r = CliRunner().invoke(main, ['score', {str(SAMPLES)!r}, '--store', {str(tmp_path / 'x.db')!r}, '-q']); "
        "assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in ('anthropic', 'rapidfuzz', 'tenacity', 'langfuse', 'langsmith') if m in sys.modules))"
    )
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "[]"


def test_the_store_migration_for_the_judge_is_appended(tmp_path: Path) -> None:
    from tracescore.store.db import MIGRATIONS

    assert [name for name, _ in MIGRATIONS][:2] == ["0001_initial", "0002_judge"]
    with Store(tmp_path / "m.db") as store:
        assert "0002_judge" in store.applied_migrations()
        assert store.judge_cache_get("nope") is None
        store.judge_cache_put("k", model="m", rubric="grounding-1", request="{}", reply='{"claims": []}')
        assert store.judge_cache_get("k") == '{"claims": []}'


def test_max_cost_with_an_unpriced_model_is_refused_with_the_fix(fake: FakeAnthropic, tmp_path: Path) -> None:
    code, output, _ = _run(tmp_path, _env(fake), "--judge-model", "claude-sonnet-5-5", "--max-cost", "1")
    assert code == 2  # a bad option: the exit-code table (cli/exits.py)
    assert "--max-cost / [scoring] max_cost needs a price for judge model 'claude-sonnet-5-5'" in output
    assert fake.messages() == []
