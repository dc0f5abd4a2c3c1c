"""The one exit-code table of every ``tracescore`` command (the README repeats it), and how a command exits."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import click

from tracescore.engine.interrupt import on_signals
from tracescore.errors import ConfigError, InputError, Interrupted, TracescoreError
from tracescore.secrets import redact

__all__ = ["ERROR_CODES", "EXIT_CODES", "exit_on_error", "exit_on_interrupt", "fail", "rate_option", "store_option"]

_F = TypeVar("_F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_INPUT = 1  # score/run/backfill/push done, but some traces could not be read or scored, or scores were rejected
EXIT_GATE_FAILED = 1  # gate: it ran on scored results and a rule failed (CI's "red")
EXIT_USAGE = 2  # bad option, bad config, no such input file, missing credentials or optional SDK: nothing ran
EXIT_LOCKED = 3  # another run holds the store's lock
EXIT_ABORTED = 4  # stopped on a source, sink, store or judge failure (every judge call failed)
EXIT_GAPS = 5  # run --check-gaps found traces no run scored
EXIT_GATE_ERROR = 6  # nothing to do: gate/report on no scored trace or no finished run; calibrate: nothing judged
EXIT_SIGINT = 128 + signal.SIGINT  # 130: stopped by SIGINT (Ctrl-C), ``Interrupted.exit_code``
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143: stopped by SIGTERM (a pod eviction, ``kill``)

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    1: "score/run/backfill/push: done, but some traces could not be read or scored, or scores were rejected"
    " (listed); gate: a rule failed",
    EXIT_USAGE: "bad option, bad config, no such input file, missing credentials or optional SDK: nothing ran",
    EXIT_LOCKED: "another run holds the store's lock",
    EXIT_ABORTED: "stopped on a source, sink, store or judge failure (what is written stays written)",
    EXIT_GAPS: "run --check-gaps found traces no run scored",
    EXIT_GATE_ERROR: "nothing to do: gate/report on no scored trace (not a results file, nothing scored) or no such"
    " run, or partial results without --allow-partial; calibrate: nothing judged or labelled",
    EXIT_SIGINT: "interrupted by SIGINT (Ctrl-C): what was committed stays; partial output kept as FILE.partial",
    EXIT_SIGTERM: "interrupted by SIGTERM: the same as 130",
}


def fail(code: int, message: str) -> NoReturn:
    """Print ``tracescore: message`` on stderr and exit with ``code`` (one line, no traceback)."""
    click.echo(f"tracescore: {redact(message)}", err=True)
    sys.exit(code)


ERROR_CODES: tuple[tuple[type[TracescoreError], int], ...] = (
    (ConfigError, EXIT_USAGE),
    (InputError, EXIT_INPUT),
    (TracescoreError, EXIT_ABORTED),
)
"""Which of our errors exits with which code (the first kind that matches): what ``exit_on_error`` applies."""


@contextmanager
def exit_on_interrupt() -> Iterator[None]:
    """SIGINT/SIGTERM stop the command inside (``engine.interrupt``); ``Interrupted`` exits with its own code (130,
    143) and its one line on stderr, without a traceback."""
    try:
        with on_signals():
            yield
    except Interrupted as exc:
        fail(exc.exit_code, str(exc))


@contextmanager
def exit_on_error(codes: Sequence[tuple[type[TracescoreError], int]] = ERROR_CODES) -> Iterator[None]:
    """Turn our errors into their exit codes (``codes``; by default bad config 2, bad input 1, any other failure 4)
    with one line on stderr; an error of no listed kind propagates."""
    try:
        yield
    except TracescoreError as exc:
        code = next((code for kind, code in codes if isinstance(exc, kind)), None)
        if code is None:
            raise
        fail(code, str(exc))


def store_option(help: str) -> Callable[[_F], _F]:
    """``--store`` (the local SQLite store, default ``tracescore.db``) with what this command keeps or reads there."""
    return click.option(
        "--store", "store_path", default="tracescore.db", show_default=True, type=click.Path(dir_okay=False), help=help
    )


def rate_option(flag: str, help: str) -> Callable[[_F], _F]:
    """An optional positive rate (requests per second or minute); None when not given."""
    return click.option(flag, type=click.FloatRange(min=0, min_open=True), default=None, help=help)
