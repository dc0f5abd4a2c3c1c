"""``[scoring] judge_sample`` (#32, item 1): the judged stages run on the traces a salted hash of the trace id
chooses, plus the ones a deterministic stage flags (``judge_flagged``); the same traces on every path (the Python API
and ``tracescore score``, re-runs), a smaller rate's choice inside a larger one's, counted at the loopback judge (the
real ``anthropic`` SDK against the fake, no cache), and a trace left out has its judged scores absent, not computed,
with ``not sampled (judge_sample 0.25)``."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langsmith_runs import load_samples
from tracescore import catalog, score_traces
from tracescore.catalog import NOT_COMPUTED, absence_kind
from tracescore.cli import main
from tracescore.config import Config, fingerprint, parse_sections
from tracescore.engine.sampling import Sampling, share
from tracescore.errors import ConfigError
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.result import TraceResult
from tracescore.store.db import Store
from tracescore.trace import Trace

RATE = 0.25
REASON = "not sampled (judge_sample 0.25)"
JUDGED = {e.name for e in catalog.entries() if e.judged}


def _traces(n: int = 200) -> list[dict[str, Any]]:
    """``n`` traces: the cookbook samples over and over, each copy under its own id."""
    samples = load_samples()
    out = []
    for i in range(n):
        trace = copy.deepcopy(samples[i % len(samples)])
        trace["id"] = f"{trace['id']}-{i:03d}"
        out.append(trace)
    return out


def _flagged(values: dict[str, Any]) -> bool:
    """What a deterministic stage flags, read off a result line's values (the issue's list, written out again)."""
    return (any(n.startswith("retrieval.recall_at_") and v < 1 for n, v in values.items())
            or values.get("citation.fabricated_count", 0) > 0 or values.get("citation.unfetched_rate", 0) > 0
            or values.get("answer.correct") is False)  # fmt: skip


def _expected(lines: list[dict[str, Any]], rate: float, flagged: bool) -> set[str]:
    return {r["trace_id"] for r in lines if share(r["trace_id"]) < rate or (flagged and _flagged(r["scores"]))}


def _judged(lines: list[dict[str, Any]], reason: str = REASON) -> set[str]:
    """The traces whose judged stages ran: no judged score absent for sampling (a trace left out has every grounding
    and surface score absent so)."""
    return {r["trace_id"] for r in lines
            if not any(n in JUDGED and why == reason for n, why in r.get("missing", {}).items())}  # fmt: skip


def _api(traces: list[dict[str, Any]], store: Path | None = None, **sampling: Any) -> tuple[list[dict[str, Any]], int]:
    """Score through ``tracescore.score_traces`` with a fresh judge (no cache but ``store``'s, a fresh one): result
    lines, calls at the fake."""
    with FakeAnthropic() as fake:
        judge = AnthropicJudge(api_key="test-key", base_url=fake.url, max_attempts=1)
        try:
            results: list[TraceResult] = score_traces(traces, judge=judge, store=store, **sampling)
        finally:
            judge.close()
        return [r.to_json() for r in results], len(fake.messages())


def test_the_draw_is_fixed_uniform_and_a_smaller_rate_chooses_a_subset() -> None:
    ids = [f"trace-{i}" for i in range(4000)]
    assert share("trace-0") == share("trace-0", "tracescore-judge-sample")  # the documented default salt
    # as the README states it: sha256("<salt>\\0<trace id>"), first 8 bytes big-endian / 2**64; pinned, since a changed
    # hash or salt would choose other traces than every earlier run did
    digest = hashlib.sha256(b"tracescore-judge-sample\0trace-0").digest()
    assert share("trace-0") == int.from_bytes(digest[:8], "big") / 2**64 == pytest.approx(0.6700038)
    chosen = {rate: {t for t in ids if Sampling(rate).chosen(t)} for rate in (0.05, 0.1, 0.25, 0.5, 1.0)}
    assert chosen[0.05] <= chosen[0.1] <= chosen[0.25] <= chosen[0.5] <= chosen[1.0] == set(ids)
    for rate, got in chosen.items():
        assert abs(len(got) / len(ids) - rate) < 0.03, rate
    other = {t for t in ids if Sampling(0.25, salt="team-b").chosen(t)}
    assert other != chosen[0.25] and abs(len(other) / len(ids) - 0.25) < 0.03
    with pytest.raises(ConfigError, match="judge_sample"):
        Sampling(1.5)


def test_the_rate_is_no_part_of_the_fingerprint() -> None:
    def of(scoring: dict[str, Any], scorers: dict[str, Any] | None = None) -> str:
        return fingerprint(Config(parse_sections({"scoring": scoring, "scorers": scorers or {}})))

    sampled = of({"judge_sample": 0.1, "judge_flagged": False, "judge_salt": "x"})
    assert of({}) == sampled != of({}, {"retrieval": {"k": 3}})  # a scorer's option is part of it


@pytest.mark.parametrize("flagged", [True, False])
def test_the_judged_set_is_the_hash_chosen_plus_the_flagged_counted_at_the_judge(flagged: bool) -> None:
    traces = _traces()
    lines, calls = _api(traces, judge_sample=RATE, judge_flagged=flagged)
    expected = _expected(lines, RATE, flagged)
    assert _judged(lines) == expected
    hashed = _expected(lines, RATE, False)
    if flagged:  # flagged traces outside the hash's choice were judged too
        assert len(expected - hashed) >= 20
        _judged_shares_are_the_samples(lines, hashed, expected - hashed)
    assert 30 <= len(hashed) <= 70  # ~ a quarter of 200
    # every trace left out: each judged score it has is absent for sampling, not computed (an earlier one stays)
    left = [r for r in lines if r["trace_id"] not in expected]
    assert left and all(n not in JUDGED for r in left for n in r["scores"])
    reasons = {why for r in left for n, why in r["missing"].items() if n in JUDGED}
    assert REASON in reasons and reasons <= {REASON, "no gold_answer label"}
    assert absence_kind(REASON) == NOT_COMPUTED
    # counted at the judge: exactly the calls of judging those traces alone, every one of them
    alone, alone_calls = _api([t for t in traces if t["id"] in expected])
    assert _judged(alone) == expected and calls == alone_calls > 0
    again, again_calls = _api(traces, judge_sample=RATE, judge_flagged=flagged)  # a re-run: the same choice
    assert _judged(again) == expected and again_calls == calls


def test_score_on_the_command_line_judges_the_traces_the_api_judges(tmp_path: Path) -> None:
    traces = _traces(120)
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    config = f"[scoring]\njudge_sample = {RATE}\n[job]\njudge_concurrency = 1\n"  # one thread: as the API scores
    (tmp_path / "tracescore.toml").write_text(config, encoding="utf-8")
    api, api_calls = _api(traces, tmp_path / "api.db", judge_sample=RATE)  # a fresh store each: the same cache hits
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        out = tmp_path / "results.jsonl"
        args = ["score", str(path), "--out", str(out), "--store", str(tmp_path / "ts.db"), "-q",
                "--config", str(tmp_path / "tracescore.toml")]  # fmt: skip
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 0, result.output
        cli_calls = len(fake.messages())
    cli = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert _judged(cli) == _judged(api) == _expected(api, RATE, True) and cli_calls == api_calls
    assert {r["trace_id"]: r["missing"] for r in cli} == {r["trace_id"]: r["missing"] for r in api}
    # --judge-sample wins over the config: a smaller rate judges a subset
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        out = tmp_path / "small.jsonl"
        args = ["score", str(path), "--out", str(out), "--store", str(tmp_path / "other.db"), "-q",
                "--config", str(tmp_path / "tracescore.toml"), "--judge-sample", "0.1"]  # fmt: skip
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 0, result.output
    small = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert _judged(small, "not sampled (judge_sample 0.1)") == _expected(small, 0.1, True) < _judged(cli)
    assert any(why == "not sampled (judge_sample 0.1)" for r in small for why in r["missing"].values())


def test_a_backfill_judging_a_sample_keeps_the_earlier_judged_scores_of_the_rest_on_langfuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real ``langfuse`` SDK and CLI over the fake: a full backfill, then (a release later) one with
    ``judge_sample`` and ``judge_flagged = false``: the traces left out keep their judged scores, no DELETE."""
    from tests.platforms.test_judge_absence import SAMPLES, _backfill, _judged, _langfuse, _last_run
    from tests.sinks.releases import bumped
    from tracescore import registry

    with contextlib.closing(_langfuse(load_samples(SAMPLES))) as platforms, FakeAnthropic() as judge:
        platform = next(platforms)
        keyed = platform.env | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
        _backfill(tmp_path, platform, keyed)
        judged = _judged(platform.scores())
        assert len({t for t, _, _ in judged.values()}) >= 15
        monkeypatch.setattr(registry, "_LOADED", bumped("2"))  # a new release: the backfill runs again
        second = _backfill(tmp_path, platform, keyed, "\n[scoring]\njudge_sample = 0.4\njudge_flagged = false\n")
        after, deleted = platform.scores(), set(platform.deletes())
    _, missing = _last_run(tmp_path / "ts.db")
    chosen = {t for t in {t for t, _, _ in judged.values()} if share(t) < 0.4}
    left = {i: s for i, s in judged.items() if s[0] not in chosen}
    assert chosen and left  # both kinds among the traces
    assert {missing[(t, n)] for t, n, _ in left.values()} == {"not sampled (judge_sample 0.4)"}
    assert not any((t, n) in missing for t, n, _ in judged.values() if t in chosen)  # judged again, present
    assert not set(left) & deleted and {i: after.get(i) for i in left} == left  # still there, earlier values
    assert second["kept_stale"] == len(left)


def test_a_judge_batch_backfill_batches_only_the_requests_of_the_traces_it_judges(tmp_path: Path) -> None:
    """``backfill --judge-batch``: the Message Batches API receives the requests of the sampled and flagged traces
    only (counted at the fake, real SDK), and the traces judged are the ones a direct scoring judges."""
    from tests.fakes.anthropic_batches import FakeAnthropicBatches
    from tracescore.engine.batch import judge_requests

    traces, judged = _jsonl_backfill(tmp_path)
    wanted = {r.key("claude-sonnet-4-6") for t in judged for r in judge_requests(t)}
    everyone = {r.key("claude-sonnet-4-6") for t in traces for r in judge_requests(t)}
    assert 0 < len(judged) < len(traces) and wanted < everyone
    with FakeAnthropicBatches(polls_to_end=1) as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        args = ["backfill", "--config", str(tmp_path / "tracescore.toml"), "--from", "2026-11-01", "--to",
                "2026-11-02", "-q", "--judge-batch"]  # fmt: skip
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 0, result.output
        assert set(fake.submitted) == wanted and set(fake.submitted.values()) == {1}
    with Store(tmp_path / "ts.db") as store:
        lines = list(store.results(store.runs()[-1]["id"]))
    assert _judged(lines) == {t.id for t in judged} == _expected(lines, RATE, True)


def _jsonl_backfill(tmp_path: Path, rate: float = RATE) -> tuple[list[Trace], list[Trace]]:
    """60 traces in a JSONL source and a backfill config with ``judge_sample``: the traces and the judged ones."""
    from tests.engine.helpers import write_traces
    from tracescore.engine.recipe import ScorerPlan
    from tracescore.platforms.registry import get_adapter

    write_traces(tmp_path / "t.jsonl", datetime(2026, 11, 1, tzinfo=UTC), 60, step=timedelta(minutes=1))
    (tmp_path / "tracescore.toml").write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nbackfill_chunks = 1\n'
        f"batch_poll_seconds = 0.02\n\n[scoring]\njudge_sample = {rate}\n", encoding="utf-8"
    )  # fmt: skip
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    plan = ScorerPlan(sampling=Sampling(rate))
    return traces, [t for t in traces if plan.judges(t)]


