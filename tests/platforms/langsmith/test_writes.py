"""Writing to LangSmith as it is now (#28 items 3-5, #35 item 2): the real CLI and ``langsmith`` SDK over loopback
HTTP against the fake, which applies LangSmith's rule that a key's first feedback creates its config.

Scores written first, then ``calibrate setup``, ``sample`` and ``pull``: the configs the sink made from the catalog
are the ones setup needs, and queue items carry the run's start time. A config that differs stops setup with one
line, exit 2, never retried. A 400 is sent once and its whole detail reaches the user; feedback for runs that do not
exist is one counted line, not a traceback each. After a change of judge model only, the feedback names the new one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Fault
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_queues import review, state
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore import catalog
from tracescore.calibrate.labels import VERDICT_LABEL
from tracescore.cli import main
from tracescore.platforms.langsmith.configs import FeedbackConfigs, wanted_for
from tracescore.platforms.langsmith.sink import LangSmithSink
from tracescore.platforms.langsmith.source import make_client
from tracescore.result import TraceResult
from tracescore.scores import score
from tracescore.store.db import Store

KEY = "lsv2_pt_writes_test_key"
PROJECT = ["--project", "support-agent"]
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
BOOLEAN = {"type": "continuous", "min": 0.0, "max": 1.0}


def _env(server: FakeLangSmith, **more: str) -> dict[str, str]:
    return {"LANGSMITH_API_KEY": KEY, "LANGSMITH_ENDPOINT": server.url, **more}


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_scores_first_then_setup_sample_and_pull_work(tmp_path: Path) -> None:
    db = str(tmp_path / "ts.db")
    with FakeLangSmith() as server, FakeAnthropic() as judge:
        project_id = seed(server, load_samples(3), project="support-agent")
        env = _env(server, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=judge.url)

        def cli(*args: str) -> Result:
            result = CliRunner(env=env).invoke(main, list(args))
            assert result.exit_code == 0, result.output
            return result

        cli("score", "--source", "langsmith", *PROJECT, *WINDOW, "--store", db, "-q")  # the README's order
        assert server.feedback_for(next(r["id"] for r in server.runs if r["parent_run_id"] is None))
        server.backend = "smithdb_only"  # from here on a queue item without its run's start time is refused
        ready = cli("calibrate", "setup", "--to", "langsmith", *PROJECT, "--store", db).output
        assert "ready with labels" in ready and "answer.correct" in ready
        # the configs came from the catalog, before the first feedback of their key: LangSmith made none up, and
        # setup found answer.correct's as the label needs it
        assert server.feedback_configs["answer.correct"]["feedback_config"] == BOOLEAN
        assert server.feedback_configs["diagnosis"]["feedback_config"]["type"] == "categorical"
        cli("calibrate", "setup", "--to", "langsmith", *PROJECT, "--store", db)  # twice: nothing new
        assert len(server.requests_to("/annotation-queues", "POST")) == 1
        cli("calibrate", "sample", "--to", "langsmith", *PROJECT, "--n", "10", "--store", db)

        items = state(server).items
        runs = {r["id"]: r for r in server.runs}
        assert items and len({i["run_id"] for i in items}) == len(items)
        for item in items:
            assert item["project_id"] == project_id
            assert item["start_time"] and _moment(item["start_time"]) == _moment(runs[item["run_id"]]["start_time"])

        review(server, items[0]["run_id"], VERDICT_LABEL, value="partial")
        pulled = cli("calibrate", "pull", "--from", "langsmith", *PROJECT, "--store", db).output
    assert "pulled 1 label(s) on 1 item(s) from langsmith: 1 new" in pulled


def test_a_differing_config_stops_setup_with_one_line_and_exit_2(tmp_path: Path) -> None:
    with FakeLangSmith() as server:
        project_id = seed(server, load_samples(1), project="support-agent")
        run = next(r for r in server.runs if r["parent_run_id"] is None)
        # an older writer's first feedback: LangSmith gave answer.correct its bare default config
        client = make_client(api_key=KEY, endpoint=server.url, backoff=0.01)
        client.create_feedback(run["id"], "answer.correct", score=1.0, session_id=project_id)
        assert server.feedback_configs["answer.correct"]["feedback_config"] == {"type": "continuous"}
        for _ in range(2):  # a re-run fails the same way, and sends nothing that fails
            server.requests.clear()
            result = CliRunner(env=_env(server)).invoke(
                main, ["calibrate", "setup", "--to", "langsmith", *PROJECT, "--store", str(tmp_path / "ts.db")]
            )
            assert result.exit_code == 2, result.output
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1, lines
            assert "'answer.correct'" in lines[0] and '{"type": "continuous"}' in lines[0]
            assert '"max": 1.0, "min": 0.0, "type": "continuous"' in lines[0]
            posts = [r.json()["feedback_key"] for r in server.requests_to("/feedback-configs", "POST")]
            assert "answer.correct" not in posts  # never POSTed into the 400
            assert server.requests_to("/annotation-queues", "POST") == []


def _result_line(run_id: str, session_id: str, scores: dict[str, Any]) -> str:
    return json.dumps(
        {
            "trace_id": run_id,
            "timestamp": "2026-11-20T10:00:00+00:00",
            "scores": scores,
            "metadata": {"langsmith": {"run_id": run_id, "session_id": session_id}},
        }
    )


def _configured(server: FakeLangSmith) -> None:
    """Every catalog key's config made beforehand, so a run sends one ``GET /feedback-configs`` and no create."""
    names = [e.name.replace("{k}", "5") for e in catalog.entries()]
    assert not FeedbackConfigs(make_client(api_key=KEY, endpoint=server.url)).ensure(wanted_for(names))


