"""``tracescore calibrate``: setup / sample / pull through the CLI, on a local sheet (no platform) and against the
Langfuse and LangSmith fakes with the real SDKs; exit codes from ``cli/exits.py``."""

from __future__ import annotations

import csv
import json
import random
import shutil
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_queues import annotate, state as langfuse_state
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_queues import review, state as langsmith_state
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.labels import VERDICT_LABEL, measure_and_record
from tracescore.calibrate.sampling import candidates
from tracescore.calibrate.sheet import LABEL_COLUMNS
from tracescore.cli.main import main
from tracescore.store.db import Store

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def _store(tmp_path: Path, traces: int = 200, **kwargs: object) -> tuple[Path, str]:
    path = tmp_path / "s.db"
    store, run_id = scored_store(path, traces=traces, **kwargs)  # type: ignore[arg-type]
    store.finish_run(run_id, {})
    store.close()
    return path, run_id


def _cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["calibrate", *args], env=env, catch_exceptions=False)


def _rows(sheet: Path) -> list[dict[str, str]]:
    with sheet.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _judge_values(db: Path) -> dict[str, str]:
    store = Store(db)
    return {
        item: json.loads(judge)["values"][VERDICT_LABEL]
        for item, judge in store.query("SELECT item_id, judge FROM calibration_items")
    }


def test_sheet_loop_for_jsonl_teams(tmp_path: Path) -> None:
    db, run_id = _store(tmp_path)
    sheet = tmp_path / "labels.csv"
    result = _cli("sample", "--to", str(sheet), "--n", "60", "--seed", "3", "--store", str(db))
    assert result.exit_code == 0, result.output
    rows = _rows(sheet)
    assert len(rows) == 60 and "queued 60 item(s) to sheet" in result.output
    assert not {"verdict", "judge", "judge_score"} & set(rows[0])  # blind: no judge column
    assert all(rows[0][name] == "" for name in LABEL_COLUMNS)  # nothing prefilled
    strata = Counter(c.stratum for c in candidates(Store(db), run_id))
    assert all(f"{s} " in result.output for s in strata)  # every non-empty stratum listed, each with ≥ 1

    # the same seed on a copy of the store gives the same sample; a second sample here queues none of it again
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    with Store(copy) as fresh:
        fresh.write("DELETE FROM calibration_items", [()])
        fresh.commit()
    again = tmp_path / "again.csv"
    assert _cli("sample", "--to", str(again), "--n", "60", "--seed", "3", "--store", str(copy)).exit_code == 0
    assert [r["item_id"] for r in _rows(again)] == [r["item_id"] for r in rows]
    second = tmp_path / "second.csv"
    assert _cli("sample", "--to", str(second), "--n", "60", "--seed", "3", "--store", str(db)).exit_code == 0
    assert not {r["item_id"] for r in _rows(second)} & {r["item_id"] for r in rows}

    # a reviewer fills the sheet (85% agreement with the judge), one row with a bad value
    judged = _judge_values(db)
    rng = random.Random(2)
    for row in rows:
        truth = judged[row["item_id"]]
        row[VERDICT_LABEL] = truth if rng.random() < 0.85 else rng.choice([v for v in VERDICTS if v != truth])
        row["reviewer"] = "ana"
    rows[5][VERDICT_LABEL] = "mostly"
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    pulled = _cli("pull", "--from", str(sheet), "--store", str(db))
    assert pulled.exit_code == 1  # the bad row is reported with its row number; the rest are kept
    assert "59 new" in pulled.output and "row 7:" in pulled.output and "'mostly'" in pulled.output
    assert "0 new" in _cli("pull", "--from", str(sheet), "--store", str(db)).output  # a re-pull adds nothing

    cal = measure_and_record(Store(db), judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW)
    assert cal.n == 59 and cal.kappa is not None and cal.kappa > 0.5


