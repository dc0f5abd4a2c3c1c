"""Acceptance 1-3 of issue #4, end to end: ``tracescore score --source langfuse`` through the real SDK against the
fake Langfuse on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine
from click.testing import CliRunner, Result

from tests.fakes.base import Fault, Response
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.cli import main
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
from tracescore.sinks.records import score_id
from tracescore.store.db import Store

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
N = 25
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
EXPECTED = {
    "retrieval.recall_at_5": ("NUMERIC", "retrieval-1"),
    "retrieval.first_hit_rank": ("NUMERIC", "retrieval-1"),
    "retrieval.retrieved_any": ("BOOLEAN", "retrieval-1"),
    "citation.coverage": ("NUMERIC", "citations-1"),
    "citation.unfetched_rate": ("NUMERIC", "citations-1"),
    "citation.fabricated_count": ("NUMERIC", "citations-1"),
    "answer.correct": ("BOOLEAN", "answer-1"),
    "answer.token_f1": ("NUMERIC", "answer-1"),
    "answer.exact_match": ("BOOLEAN", "answer-1"),
    "grounding.unsupported_numbers": ("NUMERIC", "numbers-2"),  # #33: the deterministic grounding and trajectory
    "grounding.numbers_checked": ("NUMERIC", "numbers-2"),
    "trajectory.search_calls": ("NUMERIC", "trajectory-2"),
    "trajectory.fetch_calls": ("NUMERIC", "trajectory-2"),
    "trajectory.repeated_queries": ("NUMERIC", "trajectory-2"),
    "trajectory.fetch_chars": ("NUMERIC", "trajectory-2"),
    "trajectory.query_overlap": ("NUMERIC", "trajectory-2"),
    "trajectory.unused_fetch_rate": ("NUMERIC", "trajectory-2"),
    "trajectory.searches_after_found": ("NUMERIC", "trajectory-2"),  # citation.stale_rate: absent (no page dated)
    "diagnosis": ("CATEGORICAL", "diagnosis-1"),
}


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as server:
        for i in range(N):
            server.add_trace(*make_trace(i, T0 + timedelta(minutes=i)))
        server.add_trace(*make_trace(999, T0 - timedelta(hours=10)))  # outside the window
        yield server


def _run(fake: FakeLangfuse, tmp_path: Path, *args: str, config: str = "") -> Result:
    config_path = tmp_path / "tracescore.toml"
    config_path.write_text(config)
    return CliRunner().invoke(
        main,
        [
            "score",
            "--source",
            "langfuse",
            *WINDOW,
            "--store",
            str(tmp_path / "ts.db"),
            "--config",
            str(config_path),
            "-q",
            *args,
        ],
        env=env_for(fake),
    )


def _expected() -> dict[str, tuple[str, str, str]]:
    """score id → (trace id, name, timestamp) for every expected score."""
    out = {}
    for i in range(N):
        trace_id, stamp = f"tr-{i:05d}", (T0 + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
        for name in EXPECTED:
            out[score_id(trace_id, name)] = (trace_id, name, stamp)
    return out


def _stored(fake: FakeLangfuse) -> dict[str, tuple[str, str, str]]:
    return {s["id"]: (s["traceId"], s["name"], s["timestamp"]) for s in fake.scores.values()}


def test_window_scored_and_every_expected_score_arrives_once(fake: FakeLangfuse, tmp_path: Path) -> None:
    result = _run(fake, tmp_path)
    assert result.exit_code == 0, result.output
    assert _stored(fake) == _expected()
    assert set(fake.score_counts().values()) == {1}
    types = {s["name"]: s["dataType"] for s in fake.scores.values()}
    assert types == {name: t for name, (t, _) in EXPECTED.items()}
    wrong = next(s for s in fake.scores.values() if s["traceId"] == "tr-00000" and s["name"] == "answer.correct")
    assert wrong["value"] == 0 and "30 days" in wrong["comment"]  # the comment names what is missing
    assert all(s["metadata"]["scorer_version"] for s in fake.scores.values())
    # what the SDK reads back (GET /api/public/v3/scores) is what was meant
    with make_client(LangfuseCredentials.from_env(env_for(fake))) as api:
        read = api.scores.get_many(trace_id="tr-00001", fields="details,subject", limit=100).data
    assert {s.name: s.data_type for s in read} == {name: t for name, (t, _) in EXPECTED.items()}
    assert {s.subject.id for s in read if s.subject} == {"tr-00001"}
    assert next(s.value for s in read if s.name == "answer.correct") is True
    # few requests: one observations page, score config lookup + creation, one scores batch
    assert len(fake.requests_to("/api/public/v2/observations")) == 1
    assert len(fake.requests_to("/api/public/scores")) == 1


def test_rerun_on_another_day_changes_no_id_and_no_timestamp(fake: FakeLangfuse, tmp_path: Path) -> None:
    assert _run(fake, tmp_path).exit_code == 0
    first = dict(fake.scores)
    with time_machine.travel(datetime(2026, 12, 3, 15, 0, tzinfo=UTC), tick=True):
        assert _run(fake, tmp_path).exit_code == 0
    assert set(fake.scores) == set(first)  # same (id, name, date) keys: upserted, none added
    assert _stored(fake) == _expected()
    assert set(fake.score_counts().values()) == {2}
    assert sorted(c["name"] for c in fake.score_configs) == sorted({s["name"] for s in fake.scores.values()})


def test_faults_every_score_delivered_exactly_once_and_207_in_summary(fake: FakeLangfuse, tmp_path: Path) -> None:
    # the timed-out and the truncated answers are served (then lost) too and may use up repeats: arm three
    fake.repeat_pages = 3
    fake.faults.add(
        "/api/public/v2/observations", Fault.rate_limited(0), Fault.http(500), Fault.timeout(1.2), Fault.truncated()
    )
    fake.faults.add("/api/public/scores", Fault.rate_limited(0), Fault.http(503), Fault.timeout(1.2))
    fake.reject_score = lambda item: (
        "comment too long" if (item["traceId"], item["name"]) == ("tr-00004", "citation.coverage") else None
    )
    result = _run(
        fake, tmp_path, config="[langfuse]\npage_size = 100\ntimeout = 0.6\nbackoff = 0.01\nbatch_bytes = 20000\n"
    )
    assert fake.faults.pending() == 0
    assert result.exit_code == 1  # a rejected score makes the run fail loudly
    rejected_id = score_id("tr-00004", "citation.coverage")
    assert f"rejected: trace tr-00004 score citation.coverage ({rejected_id}): " in result.output
    assert "comment too long" in result.output
    expected = _expected()
    del expected[rejected_id]
    assert _stored(fake) == expected  # every other score, once by id
    with Store(tmp_path / "ts.db") as store:
        (run,) = store.runs()
    summary = run["summary"]
    assert summary["scored"] == N and summary["failed"] == 0
    # at least one whole page came twice (the lost answers may also have repeated one, concurrently)
    assert summary["read"]["duplicate_rows"] + summary["read"]["late_rows"] >= 100
    assert summary["read"]["retries"] == 4
    assert summary["write"]["retried"] == 3
    (rejection,) = summary["write"]["rejections"]
    assert (rejection["id"], rejection["trace_id"], rejection["name"]) == (rejected_id, "tr-00004", "citation.coverage")
    assert "comment too long" in rejection["reason"]


def test_experiment_traces_take_labels_from_their_dataset_item(fake: FakeLangfuse, tmp_path: Path) -> None:
    fake.add_trace(*make_trace(500, T0 + timedelta(hours=2), labels=False))
    fake.add_trace(*make_trace(501, T0 + timedelta(hours=3), labels=False))
    fake.add_experiment_item("tr-00500", {"gold_answer": "30 days", "required_doc_ids": ["policy-returns-v4"]})
    assert _run(fake, tmp_path).exit_code == 0
    names = {(s["traceId"], s["name"]) for s in fake.scores.values()}
    assert ("tr-00500", "retrieval.recall_at_5") in names and ("tr-00500", "answer.token_f1") in names
    assert ("tr-00501", "retrieval.recall_at_5") not in names  # no labels anywhere: absent, never written as 0
    assert ("tr-00501", "retrieval.retrieved_any") in names


def test_no_write_back_goes_to_store_and_out_only(fake: FakeLangfuse, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    result = _run(fake, tmp_path, "--no-write-back", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert fake.requests_to("/api/public/scores") == [] and fake.requests_to("/api/public/score-configs") == []
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == N and {line["trace_id"] for line in lines} == {f"tr-{i:05d}" for i in range(N)}


def _fail_from_the_second_page(fake: FakeLangfuse) -> None:
    """Every observations page after the first answers 500 (the source fails part-way through the window)."""
    calls = {"n": 0}
    handle = fake.handle

    def second_page_fails(request):  # type: ignore[no-untyped-def]
        if request.path == "/api/public/v2/observations":
            calls["n"] += 1
            if calls["n"] > 1:
                return Response(500, {"message": "clickhouse unavailable"})
        return handle(request)

    fake.handle = second_page_fails  # type: ignore[method-assign]


def test_a_source_failure_stops_cleanly_keeping_what_was_scored(fake: FakeLangfuse, tmp_path: Path) -> None:
    _fail_from_the_second_page(fake)
    result = _run(fake, tmp_path, config="[langfuse]\npage_size = 100\nmax_attempts = 2\nbackoff = 0\n")
    assert result.exit_code == 4  # stopped on a source failure (the exit-code table)
    assert "(observations page 2) from Langfuse at" in result.output and "clickhouse unavailable" in result.output
    assert "after 2 attempts" in result.output
    with Store(tmp_path / "ts.db") as store:
        (run,) = store.runs()
        stored = list(store.results(run["id"]))
    assert run["status"] == "failed"
    scored = {r["trace_id"] for r in stored}
    assert scored and scored < {f"tr-{i:05d}" for i in range(N)}  # the traces complete before the failure
    assert {s["traceId"] for s in fake.scores.values()} == scored  # their scores were flushed, none lost


def test_a_run_stopped_by_a_failure_leaves_the_earlier_results_file_as_it_was(fake: FakeLangfuse,
                                                                              tmp_path: Path) -> None:
    """Only a complete output replaces the previous one: a run that stopped on a source failure keeps its lines in
    ``.partial`` and says so; the earlier ``--out`` file (a complete run) is byte-identical."""
    out = tmp_path / "results.jsonl"
    config = "[langfuse]\npage_size = 100\nmax_attempts = 2\nbackoff = 0\n"
    first = _run(fake, tmp_path, "--no-write-back", "--out", str(out), config=config)
    assert first.exit_code == 0, first.output
    before = out.read_bytes()
    assert len(before.splitlines()) == N
    _fail_from_the_second_page(fake)
    result = _run(fake, tmp_path, "--no-write-back", "--out", str(out), config=config)
    assert result.exit_code == 4, result.output
    assert out.read_bytes() == before
    partial = tmp_path / "results.jsonl.partial"
    assert f"results so far in {partial} ({out} untouched)" in " ".join(result.output.split())
    kept = partial.read_text().splitlines()
    assert 0 < len(kept) < N  # the traces scored before the failure, not under the final name


def test_cli_errors_name_the_fix(fake: FakeLangfuse, tmp_path: Path) -> None:
    no_from = CliRunner().invoke(main, ["score", "--source", "langfuse"], env=env_for(fake))
    assert no_from.exit_code == 2 and "--from" in no_from.output
    bad = CliRunner().invoke(main, ["score", "--source", "langfuse", "--from", "yesterday"], env=env_for(fake))
    assert bad.exit_code == 2 and "'yesterday' is not an ISO 8601 time" in bad.output
    jsonl = CliRunner().invoke(main, ["score", "traces.jsonl", "--environment", "prod"])
    assert jsonl.exit_code == 2 and "--environment applies to platform sources only" in jsonl.output
    no_file = CliRunner().invoke(main, ["score"])
    assert no_file.exit_code == 2 and "missing TRACES" in no_file.output
    keys = CliRunner().invoke(main, ["score", "--source", "langfuse", *WINDOW], env={"LANGFUSE_PUBLIC_KEY": ""})
    assert keys.exit_code == 2 and "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY not set" in keys.output


def test_with_a_judge_key_the_judged_scores_land_in_langfuse_too(fake: FakeLangfuse, tmp_path: Path) -> None:
    from tests.fakes.anthropic import FakeAnthropic

    (tmp_path / "none.toml").write_text("")
    with FakeAnthropic() as anthropic:
        env = env_for(fake) | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": anthropic.url}
        result = CliRunner().invoke(
            main,
            [
                "score",
                "--source",
                "langfuse",
                *WINDOW,
                "--store",
                str(tmp_path / "ts.db"),
                "--config",
                str(tmp_path / "none.toml"),
                "-q",
            ],
            env=env,
        )
        calls = len(anthropic.messages())
    assert result.exit_code == 0, result.output
    assert calls >= 1
    judged = [s for s in fake.scores.values() if s["name"] == "grounding.rate"]
    assert len(judged) == N
    assert all(s["metadata"]["judge_model"] and s["metadata"]["rubric_version"] for s in judged)
    assert {s["name"] for s in fake.scores.values()} >= set(EXPECTED) | {"grounding.hallucination_rate"}
    with Store(tmp_path / "ts.db") as store:
        (run,) = store.runs()
    usage = run["summary"]["judge"]
    # three judged requests per trace (grounding, surface oracle, semantic match): identical traces hit the cache
    assert usage["calls"] == calls and usage["calls"] + usage["cache_hits"] == 3 * N
    assert {"surface.smart", "answer.semantic_match"} <= {s["name"] for s in fake.scores.values()}
