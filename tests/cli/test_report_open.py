"""#31 item 3: ``tracescore report --open`` writes the HTML report and opens it in the browser — the standard
library's ``webbrowser``, here driven by ``$BROWSER`` naming a small script that records what it was asked to open.
Without a browser it says so in one line, keeps the file and exits 0. Each run is its own process, so the browser
``webbrowser`` picks is read from that process's environment (as a user's shell gives it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tracescore

SCORES = {"diagnosis": "retrieval_fail/right", "answer.correct": True, "retrieval.recall_at_5": 0.0}
URL = "https://cloud.langfuse.com/project/p1/traces/t-1"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    line = {"trace_id": "t-1", "scores": SCORES, "missing": {}, "errors": [], "trace_url": URL}
    path.write_text(json.dumps(line) + "\n")
    return path


def _run(args: list[str], tmp: Path, browser: str | None) -> subprocess.CompletedProcess[str]:
    """``tracescore report ARGS`` in a process whose only browser is ``browser`` (no desktop, no console browser on
    PATH: PATH is an empty folder)."""
    empty = tmp / "empty-path"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in {"BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "TERM"}}
    env |= {"PATH": str(empty), "HOME": str(tmp), "TMPDIR": str(tmp)}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(tracescore.__file__).parents[1]), env.get("PYTHONPATH", "")])
    if browser is not None:
        env["BROWSER"] = browser
    command = [sys.executable, "-m", "tracescore.cli", "report", *args, "--store", str(tmp / "none.db")]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=tmp, check=False)


def _recorder(tmp: Path, exit_code: int = 0) -> tuple[str, Path]:
    """A browser command that writes the URL it is given to a file, and exits with ``exit_code``."""
    log = tmp / "opened.txt"
    script = tmp / "record-browser"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{log}"\nexit {exit_code}\n')
    script.chmod(0o755)
    return str(script), log


def test_open_writes_the_html_and_opens_it(results: Path, tmp_path: Path) -> None:
    browser, log = _recorder(tmp_path)
    page = tmp_path / "report.html"
    done = _run([str(results), "--open", "--out", str(page)], tmp_path, browser)
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [page.resolve().as_uri()]  # opened once, the file written
    assert page.read_text().startswith("<!DOCTYPE html>") and f'<a href="{URL}">' in page.read_text()
    assert f"wrote the html report to {page}" in done.stderr and "note:" not in done.stderr


def test_open_without_out_writes_a_new_file_and_opens_that(results: Path, tmp_path: Path) -> None:
    browser, log = _recorder(tmp_path)
    done = _run([str(results), "--open"], tmp_path, browser)
    assert done.returncode == 0, done.stderr
    opened = log.read_text().splitlines()
    assert len(opened) == 1 and opened[0].startswith(tmp_path.resolve().as_uri() + "/tracescore-report-")
    written = Path(done.stderr.split("wrote the html report to ", 1)[1].split("\n", 1)[0])
    assert written.resolve().as_uri() == opened[0] and "<table" in written.read_text()
    assert done.stdout == ""  # the HTML went to the file, not the terminal


@pytest.mark.parametrize("browser", [None, "failing"], ids=["no-browser", "browser-fails"])
def test_no_browser_says_so_in_one_line_and_keeps_the_file(results: Path, tmp_path: Path, browser: str | None) -> None:
    command = _recorder(tmp_path, exit_code=3)[0] if browser else None
    page = tmp_path / "report.html"
    done = _run([str(results), "--open", "--out", str(page)], tmp_path, command)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert notes == [f"note: no browser could be started (set BROWSER to one); the report is in {page}"]
    assert "Traceback" not in done.stderr and "<table" in page.read_text()


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--format", "markdown"], "--open opens the HTML report, not 'markdown'; use --format html or drop --format"),
        (["--out", "-"], "--open needs a file to open, not stdout; drop --out - or name a file"),
    ],
)
def test_open_refuses_what_it_cannot_open(results: Path, tmp_path: Path, extra: list[str], error: str) -> None:
    browser, log = _recorder(tmp_path)
    done = _run([str(results), "--open", *extra], tmp_path, browser)
    assert done.returncode == 2 and error in done.stderr and not log.exists()
