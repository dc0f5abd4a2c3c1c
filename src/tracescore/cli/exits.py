"""The one exit-code table of every ``tracescore`` command (the README repeats it), and how a command exits."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

__all__ = ["EXIT_CODES", "fail"]

EXIT_OK = 0
EXIT_INPUT = 1  # score/run/backfill done, but some traces could not be read or scored, or scores were rejected
EXIT_GATE_FAILED = 1  # gate: it ran on scored results and a rule failed (CI's "red")
EXIT_USAGE = 2  # bad option, bad config, missing credentials or missing optional SDK: nothing ran
EXIT_LOCKED = 3  # another run holds the store's lock
EXIT_ABORTED = 4  # stopped on a source, sink, store or judge failure (every judge call failed)
EXIT_GAPS = 5  # run --check-gaps found traces no run scored
EXIT_GATE_ERROR = 6  # gate/report could not run: no such results or baseline, not a results file, nothing scored

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    1: "score/run/backfill: done, but some traces could not be read or scored, or scores were rejected (listed);"
    " gate: a rule failed",
    EXIT_USAGE: "bad option, bad config, missing credentials or optional SDK: nothing ran",
    EXIT_LOCKED: "another run holds the store's lock",
    EXIT_ABORTED: "stopped on a source, sink, store or judge failure (what is written stays written)",
    EXIT_GAPS: "run --check-gaps found traces no run scored",
    EXIT_GATE_ERROR: "gate/report could not run: missing results or baseline, not a results file, nothing scored",
}


def fail(code: int, message: str) -> NoReturn:
    """Print ``tracescore: message`` on stderr and exit with ``code`` (one line, no traceback)."""
    click.echo(f"tracescore: {message}", err=True)
    sys.exit(code)
