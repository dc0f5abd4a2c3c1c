"""Shared by the integration tests: the cookbook examples they run, and one Langfuse client for the session.

``Langfuse()`` is a singleton per public key (VENDOR-NOTES: a second client with the same key but another base URL
talks to the first server; after ``shutdown()`` a new one drops scores), so every test here shares one fake Langfuse
and the one client pointed at it, each test starting from an empty fake.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, sdk_client

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"


def cookbook(name: str) -> Any:
    """The cookbook example ``cookbook/<name>.py``, imported as a user runs it."""
    spec = importlib.util.spec_from_file_location(f"cookbook_{name}", COOKBOOK / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def _langfuse_fake() -> Iterator[FakeLangfuse]:
    pytest.importorskip("langfuse")
    with FakeLangfuse() as fake:
        yield fake


@pytest.fixture
def langfuse_pair(_langfuse_fake: FakeLangfuse) -> Iterator[tuple[FakeLangfuse, Any]]:
    """(the fake Langfuse, emptied; a ``Langfuse`` client pointed at it). The SDK keeps one client per public key in
    the process, and another test's ``shutdown()`` of a client with the same key stops it (its scores then dropped):
    each test empties that registry and gets a client of its own."""
    fake = _langfuse_fake
    fake.observations.clear()
    fake.scores.clear()
    fake.score_writes.clear()
    with sdk_client(fake) as client:
        yield fake, client


def cli_lines(tmp_path: Path, traces: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``tracescore score --out`` over ``traces`` with no judge: each result line by trace id (what an integration's
    results must equal)."""
    from tracescore.cli.main import main

    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    out = tmp_path / "results.jsonl"
    done = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--store", str(tmp_path / "t.db"), "-q"],
                              env={"ANTHROPIC_API_KEY": ""})
    assert done.exit_code == 0, done.output
    return {line["trace_id"]: line for line in map(json.loads, out.read_text(encoding="utf-8").splitlines())}

