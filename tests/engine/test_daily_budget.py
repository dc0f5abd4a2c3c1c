"""``[job] max_cost_per_day`` (#32, item 2): over three scheduled runs of one UTC day the judge stops once the day's
spend reaches the budget (within one trace's cost), the day's later traces stay unjudged with the daily reason (not
computed: nothing removed), each run's summary says so, judging resumes the next UTC day (an injected clock), and
``backfill --judge-only`` judges exactly the traces left out, writing only their judged scores. The real
``langfuse`` and ``anthropic`` SDKs over loopback HTTP to the fakes; the judge's spend is counted at the fake."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith_runs import load_samples
from tests.test_both_platforms import _langfuse_trace
from tracescore import catalog
from tracescore.catalog import NOT_COMPUTED, absence_kind
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.engine.runner import Outcome, run_job
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store

DAY = datetime(2026, 11, 2, tzinfo=UTC)
PER_DAY = 30  # traces a day, one every 48 minutes from midnight
JUDGED = {e.name for e in catalog.entries() if e.judged}
_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL)


def _day_traces(day: datetime, n: int = PER_DAY) -> list[dict[str, Any]]:
    """``n`` cookbook samples spread over ``day``, each under its own id and question (no reply is reused)."""
    samples = load_samples()
    out = []
    for i in range(n):
        sample = copy.deepcopy(samples[i % len(samples)])
        tag = f"{day:%m%d}-{i:02d}"
        sample["id"] = f"{sample['id']}-{tag}"
        sample["question"] = f"{sample['question']} (case {tag})"
        sample["timestamp"] = (day + timedelta(minutes=48 * i)).isoformat()
        out.append(sample)
    return out


def _asked(judge: FakeAnthropic, since: int = 0) -> list[str]:
    """The question of each judge request from the ``since``-th on (a trace's calls all carry its question)."""
    out = []
    for request in judge.messages()[since:]:
        body = request.json()
        text = "".join(b["text"] for b in body["messages"][0]["content"])
        found = _QUESTION.search(text)
        out.append(found.group(1) if found else "?")
    return out


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeLangfuse, FakeAnthropic]]:
    with FakeLangfuse() as langfuse, FakeAnthropic() as judge:
        for name, value in env_for(langfuse).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", judge.url)
        yield langfuse, judge


def _config(tmp_path: Path, budget: float) -> Path:
    path = tmp_path / "tracescore.toml"
    path.write_text(
        f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nlookback = "15m"\nsettle = "1m"\n'
        f"judge_concurrency = 1\nwrite_batch = 8\nbackfill_chunks = 1\nmax_cost_per_day = {budget}\n",
        encoding="utf-8",
    )
    return path


def _run(config: Path, at: datetime, since: datetime | None = None) -> Outcome:
    """One scheduled run at ``at`` (its clock and its window's end), a process of its own as cron starts it."""
    setup = build_setup(load_config(config), clock=lambda: at)
    try:
        return run_job(setup, now=at, since=since)
    finally:
        setup.close()


def _lines(db: Path, run_id: str) -> list[dict[str, Any]]:
    with Store(db) as store:
        return list(store.results(run_id))


def _left(lines: list[dict[str, Any]]) -> set[str]:
    """The traces of these lines whose judged scores the daily budget left out."""
    return {r["trace_id"] for r in lines
            if any(n in JUDGED and why.startswith("daily judge budget spent (") for n, why in r["missing"].items())}


BUDGET = 0.13  # USD: about 15 of a day's 30 traces (~$0.0086 each at the fake's token counts)


