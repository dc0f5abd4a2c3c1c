"""#48 acceptance 2 and 3 (Langfuse): the scheduled job, on an injected clock, writes each session's scores once the
session has been idle ``[sessions] idle``, as Langfuse session scores (``sessionId``, no trace), once; a re-run
writes nothing; a late turn gets them re-scored and replaced in place (no duplicate); SIGKILL mid-run loses and
duplicates nothing. The real ``langfuse`` SDK over loopback HTTP to ``tests/fakes/langfuse.py``; each run builds its
setup afresh, as cron starts a process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.config import load_config
from tracescore.engine.runner import Outcome, run_job
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
SESSION_NAMES = {"session.turns", "session.failed_turns", "session.first_failed_turn", "session.diagnosis",
                 "session.fabricated_count", "session.grounding_rate"}  # fmt: skip


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as server:
        for key, value in env_for(server).items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        yield server


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "tracescore.toml"
    path.write_text(
        f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nlookback = "2h"\nsettle = "1m"\n'
        'write_batch = 4\n\n[sessions]\nidle = "30m"\n',
        encoding="utf-8",
    )
    return path


def _turn(fake: FakeLangfuse, index: int, session: str, at: datetime, *, right: bool = True) -> str:
    trace, observations = make_trace(index, at, size=6, right=right)
    trace["sessionId"] = session
    fake.add_trace(trace, observations)
    return str(trace["id"])


def _run(config: Path, at: datetime, since: datetime | None = None) -> Outcome:
    setup = build_setup(load_config(config), clock=lambda: at)
    try:
        return run_job(setup, now=at, since=since)
    finally:
        setup.close()


def _by_session(fake: FakeLangfuse) -> dict[str, dict[str, list[dict[str, Any]]]]:
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for s in fake.session_scores():
        out.setdefault(s["sessionId"], {}).setdefault(s["name"], []).append(s)
    return out


def _session_writes(fake: FakeLangfuse) -> int:
    return sum(1 for w in fake.score_writes if w.get("sessionId"))


def test_idle_sessions_are_written_once_a_rerun_writes_nothing_a_late_turn_replaces_them(
    fake: FakeLangfuse, tmp_path: Path
) -> None:
    config = _config(tmp_path)
    a1 = _turn(fake, 1, "conv-a", T0)
    _turn(fake, 2, "conv-a", T0 + timedelta(minutes=2), right=False)
    _turn(fake, 3, "conv-b", T0 + timedelta(minutes=5))

    first = _run(config, T0 + timedelta(minutes=10), since=T0 - timedelta(minutes=5))
    assert first.summary["scored"] == 3
    assert first.summary["sessions"] | {} == {"due": 0, "written": 0, "waiting": 2, "scores_written": 0,
                                              "scores_removed": 0}  # fmt: skip
    assert fake.session_scores() == []  # neither session idle yet

    second = _run(config, T0 + timedelta(minutes=33))  # conv-a idle 31 min, conv-b 28 min
    assert second.summary["sessions"]["written"] == 1 and second.summary["sessions"]["waiting"] == 1
    stored = _by_session(fake)
    assert set(stored) == {"conv-a"}
    a = {name: rows[0] for name, rows in stored["conv-a"].items()}
    assert all(len(rows) == 1 for rows in stored["conv-a"].values())
    assert set(a) <= SESSION_NAMES and {"session.turns", "session.failed_turns", "session.fabricated_count"} <= set(a)
    assert "session.grounding_rate" not in a  # no judge: absent, never written as 0
    assert a["session.turns"]["value"] == 2.0 and a["session.failed_turns"]["value"] == 1.0
    assert a["session.first_failed_turn"]["value"] == 2.0
    for row in a.values():
        assert "traceId" not in row and row["sessionId"] == "conv-a"
        assert row["timestamp"].startswith("2026-11-20T09:00:00")  # the first turn's start: fixed as it grows
    ids = {row["id"] for row in a.values()}
    writes = _session_writes(fake)

    third = _run(config, T0 + timedelta(minutes=34))  # nothing new: a re-run writes nothing
    assert third.summary["sessions"]["written"] == 0 and _session_writes(fake) == writes

    late = _turn(fake, 4, "conv-a", T0 + timedelta(minutes=3))  # recorded late (after conv-a was scored)
    fourth = _run(config, T0 + timedelta(minutes=40))
    assert fourth.summary["scored"] == 1  # the late turn only
    assert fourth.summary["sessions"]["written"] == 2  # conv-a again (grown), conv-b (idle now)
    stored = _by_session(fake)
    assert all(len(rows) == 1 for rows in stored["conv-a"].values())  # replaced in place: no duplicate
    a = {name: rows[0] for name, rows in stored["conv-a"].items()}
    assert a["session.turns"]["value"] == 3.0 and {row["id"] for row in a.values()} == ids
    assert stored["conv-b"]["session.turns"][0]["value"] == 1.0
    with Store(tmp_path / "ts.db") as store:
        rows = store.query("SELECT session_id, turns, scored_turns FROM sessions ORDER BY session_id")
        assert rows == [("conv-a", 3, 3), ("conv-b", 1, 1)]
        (line,) = store.query("SELECT scores FROM sessions WHERE session_id = 'conv-a'")[0]
        assert json.loads(line)["turns"] == [a1, "tr-00002", late]
    fifth = _run(config, T0 + timedelta(minutes=90))
    assert fifth.summary["sessions"]["written"] == 0 and fifth.summary["sessions"]["waiting"] == 0
    assert Counter(w["id"] for w in fake.score_writes if w.get("sessionId")).most_common(1)[0][1] == 2


def test_a_session_score_that_no_longer_applies_is_removed(fake: FakeLangfuse, tmp_path: Path) -> None:
    """conv-c's only turn fails; a late turn before it cannot change that, but a turn scored again as passing makes
    ``first_failed_turn`` and ``diagnosis`` not apply: they are removed, the rest replaced."""
    config = _config(tmp_path)
    trace, observations = make_trace(7, T0, size=6, right=False)
    trace["sessionId"] = "conv-c"
    fake.add_trace(trace, observations)
    _run(config, T0 + timedelta(minutes=40), since=T0 - timedelta(minutes=5))
    names = set(_by_session(fake)["conv-c"])
    assert {"session.first_failed_turn", "session.diagnosis"} <= names
    # the agent's trace is corrected on the platform (same id, now right) and re-scored by a backfill-like run
    fake.observations = [o for o in fake.observations if o["traceId"] != trace["id"]]
    trace, observations = make_trace(7, T0, size=6, right=True)
    trace["sessionId"] = "conv-c"
    fake.add_trace(trace, observations)
    with Store(tmp_path / "ts.db") as store:  # forget the trace's mark so the next run reads it again
        store.write("DELETE FROM scored_traces", [()])
        store.commit()
    _run(config, T0 + timedelta(minutes=80), since=T0 - timedelta(minutes=5))
    after = _by_session(fake)["conv-c"]
    assert "session.first_failed_turn" not in after and "session.diagnosis" not in after
    assert after["session.failed_turns"][0]["value"] == 0.0


@pytest.mark.slow
def test_sigkill_during_the_session_step_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """Forty sessions go idle at once; the job is SIGKILLed while writing them (the fake answers slowly), then run
    again: every session's scores are on Langfuse exactly once per name, and the store marks every session."""
    with FakeLangfuse(latency=0.05) as fake:
        for s in range(40):
            for t in range(2):
                _turn(fake, 100 + 2 * s + t, f"conv-{s:02d}", T0 + timedelta(minutes=t, seconds=s))
        config = _config(tmp_path)
        env = dict(os.environ) | env_for(fake)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[3] / "src"),
                                             env.get("PYTHONPATH", "")])  # fmt: skip
        script = ("import sys; from datetime import datetime; from tracescore.config import load_config;"
                  " from tracescore.engine.setup import build_setup; from tracescore.engine.runner import run_job;"
                  " at = datetime.fromisoformat(sys.argv[1]); setup = build_setup(load_config(sys.argv[2]),"
                  " clock=lambda: at); run_job(setup, now=at, since=datetime.fromisoformat(sys.argv[3]))")  # fmt: skip
        args = [sys.executable, "-c", script, (T0 + timedelta(hours=1)).isoformat(), str(config),
                (T0 - timedelta(minutes=5)).isoformat()]  # fmt: skip
        proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while _session_writes(fake) < 30 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, "the job finished before it was killed"
        assert 0 < len({w["sessionId"] for w in fake.score_writes if w.get("sessionId")}) < 40

        again = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        stored = _by_session(fake)
        assert len(stored) == 40
        for names in stored.values():
            assert all(len(rows) == 1 for rows in names.values())  # no duplicate
            assert names["session.turns"][0]["value"] == 2.0
        with Store(tmp_path / "ts.db") as store:
            assert store.query("SELECT count(*) FROM sessions WHERE scored_turns = turns")[0][0] == 40
