"""#30 item 4 for the pytest plugin: with a judge (the configured one: a key in the environment, as ``score`` builds
it; the real ``anthropic`` SDK against the loopback fake), the judged stages are scored, the judge, its cache and its
budget are the session's, and the terminal summary says once what it spent, summed over xdist workers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.integrations.pytest_runs import SUITE, run_pytest

SPENT = re.compile(r"^tracescore: judge (\S+): (\d+) API calls, (\d+) answered from the cache; (\d+) input tokens,"
                   r" (\d+) output tokens, ~\$([\d.]+)$", re.M)  # fmt: skip


def _suite(tmp: Path) -> None:
    (tmp / "test_judged.py").write_text(
        "import json, pathlib\n"
        f"RUN = pathlib.Path({str(SUITE / 'runs' / 'baseline.jsonl')!r})\n"
        "TRACES = {t['id']: t for t in map(json.loads, RUN.read_text(encoding='utf-8').splitlines())}\n"
        "LIMITS = {'min': {'retrieval.recall_at_5': 1.0}}\n"
        "def test_first(tracescore):\n"
        "    result = tracescore.check(TRACES['tr-0000'], **LIMITS)\n"
        "    assert result.scores['grounding.rate'].value is not None, result.scores['grounding.rate'].reason\n"
        "def test_second(tracescore):\n"
        "    tracescore.check(TRACES['tr-0006'], **LIMITS)\n"
        "def test_first_again(tracescore):\n"
        "    tracescore.check(TRACES['tr-0000'], **LIMITS)\n",
        encoding="utf-8",
    )


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist-2"])
def test_the_session_judge_scores_the_judged_stages_and_reports_its_spend_once(tmp_path: Path,
                                                                               workers: list[str]) -> None:
    _suite(tmp_path)
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        ran = run_pytest(tmp_path, "test_judged.py", "--tracescore-out", "results.jsonl",
                         *workers, env=env)  # fmt: skip
        calls = len(fake.messages())
    assert ran.code == 0 and "3 passed" in ran.out, ran.out
    spent = SPENT.findall(ran.out)
    assert len(spent) == 1, ran.out  # once for the session, whichever the workers
    model, api_calls, cached, tokens_in, tokens_out, cost = spent[0]
    assert model == "claude-sonnet-4-6" and int(api_calls) == calls > 0
    assert int(tokens_in) > 0 and int(tokens_out) > 0 and float(cost) > 0
    lines = _lines(tmp_path / "results.jsonl")
    assert [line["trace_id"] for line in lines] == ["tr-0000", "tr-0006", "tr-0000"]
    assert all(isinstance(line["scores"].get("grounding.rate"), float) for line in lines)  # judged, every one
    assert lines[0]["scores"] == lines[2]["scores"]
    if not workers:  # one process: the second check of tr-0000 is answered from the session's judge cache
        assert int(cached) > 0
        assert lines[0]["judge"]["calls"] > 0 and lines[2]["judge"]["calls"] == 0  # type: ignore[index]
    assert not list(tmp_path.glob("results.jsonl.*"))  # the parts merged and removed


def test_the_budget_is_the_sessions(tmp_path: Path) -> None:
    """``[scoring] max_cost`` is one budget for the whole session: once the first test's trace has spent it, the next
    test's judged scores are absent with the budget's reason (a limit on them fails with it)."""
    _suite(tmp_path)
    (tmp_path / "tracescore.toml").write_text("[scoring]\nmax_cost = 0.000001\n", encoding="utf-8")
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        ran = run_pytest(tmp_path, "test_judged.py", "--tracescore-out", "results.jsonl", env=env)
    assert ran.code == 0, ran.out
    first, second, _ = _lines(tmp_path / "results.jsonl")
    assert isinstance(first["scores"]["grounding.rate"], float)  # type: ignore[index]
    reason = second["missing"]["grounding.rate"]  # type: ignore[index]
    assert reason.startswith("judge budget spent ($") and reason.endswith("of max $0.0000)"), reason
