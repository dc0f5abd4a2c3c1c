"""#31 item 2 in the gate: a failing case's trace links to the trace — a Markdown link in the summary (piped and
``--markdown``), an OSC 8 hyperlink on a terminal (and no escape code in a pipe), ``url=…`` in the JUnit failure text —
whether the gate reads a results file or a stored run (``run:latest``). Lines read from Langfuse through the real SDK
against the loopback fake; lines without ``trace_url`` (JSONL) keep plain ids."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

import tracescore
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tracescore.cli import main
from tracescore.report.gate import GateConfig, run_gate
from tracescore.report.render import render_gate_markdown, render_junit

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
N = 9  # tr-00000, tr-00003 and tr-00006 answer wrongly now (index % 3 == 0) and rightly in the baseline
WRONG = {"tr-00000", "tr-00003", "tr-00006"}
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
MD_LINK = re.compile(r"\[`([^`]+)`\]\(<([^>]+)>\)")


def _score(tmp: Path, name: str, *, right: bool | None) -> Path:
    """Score N traces read from a fresh Langfuse fake into ``tmp/name.jsonl`` and the store ``tmp/name.db``."""
    out = tmp / f"{name}.jsonl"
    config = tmp / "tracescore.toml"
    config.write_text("")
    with FakeLangfuse() as fake:
        for i in range(N):
            fake.add_trace(*make_trace(i, T0 + timedelta(minutes=i), right=right))
        args = ["score", "--source", "langfuse", *WINDOW, "--store", str(tmp / f"{name}.db"), "--out", str(out)]
        scored = CliRunner().invoke(main, [*args, "--config", str(config), "--no-write-back", "-q"], env=env_for(fake))
    assert scored.exit_code == 0, scored.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """A baseline where every answer is right, and the current run (its results file and store) where three are not;
    with the current lines' trace URLs."""
    tmp = tmp_path_factory.mktemp("gate-links")
    baseline = _score(tmp, "baseline", right=True)
    current = _score(tmp, "current", right=None)
    urls = {line["trace_id"]: line["trace_url"] for line in map(json.loads, current.read_text().splitlines())}
    assert len(urls) == N and all(u.endswith(f"/traces/{t}") for t, u in urls.items())
    return baseline, current, urls


def _gate(results: str, baseline: Path, tmp: Path, *extra: str) -> tuple[str, str, str]:
    """The gate's stdout (piped), its --markdown file and its JUnit file; the gate fails (exit 1)."""
    md, junit = tmp / "gate.md", tmp / "junit.xml"
    args = ["gate", results, "--baseline", str(baseline), "--markdown", str(md), "--junit", str(junit), *extra]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 1, done.output
    return done.stdout, md.read_text(), junit.read_text()


def _junit_urls(xml: str) -> dict[str, str]:
    """trace id → url of each case line in the JUnit failures' text."""
    found: dict[str, str] = {}
    for failure in ET.fromstring(xml).iter("failure"):
        for line in (failure.text or "").splitlines():
            fields = dict(f.split("=", 1) for f in line.split("\t")[1:] if "=" in f)
            if "trace" in fields:
                found[fields["trace"]] = fields.get("url", "")
    return found


@pytest.mark.parametrize("stored", [False, True], ids=["results-file", "run-latest"])
def test_failing_cases_link_their_traces_in_markdown_and_junit(
    runs: tuple[Path, Path, dict[str, str]], tmp_path: Path, stored: bool
) -> None:
    baseline, current, urls = runs
    spec = "run:latest" if stored else str(current)
    piped, markdown, junit = _gate(spec, baseline, tmp_path, "--store", str(current.with_suffix(".db")))
    assert piped == markdown and "\x1b" not in piped  # a pipe gets the Markdown itself, no escape code
    newly = markdown.split("**no newly failing case — cases**")[1]
    linked = dict(MD_LINK.findall(newly))
    assert set(linked) == WRONG and all(linked[t] == urls[t] for t in WRONG)
    assert not re.search(r"(?<!\[)`tr-\d+`", newly)  # no failing case left as a plain id
    assert _junit_urls(junit) == {t: urls[t] for t in WRONG}


