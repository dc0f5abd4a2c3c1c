"""``[sinks] keep_versions`` reaches the LangSmith sink (a core section, handed to every platform factory): the real
CLI and ``langsmith`` SDK over loopback HTTP to the fake; every feedback key carries its score's version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.cli import main


@pytest.mark.parametrize("keep", [True, False])
def test_keep_versions_names_each_feedback_with_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    with FakeLangSmith() as fake:
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_keep_versions_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        seed(fake, load_samples())
        config_path = tmp_path / "tracescore.toml"
        config_path.write_text(
            f'[source]\nkind = "langsmith"\nproject = "search-agent"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n'
            + ("\n[sinks]\nkeep_versions = true\n" if keep else "")
        )
        args = ["backfill", "--config", str(config_path), "--from", "2026-11-01", "--to", "2026-12-01", "-q"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert json.loads(result.output.splitlines()[-1])["scores_written"] > 200
        feedback = list(fake.feedback.values())
    keys = {f["key"] for f in feedback}
    assert {k for k in keys if "@" in k} == (keys if keep else set()), sorted(keys)
    if keep:  # the name's version is the one the feedback records
        assert all(f["key"].split("@")[1] == f["feedback_source"]["metadata"]["scorer_version"] for f in feedback)
