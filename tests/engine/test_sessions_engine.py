"""#48: every engine path scores a session's turns with the evidence of its earlier turns (acceptance 1 on each path),
and a turn that arrives in a later run reads its session's earlier turns back from the store."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.engine.helpers import CountingSink, make_setup
from tests.engine.sessions_gen import START, Turn, generate, reference
from tracescore.cli.main import main
from tracescore.engine.distributed.driver import _scored
from tracescore.engine.pipeline import RunCounts
from tracescore.engine.plan import deterministic_scorers
from tracescore.engine.runner import run_job
from tracescore.platforms.registry import get_adapter
from tracescore.sources.base import Record
from tracescore.sources.jsonl import JsonlSource
from tracescore.store.db import Store

NAMES = ("citation.unfetched_rate", "citation.fabricated_count", "grounding.unsupported_numbers")


def _expected(turns: list[Turn], *, carry: bool = True) -> dict[str, dict[str, float]]:
    out = {}
    for trace_id, want in reference(turns, carry=carry).items():
        out[trace_id] = {
            "citation.unfetched_rate": len(want.unfetched) / len(want.cited),
            "citation.fabricated_count": float(len(want.fabricated)),
            "grounding.unsupported_numbers": float(len(want.unsupported_numbers)),
        }
    return out


def _got(lines: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {row["trace_id"]: {n: pytest.approx(row["scores"][n]) for n in NAMES} for row in lines}


@pytest.fixture(scope="module")
def generated() -> tuple[list[Turn], list[dict[str, Any]]]:
    return generate(seed=7, sessions=8)


def _file(tmp_path: Path, dicts: list[dict[str, Any]]) -> Path:
    path = tmp_path / "turns.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in dicts))
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_score_in_threads_or_processes_carries_the_evidence(
    workers: str, generated: tuple[list[Turn], list[dict[str, Any]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    turns, dicts = generated
    path, out = _file(tmp_path, dicts), tmp_path / "out.jsonl"
    run = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--workers", workers, "--quiet"], env={})
    assert run.exit_code == 0, run.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len(dicts)
    assert _got(lines) == _expected(turns)


def test_score_with_carry_evidence_false_scores_each_turn_alone(
    generated: tuple[list[Turn], list[dict[str, Any]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tracescore.toml").write_text("[sessions]\ncarry_evidence = false\n")
    turns, dicts = generated
    path, out = _file(tmp_path, dicts), tmp_path / "out.jsonl"
    run = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--workers", "2", "--quiet"], env={})
    assert run.exit_code == 0, run.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["trace_id"] for row in lines] == [d["id"] for d in dicts]  # the file's order, as before #48
    assert _got(lines) == _expected(turns, carry=False) != _expected(turns)


@pytest.mark.parametrize("threads", [1, 3])
def test_a_ray_task_scores_its_shards_sessions_with_their_earlier_turns(
    threads: int, generated: tuple[list[Turn], list[dict[str, Any]]]
) -> None:
    turns, dicts = generated
    records = [Record(payload=json.dumps(d), line=n) for n, d in enumerate(dicts, 1)]
    results = list(_scored(records, get_adapter("jsonl"), deterministic_scorers(), threads, RunCounts()))
    assert _got([r.to_json() for r in results]) == _expected(turns)
    alone = list(_scored(records, get_adapter("jsonl"), deterministic_scorers(), threads, RunCounts(), carry=False))
    assert _got([r.to_json() for r in alone]) == _expected(turns, carry=False)


def test_a_turn_of_a_later_run_reads_its_sessions_earlier_turns_from_the_store(
    generated: tuple[list[Turn], list[dict[str, Any]]], tmp_path: Path
) -> None:
    turns, dicts = generated
    first = [t for t in turns if t.session == "s0"]
    assert len(first) >= 3
    path = _file(tmp_path, [d for d in dicts if d["session_id"] == "s0"])
    sink = CountingSink()
    setup = make_setup(tmp_path, JsonlSource(path), sink=sink, lookback_minutes=1.0)
    # run 1 sees turns 1 and 2; run 2's window (one minute of lookback) starts after turn 1: only the store has it
    one = run_job(setup, now=START + timedelta(minutes=2, seconds=30), since=START)
    two = run_job(setup, now=START + timedelta(minutes=5))
    assert one.summary["scored"] == 2 and two.summary["scored"] == len(first) - 2
    with Store(setup.store_path) as store:
        lines = [*store.results(one.run_id), *store.results(two.run_id)]
        kept = store.query("SELECT trace_id, run_id FROM session_evidence WHERE session_id = 's0' ORDER BY trace_ts")
    assert _got(lines) == {k: v for k, v in _expected(turns).items() if k.startswith("s0-")}
    assert [k[0] for k in kept] == [t.trace_id for t in first]  # each turn's evidence, kept with its result
    turn3 = next(row for row in lines if row["trace_id"] == "s0-turn3")
    assert "turn 1, trace s0-turn1" in json.dumps(turn3) or "turn 2, trace s0-turn2" in json.dumps(turn3)


def test_without_carry_a_later_run_scores_each_turn_alone(
    generated: tuple[list[Turn], list[dict[str, Any]]], tmp_path: Path
) -> None:
    turns, dicts = generated
    path = _file(tmp_path, [d for d in dicts if d["session_id"] == "s0"])
    setup = make_setup(tmp_path, JsonlSource(path), lookback_minutes=1.0)
    setup.carry = False
    one = run_job(setup, now=START + timedelta(minutes=2, seconds=30), since=START)
    two = run_job(setup, now=START + timedelta(minutes=5))
    with Store(setup.store_path) as store:
        lines = [*store.results(one.run_id), *store.results(two.run_id)]
        assert store.query("SELECT count(*) FROM session_evidence") == [(0,)]
    assert _got(lines) == {k: v for k, v in _expected(turns, carry=False).items() if k.startswith("s0-")}


def _spread(dicts: list[dict[str, Any]], turns: list[Turn]) -> tuple[list[dict[str, Any]], list[Turn]]:
    """The turns of each session an hour apart (turn n at hour n - 1): a backfill's slices cut through sessions."""
    for d in dicts:
        session, index = d["session_id"], int(d["id"].rsplit("turn", 1)[1])
        d["timestamp"] = (START + timedelta(hours=index - 1, minutes=int(session[1:]))).isoformat()
    return dicts, turns  # the reference compares turns of one session: their order is the same


