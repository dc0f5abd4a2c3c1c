"""The written-scores ledger: live ids, re-written after a removal, and the scores of stores older than the ledger."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tracescore.result import TraceResult
from tracescore.scores import absent, score
from tracescore.store.db import Store
from tracescore.store.written import LEDGER_MIGRATION, Written, WrittenScores


def test_live_is_the_latest_event_per_id_and_platforms_are_separate(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        assert LEDGER_MIGRATION in store.applied_migrations()
        ledger = WrittenScores(store, "langfuse")
        a, b = Written("id-a", "t-1", "x", "x", "1"), Written("id-b", "t-1", "y", "y", "1")
        ledger.wrote([a, b], "r1")
        ledger.removed([(a, "absent: gone")], "r2")
        assert ledger.live(["t-1"]) == [b]
        ledger.wrote([a], "r3")  # the score came back
        assert sorted(w.score_id for w in ledger.live(["t-1"])) == ["id-a", "id-b"]
        assert WrittenScores(store, "langsmith").live(["t-1"]) == []
        assert ledger.known(["id-a", "id-z"]) == {"id-a"}
        store.commit()
        assert [e["event"] for e in ledger.history("t-1")] == ["written", "written", "removed", "written"]


def test_legacy_lists_scores_of_runs_before_the_ledger_that_wrote_to_this_platform(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        result = TraceResult(trace_id="t-1", timestamp=datetime(2026, 11, 1, tzinfo=UTC))
        result.scores["x"] = score("x", 0.5, scorer_version="x-1")
        result.scores["y"] = absent("y", "no label")
        for source, summary in (("langfuse:http://h", {"scores_written": 1}), ("langsmith:p", {"scores_written": 1}),
                                ("langfuse:http://h", {"scores_written": 0})):
            run = store.start_run("backfill", source=source)
            store.add_result(run, result)
            store.finish_run(run, summary)
        store.query("UPDATE migrations SET applied_at = ? WHERE name = ?", (datetime.now(UTC).isoformat(),
                                                                             LEDGER_MIGRATION))
        later = store.start_run("backfill", source="langfuse:http://h")  # after the upgrade: not legacy
        store.add_result(later, result)
        store.finish_run(later, {"scores_written": 1})
        rows = WrittenScores(store, "langfuse").legacy(["t-1", "t-2"])
        assert rows == [("t-1", "x", json.loads(json.dumps({"scorer_version": "x-1"})))]
