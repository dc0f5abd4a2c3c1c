from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tracescore.sinks.state import JobState, from_text, to_text
from tracescore.sinks.store import MIGRATIONS, Store

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def test_job_state_migration_is_appended_after_the_initial_one(tmp_path: Path) -> None:
    names = [name for name, _ in MIGRATIONS]
    assert names[0] == "0001_initial" and names.index("0004_job_state") == 3  # later ones are appended after it
    with Store(tmp_path / "s.db") as store:
        assert "0004_job_state" in store.applied_migrations()


def test_time_text_sorts_like_time() -> None:
    moments = [T0, T0 + timedelta(microseconds=1), T0 + timedelta(seconds=1), T0 + timedelta(days=400)]
    texts = [to_text(m) for m in moments]
    assert texts == sorted(texts)
    assert [from_text(t) for t in texts] == moments


def test_watermark_never_moves_back_and_low_only_down(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        state = JobState(store)
        assert state.watermark("src") is None
        state.advance("src", T0, T0 + timedelta(hours=2), "r1")
        store.commit()
        state.advance("src", T0 + timedelta(hours=1), T0 + timedelta(hours=1), "r2")
        store.commit()
        mark = state.watermark("src")
        assert mark is not None and mark.low == T0 and mark.watermark == T0 + timedelta(hours=2)
        state.advance("src", T0 - timedelta(hours=1), T0 + timedelta(hours=3), "r3")
        store.commit()
        mark = state.watermark("src")
        assert mark is not None and mark.low == T0 - timedelta(hours=1) and mark.watermark == T0 + timedelta(hours=3)


def test_uncommitted_marks_are_lost_with_the_transaction(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    JobState(store).mark("scope", [("a", T0, "scored")], "r1")
    store._db.close()  # the process dies before commit
    with Store(path) as again:
        assert JobState(again).marked("scope", "a") is None


def test_backfill_is_resumed_by_source_setup_and_window(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        state = JobState(store)
        job, resumed = state.open_backfill("src", "fp1", T0, T0 + timedelta(hours=4), 4)
        assert not resumed and len(job.windows()) == 4
        state.backfill_progress(job.id, T0 + timedelta(hours=2), "running")
        store.commit()
        again, resumed = state.open_backfill("src", "fp1", T0, T0 + timedelta(hours=4), 4)
        assert resumed and again.id == job.id
        assert again.windows() == [
            (T0 + timedelta(hours=2), T0 + timedelta(hours=3)),
            (T0 + timedelta(hours=3), T0 + timedelta(hours=4)),
        ]
        other, resumed = state.open_backfill("src", "fp2", T0, T0 + timedelta(hours=4), 4)
        assert not resumed and other.id != job.id
        assert state.latest_unfinished_backfill("src") is not None
