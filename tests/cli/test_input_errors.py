"""Issue #35 item 8: one exit code for a missing input, a reversed window is a usage error, and a refused connection,
rejected keys, a bad Ray address, a missing extra or nothing judged are each one line that says what happened."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import REPO
from tests.fakes.base import Fault
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tracescore.cli import main
from tracescore.errors import ConfigError, NothingToDoError, SourceError

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]


def _cli(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env or {})


def _results(tmp_path: Path) -> Path:
    out = tmp_path / "results.jsonl"
    scored = _cli("score", str(SAMPLES), "--out", str(out), "--store", str(tmp_path / "s.db"), "-q", "--no-judge")
    assert scored.exit_code == 0, scored.output
    return out


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_missing_input_file_is_exit_2_for_every_command(tmp_path: Path) -> None:
    results = _results(tmp_path)
    nope = str(tmp_path / "nope.jsonl")
    store = ["--store", str(tmp_path / "s.db")]
    config = tmp_path / "nope.toml"  # a job whose [source] file is not there
    config.write_text(f'[source]\nkind = "jsonl"\npath = "{nope}"\n\n[job]\nstore = "{tmp_path / "j.db"}"\n')
    for args in (
        ["run", "--config", str(config)],
        ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"],
        ["calibrate", "check", nope, *store],
        ["calibrate", "agreement", nope],
        ["score", nope, *store],
        ["score", str(tmp_path), *store],  # a folder where a file is expected
        ["report", nope, *store],
        ["gate", nope, *store],
        ["gate", str(results), "--baseline", nope, *store],
        ["report", "run:latest", "--store", str(tmp_path / "no.db")],
        ["report", str(tmp_path / "nope.parquet")],
        ["calibrate", "sample", "--to", str(tmp_path / "x.csv"), "--traces", nope, *store],
        ["push", nope, "--to", "langfuse", *store],
        ["inspect", nope],
    ):
        result = _cli(*args)
        assert result.exit_code == ConfigError.exit_code, (args, result.exit_code, result.output)
        assert "nope" in result.output or "no.db" in result.output or "folder" in result.output, result.output
        assert "Traceback" not in result.output


def test_an_input_that_exists_but_cannot_be_opened_is_exit_2_not_a_verdict(tmp_path: Path) -> None:
    """A folder given as the traces file (open() fails with IsADirectoryError, not FileNotFoundError) is a bad
    argument: 2, never 1, which ``calibrate check`` uses for "drifted" and ``score`` for "some traces unreadable"."""
    _results(tmp_path)  # the store exists
    folder = tmp_path / "traces.jsonl"
    folder.mkdir()
    store = ["--store", str(tmp_path / "s.db")]
    for args in (["calibrate", "check", str(folder), *store], ["score", str(folder), *store]):
        result = _cli(*args)
        assert result.exit_code == ConfigError.exit_code, (args, result.exit_code, result.output)
        assert "traces.jsonl" in result.output and "Traceback" not in result.output, result.output


def test_a_reversed_window_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    with FakeLangfuse() as fake:
        args = ["--from", "2026-11-21T00:00:00Z", "--to", "2026-11-20T00:00:00Z"]
        result = _cli("score", "--source", "langfuse", *args, "--store", str(tmp_path / "s.db"), env=env_for(fake))
        assert fake.requests == []  # nothing was read
    assert result.exit_code == ConfigError.exit_code, result.output
    assert "2026-11-20T00:00:00Z is not after --from 2026-11-21T00:00:00Z" in result.output
    assert "Stage contingency" not in result.output and not (tmp_path / "s.db").exists()
    backfill = _cli("backfill", *args)
    assert backfill.exit_code == ConfigError.exit_code and "is not after --from" in backfill.output


@pytest.mark.parametrize("variable", ["LANGFUSE_BASE_URL", "LANGFUSE_HOST"])
def test_a_refused_connection_names_the_host_its_variable_and_the_operation(tmp_path: Path, variable: str) -> None:
    config = tmp_path / "tracescore.toml"
    config.write_text("[langfuse]\nmax_attempts = 2\nbackoff = 0\n")
    url = f"http://127.0.0.1:{_closed_port()}"
    env: dict[str, str | None] = {"LANGFUSE_PUBLIC_KEY": "pk-lf-1", "LANGFUSE_SECRET_KEY": "sk-lf-1", variable: url}
    result = _cli("score", "--source", "langfuse", *WINDOW, "--config", str(config), "-q",
                  "--store", str(tmp_path / "s.db"), env=env)  # fmt: skip
    assert result.exit_code == SourceError.exit_code
    (line,) = result.stderr.strip().splitlines()
    assert f"Langfuse at {url} ({variable}) refused the connection after 2 attempts" in line
    assert "cannot read the traces of 2026-11-20T00:00:00Z .. 2026-11-21T00:00:00Z" in line
    assert "cannot read Langfuse experiment items" not in line and "sk-lf-1" not in line


def test_rejected_keys_are_named_after_the_one_request_sent(tmp_path: Path) -> None:
    with FakeLangfuse() as fake:
        env: dict[str, str | None] = {**env_for(fake), "LANGFUSE_SECRET_KEY": "sk-lf-wrong"}
        result = _cli("score", "--source", "langfuse", *WINDOW, "-q", "--store", str(tmp_path / "s.db"), env=env)
        sent = len(fake.requests)
    assert result.exit_code == SourceError.exit_code
    assert sent == 1  # a 401 is not retried
    (line,) = result.stderr.strip().splitlines()
    assert "rejected the API keys (HTTP 401) after the one request sent" in line
    assert "LANGFUSE_PUBLIC_KEY" in line and "attempts" not in line and "sk-lf-wrong" not in line


def test_langsmith_refused_or_rejecting_is_one_line_naming_the_fix_with_no_empty_tables(tmp_path: Path) -> None:
    """A LangSmith read that cannot get through is the reason alone (no empty stage tables printed before it): a
    refused host names LANGSMITH_ENDPOINT, a rejected key (the fake's 401, as the SDK meets it) LANGSMITH_API_KEY."""
    args = ["score", "--source", "langsmith", "--project", "p", *WINDOW, "--store", str(tmp_path / "s.db")]
    url = f"http://127.0.0.1:{_closed_port()}"
    refused = _cli(*args, env={"LANGSMITH_API_KEY": "lsv2_pt_secret1", "LANGSMITH_ENDPOINT": url})
    assert refused.exit_code == SourceError.exit_code, refused.output
    assert refused.stdout == "", refused.stdout  # no tables, no run line: nothing was read
    (line,) = refused.stderr.strip().splitlines()
    assert f"cannot read LangSmith project 'p': LangSmith at {url} refused the connection" in line, line
    assert "check LANGSMITH_ENDPOINT" in line and "lsv2_pt_secret1" not in line and "MaxRetryError" not in line
    with FakeLangSmith() as fake:
        fake.add_project("p")
        fake.faults.add("/sessions", Fault.http(401, {"detail": "Invalid token"}))
        rejected = _cli(*args, env={"LANGSMITH_API_KEY": "lsv2_pt_secret1", "LANGSMITH_ENDPOINT": fake.url})
    assert rejected.exit_code == SourceError.exit_code, rejected.output
    assert rejected.stdout == ""
    (line,) = rejected.stderr.strip().splitlines()
    assert "rejected the API key (HTTP 401)" in line and "LANGSMITH_API_KEY" in line, line
    assert "lsv2_pt_secret1" not in line


def test_a_bad_ray_address_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text(SAMPLES.read_text().splitlines()[0] + "\n")
    args = ["score", str(shards), "--engine", "ray", "--out", str(tmp_path / "out"), "--store", str(tmp_path / "s.db")]
    empty = _cli(*args, env={"RAY_ADDRESS": ""})
    assert empty.exit_code == ConfigError.exit_code and "Traceback" not in empty.output
    assert empty.stderr.strip().splitlines() == [
        "tracescore: RAY_ADDRESS is set but empty; unset it (unset RAY_ADDRESS) to start a local Ray cluster on this"
        " machine, or set it to the cluster's head, e.g. ray://head:10001 or head:6379"
    ]
    address = f"127.0.0.1:{_closed_port()}"
    unreachable = _cli(*args, env={"RAY_ADDRESS": address})
    assert unreachable.exit_code == SourceError.exit_code
    (line,) = unreachable.stderr.strip().splitlines()
    assert f"cannot join the Ray cluster at {address} (RAY_ADDRESS)" in line


_NO_PYARROW = """
import sys

class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Blocked())
"""


def test_report_and_gate_on_parquet_results_without_pyarrow_name_the_extra(tmp_path: Path) -> None:
    from tracescore.sinks.parquet import write_results

    folder = tmp_path / "scored"
    lines = [json.loads(line) for line in _results(tmp_path).read_text().splitlines()]
    write_results(str(folder / "a.parquet"), lines)
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_NO_PYARROW)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(REPO / "src")])}
    for command in ("report", "gate"):
        done = subprocess.run(
            [sys.executable, "-m", "tracescore.cli", command, str(folder), "--store", str(tmp_path / "x.db")],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert done.returncode == ConfigError.exit_code, (command, done.stderr)
        assert done.stderr.strip().splitlines() == [
            f"tracescore: reading the Parquet results {str(folder)!r} needs pyarrow, which is not installed:"
            " pip install 'tracescore[export]'"
        ]


def test_calibrate_sample_with_nothing_judged_says_why_and_exits_6(tmp_path: Path) -> None:
    _results(tmp_path)  # a finished run, scored without the judge
    sheet = tmp_path / "sheet.csv"
    result = _cli("calibrate", "sample", "--to", str(sheet), "--store", str(tmp_path / "s.db"))
    assert result.exit_code == NothingToDoError.exit_code
    assert "nothing to sample: the run(s) hold no judged claim" in result.stderr and "--no-judge" in result.stderr
    assert "queued 0" not in result.output and not sheet.exists()


def test_rejected_keys_are_one_request_on_every_langfuse_command(tmp_path: Path) -> None:
    """#43 item 8: the dashboard's SDK calls cannot parse a 401 body into their error model: it is still a rejected
    key, one request sent, one line naming the keys (not a pydantic error retried)."""
    with FakeLangfuse() as fake:
        env: dict[str, str | None] = {**env_for(fake), "LANGFUSE_SECRET_KEY": "sk-lf-wrong"}
        result = _cli("dashboard", "--to", "langfuse", env=env)
        sent = len(fake.requests)
    assert result.exit_code == SourceError.exit_code, result.output
    assert sent == 1
    (line,) = result.stderr.strip().splitlines()
    assert "rejected the API keys (HTTP 401) after the one request sent" in line, line


def test_a_plain_score_that_cannot_connect_speaks_of_traces_only(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    env: dict[str, str | None] = {"LANGFUSE_PUBLIC_KEY": "pk-lf-1", "LANGFUSE_SECRET_KEY": "sk-lf-1",
                                  "LANGFUSE_BASE_URL": url}
    config = tmp_path / "tracescore.toml"
    config.write_text("[langfuse]\nmax_attempts = 1\nbackoff = 0\n")
    result = _cli("score", "--source", "langfuse", *WINDOW, "--config", str(config), "-q",
                  "--store", str(tmp_path / "s.db"), env=env)  # fmt: skip
    (line,) = result.stderr.strip().splitlines()
    assert "cannot read the traces of" in line and "experiment" not in line, line
