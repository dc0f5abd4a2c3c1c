"""Langfuse source: paging, field groups, filters and whole-trace grouping, through the real SDK on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.fakes.base import Fault
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.errors import ConfigError, SourceError
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.platforms.langfuse.source import (
    LangfuseWindow,
    ReadStats,
    TraceAssembler,
    read_experiment_items,
    read_langfuse,
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
WINDOW = LangfuseWindow(start=T0, end=T0 + timedelta(days=1))


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as server:
        for i in range(7):
            server.add_trace(*make_trace(i, T0 + timedelta(minutes=i), size=12))
        yield server


def _read(
    fake: FakeLangfuse, window: LangfuseWindow = WINDOW, **settings: object
) -> tuple[dict[str, list[str]], ReadStats]:
    stats = ReadStats()
    with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
        traces = {
            r.payload["id"]: [o["id"] for o in r.payload["observations"]]  # type: ignore[index]
            for r in read_langfuse(client, window, LangfuseSettings(**settings), stats=stats, sleep=lambda s: None)
        }
    return traces, stats


def test_reads_whole_traces_at_max_page_size_with_only_needed_fields(fake: FakeLangfuse) -> None:
    traces, stats = _read(fake)
    assert len(traces) == 7 and all(len(ids) == 12 for ids in traces.values())
    (request,) = fake.requests_to("/api/public/v2/observations")
    assert request.query["limit"] == ["1000"]
    assert request.query["fields"] == ["core,basic,io,metadata"]
    assert request.query["fromStartTime"][0].startswith("2026-11-20T09:00:00")
    assert stats.requests == 1 and stats.pages == 1


def test_traces_straddling_page_boundaries_are_assembled_whole(fake: FakeLangfuse) -> None:
    traces, stats = _read(fake, page_size=5)  # 84 rows in pages of 5: every trace crosses a boundary
    assert stats.pages == 17
    assert sorted(traces) == [f"tr-{i:05d}" for i in range(7)]
    assert all(sorted(ids) == [f"{t}-o{n:02d}" for n in range(12)] for t, ids in traces.items())


def test_a_repeated_page_is_deduplicated_by_observation_id(fake: FakeLangfuse) -> None:
    fake.repeat_pages = 2
    traces, stats = _read(fake, page_size=10)
    assert stats.duplicate_rows + stats.late_rows == 20
    assert all(len(ids) == len(set(ids)) == 12 for ids in traces.values()) and len(traces) == 7


def test_faults_are_retried_then_read_completes(fake: FakeLangfuse) -> None:
    fake.faults.add(
        "/api/public/v2/observations",
        Fault.rate_limited(retry_after=0),
        Fault.http(500),
        Fault.truncated(),
        Fault.http(503),
    )
    traces, stats = _read(fake, page_size=20)
    assert len(traces) == 7 and stats.retries == 4
    assert fake.faults.pending() == 0


def test_timeout_is_retried(fake: FakeLangfuse) -> None:
    fake.faults.add("/api/public/v2/observations", Fault.timeout(1.5))
    traces, stats = _read(fake, timeout=0.5)
    assert len(traces) == 7 and stats.retries == 1
    assert "timeout" in stats.retry_reasons[0]


def test_gives_up_after_bounded_attempts_with_a_clear_error(fake: FakeLangfuse) -> None:
    fake.faults.add("/api/public/v2/observations", *[Fault.http(500)] * 3)
    with pytest.raises(SourceError, match="after 3 attempts: HTTP 500"):
        _read(fake, max_attempts=3)


def test_bad_credentials_are_not_retried_and_say_what_to_check(fake: FakeLangfuse) -> None:
    env = env_for(fake) | {"LANGFUSE_SECRET_KEY": "wrong"}
    with (
        make_client(LangfuseCredentials.from_env(env), timeout=5) as client,
        pytest.raises(SourceError, match="HTTP 401.*LANGFUSE_SECRET_KEY") as info,
    ):
        list(read_langfuse(client, WINDOW))
    assert "wrong" not in str(info.value)
    assert len(fake.requests) == 1


def test_environment_name_and_tag_filters(fake: FakeLangfuse) -> None:
    fake.add_trace(*make_trace(100, T0 + timedelta(minutes=30), environment="staging"))
    fake.add_trace(*make_trace(101, T0 + timedelta(minutes=31), name="other-agent"))
    fake.add_trace(*make_trace(102, T0 + timedelta(minutes=32), tags=("rag", "beta")))
    only_staging, _ = _read(fake, LangfuseWindow(start=T0, end=T0 + timedelta(days=1), environment=("staging",)))
    assert list(only_staging) == ["tr-00100"]
    assert fake.requests[-1].query["environment"] == ["staging"]
    named, _ = _read(fake, LangfuseWindow(start=T0, end=T0 + timedelta(days=1), trace_name="other-agent"))
    assert list(named) == ["tr-00101"]
    assert "filter" in fake.requests[-1].query and "fromStartTime" not in fake.requests[-1].query
    tagged, _ = _read(fake, LangfuseWindow(start=T0, end=T0 + timedelta(days=1), tags=("rag", "beta")))
    assert list(tagged) == ["tr-00102"]


def test_window_bounds_start_inclusive_end_exclusive(fake: FakeLangfuse) -> None:
    window = LangfuseWindow(start=T0 + timedelta(minutes=2), end=T0 + timedelta(minutes=4), overhang=timedelta(0))
    traces, stats = _read(fake, window)
    assert sorted(traces) == ["tr-00002", "tr-00003"]
    assert stats.rows == 24  # tr-00004 starts exactly at `end`: excluded, none of its rows is read


def test_a_trace_running_past_the_window_end_is_read_whole(fake: FakeLangfuse) -> None:
    late = T0 + timedelta(hours=5)
    trace, rows = make_trace(300, late - timedelta(seconds=1))
    rows[-1]["startTime"] = (late + timedelta(seconds=30)).isoformat()  # its last step starts after `end`
    fake.add_trace(trace, rows)
    fake.add_trace(*make_trace(301, late + timedelta(seconds=10)))  # rooted after `end`: not this window's
    traces, stats = _read(fake, LangfuseWindow(start=late - timedelta(minutes=1), end=late))
    assert list(traces) == ["tr-00300"] and len(traces["tr-00300"]) == 12
    assert stats.outside_rows == 12


def test_rows_of_traces_rooted_before_the_window_are_left_to_that_window() -> None:
    assembler = TraceAssembler(window_start=T0)
    child = {"id": "c", "traceId": "old", "startTime": T0 + timedelta(seconds=1), "isRootObservation": False}
    assert assembler.add([child]) == []
    assert assembler.finish() == []
    assert assembler.stats.outside_rows == 1


def test_window_validation() -> None:
    with pytest.raises(ConfigError, match="no timezone"):
        LangfuseWindow(start=datetime(2026, 1, 1), end=T0)  # noqa: DTZ001 - naive on purpose
    with pytest.raises(ConfigError, match="empty window"):
        LangfuseWindow(start=T0, end=T0)


def test_missing_credentials_name_the_variable() -> None:
    with pytest.raises(ConfigError, match="LANGFUSE_SECRET_KEY not set"):
        LangfuseCredentials.from_env({"LANGFUSE_PUBLIC_KEY": "pk"})
    creds = LangfuseCredentials.from_env({"LANGFUSE_PUBLIC_KEY": "pk", "LANGFUSE_SECRET_KEY": "sk-secret"})
    assert creds.base_url == "https://cloud.langfuse.com" and "sk-secret" not in repr(creds)


def test_experiment_items_map_traces_to_their_dataset_item(fake: FakeLangfuse) -> None:
    fake.add_experiment_item("tr-00002", {"gold_answer": "30 days"}, item_metadata={"required_doc_ids": ["a"]})
    with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
        items = read_experiment_items(client, WINDOW)
        records = list(read_langfuse(client, WINDOW, experiment_items=items))
    assert list(items) == ["tr-00002"] and items["tr-00002"]["experimentItemId"] == "dataset-item-0"
    (request,) = fake.requests_to("/api/public/experiment-items")
    assert request.query["fields"] == ["core,io,itemMetadata"] and request.query["limit"] == ["100"]
    tagged = {r.payload["id"] for r in records if "experiment_item" in r.payload}  # type: ignore[operator,index]
    assert tagged == {"tr-00002"}


def test_a_server_without_experiment_items_gives_none_and_a_note(fake: FakeLangfuse) -> None:
    fake.faults.add("/api/public/experiment-items", Fault.http(404))
    stats = ReadStats()
    with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
        assert read_experiment_items(client, WINDOW, stats=stats) == {}
    assert "no experiment labels" in stats.notes[0]


def test_traces_come_newest_root_first_with_the_root_start_as_timestamp() -> None:
    """Interleaved traces (each starts 2 ms after the one before; the older, the longer it runs), read 5 rows a
    page: each record carries its root's start and they come newest first, so a backfill can cut its slices from
    one scan (``engine.slices``)."""
    with FakeLangfuse() as fake:
        starts = {}
        for i in range(9):
            trace, observations = make_trace(i, T0 + timedelta(milliseconds=2 * i), size=6 + 3 * (8 - i))
            fake.add_trace(trace, observations)
            starts[trace["id"]] = T0 + timedelta(milliseconds=2 * i)
        with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
            records = list(read_langfuse(client, WINDOW, LangfuseSettings(page_size=5), sleep=lambda s: None))
    assert [r.timestamp for r in records] == sorted(starts.values(), reverse=True)
    assert all(r.timestamp == starts[r.payload["id"]] for r in records)  # type: ignore[index]
