"""``tracescore dashboard --to langfuse``: the real ``langfuse`` SDK over loopback against a fake of the unstable
dashboards API (``tests/fakes/langfuse_dashboards.py``, from the SDK's generated types). Issue #31: item 1 and
acceptance 1 (the dashboard and its widgets created once; a second run sends no write; ``--dry-run`` sends none).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.base import Fault
from tests.fakes.langfuse import PUBLIC_KEY, SECRET_KEY
from tests.fakes.langfuse_dashboards import FakeLangfuseDashboards
from tracescore.calibrate.labels import VERDICT_LABEL
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.judge.rubrics import load_rubric
from tracescore.store import Store

NAME = "tracescore: stage split"
HEADLINES = {"retrieval.recall_at_5", "grounding.rate", "citation.support_rate", "citation.unfetched_rate",
             "answer.correct"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.chdir(tmp_path)  # no tracescore.toml, no tracescore.db of the machine
    with FakeLangfuseDashboards() as server:
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
        monkeypatch.setenv("LANGFUSE_BASE_URL", server.url)
        yield server


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, ["dashboard", "--to", "langfuse", *args])


def _by_score(server: FakeLangfuseDashboards) -> dict[str, dict[str, Any]]:
    out = {}
    for widget in server.widgets.values():
        (name,) = [f["value"] for f in widget["filters"] if f["column"] == "name"]
        out[name] = widget
    return out


def _calibrate(path: Path, kappa: float, n: int) -> None:
    """A calibration row of the default judge and the bundled grounding rubric, as ``calibrate measure`` stores it."""
    store = Store(path)
    store.write(
        "INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [("c1", load_config(None).judge_model, load_rubric("grounding").version, VERDICT_LABEL, n, kappa, None, None,
          0.8, None, None, datetime(2026, 11, 30, 12, tzinfo=UTC).isoformat(), json.dumps({}))],
    )
    store.commit()
    store.close()


def test_creates_the_dashboard_and_its_widgets_once_and_a_second_run_writes_nothing(
    fake: FakeLangfuseDashboards,
) -> None:
    first = _run()
    assert first.exit_code == 0, first.output
    board = fake.board(NAME)
    widgets = _by_score(fake)
    assert set(widgets) == HEADLINES | {"diagnosis", "citation.fabricated_count"}
    placed = [t["widgetId"] for t in board["definition"]["widgets"]]
    assert sorted(placed) == sorted(fake.widgets), "every widget is placed once on the dashboard"
    writes = Counter((r.method, r.path.rsplit("/", 1)[-1]) for r in fake.writes())
    assert writes == Counter({("POST", "dashboard-widgets"): 7, ("POST", "dashboards"): 1})
    assert "8 created, 0 updated, 0 unchanged" in first.output and "8 writes" in first.output

    before = len(fake.writes())
    second = _run()
    assert second.exit_code == 0, second.output
    assert len(fake.writes()) == before, "a re-run with nothing changed sends no write"
    assert "0 created, 0 updated, 8 unchanged" in second.output and "0 writes" in second.output
    assert len(fake.dashboards) == 1 and len(fake.widgets) == 7


def test_dry_run_sends_nothing(fake: FakeLangfuseDashboards, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGFUSE_SECRET_KEY")  # a dry run needs no keys: it does not connect
    result = _run("--dry-run")
    assert result.exit_code == 0, result.output
    assert fake.requests == []
    assert "plan (dry run, nothing sent)" in result.output
    for score in HEADLINES | {"diagnosis", "citation.fabricated_count"}:
        assert f"where name = {score} and source any of API" in result.output
    assert "would create or update widget 'citation.fabricated_count > 0" in result.output


def test_dry_run_after_a_run_still_sends_nothing(fake: FakeLangfuseDashboards) -> None:
    assert _run().exit_code == 0
    sent = len(fake.requests)
    result = _run("--dry-run", "--by", "environment")
    assert result.exit_code == 0, result.output
    assert len(fake.requests) == sent
    assert "split by environment" in result.output


def test_widgets_count_only_tracescore_scores_by_kind(fake: FakeLangfuseDashboards) -> None:
    assert _run().exit_code == 0
    widgets = _by_score(fake)
    ours = {"column": "source", "operator": "any of", "type": "stringOptions", "value": ["API"]}
    for widget in widgets.values():
        assert ours in widget["filters"], "annotations (ANNOTATION) and Langfuse evaluators (EVAL) are left out"
    for score in HEADLINES:
        w = widgets[score]
        assert (w["chartType"], w["metrics"], w["dimensions"]) == (
            "LINE_TIME_SERIES", [{"measure": "value", "agg": "avg"}], [{"field": "traceName"}])
    assert widgets["answer.correct"]["view"] == "scores-boolean"
    cells = widgets["diagnosis"]
    assert (cells["view"], cells["chartType"], cells["dimensions"]) == (
        "scores-categorical", "BAR_TIME_SERIES", [{"field": "stringValue"}])
    fabricated = widgets["citation.fabricated_count"]
    assert fabricated["chartType"] == "NUMBER" and fabricated["metrics"] == [{"measure": "count", "agg": "count"}]
    assert {"column": "value", "operator": ">", "type": "number", "value": 0} in fabricated["filters"]


def test_grounding_rate_carries_the_latest_calibration_and_a_new_one_updates_only_that(
    fake: FakeLangfuseDashboards, tmp_path: Path
) -> None:
    first = _run()
    assert first.exit_code == 0, first.output
    assert "judge not calibrated" in _by_score(fake)["grounding.rate"]["name"]
    _calibrate(tmp_path / "tracescore.db", kappa=0.71, n=40)
    before = len(fake.writes())
    second = _run()
    assert second.exit_code == 0, second.output
    widget = _by_score(fake)["grounding.rate"]
    assert "judge kappa 0.71 (n=40, measured 2026-11-30)" in widget["name"]
    assert "judge kappa 0.71" in fake.board(NAME)["description"]
    sent = [(r.method, r.path.rsplit("/", 1)[-1]) for r in fake.writes()[before:]]
    assert sent == [("PATCH", widget["id"]), ("PATCH", fake.board(NAME)["id"])]
    assert "0 created, 2 updated, 6 unchanged" in second.output


def test_a_removed_placement_is_put_back(fake: FakeLangfuseDashboards) -> None:
    assert _run().exit_code == 0
    board = fake.board(NAME)
    gone = board["definition"]["widgets"].pop()
    result = _run()
    assert result.exit_code == 0, result.output
    assert gone["widgetId"] in [t["widgetId"] for t in fake.board(NAME)["definition"]["widgets"]]
    assert [r.method for r in fake.writes()][-1] == "POST" and fake.writes()[-1].path.endswith("/placements")


def test_a_split_langfuse_cannot_make_is_said_with_the_manual_step(fake: FakeLangfuseDashboards) -> None:
    result = _run("--by", "model")
    assert result.exit_code == 0, result.output
    assert "by hand: Langfuse cannot split trace-level scores by model" in result.output
    assert all(w["dimensions"] == [] for w in fake.widgets.values() if w["chartType"] == "LINE_TIME_SERIES")
    assert "1 steps left to do by hand" in result.output


def test_a_429_and_a_5xx_are_retried_and_the_run_completes(fake: FakeLangfuseDashboards) -> None:
    fake.faults.add("/api/public/unstable/dashboards", Fault.http(502, **{"Retry-After": "0"}))  # the first read
    fake.write_faults.extend([Fault.rate_limited(retry_after=0), Fault.http(503, **{"Retry-After": "0"})])
    result = _run()
    assert result.exit_code == 0, result.output
    assert fake.faults.pending() == 0 and not fake.write_faults
    assert len(fake.widgets) == 7 and len(fake.dashboards) == 1, "no widget or dashboard lost or doubled"
    assert "(3 retried)" in result.output


def test_a_write_that_keeps_failing_stops_with_one_line_and_a_rerun_finishes(fake: FakeLangfuseDashboards) -> None:
    fake.write_faults.extend([Fault.http(500, **{"Retry-After": "0"})] * 5)  # max_attempts = 5: fails for good
    result = _run()
    assert result.exit_code == 4, result.output
    assert "tracescore: cannot create widget 'retrieval.recall_at_5: daily mean by trace name' from Langfuse at" in (
        result.output)
    assert "after 5 attempts: HTTP 500" in result.output and "a re-run finishes it" in result.output
    assert fake.widgets == {} and fake.dashboards == {}
    again = _run()
    assert again.exit_code == 0, again.output
    assert len(fake.widgets) == 7 and len(fake.dashboards) == 1


def test_an_empty_name_is_a_usage_error_naming_the_fix(fake: FakeLangfuseDashboards) -> None:
    result = _run("--name", "  ")
    assert result.exit_code == 2
    assert "tracescore: the dashboard name is empty; pass --name 'a name'" in result.output
    assert fake.requests == []


def test_a_widget_the_server_stored_before_it_answered_500_is_removed_on_the_next_run(
    fake: FakeLangfuseDashboards,
) -> None:
    """#43 item 8: the create is stored, the server answers 500, the retried create stores a second widget of the
    same name; the next run removes the one not placed on the dashboard, once."""
    fake.stored_faults.append(Fault.http(500, **{"Retry-After": "0"}))
    first = _run()
    assert first.exit_code == 0, first.output
    assert len(fake.widgets) == 8  # one widget twice
    placed = {t["widgetId"] for t in fake.board(NAME)["definition"]["widgets"]}
    (extra,) = set(fake.widgets) - placed
    second = _run()
    assert second.exit_code == 0, second.output
    assert set(fake.widgets) == placed and extra not in fake.widgets
    deleted = [r for r in fake.writes() if r.method == "DELETE"]
    assert [r.path.rsplit("/", 1)[-1] for r in deleted] == [extra]
    assert "duplicate" in second.output
    before = len(fake.writes())
    third = _run()
    assert third.exit_code == 0 and len(fake.writes()) == before, "nothing more to remove"
