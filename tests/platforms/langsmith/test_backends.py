"""Issue 28, the read side: LangSmith's query backend from ``/info``, v2 reads where SmithDB serves queries, the same
scores from JSONL and from LangSmith on every backend (``score``, ``run``, ``backfill`` of a window older than the v2
query's 24-hour default), and reads a retry cannot fix sent once with the server's whole detail."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.fakes.base import Fault
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import SAMPLES, load_samples, run_tree, seed
from tests.fakes.langsmith_v2 import SMITHDB_V1_REFUSAL, V2_QUERY, query_path
from tracescore.cli import main
from tracescore.platforms.langsmith.backend import query_backend
from tracescore.platforms.langsmith.query_v2 import v1_row
from tracescore.platforms.langsmith.source import LangSmithSource, make_client
from tracescore.store.db import Store

START, END = datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 21, tzinfo=UTC)  # every sample is in here
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
_WRITES = (("/feedback", "POST"), ("/feedback", "PATCH"), ("/feedback", "DELETE"))
_DEPRECATED = "list_runs() is deprecated and will be removed after Jan 31, 2027"


@pytest.fixture
def server(backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLangSmith]:
    with FakeLangSmith() as fake:
        fake.backend = backend
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_backend_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        monkeypatch.chdir(tmp_path)  # no stray tracescore.toml
        yield fake


def _writes(server: FakeLangSmith) -> int:
    return sum(len(server.requests_to(path, method)) for path, method in _WRITES)


def _by_sample(rows: Iterator[dict[str, Any]] | list[dict[str, Any]], server: FakeLangSmith | None) -> dict[str, Any]:
    """Scores and absences (with their reasons) of each result, by the sample it came from."""
    sample = ({r["id"]: r["extra"]["metadata"]["source_trace"] for r in server.runs if r["parent_run_id"] is None}
              if server is not None else {})
    return {sample.get(r["trace_id"], r["trace_id"]): (r["scores"], r["missing"], r["errors"]) for r in rows}


def _jsonl(tmp_path: Path) -> dict[str, Any]:
    run = CliRunner().invoke(main, ["score", str(SAMPLES), "--store", str(tmp_path / "jsonl.db"),
                                    "--out", str(tmp_path / "jsonl.jsonl"), "-q"])
    assert run.exit_code == 0, run.output
    lines = [json.loads(x) for x in (tmp_path / "jsonl.jsonl").read_text().splitlines()]
    return _by_sample(lines, None)


def _stored(store: Path, run_id: str) -> list[dict[str, Any]]:
    with Store(store) as db:
        return list(db.results(run_id))


def _job(config: Path, *args: str) -> tuple[Result, dict[str, Any]]:
    result = CliRunner().invoke(main, [*args, "--config", str(config), "-q"])
    assert result.exit_code == 0, result.output
    return result, json.loads(result.stdout.splitlines()[-1])


def test_the_backend_follows_the_info_flags_as_the_sdk_reads_them() -> None:
    from langsmith._internal._v2_migration_utils import get_query_backend  # the SDK's own reading, as the oracle

    values: list[bool | None] = [None, False, True]
    for ch, sdb in itertools.product(values, values):
        flags = {k: v for k, v in (("ch_query_enabled", ch), ("sdb_query_enabled", sdb)) if v is not None}
        assert query_backend(flags) == get_query_backend(flags).value, flags
    assert query_backend(None) == "clickhouse_only"  # an older server: no flags at all
    assert query_backend({"sdb_query_enabled": True}) == "dual"  # ch_query_enabled is on when absent
    assert query_backend({"ch_query_enabled": False, "sdb_query_enabled": True}) == "smithdb_only"


@pytest.mark.parametrize("backend", ["dual", "smithdb_only"])
def test_a_v2_read_gives_the_adapter_what_a_v1_read_gives_it(backend: str) -> None:
    """The same project read from a ClickHouse server (v1) and from a SmithDB one (v2): identical records."""
    payloads = {}
    for name in ("clickhouse_only", backend):
        with FakeLangSmith(page_size=9) as fake:
            fake.backend = name
            seed(fake, load_samples(), experiment=True)  # labels on reference examples
            client = make_client(api_key="k", endpoint=fake.url, timeout_ms=5000)
            source = LangSmithSource(client, project="search-agent", page_size=20)
            payloads[name] = [r.payload for r in source.records(START, END)]
            assert source.stats.backend == name
            assert (len(fake.requests_to("/runs/query")) > 0) == (name == "clickhouse_only")
            assert (len(fake.requests_to(V2_QUERY)) > 0) == (name != "clickhouse_only")
    assert len(payloads[backend]) == 38 and all(p["example"] and p["runs"] for p in payloads[backend])
    assert payloads[backend] == payloads["clickhouse_only"]


def test_a_v2_run_is_mapped_to_the_v1_shape() -> None:
    from langsmith.types import Run

    run = Run.model_validate({
        "id": "00000000-0000-4000-8000-000000000002", "name": "retrieve", "run_type": "RETRIEVER",
        "status": "ERROR", "error": "boom", "start_time": "2026-11-20T09:00:00.010Z",
        "end_time": "2026-11-20T09:00:00.015Z", "trace_id": "00000000-0000-4000-8000-000000000001",
        "parent_run_ids": ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000003"],
        "project_id": "00000000-0000-4000-8000-0000000000aa", "inputs": {"query": "q"},
        "extra": {"runtime": {"sdk": "py"}}, "metadata": {"labels": {"gold_answer": "x"}},
        "feedback_stats": {"answer.correct": {"n": 2, "avg": 0.5, "values": {}}},
    })
    row = v1_row(run)
    assert (row["run_type"], row["status"], row["error"]) == ("retriever", "error", "boom")
    assert row["parent_run_id"] == "00000000-0000-4000-8000-000000000003"  # the direct parent: last of the chain
    assert row["session_id"] == "00000000-0000-4000-8000-0000000000aa"
    assert row["start_time"] == "2026-11-20T09:00:00.010000Z"
    assert row["extra"] == {"runtime": {"sdk": "py"}, "metadata": {"labels": {"gold_answer": "x"}}}
    assert row["feedback_stats"] == {"answer.correct": {"n": 2, "avg": 0.5, "values": {}}}
    assert row["outputs"] is None and row["inputs"] == {"query": "q"}


def test_the_samples_score_as_from_jsonl_with_score_run_and_backfill(server: FakeLangSmith, tmp_path: Path) -> None:
    """Acceptance 1 (read side): score for score, absences and reasons included, on each backend."""
    assert datetime.now(UTC) - END > timedelta(days=1)  # the backfilled window is older than v2's 24-hour default
    want = _jsonl(tmp_path)
    seed(server, load_samples())

    score = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                      "--store", "score.db", "--out", "score.jsonl"])
    assert score.exit_code == 0, score.output
    assert f"query backend {server.backend}" in score.output
    lines = [json.loads(x) for x in Path("score.jsonl").read_text().splitlines()]
    assert _by_sample(lines, server) == want
    written = len(server.feedback)
    assert written > 200 and server.duplicates() == []

    config = tmp_path / "tracescore.toml"
    config.write_text('[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "job.db"\n')
    writes = _writes(server)
    _, first = _job(config, "run", "--since", "2026-11-20T00:00:00Z")
    assert first["scored"] == 38 and first["read"]["backend"] == server.backend
    assert _by_sample(_stored(Path("job.db"), first["run_id"]), server) == want
    assert _writes(server) == writes  # the score run wrote them all already: unchanged feedback is not sent
    _, again = _job(config, "run", "--since", "2026-11-20T00:00:00Z")
    assert again["seen"] == 38 and again["scores_written"] == 0 and _writes(server) == writes  # a re-run writes nothing

    config.write_text(config.read_text().replace('"job.db"', '"backfill.db"'))
    _, backfill = _job(config, "backfill", *WINDOW)
    assert backfill["scored"] == 38 and backfill["read"]["backend"] == server.backend
    assert _by_sample(_stored(Path("backfill.db"), backfill["run_id"]), server) == want
    assert len(server.feedback) == written and server.duplicates() == [] and _writes(server) == writes
    assert len(server.requests_to("/info")) == 4  # once per command: score, run, run, backfill
    if server.backend != "clickhouse_only":
        assert server.requests_to("/runs/query") == []


def test_a_v2_query_without_bounds_reads_only_the_last_day(backend: str) -> None:
    """Why every v2 query carries its bounds: the fake applies the documented 24-hour default."""
    if backend == "clickhouse_only":
        pytest.skip("no v2 query on a ClickHouse-only server")
    from langsmith import Langsmith

    with FakeLangSmith() as fake:
        fake.backend = backend
        project_id = seed(fake, load_samples())
        with Langsmith(api_key="k", base_url=fake.url, max_retries=0) as api:
            assert list(api.runs.query_v2(project_ids=[project_id], is_root=True)) == []
            found = list(api.runs.query_v2(project_ids=[project_id], is_root=True, min_start_time=START,
                                           max_start_time=END, selects=["ID"]))
    assert len(found) == 38


_DETAIL = ("filter expression rejected: unknown field 'start_tme' at offset 4 in and(gte(start_tme, "
           '"2026-11-20T00:00:00Z"), eq(is_root, true)); allowed fields are id, name, run_type, start_time, '
           "end_time, status, error, tags, metadata_key, metadata_value, feedback_key, feedback_score, latency, "
           "total_tokens, total_cost, trace_id, parent_run_id, reference_example_id — see "
           "https://docs.langchain.com/langsmith/trace-query-syntax#filter-query-language (end of detail)")


@pytest.mark.parametrize("where", ["roots", "children"])
def test_a_refused_read_is_sent_once_and_its_whole_detail_reaches_the_user(server: FakeLangSmith, where: str) -> None:
    """Acceptance 3 (reads): a 400 is not retried, and the user reads the endpoint, the status and the detail."""
    assert len(_DETAIL) > 300
    seed(server, load_samples(5))
    path = query_path(server.backend)
    before = [Fault()] if where == "children" else []  # the root page answers; the first trace's children do not
    server.faults.add(path, *before, Fault.http(400, {"detail": _DETAIL}))
    result = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                       "--store", "ts.db"])
    assert result.exit_code == 4, result.output
    assert len(server.requests_to(path)) == len(before) + 1  # sent once, counted at the server
    assert _DETAIL in result.output and f"POST {path} answered HTTP 400" in result.output
    assert "re-run" not in result.output and "lsv2_backend_test_key" not in result.output
    assert server.requests_to("/feedback", "POST") == []


def test_an_unreadable_info_means_v1_and_a_smithdb_refusal_is_shown_whole(server: FakeLangSmith) -> None:
    """``/info`` missing (a proxy, an old server): v1 is assumed and said; SmithDB's 400 then reaches the user whole."""
    if server.backend != "smithdb_only":
        pytest.skip("only a SmithDB-only server refuses v1 queries")
    seed(server, load_samples(3))
    server.faults.add("/info", Fault.http(404, {"detail": "Not Found"}))
    result = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                       "--store", "ts.db"])
    assert result.exit_code == 4, result.output
    assert len(server.requests_to("/runs/query")) == 1
    assert SMITHDB_V1_REFUSAL in result.output and "answered HTTP 400" in result.output
    assert "re-run" not in result.output


