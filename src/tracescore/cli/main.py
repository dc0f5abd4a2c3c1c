"""The ``tracescore`` command group: one module per command group, and the one place a failure becomes an exit.

A command fails by raising an error of ``tracescore.errors``; each class carries its exit code (``exit_code``, as
click's exceptions do) and ``exit_on_failure`` turns it into one line on stderr and that code. A command that did its
work ends with an outcome code of ``cli/exits.py`` (a gate that failed, unreadable traces, gaps).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from tracescore import __version__, registry
from tracescore.cli.calibrate import calibrate
from tracescore.cli.dashboard import dashboard
from tracescore.cli.inspect import inspect
from tracescore.cli.job import backfill, init, run
from tracescore.cli.judges import judges
from tracescore.cli.push import push
from tracescore.cli.report import gate, report
from tracescore.cli.score import score
from tracescore.cli.scorers import scorers
from tracescore.cli.store import store
from tracescore.engine.interrupt import SIGNALS, on_signals
from tracescore.errors import Interrupted, TracescoreError
from tracescore.secrets import redact

_SIGNAL_EXITS = frozenset(Interrupted(sig).exit_code for sig in SIGNALS)  # 130, 143


@contextmanager
def exit_on_failure() -> Iterator[None]:
    """Run a command: SIGINT/SIGTERM stop it inside (``engine.interrupt``); an error of ``tracescore.errors`` or an
    ``Interrupted`` ends it with ``tracescore: <message>`` on stderr (credentials redacted), no traceback, and the
    exit code of its class. Any other exception is a bug and keeps its traceback."""
    try:
        with on_signals():
            yield
    except (TracescoreError, Interrupted) as exc:
        click.echo(f"tracescore: {redact(str(exc))}", err=True)
        sys.exit(exc.exit_code)


class _Commands(click.Group):
    """The command group; a failure of any of its commands exits through ``exit_on_failure``."""

    def invoke(self, ctx: click.Context) -> object:
        with exit_on_failure():
            return super().invoke(ctx)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="tracescore")
def main() -> None:
    """Whose bug is it? Score search-agent traces stage by stage: retrieval, grounding, citations, answer."""
    registry.load()  # the installed scorers, once, before any work: a plugin that cannot be used stops here (exit 2)


for _command in (score, report, gate, run, backfill, init, inspect, calibrate, push, dashboard, store, scorers,
                 judges):
    main.add_command(_command)

def entry() -> None:
    """The ``tracescore`` program: ``main`` with the cyclic GC tuned for a batch run.

    Everything imported so far is frozen out of the collector's scans, and young objects are collected 14x less
    often: a run allocates traces by the thousand and almost none form cycles, so the default thresholds spent ~20 %
    of a run's CPU scanning (heavy traces, measured by ``benchmarks/throughput.py``). Only the program does this; a
    library caller's interpreter is left as it is.
    """
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    try:
        main()
    except SystemExit as exc:
        if exc.code in _SIGNAL_EXITS:
            _exit_at_once(exc.code)
        _ignore_signals()  # the command is done: a signal in the teardown must not turn its exit status into -15
        raise


def _ignore_signals() -> None:
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def _exit_at_once(code: int) -> NoReturn:
    """After SIGINT/SIGTERM, end the program now: what the command keeps is committed and closed by then, and the
    exit handlers (``atexit``: a Ray driver's disconnect, logging's flush) still run, but the interpreter's teardown
    (freeing every module and object; 0.7 to 1.9 s measured on 2 loaded cores) and its wait for threads abandoned in a
    judge call are skipped. A second Ctrl-C meanwhile changes nothing."""
    _ignore_signals()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
