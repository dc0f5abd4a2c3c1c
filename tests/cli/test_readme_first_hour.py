"""Issue #45 acceptance 2: every command of the README's "Your first hour" block runs as written, read from the
README itself (so the section and the test cannot drift), in a fresh folder holding the repository's cookbook, with
the exit code the README's comment gives (``# exit 1: …``; none: 0)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import tracescore
from tests.conftest import REPO

CODE = str(Path(tracescore.__file__).parents[1])  # the code under test, for the subprocesses
_SECTION = "## Your first hour"


def first_hour_commands(readme: str) -> list[tuple[str, int]]:
    """``(command, expected exit code)`` for each command line of the section's bash block, in order."""
    section = readme.split(_SECTION, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, f"no bash block under {_SECTION!r}"
    commands = []
    for line in block[1].splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, _, comment = line.partition("  # ")
        code = re.match(r"exit (\d+)", comment.strip())
        commands.append((command.strip(), int(code[1]) if code else 0))
    return commands


def test_the_section_names_each_step_the_issue_asks_for() -> None:
    commands = [c for c, _ in first_hour_commands((REPO / "README.md").read_text(encoding="utf-8"))]
    joined = "\n".join(commands)
    for step in ("tracescore score cookbook/data/traces.jsonl", "tracescore report results.jsonl", "--open",
                 "tracescore gate candidate.jsonl --baseline", "cookbook/data/langfuse_trace.json",
                 "tracescore store prune --before"):
        assert step in joined, step


def test_every_first_hour_command_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(REPO / "cookbook" / "data", tmp_path / "cookbook" / "data")
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "tracescore").exists(), "the tracescore program of this environment"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "LANGFUSE", "LANGSMITH"))}
    env |= {
        "PATH": os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([CODE, env.get("PYTHONPATH", "")]),
        "BROWSER": "true",  # ``--open`` starts this "browser": a program that opens nothing and succeeds
    }
    seen = []
    for command, expected in first_hour_commands((REPO / "README.md").read_text(encoding="utf-8")):
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == expected, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, command
        seen.append(done)
    outputs = {c: d.stdout + d.stderr for (c, _), d in zip(first_hour_commands(
        (REPO / "README.md").read_text(encoding="utf-8")), seen, strict=True)}
    assert (tmp_path / "results.jsonl").stat().st_size > 0 and (tmp_path / "report.html").stat().st_size > 0
    downloaded = next(o for c, o in outputs.items() if "langfuse_trace.json" in c)
    assert "is a Langfuse trace download: read as --source langfuse" in downloaded
    gate = next(o for c, o in outputs.items() if c.startswith("tracescore gate"))
    assert "no fabricated citation" in gate
    info = next(o for c, o in outputs.items() if c == "tracescore store info")
    assert "3 runs (3 done)" in info
    pruned = [o for c, o in outputs.items() if c.startswith("tracescore store prune")]
    assert all("nothing to prune: no run finished before" in o for o in pruned)
