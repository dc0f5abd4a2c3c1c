"""``tracescore dashboard``: the stage-split dashboard on a platform, as code (created or updated idempotently).

The widgets are ``platforms.dashboards``'; the platform (``--to``) makes them through its API, found again by name on
a re-run so that only what differs is written, or lists the steps to take by hand where its API cannot. The judge's
latest calibration (kappa and n, from the local store) goes beside ``grounding.rate``.

Exit codes: 0 done (steps left by hand, if any, listed under ``by hand:``); 2 bad options or config; 4 a request
failed after the retries (what was written stays; a re-run finishes).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from tracescore.calibrate.labels import latest_calibration
from tracescore.cli.platform_options import check_platform_options, platform_options
from tracescore.config import load_config
from tracescore.errors import ConfigError
from tracescore.platforms import registry
from tracescore.platforms.dashboards import (
    BY_CHOICES,
    DEFAULT_NAME,
    DashboardContext,
    agreement_line,
    dashboard_spec,
    plan_lines,
)
from tracescore.registry import option_value
from tracescore.store import Store


def _agreement(store_path: str, judge_model: str, rubric_version: str) -> tuple[str, str]:
    """The calibration of the judge behind grounding.rate, and why there is none when there is none; a missing
    store is "not calibrated", never created."""
    if not Path(store_path).exists():
        return agreement_line(None), f"no store at {store_path}; run `tracescore calibrate`"
    store = Store(store_path)
    try:
        found = latest_calibration(store, judge_model, rubric_version)
    finally:
        store.close()
    why = "" if found else f"none of {judge_model}, rubric {rubric_version}; run `tracescore calibrate`"
    return agreement_line(found), why


@click.command()
@click.option(
    "--to", "target", type=click.Choice(registry.dashboard_targets()), required=True,
    help="The platform to make the dashboard on.",
)
@click.option("--name", default=DEFAULT_NAME, show_default=True, help="The dashboard's name: how a re-run finds it.")
@click.option(
    "--by", type=click.Choice(BY_CHOICES), default="name", show_default=True,
    help="Split each stage's time series by provider, model, environment or trace name.",
)
@click.option("--dry-run", is_flag=True, help="Print the plan; send nothing to the platform.")
@click.option("--score", "scores", multiple=True, metavar="NAME",
              help="One more widget for this score (any installed scorer's: 'tracescore scorers'); repeatable.")
@click.option(
    "--store", "store_path", default=None, type=click.Path(dir_okay=False),
    help="Local store holding the judge's calibrations. [default: [job] store, tracescore.db]",
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="tracescore.toml ([judge] model and rubric, [scoring] k, the platform section).")
@platform_options("dashboard")
def dashboard(
    target: str,
    name: str,
    by: str,
    dry_run: bool,
    scores: tuple[str, ...],
    store_path: str | None,
    config_path: str | None,
    **options: Any,
) -> None:
    """Create or update the stage-split dashboard on the platform --to.

    Widgets: each stage's headline score (recall at k, grounding.rate, citation.support_rate,
    citation.unfetched_rate, answer.correct) as a daily mean split by --by; the diagnosis cells counted per day;
    the count of citation.fabricated_count above 0 (must stay 0); grounding.rate titled with its judge's latest
    calibration (kappa, n). The widgets count tracescore's scores, not human annotations. A re-run finds the
    dashboard by --name and changes only what differs (no change: no write). What the platform's API cannot make
    is printed as steps to take by hand.
    """
    check_platform_options(target, options, "dashboard", via="--to", require=False)
    config = load_config(config_path)
    agreement, why = _agreement(
        store_path or config.section("job").store, config.judge_model, config.rubrics.grounding.version
    )
    try:
        k = option_value(config.scorers(), "retrieval", "k")
        spec = dashboard_spec(name, by, k=k, agreement=agreement, agreement_why=why, scores=scores)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    sections = {key: config.section(key) for key in registry.get(target).sections}
    with ExitStack() as resources:
        project = config.section("source").project
        context = DashboardContext(sections, {**options, "dry_run": dry_run}, resources, project)
        outcome = registry.build_dashboard(target, context).sync(spec, dry_run=dry_run)
    head = "plan (dry run, nothing sent)" if dry_run else "dashboard"
    click.echo(f"{head}: {spec.name!r} on {outcome.where}, series split by {by}")
    for line in plan_lines(outcome):
        click.echo(f"  {line}")
    done = ", ".join(f"{outcome.count(v)} {v}d" if v != "unchanged" else f"{outcome.count(v)} unchanged"
                     for v in ("create", "update", "unchanged"))
    if not dry_run:
        click.echo(f"{done}; {outcome.reads} reads, {outcome.writes} writes ({outcome.retried} retried)"
                   + (f"; {len(outcome.manual)} steps left to do by hand" if outcome.manual else ""))