def test_a_dry_run_estimates_the_judged_traces_only(tmp_path: Path) -> None:
    from tracescore.engine.estimate import estimate_trace

    traces, judged = _jsonl_backfill(tmp_path)
    args = ["backfill", "--config", str(tmp_path / "tracescore.toml"), "--from", "2026-11-01", "--to", "2026-11-02",
            "--dry-run"]  # fmt: skip
    result = CliRunner().invoke(main, args, env={"ANTHROPIC_API_KEY": "test-key"})
    assert result.exit_code == 0, result.output
    out = json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])
    assert out["traces"] == len(traces) and out["not_sampled"] == len(traces) - len(judged) > 0
    assert out["judge_calls"] == sum(estimate_trace(t, "claude-sonnet-4-6").calls for t in judged)
    assert f"{len(traces) - len(judged)} left out by judge_sample" in result.output
    every = CliRunner().invoke(main, [*args, "--judge-sample", "1"], env={"ANTHROPIC_API_KEY": "test-key"})
    assert json.loads([line for line in every.output.splitlines() if line.startswith("{")][-1])["judge_calls"] > (
        out["judge_calls"])


def _judged_shares_are_the_samples(lines: list[dict[str, Any]], hashed: set[str], flagged: set[str]) -> None:
    """The report's judged figures are over the hash-chosen traces only, with the rate; the flagged ones apart."""
    from tracescore.report.summary import summary_to_json
    from tracescore.report.tally import summarize

    assert {r["judge"]["sample"]["by"] for r in lines if r["trace_id"] in flagged} == {"flagged"}
    assert {r["judge"]["sample"]["by"] for r in lines if r["trace_id"] in hashed and "judge" in r} == {"hash"}
    summary = summarize(lines)
    out = summary_to_json(summary)
    for name in ("grounding.rate", "citation.support_rate"):
        sampled = [r["scores"][name] for r in lines if r["trace_id"] in hashed and name in r["scores"]]
        apart = [r["scores"][name] for r in lines if r["trace_id"] in flagged and name in r["scores"]]
        assert sampled and apart and out["scores"][name]["present"] == len(sampled)
        assert out["scores"][name]["mean"] == pytest.approx(sum(sampled) / len(sampled), abs=1e-4)
        flagged_out = out["judge_sample"]["flagged_scores"][name]
        assert flagged_out["present"] == len(apart)
        assert flagged_out["mean"] == pytest.approx(sum(apart) / len(apart), abs=1e-4)
    assert out["judge_sample"]["rate"] == RATE and out["judge_sample"]["flagged_traces"] == len(flagged)
    # the gate holds the same figure: the sample's mean, its n and the rate beside it
    from tracescore.report.gate import run_gate
    from tracescore.report.gate_config import GateConfig

    gated = run_gate(lines, config=GateConfig(minimums={"grounding.rate": 0.1}))
    (check,) = [c for c in gated.checks if c.subject == "grounding.rate"]
    assert check.observed == pytest.approx(out["scores"]["grounding.rate"]["mean"], abs=1e-4)
    present = out["scores"]["grounding.rate"]["present"]
    assert f"over {present} traces" in check.message and f"(judge_sample 0.25; {len(flagged)} flagged" in check.message
    # deterministic scores are over every trace, as without sampling
    assert out["scores"]["citation.coverage"]["present"] == sum("citation.coverage" in r["scores"] for r in lines)
