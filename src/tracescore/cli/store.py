"""``tracescore store``: what the local store holds (``info``) and removing old runs from it (``prune``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from tracescore.cli.exits import store_option
from tracescore.errors import MissingInputError
from tracescore.store import Store
from tracescore.store.lock import StoreLock
from tracescore.store.prune import describe, prune

_AGE = re.compile(r"^(\d+)([dh])$")


def _opened(store_path: str) -> Store:
    """The store at ``store_path``; a missing one is not created (MissingInputError, exit 2)."""
    if not Path(store_path).is_file():
        raise MissingInputError(f"no store at {store_path!r}; give --store PATH (a tracescore.db a run wrote)")
    return Store(store_path)


def _before(value: str, now: datetime) -> datetime:
    """``--before``: an ISO date or time (no zone: UTC), or an age such as ``30d`` / ``12h`` back from now."""
    age = _AGE.match(value.strip())
    if age:
        n, unit = int(age[1]), age[2]
        return now - (timedelta(days=n) if unit == "d" else timedelta(hours=n))
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is neither an ISO date or time (2026-11-01, 2026-11-01T12:00:00Z) nor an age (30d, 12h)",
            param_hint="--before",
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@click.group()
def store() -> None:
    """The local store (tracescore.db): what it holds, and removing old runs from it."""


@store.command()
@store_option("The store to describe.")
def info(store_path: str) -> None:
    """Size, runs (by status, oldest and newest), results, per-trace marks and judge cache entries."""
    with _opened(store_path) as opened:
        for line in describe(opened).lines():
            click.echo(line)


@store.command(name="prune")
@click.option("--before", "before", required=True, metavar="DATE",
              help="Prune runs finished before this ISO date or time (no zone: UTC), or this age (30d, 12h).")
@click.option("--dry-run", is_flag=True, help="Say what would be pruned; change nothing.")
@store_option("The store to prune.")
def prune_command(before: str, dry_run: bool, store_path: str) -> None:
    """Remove the runs that finished before DATE, with their results and per-trace marks, and give the space back.

    Never removed: a run still running, a run calibration items were sampled from, an unfinished backfill's marks,
    the scheduled job's marks of traces from DATE on, the judge cache and the written-score ledger.
    """
    cut = _before(before, datetime.now(UTC))
    with _opened(store_path) as opened, StoreLock(store_path, "tracescore store prune"):
        done = prune(opened, cut, dry_run=dry_run)
    when = cut.isoformat().replace("+00:00", "Z")
    if not done.runs:
        click.echo(f"nothing to prune: no run finished before {when} (running runs are never pruned)")
    elif dry_run:
        click.echo(f"would prune {done.counts()} finished before {when}; nothing changed (--dry-run)")
    else:
        click.echo(f"pruned {done.counts()} finished before {when}; store size"
                   f" {done.size_before / 1e6:.1f} MB -> {done.size_after / 1e6:.1f} MB")
