"""``Trace.session_id`` from LangSmith's thread keys (#48 item 1), read through the real SDK from the loopback fake on
each query backend: the root run's metadata ``session_id``, ``conversation_id`` or ``thread_id``, the first present in
that order (the order LangSmith's ingest checks them in); the run's own ``session_id`` field is its project."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore.platforms.langsmith.adapter import trace_from_langsmith
from tracescore.platforms.langsmith.source import LangSmithSource, make_client

START = datetime(2026, 11, 1, tzinfo=UTC)
END = datetime(2026, 12, 1, tzinfo=UTC)
# root metadata added to sample i, and the session it must read
CASES: list[tuple[dict[str, Any], str | None]] = [
    ({"session_id": "s-1"}, "s-1"),
    ({"thread_id": "t-1"}, "t-1"),
    ({"conversation_id": "c-1"}, "c-1"),
    ({"thread_id": "t-2", "conversation_id": "c-2", "session_id": "s-2"}, "s-2"),  # session_id first
    ({"thread_id": "t-3", "conversation_id": "c-3"}, "c-3"),  # then conversation_id
    ({"session_id": "", "thread_id": "t-4"}, "t-4"),  # a blank key is not a thread: the next one is
    ({"thread_id": 7}, "7"),
    ({"session_id": {"not": "text"}}, None),  # not an id: the turn is scored on its own, not failed
    ({}, None),
]


@pytest.fixture
def seeded(backend: str) -> Iterator[tuple[FakeLangSmith, str, dict[str, str | None]]]:
    with FakeLangSmith(page_size=7) as fake:
        fake.backend = backend
        project_id = fake.add_project("search-agent")
        want: dict[str, str | None] = {}
        for sample, (extra, session) in zip(load_samples(len(CASES)), CASES, strict=True):
            runs, _ = run_tree(sample, project_id)
            runs[0]["extra"]["metadata"].update(extra)  # the root run's metadata
            fake.add_runs(runs)
            want[runs[0]["id"]] = session
        yield fake, project_id, want


def test_thread_keys_of_the_root_run_are_the_session(seeded: tuple[FakeLangSmith, str, dict[str, str | None]]) -> None:
    fake, project_id, want = seeded
    client = make_client(api_key="k", endpoint=fake.url, timeout_ms=2000, backoff=0.01)
    records = list(LangSmithSource(client, project="search-agent").records(START, END))
    traces = [trace_from_langsmith(r.payload) for r in records]
    assert {t.id: t.session_id for t in traces} == want
    assert all(t.metadata["langsmith"]["session_id"] == project_id for t in traces)  # the project stays apart
