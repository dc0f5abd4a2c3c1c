"""The installed ``tracescore`` program is ``cli.main:entry``: the click group run with the GC tuned for a batch."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_is_the_entry_and_it_runs_the_commands() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"tracescore": "tracescore.cli.main:entry"}
    code = (
        "import gc, sys\n"
        "from tracescore.cli.main import entry\n"
        "sys.argv = ['tracescore', '--version']\n"
        "try:\n    entry()\n"
        "except SystemExit as exc:\n    print(exc.code, gc.get_threshold(), gc.get_freeze_count() > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "tracescore, version" in out
    assert out.strip().endswith("0 (10000, 10, 10) True")
