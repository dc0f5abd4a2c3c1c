"""The runners of the README's and the docs' code blocks (sybil; collected by the repository's root conftest.py).

Each Markdown file is one document: its blocks run in order, in one fresh folder holding a copy of the repository's
``cookbook/`` (so ``tracescore score cookbook/data/traces.jsonl`` runs as written, and a later block reads what an
earlier one wrote), with no platform or judge credentials in the environment.

- ``python`` blocks run in one namespace per document.
- ``bash`` blocks run line by line through ``bash -c`` with this checkout's ``tracescore`` first; a line ending in
  ``# exit N`` must exit N, any other line 0. A ``\\`` at a line's end, or a quote left open, continues it.
- A block that cannot run here (it needs a Langfuse or LangSmith account, an S3 bucket, a Ray cluster, an API key,
  or it installs packages) is preceded by ``<!-- skip: next "why" -->``: skipped, with the reason, never silently.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

REPO = Path(__file__).resolve().parents[1]
CODE = str(REPO / "src")
_EXIT = re.compile(r"^\s*exit (\d+)\b")


def setup(namespace: dict[str, Any]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tracescore-docs-"))
    shutil.copytree(REPO / "cookbook", folder / "cookbook", ignore=shutil.ignore_patterns("__pycache__"))
    namespace["__name__"] = "docs_example"
    namespace["folder"] = folder


def teardown(namespace: dict[str, Any]) -> None:
    shutil.rmtree(namespace["folder"], ignore_errors=True)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "LANGFUSE", "LANGSMITH", "OPENAI"))}
    bin_dir = str(Path(sys.executable).parent)
    return env | {
        "PATH": os.pathsep.join([bin_dir, env.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([CODE, env.get("PYTHONPATH", "")]),
        "BROWSER": "true",  # ``report --open`` starts this "browser": it opens nothing and succeeds
    }


def shell_lines(source: str) -> list[tuple[str, int]]:
    """``(command, expected exit code)`` of each command of a bash block (comments skipped, ``\\`` joined)."""
    commands: list[tuple[str, int]] = []
    pending = ""
    for line in source.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        whole = pending + line
        if not _closed(whole):  # a quoted argument goes on on the next line
            pending = whole + "\n"
            continue
        pending = ""
        code = _EXIT.search(whole.partition("  #")[2])
        commands.append((whole.strip(), int(code[1]) if code else 0))
    return commands


def _closed(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:
        return False
    return True


def run_bash(example: Example) -> str | None:
    folder = example.namespace["folder"]
    for command, expected in shell_lines(example.parsed):
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=_env(), capture_output=True, text=True,
                              timeout=600, check=False)  # fmt: skip
        if done.returncode != expected or "Traceback" in done.stderr:
            said = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            return f"{command}: exit {done.returncode}, expected {expected}\n{said}"
    return None


def run_python(example: Example) -> None:
    here = os.getcwd()
    os.chdir(example.namespace["folder"])
    try:
        code = compile(example.parsed, f"{example.path}:{example.line}", "exec")
        exec(code, example.namespace)  # noqa: S102 - the documented example, as a user runs it
    finally:
        os.chdir(here)


PARSERS = [CodeBlockParser("python", run_python), CodeBlockParser("bash", run_bash), SkipParser()]
LANGUAGES = ("python", "bash")
"""The languages whose blocks run; a block of another language (toml, json, text) is shown, never run."""


def examples() -> Sybil:
    """The Sybil of the README and the docs (the root conftest.py collects it)."""
    return Sybil(parsers=PARSERS, path=str(REPO), patterns=["*.md"], excludes=["CHANGELOG.md", "tests/*", "cookbook/*"],
                 setup=setup, teardown=teardown)  # fmt: skip
