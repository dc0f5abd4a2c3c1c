"""LangSmith end to end (acceptance 1 and 2): the real ``langsmith`` SDK over HTTP against the loopback fake.

Read a project's window, score it, write feedback; every expected feedback arrives exactly once with the documented
key, deterministic id and value; a re-run updates instead of duplicating; injected 429s (Retry-After), 500s,
timeouts and truncated bodies lose nothing and duplicate nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.fakes.base import Fault
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, run_tree, seed
from tracescore import catalog
from tracescore.engine.pipeline import RunCounts, score_records, score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.langsmith.configs import FeedbackConfigs, catalog_config, wanted_for
from tracescore.platforms.langsmith.sink import LangSmithSink, categorical_config, feedback_comment
from tracescore.platforms.langsmith.source import LangSmithSource, make_client
from tracescore.platforms.registry import get_adapter
from tracescore.result import TraceResult
from tracescore.sinks.records import scorer_version, versioned_score_id
from tracescore.trace import Trace

START = datetime(2026, 11, 1, tzinfo=UTC)
END = datetime(2026, 12, 1, tzinfo=UTC)
KEY = "lsv2_pt_test_key_never_logged"


@pytest.fixture
def server() -> Iterator[FakeLangSmith]:
    with FakeLangSmith(page_size=7) as fake:
        yield fake


def _client(server: FakeLangSmith, *, timeout_ms: int = 2000):  # type: ignore[no-untyped-def]
    return make_client(api_key=KEY, endpoint=server.url, timeout_ms=timeout_ms, backoff=0.01)


def _run(server: FakeLangSmith, *, extend: bool = False, timeout_ms: int = 2000) -> tuple[RunCounts, LangSmithSink,
                                                                                             list[TraceResult]]:
    client = _client(server, timeout_ms=timeout_ms)
    source = LangSmithSource(client, project="search-agent")
    counts = RunCounts()
    results = []
    with LangSmithSink(client, extend_trace_retention=extend) as sink:
        scorers = deterministic_scorers()
        for result in score_records(source.records(START, END), get_adapter("langsmith"), scorers, counts):
            results.append(result)
            sink.write(result)
    return counts, sink, results


def _configured(server: FakeLangSmith) -> None:
    """The feedback configs of every catalog key made beforehand (a workspace written to before): a run then sends
    one ``GET /feedback-configs`` and no create, so faults queued for ``/feedback`` meet the feedback requests."""
    names = [e.name.replace("{k}", "5") for e in catalog.entries()]
    assert not FeedbackConfigs(_client(server)).ensure(wanted_for(names))


def _expected(server: FakeLangSmith, project_id: str, *, experiment: bool = False) -> dict[tuple[str, str], dict]:
    """(root run id, key) → expected id and value, from scoring the canonical samples directly (no LangSmith)."""
    expected = {}
    for sample in load_samples():
        root_id = run_tree(sample, project_id, experiment=experiment)[0][0]["id"]
        result = score_trace(Trace.model_validate(sample), deterministic_scorers())
        for s in result.scores.values():
            if s.value is None:
                continue
            feedback_id = versioned_score_id(root_id, s.name, scorer_version(s))
            expected[(root_id, s.name)] = {"id": feedback_id, "value": s.value}
    return expected


def _assert_arrived_once(server: FakeLangSmith, expected: dict[tuple[str, str], dict]) -> None:
    assert server.duplicates() == []
    got = {(f["run_id"], f["key"]): f for f in server.feedback.values()}
    assert set(got) == set(expected)
    for pair, want in expected.items():
        f = got[pair]
        assert f["id"] == want["id"]
        value = want["value"]
        if isinstance(value, str):
            assert f["value"] == value
            labels = [c["label"] for c in categorical_config(pair[1])["categories"]]  # type: ignore[index]
            assert f["score"] == float(labels.index(value))
        else:
            assert f["score"] == round(float(value), 4), pair


@pytest.mark.parametrize("experiment", [False, True], ids=["production", "experiment"])
def test_every_feedback_arrives_once_and_a_rerun_duplicates_nothing(server: FakeLangSmith, experiment: bool) -> None:
    project_id = seed(server, load_samples(), experiment=experiment)
    expected = _expected(server, project_id, experiment=experiment)
    assert len(expected) > 200  # 38 traces × the present scores

    counts, sink, results = _run(server)
    assert counts.as_dict() == {"seen": 38, "scored": 38, "failed": 0, "scorer_errors": 0}
    assert (sink.created, sink.updated, sink.report.rejected) == (len(expected), 0, [])
    _assert_arrived_once(server, expected)

    bodies = [r.json() for r in server.requests_to("/feedback", "POST") if r.path == "/feedback"]
    assert all(b["session_id"] == project_id for b in bodies)
    assert all(b["extend_trace_retention"] is False for b in bodies)  # backfills must not upgrade retention
    assert all(b["feedback_source"]["metadata"]["scorer_version"] for b in bodies)
    diagnosis = next(b for b in bodies if b["key"] == "diagnosis")
    assert diagnosis["comment"] == feedback_comment(
        next(r for r in [_record(results, diagnosis["run_id"], "diagnosis")] if r)
    )
    keys = {key for _, key in expected}
    posts = [r.json()["feedback_key"] for r in server.requests_to("/feedback-configs", "POST")]
    assert sorted(posts) == sorted(keys)  # each key's config once, from the catalog, never LangSmith's default
    assert all(server.feedback_configs[k]["feedback_config"] == catalog_config(k) for k in keys)
    assert server.feedback_configs["diagnosis"]["feedback_config"] == categorical_config("diagnosis")
    assert server.feedback_configs["retrieval.first_hit_rank"]["feedback_config"] == {"type": "continuous", "min": 1}

    # the same window again: the existing feedback is listed once, found unchanged, and nothing is sent
    before = dict(server.feedback)
    server.requests.clear()
    counts, sink, _ = _run(server)
    assert (sink.created, sink.updated, sink.unchanged, sink.report.rejected) == (0, 0, len(expected), [])
    assert server.feedback == before
    writes = [r for r in server.requests_to("/feedback") if r.method != "GET"]
    lookups = [r for r in server.requests_to("/feedback", "GET") if r.path == "/feedback"]
    assert writes == [] and len(lookups) == -(-len(expected) // 100)
    assert len(server.requests_to("/feedback-configs", "GET")) == 1  # the configs are checked once per run
    assert set(lookups[0].query["key"]) == {key for _, key in expected}  # only our keys are listed
    _assert_arrived_once(server, expected)


def test_a_changed_score_is_patched_in_place(server: FakeLangSmith) -> None:
    project_id = seed(server, load_samples(6))
    _run(server)
    before = {f["id"]: (f["score"], f.get("value"), f.get("comment")) for f in server.feedback.values()}
    # the labels change (a corrected expected answer): answer.correct flips on the root runs carrying labels
    for run in server.runs:
        labels = run["extra"]["metadata"].get("labels")
        if labels and labels.get("expected_answer_contains"):
            labels["expected_answer_contains"] = ["a phrase no answer contains"]
    counts, sink, _ = _run(server)
    assert sink.created == 0 and sink.updated >= 1 and sink.report.rejected == []
    patched = {r.path.rsplit("/", 1)[1] for r in server.requests_to("/feedback/", "PATCH")}
    assert len(patched) == sink.updated
    after = {i: (f["score"], f.get("value"), f.get("comment")) for i, f in server.feedback.items()}
    assert {i for i in after if after[i] != before[i]} == patched  # exactly the changed ones were sent
    assert any(server.feedback[i]["key"] == "answer.correct" and after[i][0] == 0.0 for i in patched)
    assert server.duplicates() == [] and set(server.feedback) == set(before)
    assert project_id


def _record(results: list[TraceResult], run_id: str, key: str):  # type: ignore[no-untyped-def]
    from tracescore.sinks.records import records_from_result as records_of

    result = next(r for r in results if r.trace_id == run_id)
    return next(r for r in records_of(result)[0] if r.name == key)


def test_extend_trace_retention_is_a_choice(server: FakeLangSmith) -> None:
    seed(server, load_samples(3))
    _run(server, extend=True)
    bodies = [r.json() for r in server.requests_to("/feedback", "POST") if r.path == "/feedback"]
    assert bodies and all(b["extend_trace_retention"] is True for b in bodies)


def test_faults_lose_nothing_and_duplicate_nothing(server: FakeLangSmith, caplog: pytest.LogCaptureFixture) -> None:
    project_id = seed(server, load_samples())
    expected = _expected(server, project_id)
    _configured(server)
    server.repeat_pages = 2  # two root pages come back twice
    server.faults.add("/runs/query", Fault.rate_limited(retry_after=1), Fault.http(500), Fault.http(503),
                      Fault.timeout(0.8), Fault.truncated(), Fault.http(502))
    ok = Fault()  # a pass-through: spreads the faults over several writes, as they come in real life
    server.faults.add("/feedback", Fault.rate_limited(retry_after=0), Fault.http(500), ok, Fault.timeout(0.8), ok,
                      Fault.rate_limited(retry_after=0), Fault.truncated(), ok, Fault.http(500), Fault.timeout(0.8))
    server.lose_feedback_responses(2, delay=0.8)  # stored, but the answer comes after the client gave up
    with caplog.at_level(logging.DEBUG):
        counts, sink, _ = _run(server, timeout_ms=500)
    assert server.faults.pending() == 0  # every fault was met
    assert counts.as_dict() == {"seen": 38, "scored": 38, "failed": 0, "scorer_errors": 0}
    assert sink.report.rejected == []
    _assert_arrived_once(server, expected)
    # a create that timed out on our side but landed on the server came back as a conflict and was updated
    assert server.conflicts >= 1 and sink.updated >= 1
    assert KEY not in caplog.text and KEY[:12] not in caplog.text  # the key never reaches the logs


def test_a_feedback_that_keeps_failing_is_reported_and_the_batch_goes_on(server: FakeLangSmith) -> None:
    seed(server, load_samples(4))
    _configured(server)
    # the lookup and the configs' check pass; then 1 attempt + 4 retries of the first create fail, and one more
    server.faults.add("/feedback", Fault(), Fault(), *[Fault.http(500)] * 6)
    counts, sink, _ = _run(server)
    assert counts.scored == 4
    assert len(sink.report.rejected) >= 1
    rejection = sink.report.rejected[0]
    assert rejection.trace_id and rejection.name and "500" in rejection.reason
    stored = {(f["run_id"], f["key"]) for f in server.feedback.values()}
    assert (rejection.trace_id, rejection.name) not in stored
    assert sink.created == len(stored) and sink.created > 20  # the rest of the batch was written


def test_without_the_lookup_conflicts_still_prevent_duplicates(server: FakeLangSmith,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    seed(server, load_samples(4))
    _run(server)
    stored = len(server.feedback)
    server.faults.add("/feedback", *[Fault.http(500)] * 5)  # the listing of existing feedback fails for good
    with caplog.at_level(logging.WARNING):
        _, sink, _ = _run(server)
    assert "cannot list existing LangSmith feedback" in caplog.text
    assert "Error creating feedback" not in caplog.text  # an expected conflict is not logged as an SDK error
    assert server.faults.pending() == 0
    assert (sink.created, sink.updated, sink.report.rejected) == (0, stored, [])  # every create met a 409
    assert len(server.feedback) == stored and server.duplicates() == []