def test_three_runs_of_a_day_stop_at_the_daily_budget_resume_next_day_and_judge_only_judges_the_rest(
    platform: tuple[FakeLangfuse, FakeAnthropic], tmp_path: Path
) -> None:
    langfuse, judge = platform
    day1, day2 = _day_traces(DAY), _day_traces(DAY + timedelta(days=1), 10)  # day 2: midnight to 07:12
    for sample in day1 + day2:
        langfuse.add_trace(*_langfuse_trace(sample))
    question = {s["question"]: s["id"] for s in day1 + day2}
    config, db = _config(tmp_path, BUDGET), tmp_path / "ts.db"

    runs, lines, judged = [], [], []
    for n, hours in enumerate((8, 16, 23.99)):
        at = DAY + timedelta(hours=hours)
        asked = len(judge.messages())
        runs.append(_run(config, at, since=DAY if n == 0 else None))
        lines.append(_lines(db, runs[-1].run_id))
        judged.append({question[q] for q in _asked(judge, asked)})  # the traces the judge was asked about
    assert [len(x) for x in lines] == [10, 10, 10]  # each run scored its part of the day
    # the first run judged all of its traces, the second some, then stopped; the third none: 0 calls at the fake
    assert judged[0] == {r["trace_id"] for r in lines[0]} and not _left(lines[0])
    assert 0 < len(judged[1]) < 10 and not judged[2]
    left, day = _left([r for x in lines for r in x]), [r for x in lines for r in x]
    assert len(left & judged[1]) <= 1 and not left & judged[0]  # the trace in flight when it ran out: judged in part
    for r in day:  # every trace of the day was judged, or left out, or needed no call (judged scores do not apply)
        if r["trace_id"] not in left | judged[0] | judged[1]:
            assert r.get("judge", {}).get("calls", 0) == 0
    assert len(left) >= 10 + (10 - len(judged[1])) - 3
    # the day's spend, counted per trace on the result lines: at the budget, past it by at most one trace's cost
    costs = {r["trace_id"]: r.get("judge", {}).get("cost_usd", 0.0) for x in lines for r in x}
    spent = sum(costs[t] for t in judged[0] | judged[1])
    assert BUDGET <= spent < BUDGET + max(costs.values())
    with Store(db) as store:  # the ledger holds the same spend across the runs
        (ledger,) = store.query("SELECT sum(cost_usd), sum(calls) FROM judge_spend WHERE day = '2026-11-02'")
    assert ledger[0] == pytest.approx(spent, abs=1e-4) and ledger[1] == len(_asked(judge))
    # the traces left out: every judged score absent with the daily reason, not computed; deterministic ones present
    for r in (r for x in lines for r in x if r["trace_id"] in left):
        daily = {why for n, why in r["missing"].items() if n in JUDGED and why.startswith("daily judge budget")}
        assert daily and {absence_kind(w) for w in daily} == {NOT_COMPUTED}
        assert "citation.coverage" in r["scores"] or "citation.coverage" in r["missing"]
    why = next(w for r in lines[2] for n, w in r["missing"].items() if n == "grounding.rate" and r["trace_id"] in left)
    assert why.startswith("daily judge budget spent ($0.1") and "of max $0.1300 on 2026-11-02 UTC)" in why
    # each run's summary says so: the day's spend, how many left, when judging resumes
    summaries = [o.summary["judge_budget"] for o in runs]
    in_run = [{r["trace_id"] for r in x} & left for x in lines]
    assert [s["left_unjudged"] for s in summaries] == [0, len(in_run[1]), len(in_run[2])] and len(in_run[2]) >= 8
    assert summaries[2]["resumes_at"] == "2026-11-03T00:00:00+00:00"
    assert summaries[2]["day_cost_usd"] == pytest.approx(spent, abs=1e-4) and summaries[2]["max_cost_per_day"] == BUDGET

    # the next UTC day: judging resumes (day 2's ten traces cost less than a day's budget)
    asked = len(judge.messages())
    next_day = _run(config, DAY + timedelta(days=1, hours=8))
    day2_lines = _lines(db, next_day.run_id)
    assert {question[q] for q in _asked(judge, asked)} == {s["id"] for s in day2} == {r["trace_id"] for r in day2_lines}
    assert not _left(day2_lines) and next_day.summary["judge_budget"]["left_unjudged"] == 0

    # backfill --judge-only (with room in today's budget): exactly the traces left out are judged, and the platform
    # receives their judged scores only; nothing else is written again or removed
    config.write_text(config.read_text().replace(f"max_cost_per_day = {BUDGET}", "max_cost_per_day = 100"))
    before = {key: dict(s) for key, s in langfuse.scores.items()}
    writes, asked = len(langfuse.score_writes), len(judge.messages())
    args = ["backfill", "--config", str(config), "--from", "2026-11-02", "--to", "2026-11-04", "--judge-only", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.splitlines()[-1])
    assert {question[q] for q in _asked(judge, asked)} <= left and summary["judge_only"] == {"left_out": len(left)}
    assert len({question[q] for q in _asked(judge, asked)}) >= len(left) - 1  # the one judged in part: cache hits
    new = langfuse.score_writes[writes:]
    assert new and {w["traceId"] for w in new} == left and {w["name"] for w in new} <= JUDGED | {"diagnosis"}
    assert {w["name"] for w in new} & JUDGED  # (diagnosis reads grounding.rate: it is sent with the judged ones)
    assert summary["scored"] == len(left) and summary["scores_removed"] == 0 and not langfuse.requests_to(
        "/api/public/scores/", "DELETE")
    after = langfuse.scores
    sent = JUDGED | {"diagnosis"}
    untouched = {k: s for k, s in before.items() if s["name"] not in sent or s["traceId"] not in left}
    assert {k: after[k] for k in untouched} == untouched  # the deterministic scores as they were
    assert {(s["traceId"]) for s in after.values() if s["name"] == "grounding.rate"} >= left  # now judged
    with Store(db) as store:
        run_id = store.runs()[-1]["id"]
        from tracescore.engine.judge_only import left_out

        assert not left_out(store)  # none left: a second --judge-only has nothing to judge
    assert {r["trace_id"] for r in _lines(db, run_id)} == left
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert json.loads(again.output.splitlines()[-1])["scored"] == 0 and len(judge.messages()) == asked + len(
        _asked(judge, asked))


