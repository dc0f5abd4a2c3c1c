"""The ``tracescore`` command group: one module per command group, exit codes in ``cli/exits.py``."""

from __future__ import annotations

import gc

import click

from tracescore import __version__
from tracescore.cli.calibrate import calibrate
from tracescore.cli.inspect import inspect
from tracescore.cli.job import backfill, init, run
from tracescore.cli.push import push
from tracescore.cli.report import gate, report
from tracescore.cli.score import score

__all__ = ["entry", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracescore")
def main() -> None:
    """Whose bug is it? Score search-agent traces stage by stage: retrieval, grounding, citations, answer."""


for _command in (score, report, gate, run, backfill, init, inspect, calibrate, push):
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
    main()


if __name__ == "__main__":  # pragma: no cover
    entry()
