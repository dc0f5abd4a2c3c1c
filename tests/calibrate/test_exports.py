"""The calibrate package's public face, and its store migration on an existing store."""

from __future__ import annotations

from pathlib import Path

import tracescore.calibrate as calibrate
from tests.store.old_store import store_before
from tracescore.store.db import Store


def test_all_is_complete_and_sorted() -> None:
    public = {n for n in dir(calibrate) if not n.startswith("_") and n != "annotations"}
    modules = {n for n in public if type(getattr(calibrate, n)).__name__ == "module"}
    assert set(calibrate.__all__) == public - modules
    assert list(calibrate.__all__) == sorted(calibrate.__all__)


def test_calibration_tables_are_added_to_an_existing_store(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store_before(path, "0006_calibration").close()
    with Store(path) as store:
        assert "0006_calibration" in store.applied_migrations()
        assert store.query("SELECT COUNT(*) FROM calibration_items") == [(0,)]
        assert store.query("SELECT COUNT(*) FROM calibrations") == [(0,)]
