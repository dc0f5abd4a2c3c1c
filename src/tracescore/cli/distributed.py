"""``tracescore score FOLDER --engine ray --out DIR``: a folder of JSONL files (one shard each) or a platform export
(``--source <platform>-export``, its own shards and adapter) scored on Ray, the results as one Parquet
file per shard under ``DIR/results``; a re-run skips the shards already done."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

import click
from rich.console import Console

from tracescore.adapters import Adapter
from tracescore.cli.exits import EXIT_INPUT, end
from tracescore.config import Config
from tracescore.engine.distributed import JudgeSpec, RayRun, RaySettings, score_shards
from tracescore.engine.recipe import Options, ScorerPlan, judge_off, labelled, scorer_plan
from tracescore.engine.setup import build_platform
from tracescore.errors import ConfigError
from tracescore.judge.make import make_judge
from tracescore.limits import RateLimiter
from tracescore.report.safe import fitted_console
from tracescore.report.summary import Summary, render_terminal
from tracescore.sources.base import ShardedSource


def score_ray(
    traces: str | None,
    out: str | None,
    options: Options,
    *,
    config: Config,
    kind: str,
    store_path: str,
    quiet: bool,
    in_flight: int,
    judge_rps: float | None,
) -> None:
    """Check the options that go with ``--engine ray``, run it, print the stage table of every shard's results."""
    if traces is None or Path(traces).is_file():
        raise click.BadParameter(
            f"{traces!r} is not a folder; --engine ray reads a folder of .jsonl files (one shard each)",
            param_hint="TRACES",
        )
    if out is None or out == "-" or Path(out).is_file():
        raise click.BadParameter("--engine ray writes one Parquet file per shard: give a folder, --out DIR",
                                 param_hint="--out")
    if options.check_links:
        raise click.BadParameter("not supported with --engine ray yet; check links with --engine local",
                                 param_hint="--check-links")
    if options.max_cost is not None:
        raise click.BadParameter("not supported with --engine ray (the budget is per machine); drop it",
                                 param_hint="--max-cost")
    console = fitted_console(quiet=quiet)
    with ExitStack() as resources:
        source, adapter = _sharded(config, kind, traces, resources)
        adapter = labelled(adapter, store_path)  # reviewer-entered labels, as on every path
        spec, judge = _scoring(options, store_path, in_flight)
        run = score_shards(source, adapter, out, spec, judge,
                           RaySettings(workers=os.cpu_count() or 1, requests_per_second=judge_rps))
    _finish(run, console, quiet=quiet)


def _sharded(config: Config, kind: str, traces: str, resources: ExitStack) -> tuple[ShardedSource, Adapter]:
    """The folder of JSONL files or the export, and the adapter, built by the registry exactly as for
    ``--engine local`` (both travel to the workers by pickle: the source with its shard plan, the adapter by value)."""
    parts = build_platform(config, RateLimiter(None), resources, kind=kind, path=traces, write_back=False)
    if parts.sharded is None:
        raise ConfigError(f"--source {kind} cannot be split into shards; score it with --engine local")
    return parts.sharded, parts.adapter


def _scoring(options: Options, store_path: str, in_flight: int) -> tuple[ScorerPlan, JudgeSpec | None]:
    """The recipe's scorers as plain values and the judge the workers build (absent with the recipe's reason when
    off, without a key or without the SDK)."""
    notes: list[str] = []
    reason = judge_off(options, notes)
    for note in notes:
        click.echo(f"warning: {note}", err=True)
    judge = None
    if reason is None:  # any registered provider; built once here so missing credentials stop the run before Ray
        close = getattr(make_judge(options.provider, options.judge_model), "close", None)
        if callable(close):
            close()
        judge = JudgeSpec.of(options.provider, options.judge_model, in_flight=in_flight)
    plan = scorer_plan(options, reason, judge.model if judge is not None else None, Path(store_path))
    return plan, judge


def _finish(run: RayRun, console: Console, *, quiet: bool) -> None:
    """The stage table over every shard's results, the shards and judge lines, failures; then the exit code."""
    summary = Summary()
    for line in run.lines():
        summary.add(line)
    render_terminal(summary, console)
    counts = run.counts()
    if run.judge:
        j = run.judge
        console.print(
            f"judge: {j.get('calls', 0)} API calls, {j.get('cache_hits', 0)} answered from the cache"
            f" ({j.get('cache_loaded', 0)} replies cached before), ~${j.get('cost_usd', 0.0):.4f};"
            f" {j.get('retries', 0)} retries, {j.get('failures', 0)} failed calls;"
            f" rate limiter: {int(run.limiter.get('pauses', 0))} pause(s) on 429",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"{run.shards} shard(s): {len(run.scored)} scored now ({counts.seen} traces),"
        f" {run.done_before} done before, {len(run.failed)} failed; results in {run.results}",
        highlight=False,
        soft_wrap=True,
    )
    for shard in run.failed:
        click.echo(f"shard {shard.key} failed (left for the next run): {shard.error}", err=True)
    for failure in counts.failures:
        click.echo(failure, err=True)
    if counts.failed:
        click.echo(f"{counts.failed} of {counts.seen} lines could not be scored (see above)", err=True)
    if run.failed or counts.failed:
        end(EXIT_INPUT)
