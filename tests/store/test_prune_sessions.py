"""``store prune`` and conversations: the evidence a pruned run kept of its sessions' turns goes with it, and the
``sessions`` row of a session none of whose turns is left; a run holding a turn of a session still active at the date
is kept (the session's scores are computed again from every turn when it grows); after a prune that removed the
newest results, the job still folds the results it stores next (SQLite gives a deleted id again). The job on a JSONL
source with an injected clock, the prune as ``tracescore store prune`` runs it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tracescore.config import load_config
from tracescore.engine.runner import Outcome, run_job
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store
from tracescore.store.prune import prune

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
CUT = T0 + timedelta(days=1)


def _turn(tid: str, session: str, at: datetime, page: str, *, fetch: bool) -> dict[str, Any]:
    """A turn citing ``page``: fetched here, or (``fetch`` False) fetched in an earlier turn of the session."""
    text = f"The limit of {page} is 42 units."
    steps: list[dict[str, Any]] = []
    if fetch:
        steps = [
            {"kind": "search", "tool": "web_search", "query": "limit",
             "hits": [{"rank": 1, "doc_id": page, "url": page, "title": "Limits", "snippet": text}]},
            {"kind": "fetch", "tool": "fetch_page", "url": page, "doc_id": page, "text": text, "status": 200},
        ]  # fmt: skip
    answer = f"The limit is 42 units [1].\n\n[1] {page}"
    return {"schema_version": "1", "id": tid, "session_id": session, "timestamp": at.isoformat(),
            "question": "What is the limit?", "steps": steps, "answer": answer}  # fmt: skip


class Job:
    def __init__(self, tmp_path: Path) -> None:
        self.traces = tmp_path / "t.jsonl"
        self.traces.write_text("")
        self.config = tmp_path / "tracescore.toml"
        self.config.write_text(
            f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nlookback = "2h"\n'
            'settle = "1m"\n\n[sessions]\nidle = "30m"\n'
        )
        self.store = tmp_path / "ts.db"

    def add(self, *turns: dict[str, Any]) -> None:
        with self.traces.open("a", encoding="utf-8") as f:
            f.writelines(json.dumps(t) + "\n" for t in turns)

    def run(self, at: datetime, since: datetime | None = None) -> Outcome:
        setup = build_setup(load_config(self.config), clock=lambda: at)
        try:
            return run_job(setup, now=at, since=since)
        finally:
            setup.close()

    def finished(self, run_ids: list[str], at: datetime) -> None:
        """Date these runs' end back to ``at`` (they ran on the wall clock)."""
        with Store(self.store) as store:
            store.write("UPDATE runs SET finished_at = ? WHERE id = ?", [(at.isoformat(), r) for r in run_ids])
            store.commit()

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with Store(self.store) as store:
            return store.query(sql)


def test_prune_removes_ended_sessions_and_keeps_the_runs_of_a_session_still_going(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.add(_turn("a1", "conv-a", T0, "https://a.example/p", fetch=True),
            _turn("a2", "conv-a", T0 + timedelta(minutes=5), "https://a.example/p", fetch=False))  # fmt: skip
    one = job.run(T0 + timedelta(minutes=8), since=T0 - timedelta(minutes=5))  # conv-a's two turns
    job.add(_turn("b1", "conv-b", T0 + timedelta(minutes=10), "https://b.example/p", fetch=True))
    two = job.run(T0 + timedelta(minutes=15))  # conv-b's first turn
    three = job.run(T0 + timedelta(minutes=50))  # both idle: written
    assert (one.summary["scored"], two.summary["scored"], three.summary["sessions"]["written"]) == (2, 1, 2)
    job.add(_turn("b2", "conv-b", T0 + timedelta(days=2), "https://b.example/p", fetch=False))  # conv-b goes on
    four = job.run(T0 + timedelta(days=2, minutes=10))
    assert four.summary["scored"] == 1 and four.summary["sessions"]["waiting"] == 1
    job.finished([one.run_id, two.run_id, three.run_id], T0 + timedelta(hours=1))

    with Store(job.store) as store:
        dry = prune(store, CUT, dry_run=True)
        assert dry.counts() == "2 runs (2 results, 2 marks, 2 session turns, 1 sessions)"
        assert set(dry.runs) == {one.run_id, three.run_id}  # two holds b1, of conv-b still going at the date
        done = prune(store, CUT)
        assert done.counts() == dry.counts()
    assert job.rows("SELECT session_id, trace_id FROM session_evidence ORDER BY trace_id") == [
        ("conv-b", "b1"), ("conv-b", "b2")]  # fmt: skip
    assert job.rows("SELECT session_id FROM sessions") == [("conv-b",)]
    assert {r[0] for r in job.rows("SELECT trace_id FROM results")} == {"b1", "b2"}

    five = job.run(T0 + timedelta(days=2, hours=1))  # conv-b idle: written from both its turns
    assert five.summary["sessions"]["written"] == 1
    (line,) = job.rows("SELECT scores FROM sessions WHERE session_id = 'conv-b'")[0]
    scores = json.loads(line)
    assert scores["turns"] == ["b1", "b2"] and scores["scores"]["session.turns"] == 2.0
    assert scores["scores"]["session.fabricated_count"] == 0.0  # b2's page was fetched in b1: its evidence kept


def test_after_a_prune_of_the_newest_results_the_next_results_are_still_folded(tmp_path: Path) -> None:
    job = Job(tmp_path)
    job.add(_turn("a1", "conv-a", T0, "https://a.example/p", fetch=True),
            _turn("a2", "conv-a", T0 + timedelta(minutes=5), "https://a.example/p", fetch=False))  # fmt: skip
    one = job.run(T0 + timedelta(minutes=8), since=T0 - timedelta(minutes=5))
    two = job.run(T0 + timedelta(minutes=50))
    assert two.summary["sessions"]["written"] == 1
    job.finished([one.run_id, two.run_id], T0 + timedelta(hours=1))
    with Store(job.store) as store:
        assert prune(store, CUT).counts() == "2 runs (2 results, 2 marks, 2 session turns, 1 sessions)"
    assert job.rows("SELECT count(*) FROM results") == [(0,)]

    later = T0 + timedelta(days=3)
    job.add(_turn("c1", "conv-c", later, "https://c.example/p", fetch=True),
            _turn("c2", "conv-c", later + timedelta(minutes=1), "https://c.example/p", fetch=False))  # fmt: skip
    three = job.run(later + timedelta(minutes=5), since=later - timedelta(minutes=5))
    assert three.summary["scored"] == 2
    assert job.rows("SELECT min(id) FROM results") == [(1,)]  # the ids the pruned results had
    four = job.run(later + timedelta(hours=1))
    assert four.summary["sessions"]["written"] == 1
    assert job.rows("SELECT session_id, turns, scored_turns FROM sessions") == [("conv-c", 2, 2)]
