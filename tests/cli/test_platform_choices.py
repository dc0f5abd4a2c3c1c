"""The command line asks the registry: ``push --to`` and ``calibrate --to/--from`` take the platforms that declare
a sink or a label queue (anything else is a usage error naming them; a sheet is a path ending in ``.csv``), a
platform's own options go with that platform only, and calibration's queues are built by the platform, every
request through the limiter (the real SDKs against the loopback fakes)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tracescore.cli.main import main
from tracescore.errors import ConfigError
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.store.db import Store


def _cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def test_push_to_an_unknown_platform_names_the_valid_ones(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text("{}\n")
    done = _cli("push", str(results), "--to", "langfsue", "--store", str(tmp_path / "s.db"))
    assert done.exit_code == 2 and "'langfsue' is not one of 'langfuse', 'langsmith'" in done.output


@pytest.mark.parametrize(("command", "flag"), [("sample", "--to"), ("pull", "--from")])
def test_calibrate_takes_a_queue_platform_or_a_csv_sheet_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, flag: str
) -> None:
    monkeypatch.chdir(tmp_path)
    done = _cli("calibrate", command, flag, "langfsue", "--store", str(tmp_path / "s.db"))
    assert done.exit_code == 2, done.output
    assert "'langfsue' is neither a platform with a label queue nor a sheet" in done.output
    assert "langfuse, langsmith, or the path of a CSV sheet (ending in .csv)" in done.output
    assert not (tmp_path / "langfsue").exists()  # not taken for a sheet path and written


def test_a_platform_option_goes_with_its_platform_only(tmp_path: Path) -> None:
    window = ("--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z")
    score = _cli("score", "--source", "langfuse", "--project", "p", *window, "--store", str(tmp_path / "s.db"))
    assert score.exit_code == 2 and "applies to --source langsmith only, not --source langfuse" in score.output
    setup = _cli("calibrate", "setup", "--to", "langfuse", "--project", "p", "--store", str(tmp_path / "s.db"))
    assert setup.exit_code == 2 and "applies to --to langsmith only, not --to langfuse" in setup.output
    init = _cli("init", str(tmp_path / "t.toml"), "--source", "jsonl", "--project", "p")
    assert init.exit_code == 2 and "applies to --source langsmith only" in init.output
    assert not (tmp_path / "t.toml").exists()


def test_the_help_lists_what_the_registry_holds() -> None:
    score = _cli("score", "--help").output
    for option, _ in registry.options("score"):
        assert option.flag in score
    assert "--project" in _cli("calibrate", "setup", "--help").output


def _queue(store: Store, limiter: RateLimiter, resources: ExitStack, **options: str) -> Any:
    from tracescore.platforms.base import QueueContext  # here, so the other tests run on a tree without it

    return QueueContext(store, "tracescore-calibration", dict(options), None, limiter, resources)


def test_each_label_queue_is_built_by_its_platform_through_the_limiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse() as langfuse, FakeLangSmith() as langsmith, Store(tmp_path / "s.db") as store:
        langsmith.add_project("agent")
        for key, value in env_for(langfuse).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_test")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", langsmith.url)
        for name, options in (("langfuse", {}), ("langsmith", {"project": "agent"})):
            limiter = RateLimiter(None)
            with ExitStack() as resources:
                queue = registry.build_queue(name, _queue(store, limiter, resources, **options))
                ref = queue.setup()
            assert ref.platform == name and ref.configs
            assert limiter.count > 0, name  # every request of the queue's client passed the limiter
        with pytest.raises(ConfigError, match="'otel' has no label queue; expected one of 'langfuse', 'langsmith'"):
            registry.build_queue("otel", _queue(store, RateLimiter(None), ExitStack()))
