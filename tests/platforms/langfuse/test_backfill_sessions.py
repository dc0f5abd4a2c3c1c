"""#48 item 4 (Langfuse): a backfill scores whole sessions and writes their session scores. A session that straddles
the window's start is completed from its turns just before it (``[sessions] lookback``): a turn there that no run
scored is scored with its session (its own trace scores written as the window's are), so the session scores count
every turn; a turn further back than the look-back is not read. Each session's scores are written once, as Langfuse
session scores; a re-run writes nothing. The real ``langfuse`` SDK over loopback HTTP to ``tests/fakes/langfuse.py``."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.fakes.langfuse import FakeLangfuse
from tests.platforms.langfuse.test_session_scores import _by_session, _turn, fake
from tracescore.config import load_config
from tracescore.engine.runner import Outcome, backfill_job
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store

__all__ = ["fake"]  # the fake Langfuse fixture of the session-scores tests, shared

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
STOP = T0 + timedelta(hours=4)
NOW = T0 + timedelta(hours=6)  # every session idle


def _config(tmp_path: Path, lookback: str = "24h") -> Path:
    path = tmp_path / "tracescore.toml"
    path.write_text(
        f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nbackfill_chunks = 4\n'
        f'write_batch = 4\n\n[sessions]\nidle = "30m"\nlookback = "{lookback}"\n',
        encoding="utf-8",
    )
    return path


def _backfill(config: Path) -> Outcome:
    setup = build_setup(load_config(config), clock=lambda: NOW)
    try:
        return backfill_job(setup, start=T0, stop=STOP, now=NOW)
    finally:
        setup.close()


def _session_writes(fake: FakeLangfuse) -> Counter[str]:
    return Counter(w["id"] for w in fake.score_writes if w.get("sessionId"))


def _scored_traces(fake: FakeLangfuse) -> set[str]:
    return {w["traceId"] for w in fake.score_writes if w.get("traceId")}


def test_a_backfill_writes_whole_sessions_once_completed_from_the_lookback(fake: FakeLangfuse, tmp_path: Path) -> None:
    a0 = _turn(fake, 1, "conv-a", T0 - timedelta(hours=2))  # before the window, inside the look-back, never scored
    a1 = _turn(fake, 2, "conv-a", T0 + timedelta(minutes=30), right=False)  # hourly slices: a1 and a2 in two
    a2 = _turn(fake, 3, "conv-a", T0 + timedelta(hours=2, minutes=30))
    _turn(fake, 4, "conv-b", T0 + timedelta(hours=1, minutes=10))
    _turn(fake, 5, "conv-b", T0 + timedelta(hours=1, minutes=20))
    far = _turn(fake, 6, "conv-far", T0 - timedelta(hours=30))  # beyond the look-back: not read
    _turn(fake, 7, "conv-far", T0 + timedelta(hours=3))
    before = _turn(fake, 8, "conv-before", T0 - timedelta(hours=1))  # no turn in the window: not this backfill's

    first = _backfill(_config(tmp_path))
    said = first.summary["sessions"]
    assert said["turns_scored_before"] == 1 and said["written"] == 3 and said["waiting"] == 0
    assert first.summary["scored"] == 6  # the window's five turns and a0
    traces = _scored_traces(fake)
    assert a0 in traces and far not in traces and before not in traces

    stored = _by_session(fake)
    assert set(stored) == {"conv-a", "conv-b", "conv-far"}
    for names in stored.values():
        assert all(len(rows) == 1 for rows in names.values())  # one score per session and name
    a = {name: rows[0]["value"] for name, rows in stored["conv-a"].items()}
    assert a["session.turns"] == 3.0 and a["session.failed_turns"] == 1.0
    assert a["session.first_failed_turn"] == 2.0  # a1 is the session's second turn, a0 its first
    assert a["session.fabricated_count"] == 0.0
    assert all(rows[0]["timestamp"].startswith("2026-11-20T07:00:00") for rows in stored["conv-a"].values())
    assert stored["conv-b"]["session.turns"][0]["value"] == 2.0
    assert stored["conv-far"]["session.turns"][0]["value"] == 1.0  # bounded by the look-back
    writes = _session_writes(fake)
    assert set(writes.values()) == {1}  # each session score sent once
    with Store(tmp_path / "ts.db") as store:
        rows = store.query("SELECT session_id, turns, scored_turns FROM sessions ORDER BY session_id")
        assert rows == [("conv-a", 3, 3), ("conv-b", 2, 2), ("conv-far", 1, 1)]
        line = store.query("SELECT scores FROM sessions WHERE session_id = 'conv-a'")[0][0]
        assert json.loads(line)["turns"] == [a0, a1, a2]

    posts = len(fake.score_writes)
    again = _backfill(_config(tmp_path))  # the same backfill again: nothing scored, nothing written
    assert again.summary["sessions"]["written"] == 0 and again.summary["scored"] == 0
    assert len(fake.score_writes) == posts


def test_a_backfill_leaves_a_session_still_active_to_the_scheduled_run(fake: FakeLangfuse, tmp_path: Path) -> None:
    """A backfill up to now: the session whose last turn is younger than ``[sessions] idle`` is not written yet (the
    scheduled run writes it once idle, as any session); the others are."""
    _turn(fake, 1, "conv-old", T0 + timedelta(minutes=10))
    _turn(fake, 2, "conv-live", NOW - timedelta(minutes=10))
    setup = build_setup(load_config(_config(tmp_path)), clock=lambda: NOW)
    try:
        outcome = backfill_job(setup, start=T0, stop=NOW, now=NOW)
    finally:
        setup.close()
    said = outcome.summary["sessions"]
    assert said["written"] == 1 and said["waiting"] == 1
    assert set(_by_session(fake)) == {"conv-old"}
