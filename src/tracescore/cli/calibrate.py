"""``tracescore calibrate``: set up the label schema and queue, sample judged claims into it, pull human labels back.

A target is a platform with a label queue (``registry.queue_targets()``; credentials from the environment) or the
path of a CSV sheet, ending in ``.csv`` (no platform); anything else is a usage error naming both.
Every sampled item is remembered in the local store, so nothing is queued twice; ``pull`` appends labels (a re-pull
adds nothing). Measuring, drift checks and the agreement report are their own commands.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from tracescore.adapters.jsonl import trace_from_json
from tracescore.calibrate.labels import add_labels, label_spec
from tracescore.calibrate.queued import pending, queued_traces
from tracescore.calibrate.sampling import (
    Candidate,
    attach_documents,
    candidates,
    queued_ids,
    queued_on,
    record_sample,
    sample,
    verdict_candidates,
)
from tracescore.calibrate.sheet import read_sheet, write_sheet
from tracescore.cli.calibrate_measure import agreement, check, measure
from tracescore.cli.exits import EXIT_INPUT, end, store_option
from tracescore.cli.paths import claim, reads
from tracescore.cli.platform_options import check_platform_options, platform_options
from tracescore.config import load_config
from tracescore.errors import NothingToDoError, TracescoreError
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import LabelQueue, QueueContext
from tracescore.report.runs import resolve_run
from tracescore.scorers.criteria import Criterion
from tracescore.sources.jsonl import read_jsonl
from tracescore.store.db import Store
from tracescore.trace import Trace

_F = TypeVar("_F", bound=Callable[..., Any])
_SHEET = ".csv"

_NOTHING_JUDGED = (
    "nothing to sample: the run(s) hold no judged claim (the judge ran on no trace); score with ANTHROPIC_API_KEY"
    " set and without --no-judge, then sample that run"
)
_store_option = store_option("Local store: scored runs, what was queued, the labels.")


def _platform_options(f: _F) -> _F:
    f = platform_options("calibrate")(f)
    f = click.option("--queue", "queue_name", default="tracescore-calibration", show_default=True, help="Queue name.")(
        f
    )
    return click.option(
        "--config", "config_path", type=reads(dir_okay=False),
        help="tracescore.toml ([source] project, [job] requests_per_minute).",
    )(f)


def _targets() -> str:
    return ", ".join(registry.queue_targets()) + f", or the path of a CSV sheet (ending in {_SHEET})"


def _is_sheet(target: str, via: str, options: dict[str, Any]) -> bool:
    """A platform with a label queue, or a sheet path; a usage error names both (and a platform option given
    with a target that does not take it)."""
    if target in registry.queue_targets():
        check_platform_options(target, options, "calibrate", via=via, require=False)
        return False
    if not target.lower().endswith(_SHEET):
        raise click.BadParameter(f"{target!r} is neither a platform with a label queue nor a sheet: expected"
                                 f" {_targets()}", param_hint=via)
    check_platform_options(target, options, "calibrate", via=via, require=False)
    claim(click.get_current_context(), via, target, written=via == "--to")  # a sheet written is never an input
    return True


@contextmanager
def _queue(
    target: str, store: Store, name: str, options: dict[str, Any], config_path: str | None
) -> Iterator[LabelQueue]:
    """The label queue of platform ``target`` from the registry, every request through the limiter of
    ``[job] requests_per_minute``, its client closed on exit; usage errors name what to set."""
    config = load_config(config_path)
    limiter = RateLimiter(config.section("job").requests_per_minute)
    with ExitStack() as resources:
        context = QueueContext(store, name, options, config.section("source").project, limiter, resources)
        yield registry.build_queue(target, context)


def _key(target: str, name: str, sheet: bool) -> str:
    return f"sheet:{target}" if sheet else f"{target}:{name}"


@click.group()
def calibrate() -> None:
    """Calibrate the judge against people: a blind, stratified sample of its verdicts labelled by hand."""


for _command in (measure, check, agreement):  # measure the labels, watch for drift, any sheet's agreement
    calibrate.add_command(_command)


@calibrate.command()
@click.option(
    "--to", "target", type=click.Choice(registry.queue_targets()), required=True, help="Platform to set up."
)
@_platform_options
@_store_option
def setup(target: str, queue_name: str, config_path: str | None, store_path: str, **options: Any) -> None:
    """Create the label schema (same names and categories as the judged scores) and the queue, once."""
    check_platform_options(target, options, "calibrate", via="--to", require=False)
    with _queue(target, Store(store_path), queue_name, options, config_path) as queue:
        ref = queue.setup()
    click.echo(f"{target} queue {ref.name!r} ({ref.queue_id}) ready with labels: {', '.join(ref.configs)}")


def _criterion(name: str | None, config_path: str | None, sheet: bool) -> Criterion | None:
    """The ``[[criteria]]`` criterion ``--criterion`` names (None: claims are sampled); a usage error names those the
    config declares, or a platform target (its queue holds tracescore's own labels)."""
    if name is None:
        return None
    declared = load_config(config_path).criteria
    found = next((c for c in declared if c.name == name), None)
    if found is None:
        names = ", ".join(c.name for c in declared) or "none"
        raise click.BadParameter(f"{name!r} is no [[criteria]] criterion of the config (declared: {names})",
                                 param_hint="--criterion")  # fmt: skip
    if not sheet:
        raise click.BadParameter("a criterion's verdicts are labelled in a sheet (--to labels.csv): a platform queue"
                                 " holds tracescore's own labels", param_hint="--criterion")  # fmt: skip
    return found


def _pool(
    store: Store, runs: tuple[str, ...], since: datetime | None, until: datetime | None, ask: Criterion | None = None
) -> list[Candidate]:
    """Judged claims (or ``ask``'s verdicts) of the named runs, or of every finished run started in [since, until);
    the latest run wins."""
    if since is not None or until is not None:
        ids = [
            str(r["id"])
            for r in store.runs()
            if r["status"] == "done"
            and (since is None or datetime.fromisoformat(r["started_at"]) >= since)
            and (until is None or datetime.fromisoformat(r["started_at"]) < until)
        ]
        if not ids:
            raise NothingToDoError(f"no finished run in the store {str(store.path)!r} started in that window")
    else:
        ids = [resolve_run(store, spec) for spec in (runs or ("latest",))]
    pool: dict[str, Candidate] = {}
    for run_id in ids:
        found = candidates(store, run_id) if ask is None else verdict_candidates(store, run_id, ask.name, ask.rubric)
        for c in found:
            pool[c.item.item_id] = c
    return list(pool.values())


def _traces(path: str | None) -> dict[str, Trace]:
    """Traces by id from a JSONL file (the documents a sheet shows); a line that does not parse is skipped."""
    if not path:
        return {}

    out: dict[str, Trace] = {}
    for record in read_jsonl(path):
        try:
            trace = trace_from_json(record.payload)
        except TracescoreError:
            continue
        out[trace.id] = trace
    return out


def _when(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO time, e.g. 2026-11-30T00:00:00Z") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@calibrate.command(name="sample")
@click.option("--to", "target", required=True, help=f"Where to queue: {_targets()} to write.")
@click.option("--run", "runs", multiple=True, help="Stored run to sample from (run id or latest; repeatable).")
@click.option("--since", help="Sample every finished run started at or after this ISO time.")
@click.option("--until", help="... and before this ISO time.")
@click.option("--n", "n", type=click.IntRange(min=1), default=60, show_default=True, help="Random-slice size.")
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed, same sample.")
@click.option("--failures", type=click.IntRange(min=0), default=0, show_default=True, help="Find-the-failures items.")
@click.option("--budget-per-day", type=click.IntRange(min=1), help="At most this many items queued per UTC day.")
@click.option(
    "--traces", "traces_path", type=reads(dir_okay=False, exists=True), help="JSONL traces: documents for a sheet."
)
@click.option("--criterion", help="Sample this [[criteria]] criterion's verdicts (one per trace) instead of claims;"
              " into a sheet (its label is a column of its own).")  # fmt: skip
@_platform_options
@_store_option
def sample_command(
    target: str,
    runs: tuple[str, ...],
    criterion: str | None,
    since: str | None,
    until: str | None,
    n: int,
    seed: int,
    failures: int,
    budget_per_day: int | None,
    traces_path: str | None,
    queue_name: str,
    config_path: str | None,
    store_path: str,
    **options: Any,
) -> None:
    """Sample judged claims (stratified by diagnosis × verdict) into a queue or a sheet, never one queued before."""
    now = datetime.now(UTC)
    sheet = _is_sheet(target, "--to", options)
    ask = _criterion(criterion, config_path, sheet)
    store = Store(store_path)
    key = _key(target, queue_name, sheet)
    with store:
        found = _pool(store, runs, _when(since), _when(until), ask)
        pool = attach_documents(found, _traces(traces_path))
        if not pool:  # nothing to do is not a success that queued 0 items
            raise NothingToDoError(_NOTHING_JUDGED if ask is None else f"nothing to sample: the run(s) hold no"
                                   f" verdict of criterion {ask.name!r} (absent on every trace, or not run)")
        budget_left = None if budget_per_day is None else budget_per_day - queued_on(store, now)
        drawn = sample(
            pool,
            n=n,
            seed=seed,
            failures=failures,
            exclude=queued_ids(store),
            budget_left=budget_left,
            per_trace=not sheet,
            exclude_traces=queued_traces(store, key) if not sheet else frozenset(),
        )
        if sheet:
            extra = (label_spec(ask.name),) if ask is not None else ()
            write_sheet(target, drawn.items, extra)  # written before it is remembered: a failed write re-samples
            record_sample(store, drawn, now=now, queue=key)
            where = f"sheet {target}"
        else:
            record_sample(store, drawn, now=now, queue=key)
            with _queue(target, store, queue_name, options, config_path) as queue:
                queue.push(pending(store, key))
            where = f"{target} queue {queue_name!r}"
    randoms = sum(1 for p in drawn.picked if p.slice == "random")
    click.echo(
        f"queued {len(drawn.picked)} item(s) to {where}: {randoms} random, {len(drawn.picked) - randoms} failures"
    )
    for stratum, (total, taken) in sorted(drawn.strata.items()):
        click.echo(f"  {stratum:<40} {taken:>4} of {total}")
    for note in drawn.notes:
        click.echo(f"  note: {note}")


@calibrate.command()
@click.option("--from", "target", required=True, help=f"Where the labels are: {_targets()}, filled in.")
@click.option("--since", help="Only labels given at or after this ISO time (platforms).")
@_platform_options
@_store_option
def pull(
    target: str, since: str | None, queue_name: str, config_path: str | None, store_path: str, **options: Any
) -> None:
    """Pull human labels back into the store (append-only; a re-pull adds nothing)."""
    now = datetime.now(UTC)
    sheet = _is_sheet(target, "--from", options)
    store = Store(store_path)
    errors: list[str] = []
    with store:
        if sheet:
            read = read_sheet(target, now=now, known_items=queued_ids(store))
            labels, errors = read.labels, read.errors
        else:
            with _queue(target, store, queue_name, options, config_path) as queue:
                labels = queue.pull(_when(since))
        added = add_labels(store, labels, now=now)
    items = len({lab.item_id for lab in labels})
    click.echo(f"pulled {len(labels)} label(s) on {items} item(s) from {target}: {added} new")
    summary = json.dumps({"labels": len(labels), "new": added, "bad_rows": len(errors)})
    click.echo(f"  {summary}")
    for error in errors:
        click.echo(f"  skipped {error}", err=True)
    if errors:
        end(EXIT_INPUT)
