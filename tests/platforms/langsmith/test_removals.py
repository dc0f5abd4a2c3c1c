"""After a scoring change LangSmith shows the current feedback only (#16): the real CLI and ``langsmith`` SDK over
loopback HTTP to the fake. A new version is a new feedback (PATCH cannot change ``source_info``); the old one is
deleted once the new one is accepted, a feedback whose score became absent is deleted with its reason in the store,
and feedback we did not give (a human in the app, another evaluator, same keys) is never touched."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tests.sinks.releases import OLD_NAMES, before_rename, bumped
from tracescore import catalog, config, registry
from tracescore.cli import main
from tracescore.engine.pipeline import score_trace
from tracescore.engine.setup import build_setup
from tracescore.sinks.records import records_from_result
from tracescore.store.db import Store
from tracescore.store.written import WrittenScores

ARGS = ["--from", "2026-11-01", "--to", "2026-12-01", "-q"]
OTHERS = ("00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-00000000a002")


def _ours(fake: FakeLangSmith) -> list[dict[str, Any]]:
    return [f for f in fake.feedback.values() if f["id"] not in OTHERS]


def _backfill(config_path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["backfill", "--config", str(config_path), *ARGS])
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[-1])  # type: ignore[no-any-return]


def _drop_labels(value: Any) -> None:
    """Clear every ``labels`` mapping inside a run (the trace's labels were removed)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "labels" and isinstance(item, dict):
                item.clear()
            else:
                _drop_labels(item)
    elif isinstance(value, list):
        for item in value:
            _drop_labels(item)


def _expected(config_path: Path) -> set[tuple[str, str]]:
    setup = build_setup(config.load_config(config_path))
    try:
        pairs: set[tuple[str, str]] = set()
        for record in setup.source.records(*setup_window()):
            records, _ = records_from_result(score_trace(setup.adapter(record.payload), setup.scorers))
            pairs |= {(r.trace_id, r.name) for r in records}
        return pairs
    finally:
        setup.close()


def setup_window() -> tuple[Any, Any]:
    from datetime import UTC, datetime

    return datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)


def test_a_version_changing_backfill_leaves_one_current_feedback_per_run_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangSmith() as fake:
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_removals_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        project_id = seed(fake, load_samples())
        roots = sorted(r["id"] for r in fake.runs if r["parent_run_id"] is None)
        stamp = {"created_at": "2026-11-02T00:00:00+00:00", "modified_at": "2026-11-02T00:00:00+00:00"}
        human = stamp | {"id": OTHERS[0], "run_id": roots[0], "key": "answer.correct", "score": 0.0,
                         "session_id": project_id, "feedback_source": {"type": "app", "user_id": "u-1"}}
        other = stamp | {"id": OTHERS[1], "run_id": roots[1], "key": "retrieval.recall_at_5", "score": 0.3,
                 "session_id": project_id, "feedback_source": {"type": "model", "metadata": {"tool": "other-eval"}}}
        fake.add_feedback(human)
        fake.add_feedback(other)
        config_path = tmp_path / "tracescore.toml"
        config_path.write_text(
            f'[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
            "backfill_chunks = 4\nwrite_batch = 7\n"
        )
        first = _backfill(config_path)
        pairs_a = Counter((f["run_id"], f["key"]) for f in _ours(fake))
        assert set(pairs_a.values()) == {1} and len(pairs_a) > 200 and first["scores_removed"] == 0

        vanish = roots[:5]
        for run in fake.runs:
            if run["id"] in vanish:
                _drop_labels(run)
        monkeypatch.setattr(registry, "_LOADED", bumped("2"))
        deletes = len(fake.requests_to("/feedback/", "DELETE"))
        second = _backfill(config_path)

        pairs_b = Counter((f["run_id"], f["key"]) for f in _ours(fake))
        assert set(pairs_b.values()) == {1}  # never two of ours (the human's answer.correct is not ours)
        assert set(pairs_b) == _expected(config_path)
        versions = {f["feedback_source"]["metadata"]["scorer_version"] for f in _ours(fake)}
        assert versions <= {e.version for e in catalog.entries()}  # every feedback carries the new (bumped) version
        vanished = set(pairs_a) - set(pairs_b)
        assert vanished and {run for run, _ in vanished} <= set(vanish)
        # every old feedback went: superseded by its new version, or vanished
        assert second["scores_removed"] == sum(pairs_a.values())
        assert len(fake.requests_to("/feedback/", "DELETE")) - deletes == second["scores_removed"]
        assert fake.feedback[OTHERS[0]] == human and fake.feedback[OTHERS[1]] == other  # untouched

        with Store(tmp_path / "ts.db") as store:
            history = WrittenScores(store, "langsmith").history(vanish[0])
        reasons = [e["reason"] for e in history if e["event"] == "removed"]
        assert any(r.startswith("absent: ") for r in reasons) and any(r.startswith("superseded by") for r in reasons)
        written = {e["version"] for e in history if e["event"] == "written" and e["name"] == "citation.coverage"}
        assert written == {"citations-1", "citations-2"}  # the store holds both versions


