"""No credential in what tracescore says: a server's error body may echo one (a 401 repeating the request's headers),
and neither the console, the results nor the store may repeat it."""

from __future__ import annotations

import base64
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.base import Fault
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.cli import main
from tracescore.errors import SourceError
from tracescore.secrets import RedactLogs, redact

ENV = {"LANGFUSE_PUBLIC_KEY": "pk-lf-PUBMARKER-7f3a", "LANGFUSE_SECRET_KEY": "sk-lf-SECMARKER-9c1d",
       "LANGSMITH_API_KEY": "lsv2-LSMARKER-4b2e", "ANTHROPIC_API_KEY": "sk-ant-ANTMARKER-5d8f"}  # fmt: skip
MARKERS = ("PUBMARKER", "SECMARKER", "LSMARKER", "ANTMARKER", "URLPASSMARKER")
BASIC = base64.b64encode(b"pk-lf-PUBMARKER-7f3a:sk-lf-SECMARKER-9c1d").decode()


def test_redact_takes_out_every_form_a_credential_travels_in() -> None:
    text = (
        f"401: bad key sk-ant-ANTMARKER-5d8f; headers {{'Authorization': 'Basic {BASIC}', 'x-api-key':"
        " 'lsv2-LSMARKER-4b2e'}; Authorization: Bearer abcdefgh12345678; see http://user:URLPASSMARKER@host:3000/x"
    )
    out = redact(text, ENV)
    assert not any(m in out for m in MARKERS) and "abcdefgh12345678" not in out, out
    assert "http://user:***@host:3000/x" in out and "Basic ***" in out and "Bearer ***" in out
    assert redact("an ordinary message about https://example.com/a?b=1", ENV) == (
        "an ordinary message about https://example.com/a?b=1"
    )
    assert redact("short key: abc", {"LANGSMITH_API_KEY": "abc"}) == "short key: abc"  # too short to be a key


def test_every_tracescore_error_is_redacted_when_made(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    error = SourceError(f"HTTP 401: invalid credentials {ENV['LANGSMITH_API_KEY']}")
    assert "LSMARKER" not in str(error) and "***" in str(error)


def test_a_logged_sdk_traceback_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", ENV["LANGSMITH_API_KEY"])
    try:
        raise ValueError(f"echo x-api-key={ENV['LANGSMITH_API_KEY']}")
    except ValueError:
        record = logging.LogRecord("langsmith.client", logging.ERROR, "f", 1, "failed: %s", ("lsv2-LSMARKER-4b2e",),
                                   exc_info=__import__("sys").exc_info())  # fmt: skip
    assert RedactLogs().filter(record)
    shown = logging.Formatter().format(record)
    assert "LSMARKER" not in shown and "ValueError" in shown


def test_a_langfuse_401_that_echoes_the_credentials_reaches_neither_console_nor_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    t0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    with FakeLangfuse() as fake:
        for i in range(3):
            fake.add_trace(*make_trace(i, t0 + timedelta(minutes=i)))
        echo = {"message": f"invalid credentials; headers {{'Authorization': 'Basic {BASIC}'}}"}
        fake.faults.add("/api/public/v2/observations", *[Fault.http(401, echo)] * 3)
        env = env_for(fake) | {k: v for k, v in ENV.items() if k.startswith("LANGFUSE_")}
        env["LANGFUSE_BASE_URL"] = fake.url.replace("http://", "http://user:URLPASSMARKER@")
        result = CliRunner().invoke(
            main, ["score", "--source", "langfuse", "--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z",
                   "--store", "s.db", "--out", "r.jsonl"], env=env,  # fmt: skip
        )
    assert result.exit_code != 0 and "HTTP 401" in result.output, result.output
    assert not any(m in result.output for m in MARKERS) and BASIC not in result.output, result.output
    stored = []
    with sqlite3.connect(tmp_path / "s.db") as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"):
            stored += [repr(row) for row in db.execute(f'SELECT * FROM "{table}"')]  # noqa: S608 - our own names
    assert stored and not any(m in row for row in stored for m in MARKERS)
    for path in tmp_path.iterdir():
        if path.suffix in (".jsonl", ".toml", ".log"):
            assert not any(m in path.read_text() for m in MARKERS), path