def test_a_terminal_gets_osc8_hyperlinks(runs: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    baseline, current, urls = runs
    shown = _in_terminal(["gate", str(current), "--baseline", str(baseline), "--store", str(tmp_path / "none.db")])
    for trace_id in WRONG:  # rich writes OSC 8 as ESC ] 8 ; id=… ; URL ST, the text, then ESC ] 8 ; ; ST
        assert re.search(rf"\x1b\]8;id=[^;]*;{re.escape(urls[trace_id])}\x1b\\(\x1b\[[\d;]*m)*{trace_id}", shown)
    assert "](<" not in shown  # rendered, not the Markdown source


def _in_terminal(args: list[str]) -> str:
    """What ``tracescore ARGS`` writes to a real pseudo-terminal (120 columns)."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "COLUMNS", "LINES"}}
    env["TERM"] = "xterm-256color"
    env["PYTHONPATH"] = os.pathsep.join([str(Path(tracescore.__file__).parents[1]), env.get("PYTHONPATH", "")])
    child = subprocess.Popen(
        [sys.executable, "-m", "tracescore.cli", *args], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while select.select([master], [], [], 120)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        assert child.wait(timeout=120) == 1  # the gate failed, as it must
    return b"".join(chunks).decode("utf-8", "replace")


def _lines(url: str | None) -> tuple[list[dict], list[dict]]:  # type: ignore[type-arg]
    def line(right: bool) -> dict:  # type: ignore[type-arg]
        diagnosis = "retrieval_ok/right" if right else "retrieval_ok/wrong"
        result = {"trace_id": "t-1", "scores": {"answer.correct": right, "diagnosis": diagnosis}, "missing": {}}
        return result | ({"trace_url": url} if url is not None else {})

    return [line(True)], [line(False)]


def test_lines_without_trace_url_keep_plain_ids() -> None:
    baseline, current = _lines(None)
    result = run_gate(current, [baseline])
    markdown, junit = render_gate_markdown(result), render_junit(result)
    assert "`t-1`" in markdown and "](<" not in markdown
    assert _junit_urls(junit) == {"t-1": ""}


def test_a_hostile_trace_url_breaks_neither_the_markdown_nor_the_xml() -> None:
    hostile = 'https://x.example/t/1"> <b>\x1b]8;;evil\x07)'
    baseline, current = _lines(hostile)
    result = run_gate(current, [baseline])
    url = _junit_urls(render_junit(result))["t-1"]  # parses: still XML
    assert url.startswith("https://x.example/t/1") and not set(url) & set('<>"() \x1b\x07')
    markdown = render_gate_markdown(result)
    assert "\x1b" not in markdown and "<b>" not in markdown and MD_LINK.findall(markdown) == [("t-1", url)]
    for bad in ("javascript:alert(1)", "/relative"):
        baseline, current = _lines(bad)
        assert "](<" not in render_gate_markdown(run_gate(current, [baseline]))


def test_with_a_case_key_the_trace_beside_the_case_is_the_link() -> None:
    url = "https://cloud.langfuse.com/project/p1/traces/t-9"
    baseline, current = _lines(url)
    current = [line | {"trace_id": "t-9", "metadata": {"case_id": "q-1"}} for line in current]
    baseline = [line | {"metadata": {"case_id": "q-1"}} for line in baseline]
    result = run_gate(current, [baseline], GateConfig(case_key="metadata.case_id"))
    markdown = render_gate_markdown(result)
    assert f"  - `q-1` — stage **answer** (trace [`t-9`](<{url}>))" in markdown
    assert _junit_urls(render_junit(result)) == {"t-9": url}
