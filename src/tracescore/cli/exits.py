"""How a command ends when nothing failed: the outcome codes (the README's exit-code table lists them beside the
error classes' codes), and the options every command shares.

A failure is an error of ``tracescore.errors``, raised: each class carries its exit code and ``cli/main.py`` turns it
into one line on stderr. What is here is the other kind of ending: the command did its work, and the code says what
it found (a gate that failed, traces it could not read, gaps), for CI and cron to read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from tracescore.cli.paths import reads, writes
from tracescore.secrets import redact

_F = TypeVar("_F", bound=Callable[..., Any])

EXIT_INPUT = 1  # score/run/backfill/push/inspect/calibrate pull: done, but some traces, rows or records could not be
# read or scored, or scores were rejected (each listed)
EXIT_GATE_FAILED = 1  # gate: a rule failed (CI's "red"); calibrate check: the judge drifted
EXIT_GAPS = 5  # run --check-gaps found traces no run scored (or no completed run to check against)
EXIT_UNDECIDED = 6  # calibrate check: cannot tell (no calibration, no item re-judged)

OUTCOMES: dict[int, str] = {
    0: "success",
    EXIT_INPUT: "done, but some traces could not be read or scored, or scores were rejected; gate: a rule failed;"
    " calibrate check: the judge drifted",
    EXIT_GAPS: "run --check-gaps found traces no run scored",
    EXIT_UNDECIDED: "calibrate check: cannot tell",
}
"""The codes a command may end with when nothing failed (0 included): the only codes ``end`` takes."""


def end(code: int, message: str | None = None) -> NoReturn:
    """End the command with the outcome ``code`` (one of ``OUTCOMES``), after ``tracescore: message`` on stderr when
    given. Not for failures: raise the error class, whose ``exit_code`` ``cli/main.py`` applies."""
    if code not in OUTCOMES:
        raise ValueError(f"exit code {code} is not an outcome ({sorted(OUTCOMES)}); raise the error class instead")
    if message:
        click.echo(f"tracescore: {redact(message)}", err=True)
    sys.exit(code)


def store_option(help: str, *, written: bool = True) -> Callable[[_F], _F]:
    """``--store`` (the local SQLite store, default ``tracescore.db``) with what this command keeps or reads there;
    ``written`` unless the command only reads it (an output is never the store, nor the store an input)."""
    kind = writes if written else reads
    return click.option(
        "--store", "store_path", default="tracescore.db", show_default=True, type=kind(dir_okay=False), help=help
    )


def rate_option(flag: str, help: str) -> Callable[[_F], _F]:
    """An optional positive rate (requests per second or minute); None when not given."""
    return click.option(flag, type=click.FloatRange(min=0, min_open=True), default=None, help=help)
