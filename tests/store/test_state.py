from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tracescore.store.db import MIGRATIONS, Store
from tracescore.store.state import JobState, from_text, to_text

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def test_job_state_migration_is_appended_after_the_initial_one(tmp_path: Path) -> None:
    names = [name for name, _ in MIGRATIONS]
    assert names[0] == "0001_initial" and names[3] == "0004_job_state" and names == sorted(set(names))
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
        assert again.windows() == [  # newest first: the two newest slices are done
            (T0 + timedelta(hours=1), T0 + timedelta(hours=2)),
            (T0, T0 + timedelta(hours=1)),
        ]
        state.backfill_progress(job.id, T0 + timedelta(hours=3), "running")  # never moved back up
        store.commit()
        assert state.open_backfill("src", "fp1", T0, T0 + timedelta(hours=4), 4)[0].windows()[0][1] == T0 + timedelta(
            hours=2
        )
        other, resumed = state.open_backfill("src", "fp2", T0, T0 + timedelta(hours=4), 4)
        assert not resumed and other.id != job.id
        assert state.latest_unfinished_backfill("src") is not None


def test_a_backfill_done_oldest_first_before_the_upgrade_resumes_with_what_is_left(tmp_path: Path) -> None:
    """A backfill begun by a release that did slices oldest first (``done_until``) keeps what it did."""
    with Store(tmp_path / "s.db") as store:
        state = JobState(store)
        job, _ = state.open_backfill("src", "fp1", T0, T0 + timedelta(hours=4), 4)
        store.write("UPDATE backfills SET done_until = ? WHERE id = ?", [(to_text(T0 + timedelta(hours=2)), job.id)])
        store.commit()
        again, resumed = state.open_backfill("src", "fp1", T0, T0 + timedelta(hours=4), 4)
        assert resumed and again.windows() == [
            (T0 + timedelta(hours=3), T0 + timedelta(hours=4)),
            (T0 + timedelta(hours=2), T0 + timedelta(hours=3)),
        ]
        state.backfill_progress(job.id, T0 + timedelta(hours=2), "done")
        store.commit()
        assert state.open_backfill("src", "fp1", T0, T0 + timedelta(hours=4), 4)[0].windows() == []
