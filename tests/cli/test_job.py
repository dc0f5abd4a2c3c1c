"""``tracescore init``, ``run`` and ``backfill`` through the CLI on a JSONL source (and the fake Anthropic judge)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.engine.helpers import write_traces
from tests.fakes.anthropic import FakeAnthropic
from tracescore.cli import main
from tracescore.config import JobSettings, ScoringSettings, load_config
from tracescore.engine.batch import judge_requests
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.platforms.jsonl.platform import adapter
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.store.db import Store
from tracescore.store.lock import StoreLock

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "tracescore.toml"
    path.write_text(f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n{extra}')
    return path


def _summary(output: str) -> dict[str, object]:
    return json.loads([line for line in output.splitlines() if line.startswith("{")][-1])  # type: ignore[no-any-return]


def test_init_writes_a_commented_starter_that_loads_with_every_default(tmp_path: Path) -> None:
    target = tmp_path / "tracescore.toml"
    result = CliRunner().invoke(main, ["init", str(target), "--source", "jsonl", "--traces", "traces.jsonl"])
    assert result.exit_code == 0, result.output
    text = target.read_text()
    assert "ANTHROPIC_API_KEY" in text and '# lookback = "15m"' in text and "# [langfuse]" in text
    config = load_config(target)
    assert config.section("source").kind == "jsonl" and config.section("source").path == "traces.jsonl"
    assert config.section("job") == JobSettings() and config.section("scoring") == ScoringSettings()
    # every commented key, uncommented, is a known key whose shown value is its default
    keys = re.compile(r"^# (\[[a-z_.]+\]|[a-z_]+ = .+)$")
    lines = [line[2:] if keys.match(line) and "(unset)" not in line else line for line in text.splitlines()]
    assert sum(1 for a, b in zip(lines, text.splitlines(), strict=True) if a != b) > 15
    uncommented = tmp_path / "all.toml"
    uncommented.write_text("\n".join(lines))
    full = load_config(uncommented)
    assert full.section("job") == JobSettings() and full.section("scoring") == ScoringSettings()
    assert full.section("langfuse") == LangfuseSettings()
    assert dict(full.scorers())["retrieval"] == {"k": 5}  # each scorer's options, shown with their defaults
    again = CliRunner().invoke(main, ["init", str(target)])
    assert again.exit_code == 2 and "exists; pass --force" in again.output


def test_a_wrong_key_or_value_stops_at_start_with_file_key_and_what_is_allowed(tmp_path: Path) -> None:
    config = _config(tmp_path, 'lookbak = "5m"\n')
    result = CliRunner().invoke(main, ["run", "--config", str(config)])
    assert result.exit_code == 2
    assert "unknown key 'job.lookbak'" in result.output and "lookback" in result.output and str(config) in result.output
    config = _config(tmp_path, 'lookback = "soon"\n')
    result = CliRunner().invoke(main, ["run", "--config", str(config)])
    assert result.exit_code == 2 and "'15m'" in result.output and "job.lookback" in result.output


def test_run_reports_unreadable_traces_with_exit_1_and_stores_the_summary(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    write_traces(tmp_path / "t.jsonl", now - timedelta(minutes=5), 6, step=timedelta(seconds=1))
    with (tmp_path / "t.jsonl").open("a") as fh:
        fh.write("[1, 2]\n")
    result = CliRunner().invoke(main, ["run", "--config", str(_config(tmp_path))])
    assert result.exit_code == 1
    assert "1 traces unreadable and 0 scores rejected of 7 traces seen" in result.output
    summary = _summary(result.output)
    assert summary["scored"] == 6 and summary["failed"] == 1 and summary["status"] == "done"
    with Store(tmp_path / "ts.db") as store:
        (run,) = store.runs()
        assert run["command"] == "run" and run["summary"]["failures"] == summary["failures"]


def test_a_held_lock_is_exit_3_with_the_reason(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 3)
    with StoreLock(tmp_path / "ts.db", "tracescore backfill"):
        result = CliRunner().invoke(main, ["run", "--config", str(_config(tmp_path))])
    assert result.exit_code == 3
    assert "another run holds the lock" in result.output and "tracescore backfill" in result.output


def test_dry_run_counts_and_estimates_without_writing_anything(tmp_path: Path) -> None:
    ids = write_traces(tmp_path / "t.jsonl", T0, 38, step=timedelta(minutes=1))
    config = _config(tmp_path)
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "--dry-run"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    estimate = _summary(result.output)
    assert estimate["traces"] == len(ids) and estimate["already_done"] == 0
    answered = sum(1 for line in (tmp_path / "t.jsonl").read_text().splitlines() if json.loads(line)["answer"].strip())
    by_stage: dict[str, int] = estimate["judge_calls_by_stage"]  # type: ignore[assignment]
    assert 0 < by_stage["grounding"] <= answered and by_stage["surface"] > 0 and by_stage["semantic"] > 0
    assert int(estimate["judge_calls"]) == sum(by_stage.values())  # type: ignore[call-overload]
    assert int(estimate["judge_input_tokens"]) > 500 * int(estimate["judge_calls"])  # type: ignore[call-overload]
    assert float(estimate["judge_cost_usd"]) > 0  # type: ignore[arg-type]
    assert estimate["judge_off"] == "no judge configured"  # no key: the estimate says the judge would not run
    assert not (tmp_path / "ts.db").exists()
    halved = _summary(CliRunner().invoke(main, [*args, "--judge-batch"]).output)
    assert float(halved["judge_cost_usd"]) == pytest.approx(float(estimate["judge_cost_usd"]) / 2, rel=0.01)  # type: ignore[arg-type]
    done = CliRunner().invoke(main, args[:-1] + ["-q"])
    assert done.exit_code == 0
    again = _summary(CliRunner().invoke(main, args).output)
    assert again["already_done"] == len(ids) and again["judge_calls"] == 0


def test_resume_without_an_unfinished_backfill_says_what_to_do(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 3)
    result = CliRunner().invoke(main, ["backfill", "--config", str(_config(tmp_path)), "--resume"])
    assert result.exit_code == 2 and "no unfinished backfill" in result.output and "--from and --to" in result.output


def _judged_requests(results: list[dict[str, Any]]) -> int:
    """The judge requests behind ``results``: grounding, one surface oracle call per trace with a URL, semantic."""
    n = 0
    for r in results:
        scores = r["scores"]
        n += "grounding.rate" in scores
        n += sum(scores.get(f"surface.{c}", 0) for c in ("smart", "missed", "blind", "noop")) > 0
        exact = bool(scores.get("answer.exact_match")) or r["missing"].get("grounding.rate") == "empty answer"
        n += "answer.semantic_match" in scores and not exact
    return n


def test_backfill_with_the_judge_counts_its_calls_tokens_and_cost(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 38, step=timedelta(minutes=1))
    config = _config(tmp_path, "judge_concurrency = 4\n")
    with FakeAnthropic(latency=0.01) as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
        result = CliRunner(env=env).invoke(main, args)
        assert result.exit_code == 0, result.output
        summary = _summary(result.output)
        assert summary["judge_calls"] == len(fake.messages()) > 0
        assert int(summary["judge_input_tokens"]) > 0 and float(summary["judge_cost_usd"]) > 0  # type: ignore[arg-type]
        with Store(tmp_path / "ts.db") as store:
            (run,) = store.runs()
            results = list(store.results(run["id"]))
        assert _judged_requests(results) == int(summary["judge_calls"]) + int(summary["judge_cache_hits"])  # type: ignore[call-overload]
        keys = [
            r.key(DEFAULT_MODEL)
            for line in (tmp_path / "t.jsonl").read_text().splitlines()
            for r in judge_requests(adapter()(json.loads(line)))
        ]
        assert int(summary["judge_cache_hits"]) <= len(keys) - len(set(keys))  # type: ignore[call-overload]


def test_backfill_shows_progress_and_a_rerun_says_it_is_complete(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 20, step=timedelta(minutes=1))
    config = _config(tmp_path, "backfill_chunks = 6\n")
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02"]
    first = CliRunner(env={"COLUMNS": "200"}).invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "6/6 slices, 20 traces" in first.stderr and "judge $0.00" in first.stderr and "ETA" in first.stderr
    again = CliRunner(env={"COLUMNS": "200"}).invoke(main, args)
    assert again.exit_code == 0 and "already complete: nothing to do" in again.stderr
    assert _summary(again.stdout)["seen"] == 0


def test_judge_batch_fills_the_cache_through_message_batches_at_half_price(tmp_path: Path) -> None:
    from tests.fakes.anthropic_batches import FakeAnthropicBatches

    write_traces(tmp_path / "t.jsonl", T0, 38, step=timedelta(minutes=30))  # both slices have traces
    config = _config(tmp_path, "backfill_chunks = 2\nbatch_poll_seconds = 0.01\n")
    with FakeAnthropicBatches(polls_to_end=3) as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
        result = CliRunner(env=env).invoke(main, [*args, "--judge-batch"])
        assert result.exit_code == 0, result.output
        summary = _summary(result.output)
        batches = summary["judge_batches"]
        assert isinstance(batches, dict)
        assert batches["batches"] == 2 and batches["errored"] == 0 and batches["errors"] == []
        assert [r for r in fake.requests if r.path == "/v1/messages"] == []  # not one synchronous judge call
        submitted = sum(len(b["requests"]) for b in fake.batches.values())
        assert batches["succeeded"] == submitted == summary["judge_calls"] > 30
        with Store(tmp_path / "ts.db") as store:
            (run,) = store.runs()
            judged = _judged_requests(list(store.results(run["id"])))
        assert judged == summary["judge_cache_hits"] >= submitted  # every judged request answered from the cache

    # the same traces judged synchronously cost twice as much
    (tmp_path / "ts.db").unlink()
    with FakeAnthropic() as sync:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": sync.url}
        direct = _summary(CliRunner(env=env).invoke(main, args).output)
    assert direct["judge_calls"] == submitted
    assert float(summary["judge_cost_usd"]) * 2 == pytest.approx(float(direct["judge_cost_usd"]), rel=0.01)  # type: ignore[arg-type]


def test_judge_batch_requests_that_errored_are_judged_one_by_one_when_scored(tmp_path: Path) -> None:
    from tests.fakes.anthropic_batches import FakeAnthropicBatches

    write_traces(tmp_path / "t.jsonl", T0, 10, step=timedelta(minutes=1))
    config = _config(tmp_path, "backfill_chunks = 1\nbatch_poll_seconds = 0.01\n")
    with FakeAnthropicBatches(polls_to_end=1) as fake:
        fake.errored_per_batch = 3
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
        args.append("--judge-batch")
        result = CliRunner(env=env).invoke(main, args)
        assert result.exit_code == 0, result.output
        summary = _summary(result.output)
        batches = summary["judge_batches"]
        assert isinstance(batches, dict) and batches["errored"] == 3 and len(batches["errors"]) == 3
        synchronous = [r for r in fake.requests if r.path == "/v1/messages"]
        assert len(synchronous) == 3  # only the errored ones, when their traces were scored
        assert summary["judge_calls"] == batches["succeeded"] + 3


def test_backfill_says_what_it_did_with_sessions(tmp_path: Path) -> None:
    """#48 item 4: the backfill's summary (terminal and JSON) says the sessions it wrote, the look-back it read and
    the turns before the window it scored to complete their sessions."""
    from tests.engine.sessions_gen import START, generate

    _, dicts = generate(seed=5, sessions=2)  # s0's turns at START + 1..4 min, s1's an hour later
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(d) + "\n" for d in dicts))
    config = _config(tmp_path)
    window = ["--from", (START + timedelta(minutes=2)).isoformat(), "--to", (START + timedelta(days=1)).isoformat()]
    result = CliRunner().invoke(main, ["backfill", "--config", str(config), "-q", "--format", "terminal", *window])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("  sessions: "))
    assert line.startswith("  sessions: 2 sessions' scores written, 0 still active;")  # to the store: no platform
    assert "from the 1d before the slices, 1 before the window scored to complete their sessions" in line
    with Store(tmp_path / "ts.db") as store:
        (summary,) = store.query("SELECT summary FROM runs WHERE command = 'backfill'")[0]
    said = json.loads(summary)["sessions"]
    assert said["written"] == 2 and said["turns_scored_before"] == 1 and said["lookback"] == "1d"


def test_judge_batch_judges_carried_turns_with_their_earlier_pages_in_the_batch(tmp_path: Path) -> None:
    """#48: the batch prefill builds each session turn's judge request with its earlier turns' pages, as the engine
    scores it (the turns of older slices and the turn before the window it completes the session with included), so
    no carried turn is judged by a synchronous call."""
    from tests.engine.sessions_gen import START, generate
    from tests.fakes.anthropic_batches import FakeAnthropicBatches

    turns, dicts = generate(seed=3, sessions=3)
    for d in dicts:  # turn n of a session at hour n - 1: the hourly slices cut through every session
        session, index = d["session_id"], int(d["id"].rsplit("turn", 1)[1])
        d["timestamp"] = (START + timedelta(hours=index - 1, minutes=int(session[1:]))).isoformat()
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(d) + "\n" for d in dicts))
    config = _config(tmp_path, "backfill_chunks = 4\nbatch_poll_seconds = 0.01\n")
    window = ["--from", (START + timedelta(hours=1)).isoformat(), "--to", (START + timedelta(hours=5)).isoformat()]
    with FakeAnthropicBatches(polls_to_end=1) as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        result = CliRunner(env=env).invoke(main, ["backfill", "--config", str(config), "-q", *window, "--judge-batch"])
        assert result.exit_code == 0, result.output
        summary = _summary(result.output)
        assert summary["scored"] == len(turns)  # every turn 1 (before the window) scored to complete its session
        assert [r for r in fake.requests if r.path == "/v1/messages"] == []  # not one synchronous judge call
        batched = [r for b in fake.batches.values() for r in b["requests"]]
        assert any("an earlier turn" in json.dumps(r) for r in batched)  # a page carried from an earlier turn
        assert summary["judge_calls"] == len(batched) > 0
