"""``Trace.session_id`` from Langfuse's ``sessionId`` (#48 item 1, acceptance 4): the real framework traces that carry
one read it, through the real SDK against the loopback fake and from the downloaded files; the others read none."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHARED_DATA
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.platforms.langfuse.adapter import trace_from_observations
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.platforms.langfuse.source import LangfuseWindow, read_langfuse

DATA = SHARED_DATA / "langfuse_traces"
# Read by hand from the files (``trace.sessionId``); every other file's sessionId is null.
WITH_SESSION = {
    "agno-2025-06-11.json": "35cc6c90-b657-4819-b66c-c931c03ad569",
    "autogen-2025-06-06.json": "session_abc",
    "google-adk-2025-08-28.json": "demo-session",
    "llamaindex-2025-06-05.json": "session_abc",
    "worker_trace_fixtures/agno-2025-06-11.trace.json": "35cc6c90-b657-4819-b66c-c931c03ad569",
    "worker_trace_fixtures/autogen-2025-06-06.trace.json": "session_abc",
    "worker_trace_fixtures/csharp-agent-with-gemini-2026-03-09.trace.json": "9714061f-20c0-4d98-9220-1dc7df15c3c2",
    "worker_trace_fixtures/google-adk-2025-08-28.trace.json": "demo-session",
    "worker_trace_fixtures/llamaindex-2025-06-05.trace.json": "session_abc",
    "worker_trace_fixtures/pydantic-ai-2025-06-06.trace.json": "session_abc",
    "worker_trace_fixtures/pydantic-ai-tools-2025-06-06.trace.json": "session_abc",
}
FOLDERS = {"top": sorted(DATA.glob("*.json")), "worker": sorted(DATA.glob("worker_trace_fixtures/*.trace.json"))}
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _expected(path: Path) -> str | None:
    return WITH_SESSION.get(path.relative_to(DATA).as_posix())


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_the_hand_read_list_matches_the_files() -> None:
    files = FOLDERS["top"] + FOLDERS["worker"]
    assert len(files) == 33
    assert {p.relative_to(DATA).as_posix() for p in files if _load(p)["trace"].get("sessionId")} == set(WITH_SESSION)


@pytest.mark.parametrize("path", FOLDERS["top"] + FOLDERS["worker"], ids=lambda p: p.name)
def test_a_downloaded_trace_reads_its_session(path: Path) -> None:
    assert trace_from_observations(_load(path)).session_id == _expected(path)


@pytest.fixture(params=sorted(FOLDERS))
def fake(request: pytest.FixtureRequest) -> Iterator[tuple[FakeLangfuse, dict[str, str | None]]]:
    """One fake per folder (the two folders hold the same traces under the same ids), plus three traces of ours
    without a session; yields the server and the session each trace id must read."""
    want: dict[str, str | None] = {}
    with FakeLangfuse() as server:
        for path in FOLDERS[request.param]:
            data = _load(path)
            if all(o.get("parentObservationId") for o in data["observations"]):
                continue  # the csharp download lacks its root span: no root row to list it by (read as a file above)
            server.add_trace(data["trace"], data["observations"])
            want[data["trace"]["id"]] = _expected(path)
        for i in range(3):
            trace, observations = make_trace(i, T0 + timedelta(minutes=i))
            server.add_trace(trace, observations)
            want[trace["id"]] = None
        yield server, want


def test_the_source_and_adapter_read_session_id_over_the_sdk(fake: tuple[FakeLangfuse, dict[str, str | None]]) -> None:
    server, want = fake
    window = LangfuseWindow(start=datetime(2024, 1, 1, tzinfo=UTC), end=datetime(2027, 1, 1, tzinfo=UTC))
    with make_client(LangfuseCredentials.from_env(env_for(server)), timeout=5) as client:
        records = list(read_langfuse(client, window, LangfuseSettings(), sleep=lambda s: None))
    got = {t.id: t.session_id for t in map(trace_from_observations, (r.payload for r in records))}
    assert got == want
    assert sum(v is not None for v in got.values()) >= 4  # agno, autogen, google-adk, llamaindex at least
    assert all(
        r.query.get("fields") == ["core,basic,io,metadata"] for r in server.requests_to("/api/public/v2/observations")
    )
