"""Score records: deterministic ids, typed values, fixed UTC timestamps, batching under a byte limit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from tracescore.result import TraceResult
from tracescore.scores import absent, score
from tracescore.sinks.records import WriteReport, batches, records_from_result, score_id, versioned_score_id


def _result(ts: datetime | None = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)) -> TraceResult:
    r = TraceResult(trace_id="t-1", timestamp=ts)
    for s in (
        score("retrieval.recall_at_5", 0.5, comment="missing required doc ids: a", k=5, missing=["a"]),
        score("answer.correct", True),
        score("diagnosis", "retrieval_fail/wrong"),
        absent("answer.token_f1", "no gold_answer label"),
        score("grounding.rate", 0.75, rubric_version="grounding-3", judge_model="claude-x"),
    ):
        r.scores[s.name] = s
    return r


def test_records_are_typed_and_skip_absent() -> None:
    records, refused = records_from_result(_result())
    assert refused == []
    by_name = {r.name: r for r in records}
    assert set(by_name) == {"retrieval.recall_at_5", "answer.correct", "diagnosis", "grounding.rate"}
    assert (by_name["answer.correct"].value, by_name["answer.correct"].data_type) == (1.0, "BOOLEAN")
    assert by_name["diagnosis"].data_type == "CATEGORICAL"
    assert by_name["retrieval.recall_at_5"].metadata == {"scorer_version": "retrieval-1", "k": 5}
    assert by_name["retrieval.recall_at_5"].comment == "missing required doc ids: a"
    assert by_name["grounding.rate"].metadata == {
        "scorer_version": "grounding-3",
        "rubric_version": "grounding-3",
        "judge_model": "claude-x",
    }


def test_ids_are_deterministic_and_depend_on_trace_and_name_not_version() -> None:
    first, _ = records_from_result(_result())
    again, _ = records_from_result(_result())
    assert [r.id for r in first] == [r.id for r in again]
    assert len({r.id for r in first}) == len(first)
    assert score_id("t-1", "x") != score_id("t-2", "x") != score_id("t-1", "y")
    assert versioned_score_id("t-1", "x", "1") != versioned_score_id("t-1", "x", "2") != score_id("t-1", "x")
    bumped = _result()
    for s in bumped.scores.values():
        s.metadata["rubric_version"] = "99"
    newer, _ = records_from_result(bumped)
    assert [r.id for r in newer] == [r.id for r in first]  # a new version overwrites in place
    assert {r.version for r in newer} == {"99"} and {r.version for r in first} != {"99"}
    versioned, _ = records_from_result(bumped, versioned_ids=True)
    assert not {r.id for r in versioned} & {r.id for r in first}


def test_keep_versions_names_each_score_with_its_version() -> None:
    records, _ = records_from_result(_result(), keep_versions=True)
    assert records and all(r.name == f"{r.score}@{r.version}" for r in records)
    plain, _ = records_from_result(_result())
    assert not {r.id for r in records} & {r.id for r in plain}


def test_ids_depend_on_the_platform_trace_id() -> None:
    first, _ = records_from_result(_result())
    other, _ = records_from_result(_result(), platform_trace_id="lf-9")
    assert {r.trace_id for r in other} == {"lf-9"}
    assert not {r.id for r in other} & {r.id for r in first}


def test_timestamp_is_trace_start_in_utc() -> None:
    paris = datetime(2026, 11, 20, 10, 0, tzinfo=timezone(timedelta(hours=1)))
    records, _ = records_from_result(_result(paris))
    assert {r.timestamp for r in records} == {datetime(2026, 11, 20, 9, 0, tzinfo=UTC)}
    naive, _ = records_from_result(_result(datetime(2026, 11, 20, 9, 0)))  # noqa: DTZ001 - naive input on purpose
    assert {r.timestamp.tzinfo for r in naive} == {UTC}


def test_no_start_time_is_refused_with_reason() -> None:
    records, refused = records_from_result(_result(None))
    assert records == []
    assert len(refused) == 4 and "no start time" in refused[0].reason


def _size(r: object) -> int:
    return len(json.dumps(r.to_json()))  # type: ignore[attr-defined]


def test_batches_stay_under_limit_and_keep_every_record() -> None:
    records = [r for i in range(50) for r in records_from_result(_result(), platform_trace_id=f"t-{i}")[0]]
    limit = 2000
    out = list(batches(records, max_bytes=limit, size=_size))
    assert [r.id for b in out for r in b] == [r.id for r in records]
    for b in out:
        assert len(json.dumps([r.to_json() for r in b])) <= limit
    assert len(out) > 1
    assert all(len(b) <= 3 for b in batches(records, max_bytes=10**6, size=_size, max_items=3))


def test_oversized_record_is_rejected_not_sent() -> None:
    records, _ = records_from_result(_result())
    report = WriteReport()
    out = list(batches(records, max_bytes=250, size=lambda r: 300 if r.name == "diagnosis" else 100, report=report))
    assert "diagnosis" not in {r.name for b in out for r in b}
    assert [r.name for r in report.rejected] == ["diagnosis"]
    assert "over the 250-byte request limit" in report.rejected[0].reason
    with pytest.raises(ValueError):
        list(batches(records, max_bytes=250, size=lambda r: 300))


def test_type_and_version_come_from_the_catalog_not_from_the_value_or_a_name_prefix() -> None:
    r = TraceResult(trace_id="t-2", timestamp=datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    for s in (score("answer.exact_match", 1), score("citation.drift_rate", 0.5), score("not.in.catalog", 2)):
        r.scores[s.name] = s
    records, _ = records_from_result(r)
    by_name = {x.name: x for x in records}
    assert (by_name["answer.exact_match"].data_type, by_name["answer.exact_match"].value) == ("BOOLEAN", 1.0)
    assert by_name["citation.drift_rate"].metadata["scorer_version"] == "grounding-1"  # computed by grounding
    assert by_name["not.in.catalog"].metadata["scorer_version"] == "1"