@pytest.mark.parametrize("lookback", ["24h", "0s"])
def test_a_backfill_completes_its_slices_sessions_from_the_turns_before_them(
    lookback: str, tmp_path: Path
) -> None:
    from tracescore.durations import parse_duration

    turns, dicts = generate(seed=11, sessions=4)
    dicts, turns = _spread(dicts, turns)
    path = _file(tmp_path, dicts)
    setup = make_setup(tmp_path, JsonlSource(path), chunks=4)
    setup.session_lookback = parse_duration(lookback)
    # the window leaves out every turn 1 (hour 0); its hourly slices go newest first: turn 4 before turns 2 and 3
    from tracescore.engine.runner import backfill_job

    outcome = backfill_job(setup, start=START + timedelta(hours=1), stop=START + timedelta(hours=5))
    with Store(setup.store_path) as store:
        lines = list(store.results(outcome.run_id))
    ids = [row["trace_id"] for row in lines]
    assert len(ids) == len(set(ids))  # each turn scored once, though the look-backs of two slices may read it
    said = outcome.summary["sessions"]
    assert said["carry_evidence"] is True and parse_duration(said["lookback"]) == parse_duration(lookback)
    if lookback == "24h":  # every turn 1 (before the window, never scored) is scored to complete its session
        assert set(ids) == {t.trace_id for t in turns}
        assert _got(lines) == _expected(turns)
        assert said["turns_read_before"] > 0 and said["turns_scored_before"] == 4
        assert said["written"] == 4  # the four sessions' scores, each over its whole session
    else:  # no look-back: a turn scored before its older slice misses that slice's pages (the check can fail)
        expected = {k: v for k, v in _expected(turns).items() if not k.endswith("turn1")}
        assert set(ids) == set(expected)
        assert _got(lines) != expected and said["turns_read_before"] == 0 and said["turns_scored_before"] == 0
