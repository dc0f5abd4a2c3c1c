"""#48 acceptance 3, the evidence half: a turn that arrives in a later scheduled run than its session's earlier turn is
scored with that turn's evidence (read back from the store, never by re-reading the window), so the session scores
the job writes once the session is idle count no fabricated citation; with ``carry_evidence = false`` the same turn
counts one (the check can fail). A JSONL source the test appends turns to, the job on an injected clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tracescore.config import load_config
from tracescore.engine.runner import Outcome, run_job
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
PAGE = "https://docs.example.com/limits"


def _turn(n: int, at: datetime, *, fetch: bool) -> dict[str, Any]:
    """Turn ``n`` of conv-x: turn 1 searches and fetches the page and cites it; turn 2 cites it without a tool call."""
    text = "The daily limit is 42 units per account."
    steps: list[dict[str, Any]] = []
    if fetch:
        steps = [
            {"kind": "search", "tool": "web_search", "query": "daily limit",
             "hits": [{"rank": 1, "doc_id": "limits", "url": PAGE, "title": "Limits", "snippet": text}]},
            {"kind": "fetch", "tool": "fetch_page", "url": PAGE, "doc_id": "limits", "text": text, "status": 200},
        ]  # fmt: skip
    return {
        "schema_version": "1", "id": f"x-{n}", "session_id": "conv-x", "timestamp": at.isoformat(),
        "question": "And per account?" if n > 1 else "What is the daily limit?", "steps": steps,
        "answer": f"The daily limit is 42 units per account [1].\n\nSources:\n[1] {PAGE}",
    }  # fmt: skip


def _append(path: Path, trace: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(trace) + "\n")


def _run(config: Path, at: datetime, since: datetime | None = None) -> Outcome:
    setup = build_setup(load_config(config), clock=lambda: at)
    try:
        return run_job(setup, now=at, since=since)
    finally:
        setup.close()


@pytest.mark.parametrize("carry", [True, False])
def test_a_later_runs_turn_is_scored_with_its_sessions_earlier_evidence(tmp_path: Path, carry: bool) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text("")
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nlookback = "2h"\n'
        f'\n[sessions]\nidle = "30m"\ncarry_evidence = {"true" if carry else "false"}\n'
    )
    _append(traces, _turn(1, T0, fetch=True))
    first = _run(config, T0 + timedelta(minutes=10), since=T0 - timedelta(minutes=5))
    assert first.summary["scored"] == 1 and first.summary["sessions"]["written"] == 0  # not idle yet

    _append(traces, _turn(2, T0 + timedelta(minutes=20), fetch=False))  # the next turn, in a later run
    second = _run(config, T0 + timedelta(minutes=30))
    assert second.summary["scored"] == 1 and second.summary["sessions"]["written"] == 0

    third = _run(config, T0 + timedelta(minutes=55))  # idle since 09:20: written now, once
    assert third.summary["sessions"]["written"] == 1
    with Store(tmp_path / "ts.db") as store:
        lines = {r["trace_id"]: r for run in (first, second) for r in store.results(run.run_id)}
        (written,) = store.query("SELECT scores FROM sessions WHERE session_id = 'conv-x'")[0]
    turn2 = lines["x-2"]["scores"]
    session = json.loads(written)
    assert session["turns"] == ["x-1", "x-2"] and session["scores"]["session.turns"] == 2.0
    if carry:  # turn 2's citation was fetched in turn 1 (an earlier run): neither fabricated nor unfetched
        assert turn2["citation.fabricated_count"] == 0.0 and turn2["citation.unfetched_rate"] == 0.0
        assert session["scores"]["session.fabricated_count"] == 0.0
    else:  # scored alone, the same turn cites a page it never saw
        assert turn2["citation.fabricated_count"] == 1.0
        assert session["scores"]["session.fabricated_count"] == 1.0
