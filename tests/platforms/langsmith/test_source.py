"""LangSmith source through the real SDK, on each query backend: window, paging (never a page over 100), selected
fields, examples per page, repeated pages, resumed listings, per-trace failures, and the errors a user sees."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.fakes.base import Fault
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, run_tree, seed
from tests.fakes.langsmith_v2 import V2_QUERY, query_path
from tracescore.engine.pipeline import RunCounts, score_records
from tracescore.engine.plan import deterministic_scorers
from tracescore.errors import ConfigError, SourceError
from tracescore.platforms.langsmith.query_v2 import CHILD_SKEW, v2_selects
from tracescore.platforms.langsmith.source import CHILD_FIELDS, ROOT_FIELDS, LangSmithSource, make_client
from tracescore.platforms.registry import get_adapter

START = datetime(2026, 11, 1, tzinfo=UTC)
END = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def server(backend: str) -> Iterator[FakeLangSmith]:
    with FakeLangSmith(page_size=7) as fake:
        fake.backend = backend
        yield fake


def _source(server: FakeLangSmith, **kwargs: object) -> LangSmithSource:
    client = make_client(api_key="k", endpoint=server.url, timeout_ms=2000, backoff=0.01)
    return LangSmithSource(client, project="search-agent", **kwargs)  # type: ignore[arg-type]


def _root_ids(records: object) -> list[str]:
    return [r.payload["id"] for r in records]  # type: ignore[attr-defined]


def test_window_paging_and_selected_fields(server: FakeLangSmith) -> None:
    samples = load_samples()
    project_id = seed(server, samples)
    times = sorted(datetime.fromisoformat(s["timestamp"]) for s in samples)
    start, end = times[5], times[30]  # [start, end): samples 5..29
    want = {run_tree(s, project_id)[0][0]["id"] for s in samples
            if start <= datetime.fromisoformat(s["timestamp"]) < end}

    got = _root_ids(_source(server, page_size=10).records(start, end))
    assert len(got) == len(set(got)) == 25 and set(got) == want

    assert len(server.requests_to("/sessions", "GET")) == 1  # the project is looked up once
    assert len(server.requests_to("/info", "GET")) == 1  # the backend is read once
    if server.backend != "clickhouse_only":
        assert server.requests_to("/runs/query") == []  # never v1 where SmithDB serves queries
        _v2_queries_are_bounded(server, project_id, start, end, want)
        return
    queries = [r.json() for r in server.requests_to("/runs/query", "POST")]
    assert all(q.get("limit") is None or q["limit"] <= 100 for q in queries)
    roots = [q for q in queries if q.get("is_root") is True]
    children = [q for q in queries if q.get("trace")]
    assert len(roots) == 4  # 25 roots in pages of 7 (the server's page size)
    assert all(q["session"] == [project_id] for q in queries)  # project_id passed: no name lookup per query
    assert roots[0]["select"] == list(ROOT_FIELDS)
    assert roots[0]["filter"] == f'lt(start_time, "{end:%Y-%m-%dT%H:%M:%S}Z")'
    assert roots[0]["start_time"].startswith(start.strftime("%Y-%m-%dT%H:%M:%S"))
    assert sorted(q["trace"] for q in children) == sorted(want)  # one children query per trace
    assert all(q["select"] == list(CHILD_FIELDS) and q["is_root"] is False for q in children)


def _v2_queries_are_bounded(server: FakeLangSmith, project_id: str, start: datetime, end: datetime,
                            want: set[str]) -> None:
    """v2: project, root/trace, selects, explicit start-time bounds (the 24-hour default would miss these), cursors."""
    queries = [r.json() for r in server.requests_to(V2_QUERY, "POST")]
    assert all(q["project_ids"] == [project_id] for q in queries)
    roots = [q for q in queries if q.get("is_root") is True]
    children = [q for q in queries if q.get("trace_id")]
    assert len(roots) == 4 and len(children) == 25 and len(queries) == 29  # 25 roots in pages of 7, a query a trace
    assert [q.get("cursor") for q in roots] == [None, "c:7", "c:14", "c:21"]  # the server's next_cursor, as given
    assert all(q["selects"] == v2_selects(ROOT_FIELDS) and q["page_size"] <= 1000 for q in roots)
    assert {q["min_start_time"] for q in roots} == {start.isoformat()}
    assert {q["max_start_time"] for q in roots} == {end.isoformat()}
    assert sorted(q["trace_id"] for q in children) == sorted(want)
    assert all(q["selects"] == v2_selects(CHILD_FIELDS) and q["is_root"] is False for q in children)
    starts = {r["id"]: datetime.fromisoformat(r["start_time"]) for r in server.runs}
    for q in children:
        assert datetime.fromisoformat(q["min_start_time"]) == starts[q["trace_id"]] - CHILD_SKEW
        assert datetime.fromisoformat(q["max_start_time"]) > datetime.fromisoformat(q["min_start_time"])


def test_examples_are_read_once_per_page_of_roots(server: FakeLangSmith) -> None:
    seed(server, load_samples(), experiment=True)
    records = list(_source(server, page_size=10).records(START, END))
    assert len(records) == 38 and all(r.payload["example"] for r in records)
    assert len(server.requests_to("/examples", "GET")) == 4  # ceil(38 / 10)
    assert all(r.payload["example"]["id"] == r.payload["root"]["reference_example_id"] for r in records)


def test_repeated_pages_and_a_cut_root_page_neither_lose_nor_repeat_traces(server: FakeLangSmith) -> None:
    project_id = seed(server, load_samples())
    path = query_path(server.backend)
    if server.backend == "clickhouse_only":
        server.repeat_pages = 3  # a v1 cursor that does not advance (the fake's v1 fault)
        # a page of roots (up to 100) is listed before any children: 6 pages of 7 + 3 repeats; the 9th comes back cut
        server.faults.add(path, *[Fault()] * 8, Fault.truncated())
    else:
        server.faults.add(path, *[Fault()] * 3, Fault.truncated())  # the 4th page of 7 roots comes back cut
    got = _root_ids(_source(server).records(START, END))
    assert server.faults.pending() == 0
    assert sorted(got) == sorted(run_tree(s, project_id)[0][0]["id"] for s in load_samples())
    queries = [r.json() for r in server.requests_to(path)]
    if server.backend == "clickhouse_only":
        resumed = [q for q in queries if q.get("is_root") and q.get("filter", "").startswith("lte(")]
    else:
        resumed = [q for q in queries if q.get("is_root") and q["max_start_time"] != END.isoformat()]
    assert resumed  # the listing went on below the last start time seen


def test_a_trace_whose_children_cannot_be_read_is_reported_and_the_batch_goes_on(server: FakeLangSmith) -> None:
    seed(server, load_samples(5))
    # the root page, then the 1st trace's children, three times
    server.faults.add(query_path(server.backend), Fault(), *[Fault.truncated()] * 3)
    counts = RunCounts()
    results = list(score_records(_source(server).records(START, END), get_adapter("langsmith"), deterministic_scorers(),
                                 counts))
    assert (counts.seen, counts.scored, counts.failed) == (5, 4, 1)
    failed = next(r for r in results if r.errors)
    assert failed.trace_id and "cannot read the child runs of trace" in failed.errors[0]


def test_user_errors_name_the_value_and_the_fix(server: FakeLangSmith, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(server, load_samples(2))
    client = make_client(api_key="k", endpoint=server.url, timeout_ms=2000)
    with pytest.raises(SourceError, match="LangSmith project 'nope' not found; check the name"):
        list(LangSmithSource(client, project="nope").records(START, END))
    with pytest.raises(ConfigError, match="has no timezone"):
        list(_source(server).records(datetime(2026, 11, 1), END))  # noqa: DTZ001 - the point of the test
    with pytest.raises(ConfigError, match="empty window"):
        list(_source(server).records(END, END - timedelta(days=1)))
    with pytest.raises(ConfigError, match="page size 500 is out of range; LangSmith accepts 1..100"):
        _source(server, page_size=500)
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="LANGSMITH_API_KEY is not set"):
        make_client(endpoint=server.url)


def test_scoring_a_jsonl_file_never_imports_langsmith() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from tracescore.cli import main\n"
        "r = CliRunner().invoke(main, ['score', 'cookbook/data/traces.jsonl', '--store', ':memory:', '-q'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print('langsmith' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_429_is_retried_after_the_wait_the_server_asked_for(server: FakeLangSmith) -> None:
    import time

    seed(server, load_samples(1))
    path = query_path(server.backend)
    server.faults.add(path, Fault.rate_limited(retry_after=1))
    began = time.monotonic()
    records = list(_source(server).records(START, END))
    waited = time.monotonic() - began
    assert len(records) == 1 and records[0].payload["error"] is None
    assert len(server.requests_to(path)) == 3  # the 429, its retry, the children
    assert waited >= 0.95  # Retry-After: 1 was honoured (a lower bound, not a speed check)
