"""Langfuse sink through the real SDK on loopback: batching, 207 per score, config once, retries, no silent drop."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.fakes.base import Fault
from tests.fakes.langfuse import FakeLangfuse, env_for
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.platforms.langfuse.sink import LangfuseScoreSink
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import CELLS
from tracescore.scores import absent, score
from tracescore.sinks.records import WriteReport

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _results(n: int, comment: str = "") -> list[TraceResult]:
    out = []
    for i in range(n):
        r = TraceResult(trace_id=f"tr-{i}", timestamp=T0 + timedelta(minutes=i))
        for s in (
            score("retrieval.recall_at_5", 0.5, comment=comment or None, k=5),
            score("answer.correct", i % 2 == 0),
            score("diagnosis", CELLS[i % len(CELLS)]),
            absent("answer.token_f1", "no gold_answer label"),
        ):
            r.scores[s.name] = s
        out.append(r)
    return out


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as server:
        yield server


def _write(fake: FakeLangfuse, results: list[TraceResult], **settings: object) -> WriteReport:
    with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
        sink = LangfuseScoreSink(client, LangfuseSettings(**settings), sleep=lambda s: None)
        for result in results:
            sink.write(result)
        return sink.close()


def test_scores_are_typed_and_each_name_uses_one_config_made_from_its_declaration(fake: FakeLangfuse) -> None:
    report = _write(fake, _results(4))
    assert (report.accepted, report.rejected) == (12, [])
    stored = {(s["traceId"], s["name"]): s for s in fake.scores.values()}
    assert ("tr-0", "answer.token_f1") not in stored  # absent is never written
    assert (
        stored[("tr-0", "answer.correct")]["dataType"] == "BOOLEAN" and stored[("tr-0", "answer.correct")]["value"] == 1
    )
    diagnosis = stored[("tr-1", "diagnosis")]
    assert diagnosis["dataType"] == "CATEGORICAL" and diagnosis["value"] == CELLS[1]
    configs = {c["name"]: c for c in fake.score_configs}
    assert set(configs) == {name for _, name in stored}  # one per name written, none for an absent one
    assert all(s["configId"] == configs[s["name"]]["id"] for s in stored.values())
    assert [c["label"] for c in configs["diagnosis"]["categories"]] == list(CELLS)
    assert configs["answer.correct"]["dataType"] == "BOOLEAN"
    recall = configs["retrieval.recall_at_5"]
    assert (recall["dataType"], recall["minValue"], recall["maxValue"]) == ("NUMERIC", 0.0, 1.0)
    assert stored[("tr-2", "retrieval.recall_at_5")]["timestamp"] == "2026-11-20T09:02:00Z"
    _write(fake, _results(4))  # a second run finds the configs instead of creating others, in one listing
    assert len(fake.score_configs) == len(configs)
    assert len(fake.requests_to("/api/public/score-configs", "POST")) == len(configs)
    assert len(fake.requests_to("/api/public/score-configs", "GET")) == 2


def test_batches_stay_under_the_body_limit(fake: FakeLangfuse) -> None:
    report = _write(fake, _results(60, comment="x" * 300), batch_bytes=20_000)
    posts = fake.requests_to("/api/public/scores", "POST")
    assert len(posts) > 1 and report.batches == len(posts)
    assert all(len(p.body) <= 20_000 for p in posts)
    assert report.accepted == 180 and len(fake.scores) == 180


def test_a_207_is_reported_per_score_with_its_reason(fake: FakeLangfuse) -> None:
    fake.reject_score = lambda item: (
        "value out of range" if item["traceId"] == "tr-3" and item["name"] == "answer.correct" else None
    )
    report = _write(fake, _results(5))
    assert report.accepted == 14
    (rejection,) = report.rejected
    assert (rejection.trace_id, rejection.name) == ("tr-3", "answer.correct")
    assert "value out of range" in rejection.reason and rejection.id
    assert report.as_dict()["rejections"][0]["name"] == "answer.correct"


def test_failures_are_retried_and_the_same_ids_never_duplicate(fake: FakeLangfuse) -> None:
    fake.faults.add("/api/public/scores", Fault.rate_limited(0), Fault.http(502), Fault.truncated())
    report = _write(fake, _results(3))
    assert report.retried == 3 and report.rejected == []
    assert len(fake.scores) == 9
    # the truncated answer was stored before the client gave up on it: re-sent with the same ids, upserted
    assert set(fake.score_counts().values()) == {2}


def test_a_batch_that_keeps_failing_is_recorded_never_dropped(fake: FakeLangfuse) -> None:
    fake.faults.add("/api/public/scores", *[Fault.http(500)] * 2)
    report = _write(fake, _results(2), max_attempts=2)
    assert report.accepted == 0 and len(report.rejected) == 6
    assert all("not delivered after 2 attempts: HTTP 500" in r.reason for r in report.rejected)


def test_results_without_start_time_are_refused_with_reason(fake: FakeLangfuse) -> None:
    result = _results(1)[0]
    result.timestamp = None
    report = _write(fake, [result])
    assert len(report.rejected) == 3 and "no start time" in report.rejected[0].reason
    assert fake.requests_to("/api/public/scores") == []


def test_a_207_that_names_no_score_is_recorded_for_the_batch(fake: FakeLangfuse) -> None:
    fake.anonymous_errors = True
    fake.reject_score = lambda item: "quota exceeded" if item["traceId"] == "tr-1" else None
    report = _write(fake, _results(3))
    assert report.accepted == 6
    (rejection,) = report.rejected
    assert rejection.id is None and "3 score(s) of this batch rejected, not named" in rejection.reason
    assert "quota exceeded" in rejection.reason
