"""Runs of a real pytest in a subprocess with tracescore's plugin loaded the way an install loads it.

The plugin reaches pytest through the ``pytest11`` entry point of ``pyproject.toml``. A test cannot reinstall the
package, so it puts a distribution's metadata declaring that same entry point (read from ``pyproject.toml``) on the
subprocess's path: pytest loads the plugin through ``importlib.metadata`` exactly as from the installed wheel (an
installed tracescore declaring it too is the same plugin by name, loaded once).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import tracescore

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "cookbook" / "pytest_suite"
SRC = Path(tracescore.__file__).resolve().parents[1]  # the tracescore under test (this process's)


def entry_points() -> dict[str, str]:
    """The ``pytest11`` entry points ``pyproject.toml`` declares."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return dict(project.get("entry-points", {}).get("pytest11", {}))


def installed(site: Path) -> Path:
    """A folder holding a distribution that declares ``pyproject.toml``'s ``pytest11`` entry points."""
    info = site / "tracescore_plugin_under_test-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tracescore-plugin-under-test\nVersion: 0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points().items())
    (info / "entry_points.txt").write_text(f"[pytest11]\n{lines}")
    return site


@dataclass
class Ran:
    code: int
    out: str

    @property
    def failed(self) -> set[str]:
        """The test ids pytest's short summary lists as failed."""
        return set(re.findall(r"^FAILED \S+?::(\S+)", self.out, re.M))

    @property
    def skipped(self) -> list[str]:
        return re.findall(r"^SKIPPED \[\d+\] (.*)$", self.out, re.M)


def run_pytest(tmp: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Ran:
    """``python -m pytest *args`` in ``cwd`` (default ``tmp``) with the plugin installed, no cache written."""
    site = installed(tmp / "site")
    paths = [str(SRC), str(site)]
    full = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), **(env or {}))
    full.pop("PYTEST_ADDOPTS", None)
    full.pop("PYTEST_XDIST_WORKER", None)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfs", *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd or tmp, env=full, timeout=300, check=False)
    return Ran(done.returncode, done.stdout + done.stderr)
