"""Issue #35 item 6: ``run:latest`` after an idle scheduled run (every trace already scored) is the latest run that
scored something, and the output says which run was taken."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tests.conftest import REPO
from tracescore.cli import main
from tracescore.store.db import Store

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _store_with_an_idle_run_last(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "ts.db"
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "{SAMPLES}"\n[scoring]\njudge = false\n[job]\nstore = "{store}"\n'
    )
    first = _cli("run", "--config", str(config), "-q", "--since", "2020-01-01T00:00:00Z")
    assert first.exit_code == 0, first.output
    idle = _cli("run", "--config", str(config), "-q")  # the next scheduled run: nothing new
    assert idle.exit_code == 0, idle.output
    with Store(store) as opened:
        runs = [r for r in opened.runs() if r["status"] == "done"]
        assert len(runs) == 2 and list(opened.results(runs[-1]["id"])) == []  # the latest run holds nothing
    return store, str(runs[0]["id"])


def test_run_latest_skips_a_run_that_scored_nothing_and_says_which_it_took(tmp_path: Path) -> None:
    store, scored = _store_with_an_idle_run_last(tmp_path)
    report = _cli("report", "run:latest", "--store", str(store), "--format", "json")
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["overall"]["traces"] == 38
    assert report.stderr.splitlines() == [
        f"note: run:latest is run {scored[:12]} (started {Store(store).runs()[0]['started_at']}), the latest that"
        " scored something: 1 later finished run(s) scored no trace (nothing new to score)"
    ]
    gate = _cli("gate", "run:latest", "--baseline", "run:latest", "--store", str(store))
    assert gate.exit_code in (0, 1) and f"38 traces in run {scored[:12]}" in gate.stdout
    too_far = _cli("report", "run:latest~1", "--store", str(store))
    assert too_far.exit_code == 6
    assert "holds only 1 finished run(s) that scored something (1 more scored no trace)" in too_far.stderr