def test_a_400_is_sent_once_and_its_whole_detail_reaches_the_user(tmp_path: Path) -> None:
    detail = (
        "feedback refused by the ingestion policy of this workspace: "
        + "the key answer.correct is locked by the workspace administrators; " * 6
        + f"request key {KEY}; THE-END-OF-THE-DETAIL"
    )
    assert len(detail) > 400
    with FakeLangSmith() as server:
        project_id = seed(server, load_samples(1), project="support-agent")
        run = next(r for r in server.runs if r["parent_run_id"] is None)["id"]
        _configured(server)
        results = tmp_path / "results.jsonl"
        results.write_text(_result_line(run, project_id, {"answer.correct": True}) + "\n")
        # the lookup of existing feedback and the configs' check pass; the create meets a 400
        server.faults.add("/feedback", Fault(), Fault(), Fault.http(400, {"detail": detail}))
        result = CliRunner(env=_env(server)).invoke(
            main, ["push", str(results), "--to", "langsmith", "--store", str(tmp_path / "ts.db")]
        )
    creates = [r for r in server.requests_to("/feedback", "POST") if r.path == "/feedback"]
    assert len(creates) == 1  # sent once: no retry changes a refusal
    assert result.exit_code == 1, result.output
    assert "POST /feedback -> 400" in result.stderr and "THE-END-OF-THE-DETAIL" in result.stderr
    assert detail.replace(KEY, "***") in result.stderr  # whole, and without the key
    assert KEY not in result.output + result.stderr
    assert "re-run" not in result.stderr


def test_push_to_missing_runs_is_one_counted_line_and_exit_1(tmp_path: Path) -> None:
    with FakeLangSmith() as server:
        project_id = server.add_project("support-agent")
        runs = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"missing-{n}")) for n in range(284)]
        scores = {"answer.correct": True, "citation.coverage": 0.5, "retrieval.recall_at_5": 1.0}
        results = tmp_path / "results.jsonl"
        results.write_text("".join(_result_line(run, project_id, scores) + "\n" for run in runs))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
        env |= _env(server, PYTHONPATH=str(Path(__file__).parents[3] / "src"))
        done = subprocess.run(  # a real process: what reaches stderr is what a user sees (no test log capture)
            [sys.executable, "-m", "tracescore.cli", "push", str(results), "--to", "langsmith",
             "--store", str(tmp_path / "ts.db")],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )
        creates = [r for r in server.requests_to("/feedback", "POST") if r.path == "/feedback"]
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr[-2000:]
    assert 1 <= len(lines) <= 10, lines[:20]
    assert "Traceback" not in done.stderr and "re-run" not in done.stderr
    line = next(x for x in lines if "404" in x)
    assert "852 scores of 284 trace(s)" in line and runs[0] in line and "no such run" in line
    assert len(creates) == 852  # each sent once
    assert "pushed 0 scores of 284 traces" in done.stdout


def _judged(run_id: str, model: str, agreement: dict[str, Any] | None = None) -> TraceResult:
    """A result whose judged scores (surface, semantic match) carry ``model`` (and ``agreement``); values
    independent of them."""
    meta: dict[str, Any] = {"judge_model": model} | ({"agreement": agreement} if agreement else {})
    return TraceResult(
        trace_id=run_id,
        timestamp=datetime(2026, 11, 20, 10, 0, tzinfo=UTC),
        scores={
            "surface.smart": score("surface.smart", 2.0, rubric_version="surface-1", **meta),
            "surface.missed": score("surface.missed", 1.0, rubric_version="surface-1", **meta),
            "answer.semantic_match": score("answer.semantic_match", True, rubric_version="semantic-1", **meta),
            "answer.correct": score("answer.correct", True),
        },
        metadata={"langsmith": {"run_id": run_id}},
    )


def test_after_a_judge_model_change_only_the_feedback_names_the_new_model(tmp_path: Path) -> None:
    with FakeLangSmith() as server:
        project_id = seed(server, load_samples(2), project="support-agent")
        roots = [r["id"] for r in server.runs if r["parent_run_id"] is None]
        client = make_client(api_key=KEY, endpoint=server.url, backoff=0.01)
        store = Store(tmp_path / "ts.db")
        measured = {"kappa": 0.71, "n": 60, "calibration_id": "cal-2"}
        for model, agreement in (("claude-old-1", None), ("claude-new-2", None), ("claude-new-2", measured)):
            run_id = store.start_run("run", source="langsmith")
            with LangSmithSink(client) as sink:
                sink.attach(store, run_id)
                for root in roots:
                    result = _judged(root, model, agreement)
                    result.metadata["langsmith"]["session_id"] = project_id
                    sink.write(result)
            assert sink.report.rejected == []
            store.commit()
        assert server.duplicates() == []  # the old model's feedback went once the new one was accepted
        for root in roots:
            got = {f["key"]: f for f in server.feedback_of(root)}
            assert set(got) == {"surface.smart", "surface.missed", "answer.semantic_match", "answer.correct"}
            for key in ("surface.smart", "surface.missed", "answer.semantic_match"):
                meta = got[key]["feedback_source"]["metadata"]
                assert meta["judge_model"] == "claude-new-2" and meta["agreement"] == measured, key
        assert sink.unchanged == len(roots)  # answer.correct: no judge, unchanged, skipped
