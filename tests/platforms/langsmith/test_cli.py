"""``tracescore score --source langsmith``: a window read, scored and written back through the CLI, twice, on each
query backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.cli import main

WINDOW = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-12-01T00:00:00Z"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, backend: str) -> Iterator[FakeLangSmith]:
    with FakeLangSmith() as fake:
        fake.backend = backend
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_cli_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        monkeypatch.chdir(Path(__file__).resolve().parents[3])  # no stray tracescore.toml
        yield fake


def test_score_a_langsmith_window_and_write_back_twice(server: FakeLangSmith, tmp_path: Path) -> None:
    seed(server, load_samples())
    args = ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
            "--store", str(tmp_path / "ts.db"), "--out", str(tmp_path / "out.jsonl")]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    written = len(server.feedback)
    assert written > 200
    assert f"feedback: {written} created, 0 updated, 0 unchanged, 0 not written" in first.output
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(lines) == 38 and all(x["errors"] == [] for x in lines)
    assert {x["trace_id"] for x in lines} == {r["id"] for r in server.runs if r["parent_run_id"] is None}

    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert f"feedback: 0 created, 0 updated, {written} unchanged, 0 not written" in again.output
    assert len(server.feedback) == written and server.duplicates() == []


def test_without_write_back_nothing_is_written(server: FakeLangSmith, tmp_path: Path) -> None:
    seed(server, load_samples(3))
    result = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                       "--no-write-back", "--store", str(tmp_path / "ts.db")])
    assert result.exit_code == 0, result.output
    assert "no write-back" in result.output and server.feedback == {} and server.requests_to("/feedback") == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--source", "langsmith", *WINDOW], "required with --source langsmith: the project name"),
        (["--source", "langsmith", "--project", "p"], "required with --source langsmith, e.g. 2026-11-20"),
        (["--source", "langsmith", "--project", "p", "--from", "yesterday"], "is not an ISO 8601 time"),
        (["cookbook/data/traces.jsonl", "--project", "p"], "--project applies to platform sources only"),
    ],
)
def test_bad_options_say_what_to_do(server: FakeLangSmith, extra: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", *extra, "--store", str(tmp_path / "ts.db")])
    assert result.exit_code == 2 and message in result.output, result.output


def test_an_unknown_project_is_a_one_line_error(server: FakeLangSmith, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "nope", *WINDOW,
                                       "--store", str(tmp_path / "ts.db")])
    assert result.exit_code == 4 and "LangSmith project 'nope' not found" in result.output
    assert "lsv2_cli_test_key" not in result.output