def test_the_allowance_counts_every_run_of_the_day_calls_too_and_rolls_over_at_utc_midnight(tmp_path: Path) -> None:
    """``DailyBudget`` alone: a day's calls over two runs (the first never closed, as when killed), the limit in calls,
    and a run that passes midnight judges again with the new day's allowance."""
    from tracescore.engine.daily import DailyBudget, DayLimits
    from tracescore.judge.protocol import JudgeUsage

    now = [DAY + timedelta(hours=23)]
    limits = DayLimits(max_calls=5)
    first, usage = DailyBudget(tmp_path / "s.db", limits, lambda: now[0]), JudgeUsage()
    assert first.spent(usage, "a") is None
    usage.calls, usage.cost_usd = 3, 0.3
    assert first.spent(usage, "b") is None  # 3 of 5: recorded in the store at this check
    second, other = DailyBudget(tmp_path / "s.db", limits, lambda: now[0]), JudgeUsage()
    assert second.spent(other, "c") is None
    other.calls = 2
    assert second.spent(other, "d") == "daily judge budget spent (5 calls of max 5 calls on 2026-11-02 UTC)"
    assert second.summary()["left_unjudged"] == 1 and second.summary()["resumes_at"] == "2026-11-03T00:00:00+00:00"
    now[0] = DAY + timedelta(days=1, minutes=1)  # past midnight, the same run: the new day's allowance
    assert second.spent(other, "e") is None
    other.calls = 6
    assert second.spent(other, "f") is None  # 4 of 5 on the new day: 2 of the run's 6 were the eve's
    other.calls = 7
    assert second.spent(other, "g") == "daily judge budget spent (5 calls of max 5 calls on 2026-11-03 UTC)"
    second.record(other, close=True)
    with Store(tmp_path / "s.db") as store:
        rows = store.query("SELECT day, sum(calls), sum(cost_usd) FROM judge_spend GROUP BY day ORDER BY day")
    assert rows == [("2026-11-02", 5, pytest.approx(0.3)), ("2026-11-03", 5, 0.0)]


def test_run_says_in_one_line_that_the_day_is_spent_and_how_to_judge_the_rest(tmp_path: Path) -> None:
    """``tracescore run`` on the command line, ``max_calls_per_day = 0``: no call reaches the judge, the summary's
    ``judge_budget`` counts every judged trace left, and stderr says when judging resumes and what judges them."""
    from tests.engine.helpers import write_traces

    start = datetime.now(UTC) - timedelta(hours=2)
    ids = write_traces(tmp_path / "t.jsonl", start, 12, step=timedelta(minutes=5))
    (tmp_path / "tracescore.toml").write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nmax_calls_per_day = 0\n',
        encoding="utf-8",
    )
    with FakeAnthropic() as judge:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
        args = ["run", "--config", str(tmp_path / "tracescore.toml"), "--since", start.isoformat(), "-q"]
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 0, result.output
        assert not judge.messages()
    summary = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    budget = summary["judge_budget"]
    assert budget["max_calls_per_day"] == 0 and budget["day_calls"] == 0 and 0 < budget["left_unjudged"] <= len(ids)
    day = date.fromisoformat(budget["day"])  # the run's UTC day (not read again here: midnight may have passed)
    assert abs(datetime.now(UTC).date() - day) <= timedelta(days=1)
    assert f"daily judge budget spent on {day.isoformat()}" in result.stderr
    assert f"{budget['left_unjudged']} traces left unjudged; judging resumes at {day + timedelta(days=1)}T00:00" in (
        result.stderr) and "tracescore backfill --judge-only --from … --to …" in result.stderr
