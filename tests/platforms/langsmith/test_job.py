"""The job against the fake LangSmith (each query backend): a backfill writes every score as feedback once; a re-run
adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.cli import main


def test_backfill_writes_feedback_once_and_a_second_backfill_of_a_new_setup_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    with FakeLangSmith() as fake:
        fake.backend = backend
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_job_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        seed(fake, load_samples())
        config = tmp_path / "tracescore.toml"
        config.write_text(
            f'[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
            "backfill_chunks = 4\nwrite_batch = 7\n"
        )
        args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-12-01", "-q"]
        first = CliRunner().invoke(main, args)
        assert first.exit_code == 0, first.output
        summary = json.loads(first.output.splitlines()[-1])
        roots = {r["id"] for r in fake.runs if r["parent_run_id"] is None}
        assert summary["scored"] == len(roots) == 38
        assert summary["scores_written"] == len(fake.feedback) > 200
        assert summary["requests"] == len(fake.requests)  # the SDK's session goes through the job's limiter
        assert {f["run_id"] for f in fake.feedback.values()} == roots
        assert fake.duplicates() == []

        # k=3 is another scoring setup: a new backfill of the same window re-scores and upserts by feedback id
        config.write_text(config.read_text() + "\n[scorers.retrieval]\nk = 3\n")
        second = CliRunner().invoke(main, args)
        assert second.exit_code == 0, second.output
        again = json.loads(second.output.splitlines()[-1])
        assert again["scored"] == 38 and again["backfill_id"] != summary["backfill_id"]
        assert fake.duplicates() == []
