"""#48 acceptance 2 (LangSmith): LangSmith has no feedback a client can write on a thread (SDK 0.15.1's
``create_feedback`` takes a run or trace id; thread-level feedback is only read back, as ``contains_thread_feedback``),
so the job writes a thread's session scores as feedback on its last turn's root run: once; a re-run writes nothing;
a turn that becomes the last one moves them there (the earlier ones removed, no duplicate). The real ``langsmith``
SDK over loopback HTTP to ``tests/fakes/langsmith.py``, every query backend."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore.config import load_config
from tracescore.engine.runner import Outcome, backfill_job, run_job
from tracescore.engine.setup import build_setup

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _turn(fake: FakeLangSmith, project_id: str, sample: dict[str, Any], name: str, thread: str, at: datetime) -> str:
    trace = copy.deepcopy(sample) | {"id": name, "timestamp": at.isoformat()}
    runs, _ = run_tree(trace, project_id)
    runs[0]["extra"]["metadata"]["thread_id"] = thread  # LangSmith's thread key on the root run
    fake.add_runs(runs)
    return str(runs[0]["id"])


def _run(config: Path, at: datetime, since: datetime | None = None) -> Outcome:
    setup = build_setup(load_config(config), clock=lambda: at)
    try:
        return run_job(setup, now=at, since=since)
    finally:
        setup.close()


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch, backend: str) -> Iterator[tuple[FakeLangSmith, str]]:
    """The fake LangSmith on ``backend`` with its project ``search-agent``, and tracescore pointed at it."""
    with FakeLangSmith() as fake:
        fake.backend = backend
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_session_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        yield fake, fake.add_project("search-agent")


def _session_feedback(fake: FakeLangSmith) -> list[dict[str, Any]]:
    return [f for f in fake.feedback.values() if f["key"].startswith("session.")]


def test_thread_scores_go_on_the_last_turn_once_and_move_when_a_later_turn_arrives(
    tmp_path: Path, langsmith: tuple[FakeLangSmith, str]
) -> None:
    fake, project = langsmith
    samples = load_samples(3)
    _turn(fake, project, samples[0], "a1", "thread-a", T0)
    a2 = _turn(fake, project, samples[1], "a2", "thread-a", T0 + timedelta(minutes=2))
    b1 = _turn(fake, project, samples[2], "b1", "thread-b", T0 + timedelta(minutes=5))
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
        'lookback = "2h"\n\n[sessions]\nidle = "30m"\n'
    )
    first = _run(config, T0 + timedelta(minutes=40), since=T0 - timedelta(minutes=5))
    assert first.summary["scored"] == 3 and first.summary["sessions"]["written"] == 2
    on_a2 = {k: f for k, f in fake.feedback_for(a2).items() if k.startswith("session.")}
    assert on_a2["session.turns"]["score"] == 2.0
    assert {f["run_id"] for f in _session_feedback(fake)} == {a2, b1}  # each thread's last turn
    assert "session.grounding_rate" not in on_a2  # no judge: absent, never 0
    creates = fake.feedback_creates

    again = _run(config, T0 + timedelta(minutes=41))
    assert again.summary["sessions"]["written"] == 0 and fake.feedback_creates == creates

    a3 = _turn(fake, project, samples[0], "a3", "thread-a", T0 + timedelta(minutes=3))  # recorded late: last turn
    third = _run(config, T0 + timedelta(minutes=45))
    assert third.summary["scored"] == 1 and third.summary["sessions"]["written"] == 1
    assert not [k for k in fake.feedback_for(a2) if k.startswith("session.")]  # moved: removed from a2
    on_a3 = {k: f for k, f in fake.feedback_for(a3).items() if k.startswith("session.")}
    assert on_a3["session.turns"]["score"] == 3.0 and set(on_a3) == set(on_a2)
    assert fake.duplicates() == []
    assert len(_session_feedback(fake)) == len(on_a3) + len(
        [k for k in fake.feedback_for(b1) if k.startswith("session.")]
    )


def test_a_backfill_writes_each_thread_once_on_its_last_turn_completed_from_the_lookback(
    tmp_path: Path, langsmith: tuple[FakeLangSmith, str]
) -> None:
    """#48 item 4: a backfill writes the thread scores of its window's threads, each counting the thread's turn just
    before the window (scored with it, as no run scored it); the same backfill again writes nothing."""
    fake, project = langsmith
    samples = load_samples(3)
    a0 = _turn(fake, project, samples[0], "a0", "thread-a", T0 - timedelta(hours=2))
    _turn(fake, project, samples[1], "a1", "thread-a", T0 + timedelta(minutes=30))
    a2 = _turn(fake, project, samples[2], "a2", "thread-a", T0 + timedelta(hours=2, minutes=30))
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
        'backfill_chunks = 4\n\n[sessions]\nidle = "30m"\nlookback = "24h"\n'
    )
    now = T0 + timedelta(hours=6)

    def backfill() -> Outcome:
        setup = build_setup(load_config(config), clock=lambda: now)
        try:
            return backfill_job(setup, start=T0, stop=T0 + timedelta(hours=4), now=now)
        finally:
            setup.close()

    first = backfill()
    assert first.summary["scored"] == 3 and first.summary["sessions"]["turns_scored_before"] == 1
    assert first.summary["sessions"]["written"] == 1
    assert {k for k in fake.feedback_for(a0) if not k.startswith("session.")}  # a0's own scores written
    on_a2 = {k: f for k, f in fake.feedback_for(a2).items() if k.startswith("session.")}
    assert on_a2["session.turns"]["score"] == 3.0
    assert {f["run_id"] for f in _session_feedback(fake)} == {a2}
    creates = fake.feedback_creates

    again = backfill()
    assert again.summary["sessions"]["written"] == 0 and fake.feedback_creates == creates
    assert fake.duplicates() == []
