"""``tracescore dashboard --to langsmith``: the langsmith SDK has no call that creates a chart (only
``sessions.dashboard``, which reads a project's prebuilt one), so the command sends nothing and prints every chart
as a manual step. Issue #31: acceptance 1, LangSmith half ("a test that the command prints the manual steps it
cannot take").
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langsmith import FakeLangSmith
from tracescore.cli import main

SCORES = ("retrieval.recall_at_5", "grounding.rate", "citation.support_rate", "citation.unfetched_rate",
          "answer.correct", "citation.fabricated_count", "diagnosis")


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.chdir(tmp_path)
    with FakeLangSmith() as fake:
        monkeypatch.setenv("LANGSMITH_API_KEY", "k")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        yield fake


def test_the_sdk_still_has_no_call_that_creates_a_chart() -> None:
    """The reason the command gives: if a future SDK adds one, this fails and the command should use it."""
    from langsmith.resources.sessions import SessionsResource

    methods = {n for n, _ in inspect.getmembers(SessionsResource, inspect.isfunction)}
    assert "dashboard" in methods
    assert "no resources created" in (SessionsResource.dashboard.__doc__ or "")
    import langsmith.resources as resources

    assert not [n for n in dir(resources) if "chart" in n.lower()]


@pytest.mark.parametrize("dry_run", [False, True])
def test_prints_each_chart_as_a_manual_step_and_sends_nothing(langsmith: FakeLangSmith, dry_run: bool) -> None:
    args = ["dashboard", "--to", "langsmith", "--project", "agent-prod", "--by", "provider"]
    result = CliRunner().invoke(main, args + (["--dry-run"] if dry_run else []))
    assert result.exit_code == 0, result.output
    assert langsmith.requests == []
    manual = [line for line in result.output.splitlines() if line.strip().startswith("by hand:")]
    assert "project 'agent-prod'" in manual[0] and "'tracescore: stage split'" in manual[0]
    for score in SCORES:
        assert any(f"key {score!r}" in line for line in manual), score
    series = [line for line in manual if "line chart" in line]
    assert len(series) == 5 and all("group by Metadata: ls_provider" in line for line in series)
    assert "Judge behind grounding.rate: judge not calibrated" in manual[-1]
    assert "has no call that creates a chart" in result.output
    if not dry_run:
        assert "9 steps left to do by hand" in result.output


def test_project_is_a_langsmith_option_only() -> None:
    result = CliRunner().invoke(main, ["dashboard", "--to", "langfuse", "--project", "p", "--dry-run"])
    assert result.exit_code == 2
    assert "applies to --to langsmith only" in result.output


def test_the_project_defaults_to_the_configs(langsmith: FakeLangSmith, tmp_path: Path) -> None:
    (tmp_path / "tracescore.toml").write_text('[source]\nkind = "langsmith"\nproject = "from-config"\n')
    result = CliRunner().invoke(main, ["dashboard", "--to", "langsmith"])
    assert result.exit_code == 0, result.output
    assert "open project 'from-config'" in result.output
    assert langsmith.requests == []