def test_the_trajectory_feedback_under_its_old_keys_is_removed_once_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#43 item 5: a release before the rename gave ``search.calls``… feedback; the next backfill gives
    ``trajectory.search_calls``… and deletes each old-keyed feedback of ours once (another evaluator's feedback under
    an old key is not ours: kept); a re-run deletes nothing."""
    with FakeLangSmith() as fake:
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_removals_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        project_id = seed(fake, load_samples())
        roots = sorted(r["id"] for r in fake.runs if r["parent_run_id"] is None)
        other = {"id": OTHERS[1], "run_id": roots[0], "key": "search.calls", "score": 9.0, "session_id": project_id,
                 "created_at": "2026-11-02T00:00:00+00:00", "modified_at": "2026-11-02T00:00:00+00:00",
                 "feedback_source": {"type": "model", "metadata": {"tool": "other-eval"}}}  # fmt: skip
        fake.add_feedback(other)
        config_path = tmp_path / "tracescore.toml"
        config_path.write_text(
            f'[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
            "backfill_chunks = 4\nwrite_batch = 7\n"
        )
        with monkeypatch.context() as before:
            before_rename(before)
            _backfill(config_path)
        old = [f for f in _ours(fake) if f["key"] in OLD_NAMES]
        assert {f["key"] for f in old} == set(OLD_NAMES) and len(old) >= len(roots) * 3
        deletes = len(fake.requests_to("/feedback/", "DELETE"))

        second = _backfill(config_path)
        keys = Counter((f["run_id"], f["key"]) for f in _ours(fake))
        assert not {key for _, key in keys} & set(OLD_NAMES)  # every old key of ours gone
        assert set(OLD_NAMES.values()) <= {key for _, key in keys}
        assert set(keys.values()) == {1} and set(keys) == _expected(config_path)
        removed = len(fake.requests_to("/feedback/", "DELETE")) - deletes
        assert removed == second["scores_removed"] and removed >= len(old)  # the old keys, and stale_rate's version 1
        assert fake.feedback[OTHERS[1]] == other  # not ours: kept
        with Store(tmp_path / "ts.db") as store:
            history = WrittenScores(store, "langsmith").history(roots[3])
        reasons = {e["name"]: e["reason"] for e in history if e["event"] == "removed"}
        assert reasons["search.calls"].startswith("superseded by trajectory.search_calls version ")

        deletes = len(fake.requests_to("/feedback/", "DELETE"))
        config_path.write_text(config_path.read_text() + "\n[scorers.retrieval]\nk = 5\n")  # new fingerprint
        assert _backfill(config_path)["scores_removed"] == 0
        assert len(fake.requests_to("/feedback/", "DELETE")) == deletes  # removed once, never again
