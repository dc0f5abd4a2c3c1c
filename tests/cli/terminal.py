"""``tracescore`` run with its stdout on a real terminal (a pty) of a given width, for what only a terminal shows."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

from tests.conftest import REPO

__all__ = ["on_terminal"]


def on_terminal(args: list[str], cwd: Path, columns: int = 120, *, stderr: bool = True) -> tuple[int, str]:
    """``tracescore ARGS`` with stdout (and stderr, unless ``stderr`` is false) on a terminal ``columns`` wide,
    without a judge key: its exit code and what it showed, styles' escape codes left out."""
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))  # the terminal's own width
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": str(columns), "TERM": "xterm", "NO_COLOR": "1",
           "ANTHROPIC_API_KEY": ""}  # not TERM=dumb: rich takes a dumb terminal as 80 columns wide  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "tracescore.cli", *args], stdout=child_fd,
                            stderr=subprocess.STDOUT if stderr else subprocess.DEVNULL, env=env, cwd=cwd)  # fmt: skip
    os.close(child_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(main_fd)
    shown = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return proc.returncode, re.sub(r"\x1b\[[0-9;]*m", "", shown)
