"""``calibrate measure``, ``calibrate check`` and ``calibrate agreement``: the judge's agreement with people.

``measure`` turns the stored human labels of the random slice into calibrations (one per judge model × rubric
version × label) and prints the figures; ``check`` re-judges the labelled items with the configured judge and exits
non-zero when its kappa falls below the stored interval (drift); ``agreement`` computes the same figures from any
sheet holding a human label and a judge value per item. Thin commands: the work is in ``tracescore.calibrate``.
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from datetime import UTC, datetime

import click
from rich.console import Console

from tracescore.calibrate.agreement import measure as measure_pairs
from tracescore.calibrate.drift import DriftResult, check_drift
from tracescore.calibrate.labels import (
    LABELS,
    VERDICT_LABEL,
    Calibration,
    label_spec,
    labelled_pairs,
    measure_and_record,
)
from tracescore.calibrate.sheet import read_agreement_sheet
from tracescore.calibrate.trust import partial_above_chance
from tracescore.cli.exits import EXIT_GATE_FAILED, EXIT_UNDECIDED, end
from tracescore.config import Config, load_config
from tracescore.engine.setup import build_platform
from tracescore.errors import ConfigError, InputError, NothingToDoError
from tracescore.judge.cache import CachingJudge
from tracescore.judge.make import make_judge
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import EVERYTHING
from tracescore.report.agreement import AgreementEntry, AgreementSection
from tracescore.report.render.agreement import figure_lines, render_agreement_terminal, render_figures_terminal
from tracescore.report.safe import fitted_console
from tracescore.store.db import Store
from tracescore.trace import Trace

MEASURED = tuple(s.name for s in LABELS if s.kind != "text")  # labels a judge gives a value for
FORMATS = ("terminal", "json")


def _console() -> Console:
    return fitted_console()


def _now() -> datetime:
    return datetime.now(UTC)


def _open_store(path: str) -> Store:
    if not os.path.isfile(path):
        raise NothingToDoError(
            f"no store {path!r}: label a sample first (`tracescore calibrate sample`), or pass --store"
        )
    return Store(path)


def _judged(store: Store) -> list[tuple[str, str]]:
    """Every judge model × rubric version of the random slice that has at least one human label."""
    rows = store.query(
        "SELECT DISTINCT i.judge_model, i.rubric_version FROM calibration_items i JOIN calibration_labels l"
        " ON l.item_id = i.item_id WHERE i.slice = 'random' AND i.judge_model IS NOT NULL"
        " AND i.rubric_version IS NOT NULL"
    )
    return sorted((str(m), str(r)) for m, r in rows)


@click.command("measure")
@click.option("--store", "store_path", default="tracescore.db", show_default=True, type=click.Path(dir_okay=False))
@click.option("--judge-model", help="Measure only this judge model (default: every judge with labelled items).")
@click.option("--label", "labels", multiple=True,
              help=f"Labels to measure: {', '.join(MEASURED)} or a [[criteria]] criterion's name (default: all).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="tracescore.toml whose [[criteria]] are measured too. [default: ./tracescore.toml if there is one]")
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="terminal", show_default=True)
def measure(
    store_path: str, judge_model: str | None, labels: tuple[str, ...], config_path: str | None, seed: int, fmt: str
) -> None:
    """Measure each judge against the stored human labels of the random slice and record the calibrations."""
    load_config(config_path)  # its [[criteria]] join the catalog: their labels are known
    for label in labels:
        try:
            label_spec(label)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--label") from None
    with _open_store(store_path) as store:
        labels = labels or _labelled(store)
        judges = [j for j in _judged(store) if judge_model is None or j[0] == judge_model]
        if not judges:
            whose = f" of judge {judge_model!r}" if judge_model else ""
            raise NothingToDoError(f"no human label on any sampled item{whose} in {store_path!r}: nothing to measure")
        recorded: list[Calibration] = []
        skipped: list[str] = []
        now = _now()
        for model, rubric in judges:
            for label in labels:
                if not _has_pairs(store, model, rubric, label):
                    if label in MEASURED:  # a criterion's label belongs to its own version: said for none else
                        skipped.append(f"{model} rubric {rubric}: no labelled item for {label}")
                    continue
                recorded.append(
                    measure_and_record(store, judge_model=model, rubric_version=rubric, label=label, now=now, seed=seed)
                )
    entries = [
        AgreementEntry(
            c.judge_model,
            c.rubric_version,
            c.label,
            c,
            partial=partial_above_chance(c) if c.label == VERDICT_LABEL else None,
        )
        for c in recorded
    ]
    if fmt == "json":
        out = [
            {"calibration_id": c.calibration_id, "judge_model": c.judge_model, "rubric_version": c.rubric_version}
            | {"agreement": c.agreement, "figures": c.detail}
            for c in recorded
        ]
        click.echo(json.dumps({"calibrations": out, "skipped": skipped}, indent=2))
        return
    render_agreement_terminal(AgreementSection(entries), _console())
    for line in skipped:
        click.echo(f"skipped: {line}")


def _labelled(store: Store) -> tuple[str, ...]:
    """Every label a judge gives a value for: tracescore's, then each judged score's (a criterion's) that people
    labelled in this store."""
    stored = [str(n) for (n,) in store.query("SELECT DISTINCT label FROM calibration_labels ORDER BY label")]
    return (*MEASURED, *(n for n in stored if n not in MEASURED and _known(n)))


def _known(label: str) -> bool:
    try:
        return label_spec(label).kind != "text"
    except ValueError:
        return False


def _has_pairs(store: Store, model: str, rubric: str, label: str) -> bool:
    pairs, _ = labelled_pairs(store, label=label, judge_model=model, rubric_version=rubric)
    return bool(pairs)


def _traces(
    config: Config, kind: str, path: str | None, start: datetime, end: datetime | None, wanted: set[str]
) -> tuple[dict[str, Trace], list[str]]:
    """The traces among ``wanted`` read from the source (a file, or a platform window), and unreadable records."""
    found: dict[str, Trace] = {}
    problems: list[str] = []
    with ExitStack() as resources:
        parts = build_platform(config, RateLimiter(None), resources, kind=kind, path=path, write_back=False)
        for record in parts.source.records(start, end):
            try:
                trace = parts.adapter(record.payload)
            except InputError as exc:
                problems.append(f"line {record.line}: {exc}" if record.line is not None else str(exc))
                continue
            if trace.id in wanted:
                found[trace.id] = trace
    return found, problems


def _when(flag: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO date or datetime, e.g. 2026-11-01", param_hint=flag
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@click.command("check")
@click.argument("traces", required=False)
@click.option("--store", "store_path", default="tracescore.db", show_default=True, type=click.Path(dir_okay=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="tracescore.toml (judge model, source).")
@click.option("--source", "kind", help="Where the traces are (default [source] kind; a file platform reads TRACES).")
@click.option("--from", "window_from", help="Platform sources: read traces from this time (ISO).")
@click.option("--to", "window_to", help="Platform sources: up to this time (ISO; default now).")
@click.option("--judge-model", help="Judge to check (default: the configured one).")
@click.option("--against", metavar="MODEL", help="Compare with this model's calibration (default: see README).")
@click.option("--label", type=click.Choice(MEASURED), default=VERDICT_LABEL, show_default=True)
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap interval.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="terminal", show_default=True)
def check(
    traces: str | None,
    store_path: str,
    config_path: str | None,
    kind: str | None,
    window_from: str | None,
    window_to: str | None,
    judge_model: str | None,
    against: str | None,
    label: str,
    seed: int,
    fmt: str,
) -> None:
    """Re-judge the labelled items with the configured judge; exit 1 when kappa falls below the stored interval."""
    config = load_config(config_path)
    kind = kind or config.section("source").kind
    file_source = registry.get(kind).file
    if file_source and traces is None and config.section("source").path is None:
        raise click.UsageError(f"missing TRACES: give the {kind} file the labelled traces were scored from")
    start = EVERYTHING if file_source else _when("--from", window_from)
    if start is None:
        raise click.UsageError(f"--source {kind} reads a window: give --from (and --to)")
    model = judge_model or config.judge_model
    with _open_store(store_path) as store:
        wanted = {
            str(r[0])
            for r in store.query(
                "SELECT DISTINCT i.trace_id FROM calibration_items i JOIN calibration_labels l"
                " ON l.item_id = i.item_id WHERE i.slice = 'random'"
            )
        }
        found, problems = _traces(config, kind, traces, start, _when("--to", window_to), wanted)
        judge = CachingJudge(make_judge(config.judge_provider, model), store)
        try:
            merge = config.section("judge").merge_partial
            result = check_drift(
                store, found, judge, label=label, against=against, seed=seed, merge_partial=merge,
                rubric=config.rubrics.grounding, redact=config.redactor,
            )
        finally:
            judge.close()
        requests = judge.usage.calls
    _print_check(result, requests, problems, fmt)
    if result.status == "drift":
        end(EXIT_GATE_FAILED)
    if result.status == "unknown":
        end(EXIT_UNDECIDED)


def _print_check(result: DriftResult, requests: int, problems: list[str], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(result.as_dict() | {"judge_requests": requests, "unreadable": problems}, indent=2))
        return
    word = {"ok": "no drift", "drift": "DRIFT", "unknown": "cannot tell"}[result.status]
    click.echo(f"calibrate check {result.judge_model} rubric {result.rubric_version} {result.label}: {word}")
    click.echo(f"  {result.reason}")
    click.echo(f"  judge requests: {requests} (the rest answered from the store's cache)")
    for line in result.skipped[:10] + problems[:10]:
        click.echo(f"  skipped: {line}")
    more = len(result.skipped) + len(problems) - len(result.skipped[:10]) - len(problems[:10])
    if more > 0:
        click.echo(f"  … and {more} more skipped")
    if result.figures is not None:
        render_figures_terminal(
            "re-judged", figure_lines(result.figures.as_dict()), result.figures.as_dict(), _console()
        )


@click.command("agreement")
@click.argument("sheet", type=click.Path(dir_okay=False))
@click.option(
    "--label",
    type=click.Choice(MEASURED),
    default=VERDICT_LABEL,
    show_default=True,
    help="Which label the sheet holds (its categories and order).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="terminal", show_default=True)
def agreement(sheet: str, label: str, seed: int, fmt: str) -> None:
    """Agreement figures from a sheet with columns item_id, human, judge (and optionally judge_score)."""
    try:
        spec = label_spec(label)
        read = read_agreement_sheet(sheet, spec)
        figures = measure_pairs(
            read.pairs,
            label=label,
            categories=spec.categories or None,
            ordinal=spec.ordinal,
            positive=spec.positive,
            seed=seed,
        )
    except ValueError as exc:
        raise ConfigError(f"{sheet}: {exc}; pick the --label whose values the sheet holds") from exc
    for problem in read.errors:
        click.echo(f"{sheet}: {problem}", err=True)
    data = figures.as_dict()
    if fmt == "json":
        click.echo(json.dumps(data | {"errors": read.errors}, indent=2))
    else:
        now = _now()
        partial = partial_above_chance(Calibration.of(figures, "sheet", "-", now)) if label == VERDICT_LABEL else None
        render_figures_terminal(f"{sheet} · {label}", figure_lines(data, partial), data, _console())
    if not read.pairs:
        raise NothingToDoError(f"{sheet}: no readable row: nothing to measure")
