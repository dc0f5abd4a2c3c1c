"""#31 item 2: a result line read from Langfuse or LangSmith carries its trace's URL, the one the real SDK's
``Langfuse.get_trace_url`` / ``Client.get_run_url`` builds; the Markdown and HTML reports of those lines link every
trace id; a JSONL run's lines have no ``trace_url``."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for, sdk_client
from tests.fakes.langfuse_data import make_trace
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.cli import main

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
N = 12
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"


@pytest.fixture
def fake() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as server:
        for i in range(N):
            server.add_trace(*make_trace(i, T0 + timedelta(minutes=i)))
        yield server


def _score(fake: FakeLangfuse, tmp_path: Path) -> list[dict]:  # type: ignore[type-arg]
    out = tmp_path / "results.jsonl"
    (tmp_path / "tracescore.toml").write_text("")
    args = ["score", "--source", "langfuse", *WINDOW, "--store", str(tmp_path / "ts.db"), "--out", str(out)]
    result = CliRunner().invoke(
        main, [*args, "--config", str(tmp_path / "tracescore.toml"), "--no-write-back", "-q"], env=env_for(fake)
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


def _sdk_urls(fake: FakeLangfuse, trace_ids: list[str]) -> dict[str, str | None]:
    with sdk_client(fake, tracing_enabled=False) as client:
        return {t: client.get_trace_url(trace_id=t) for t in trace_ids}


def test_langfuse_lines_carry_the_url_the_sdk_builds(fake: FakeLangfuse, tmp_path: Path) -> None:
    lines = _score(fake, tmp_path)
    assert len(lines) == N
    ours = {line["trace_id"]: line["trace_url"] for line in lines}
    assert fake.requests_to("/api/public/projects") and len(fake.requests_to("/api/public/projects")) == 1  # once
    sdk = _sdk_urls(fake, list(ours))
    assert all(sdk.values()) and ours == sdk
    assert ours["tr-00003"] == f"{fake.url}/project/proj-test/traces/tr-00003"


def test_a_failed_project_lookup_leaves_plain_ids_and_says_so(fake: FakeLangfuse, tmp_path: Path) -> None:
    from tests.fakes.base import Response

    handle = fake.handle
    fake.handle = lambda r: Response(500, {"message": "down"}) if r.path == "/api/public/projects" else handle(r)  # type: ignore[method-assign]
    out = tmp_path / "results.jsonl"
    (tmp_path / "tracescore.toml").write_text("")
    args = ["score", "--source", "langfuse", *WINDOW, "--store", str(tmp_path / "ts.db"), "--out", str(out)]
    result = CliRunner().invoke(
        main, [*args, "--config", str(tmp_path / "tracescore.toml"), "--no-write-back"], env=env_for(fake)
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == N and not any("trace_url" in line for line in lines)
    assert "no trace links: the project lookup failed (HTTP 500" in result.output


def test_markdown_and_html_reports_link_every_trace_id(fake: FakeLangfuse, tmp_path: Path) -> None:
    lines = _score(fake, tmp_path)
    urls = {line["trace_id"]: line["trace_url"] for line in lines}
    results = tmp_path / "results.jsonl"
    runner = CliRunner()
    markdown = runner.invoke(main, ["report", str(results), "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.output
    queue = markdown.output.split("### Work queue")[1].split("### Traces per cell")[0]
    cells = markdown.output.split("### Traces per cell")[1].split("### Scores")[0]
    for section in (queue, cells):
        linked = dict(re.findall(r"\[`([^`]+)`\]\(<([^>]+)>\)", section))
        assert linked and all(urls[t] == u for t, u in linked.items())
        assert re.findall(r"(?<!\[)`(tr-\d+)`", section) == []  # no id left plain
    page = tmp_path / "report.html"
    html = runner.invoke(main, ["report", str(results), "--format", "html", "--out", str(page)])
    assert html.exit_code == 0, html.output
    text = page.read_text()
    queue_html = text.split('<ul id="queue">')[1].split("</ul>")[0]
    cells_html = text.split('<table id="cells">')[1].split("</table>")[0]
    for section, pattern in ((queue_html, r'<a href="([^"]+)"><code>([^<]+)</code></a>'),
                             (cells_html, r'<a href="([^"]+)">([^<]+)</a>')):  # fmt: skip
        found = [(unescape(t), unescape(h)) for h, t in re.findall(pattern, section)]
        assert found and all(urls[t] == h for t, h in found)
        assert len(found) == len(re.findall(r"tr-\d+", section)) / 2  # each id: in the href and as the link text
    assert "<script" not in text
    stored = runner.invoke(main, ["report", "run:latest", "--store", str(tmp_path / "ts.db"), "--format", "markdown"])
    assert stored.exit_code == 0, stored.output
    assert dict(re.findall(r"\[`([^`]+)`\]\(<([^>]+)>\)", stored.output)).items() <= urls.items()
    assert "](<" in stored.output  # a stored run links its ids as the results file does


def test_a_jsonl_run_has_no_trace_url(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    args = ["score", str(SAMPLES), "--store", str(tmp_path / "ts.db"), "--out", str(out), "--no-judge", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and not any("trace_url" in line for line in lines)
    markdown = CliRunner().invoke(main, ["report", str(out), "--format", "markdown"]).output
    assert "](<" not in markdown


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmith]:
    with FakeLangSmith() as fake:
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_links_test_key")
        monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
        monkeypatch.chdir(Path(__file__).resolve().parents[2])  # no stray tracescore.toml
        seed(fake, load_samples(6))
        yield fake


def test_langsmith_lines_carry_the_url_the_sdk_builds(langsmith: FakeLangSmith, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    args = ["score", "--source", "langsmith", "--project", "search-agent", "--from", "2026-11-01T00:00:00Z",
            "--to", "2026-12-01T00:00:00Z", "--no-write-back", "--store", str(tmp_path / "ts.db"), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    ours = {x["trace_id"]: x["trace_url"] for x in map(json.loads, out.read_text().splitlines())}
    assert len(ours) == 6
    from langsmith import Client

    client = Client(api_key="lsv2_links_test_key", api_url=langsmith.url, auto_batch_tracing=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # get_run_url: deprecated for runs.get_url in 2027
            sdk = {t: client.get_run_url(run=SimpleNamespace(id=t), project_name="search-agent")  # type: ignore[arg-type]
                   for t in ours}  # fmt: skip
    finally:
        client.close()
    assert ours == sdk and all(u.startswith("http://localhost/o/") for u in ours.values())