def test_list_runs_deprecation_is_shown_where_v1_is_read(server: FakeLangSmith, tmp_path: Path) -> None:
    seed(server, load_samples(3))
    score = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                      "--store", "ts.db", "--no-write-back"])
    assert score.exit_code == 0, score.output
    assert (_DEPRECATED in score.output) == (server.backend == "clickhouse_only")
    config = tmp_path / "tracescore.toml"
    config.write_text('[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "job.db"\n')
    _, summary = _job(config, "backfill", *WINDOW)
    notes = " ".join(summary["read"]["notes"])
    assert (_DEPRECATED in notes) == (server.backend == "clickhouse_only")
    assert summary["read"]["backend"] == server.backend


def test_inspect_names_the_query_backend(server: FakeLangSmith, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    runs, _ = run_tree(load_samples(1)[0], "p")
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"root": runs[0], "runs": runs[1:], "example": None, "project": None}))
    shown = CliRunner().invoke(main, ["inspect", str(record), "--source", "langsmith"])
    assert shown.exit_code == 0, shown.output
    assert f"LangSmith query backend at {server.url}: {server.backend} (runs are read through " in shown.output
    assert ("/api/v2/runs/query" in shown.output) == (server.backend != "clickhouse_only")
    assert len(server.requests_to("/info")) == 1
    as_json = CliRunner().invoke(main, ["inspect", str(record), "--source", "langsmith", "--json"])
    assert json.loads(as_json.stdout)["trace_id"] == runs[0]["id"]  # the line goes beside the JSON, not into it
    monkeypatch.delenv("LANGSMITH_API_KEY")
    unchecked = CliRunner().invoke(main, ["inspect", str(record), "--source", "langsmith"])
    assert "LangSmith query backend: not checked (set LANGSMITH_API_KEY" in unchecked.output