def test_budget_per_day_caps_what_is_queued(tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    first = _cli("sample", "--to", str(tmp_path / "a.csv"), "--n", "60", "--budget-per-day", "30", "--store", str(db))
    assert first.exit_code == 0 and len(_rows(tmp_path / "a.csv")) == 30 and "cut from 60 to 30" in first.output
    second = _cli("sample", "--to", str(tmp_path / "b.csv"), "--n", "60", "--budget-per-day", "30", "--store", str(db))
    assert second.exit_code == 0 and _rows(tmp_path / "b.csv") == [] and "nothing queued today" in second.output


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = _store(tmp_path, traces=12)
    monkeypatch.chdir(tmp_path)
    for var in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(var, raising=False)
    missing = _cli("setup", "--to", "langfuse", "--store", str(db))
    assert missing.exit_code == 2 and "LANGFUSE_PUBLIC_KEY" in missing.output
    no_project = _cli("setup", "--to", "langsmith", "--store", str(db), env={"LANGSMITH_API_KEY": "k"})
    assert no_project.exit_code == 2 and "--project" in no_project.output
    too_small = _cli("sample", "--to", str(tmp_path / "x.csv"), "--n", "2", "--store", str(db))
    assert too_small.exit_code == 2 and "strata" in too_small.output
    bad_run = _cli("sample", "--to", str(tmp_path / "x.csv"), "--run", "nope", "--store", str(db))
    assert bad_run.exit_code == 6 and "'nope'" in bad_run.output  # a run spec naming no run: 6, as for gate/report


@pytest.fixture
def langfuse() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as fake:
        for t in range(200):
            fake.add_trace(
                {"id": f"trace-{t:03d}"}, [{"id": f"o{t}", "type": "SPAN", "startTime": "2026-11-30T10:00:00Z"}]
            )
        yield fake


def test_langfuse_setup_sample_pull(langfuse: FakeLangfuse, tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    env = env_for(langfuse)
    for _ in range(2):
        assert _cli("setup", "--to", "langfuse", "--store", str(db), env=env).exit_code == 0
    assert len(langfuse_state(langfuse).queues) == 1 and len(langfuse.score_configs) == 5
    result = _cli("sample", "--to", "langfuse", "--n", "60", "--seed", "9", "--store", str(db), env=env)
    assert result.exit_code == 0, result.output
    assert len(langfuse_state(langfuse).items) == 60
    assert _cli("sample", "--to", "langfuse", "--n", "60", "--seed", "9", "--store", str(db), env=env).exit_code == 0
    traces = [i["objectId"] for i in langfuse_state(langfuse).items]
    assert len(traces) == len(set(traces)) == 120  # never re-queued
    for trace in traces[:40]:
        annotate(langfuse, trace, VERDICT_LABEL, "supported")
    assert "40 new" in _cli("pull", "--from", "langfuse", "--store", str(db), env=env).output
    assert "0 new" in _cli("pull", "--from", "langfuse", "--store", str(db), env=env).output


def _run_id(t: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"run-{t}"))


def test_langsmith_setup_sample_pull(tmp_path: Path) -> None:
    db, _ = _store(tmp_path, trace_id=_run_id)
    with FakeLangSmith() as fake:
        project = fake.add_project("agent")
        fake.add_runs(
            [
                {
                    "id": _run_id(t),
                    "trace_id": _run_id(t),
                    "session_id": project,
                    "parent_run_id": None,
                    "start_time": "2026-11-30T10:00:00+00:00",
                }
                for t in range(200)
            ]
        )
        env = {"LANGSMITH_API_KEY": "lsv2_pt_test", "LANGSMITH_ENDPOINT": fake.url}
        args = ("--project", "agent", "--store", str(db))
        assert _cli("setup", "--to", "langsmith", *args, env=env).exit_code == 0
        assert _cli("setup", "--to", "langsmith", *args, env=env).exit_code == 0
        assert len(langsmith_state(fake).queues) == 1
        result = _cli("sample", "--to", "langsmith", "--n", "60", *args, env=env)
        assert result.exit_code == 0, result.output
        runs = [i["run_id"] for i in langsmith_state(fake).items]
        assert len(runs) == len(set(runs)) == 60
        for run in runs[:25]:
            review(fake, run, VERDICT_LABEL, value="partial")
        assert "25 new" in _cli("pull", "--from", "langsmith", *args, env=env).output
        assert "0 new" in _cli("pull", "--from", "langsmith", *args, env=env).output


def test_the_group_holds_every_calibrate_command() -> None:
    listed = CliRunner().invoke(main, ["calibrate", "--help"]).output
    for command in ("setup", "sample", "pull", "measure", "check", "agreement"):
        assert f"  {command} " in listed
