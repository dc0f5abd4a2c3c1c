"""The ``tracescore`` command group: one module per command group, exit codes in ``cli/exits.py``."""

from __future__ import annotations

import click

from tracescore import __version__
from tracescore.cli.calibrate import calibrate
from tracescore.cli.inspect import inspect
from tracescore.cli.job import backfill, init, run
from tracescore.cli.push import push
from tracescore.cli.report import gate, report
from tracescore.cli.score import score

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracescore")
def main() -> None:
    """Whose bug is it? Score search-agent traces stage by stage: retrieval, grounding, citations, answer."""


for _command in (score, report, gate, run, backfill, init, inspect, calibrate, push):
    main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
