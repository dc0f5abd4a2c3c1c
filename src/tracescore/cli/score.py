"""``tracescore score``: a one-shot run over a file or a platform window, with the same config, platform registry,
source, adapter and sink as ``run``/``backfill``; results go to the store, ``--out`` and the stage table."""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import click

from tracescore import catalog
from tracescore.catalog import Reasons, declared_reason
from tracescore.cli.distributed import score_ray
from tracescore.cli.exits import rate_option, store_option
from tracescore.cli.paths import reads, writes
from tracescore.cli.platform_options import check_platform_options, platform_options
from tracescore.cli.progress import Progress, input_kind
from tracescore.cli.scoring import Scoring, as_json, end_of, finish
from tracescore.config import load_config
from tracescore.engine.recipe import Options, build_recipe, cores, labelled, options
from tracescore.engine.runner import OneShot, score_once
from tracescore.engine.setup import build_platform
from tracescore.engine.stage import Scored
from tracescore.errors import ConfigError
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import EVERYTHING, Parts
from tracescore.report.safe import fitted_console
from tracescore.report.summary import Summary
from tracescore.report.tally import summarize
from tracescore.scorers.grounding import GROUNDING_RATE
from tracescore.store import Store

SCORE_FORMATS = ("terminal", "json")  # the output's shape; what the input is, is --source's
NO_STORE = "none"  # ``--store none``: a one-off that keeps nothing


@dataclass(frozen=True)
class _Request:
    """What to read: the platform, the file or window, the filters, whether to write back."""

    kind: str
    path: str | None
    start: datetime
    end: datetime | None
    write_back: bool
    overrides: dict[str, Any]
    download: bool = False  # ``path`` is a file downloaded from the platform ``kind``



def judged_scores() -> str:
    """The judged scores of the installed scorers, a stage's as ``stage.*`` when all of its scores are judged."""
    entries = catalog.entries()
    out: list[str] = []
    for entry in entries:
        family = entry.name.split(".")[0]
        whole = all(e.judged for e in entries if e.name.split(".")[0] == family)
        shown = f"{family}.*" if whole else entry.name
        if entry.judged and shown not in out:
            out.append(shown)
    return ", ".join(out)


class _JudgeOption(click.Option):
    """``--judge/--no-judge``: its help names the installed judged scores, read when the help is shown (a plugin is
    imported then, never when the command line loads: one that cannot be is refused by the command, exit 2)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        template = self.help or ""
        try:
            self.help = template.replace("{judged}", judged_scores())
        except ConfigError:
            self.help = template.replace("{judged}", "those of the judged scorers 'tracescore scorers' lists")
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = template

@click.command()
@click.argument("traces", required=False, type=reads(allow_dash=True))
@click.option(
    "--out",
    type=writes(allow_dash=True),
    help="Write one JSON result line per trace here ('-' for stdout); with --engine ray a folder (Parquet per shard).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local", show_default=True,  # fmt: skip
    help="ray: TRACES is a folder of JSONL files or an export; one Ray task per file (shard), results per shard"
    " under --out DIR; a re-run skips the shards done (pip install 'tracescore[ray]'; RAY_ADDRESS for a cluster).",
)
@rate_option(
    "--judge-rps",
    help="--engine ray: judge API requests per second for the whole cluster (one limiter). [default: no limit]",
)
@store_option("Local SQLite store that keeps every run, result and citation row ('none': keep nothing).")
@click.option(
    "-k",
    "--k",
    "k",
    default=None,
    type=click.IntRange(min=1),
    help="Cut-off of retrieval.recall_at_{k}; part of the score name. [default: [scoring] k, 5]",
)
@click.option(
    "--final-answer-prefix",
    default=None,
    help="Score only the text after this marker when present (empty to disable). [default: FINAL ANSWER:]",
)
@click.option("--quiet", "-q", is_flag=True, help="No tables, only errors.")
@click.option(
    "--format", "fmt", type=click.Choice(SCORE_FORMATS), default="terminal", show_default=True,
    help="Output: the stage tables, or one JSON object (the summary: cells, stages, scores, judge, run id) on stdout.",
)  # fmt: skip
@click.option(
    "--judge/--no-judge",
    "judge_wanted",
    cls=_JudgeOption,
    default=None,
    help="--judge: the judged scores ({judged}) must run: a missing ANTHROPIC_API_KEY or anthropic SDK is"
    " exit 2 (as [scoring] judge = true). --no-judge: skip them even with ANTHROPIC_API_KEY set. [default: judge"
    " when ANTHROPIC_API_KEY is set]",
)
@click.option("--judge-model", default=None,
              help="Model of the judge, in the [judge] provider's own id. [default: [judge] model]")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    default=None,
    metavar="USD",
    help="Stop judging (between traces) once the judge's estimated spend reaches this; the rest stay unjudged.",
)
@click.option(
    "--judge-sample",
    type=click.FloatRange(min=0, max=1),
    default=None,
    metavar="RATE",
    help="Judge this share of traces, chosen by a hash of the trace id (plus flagged ones). [default: [scoring]"
    " judge_sample]",
)
@click.option(
    "--source",
    type=click.Choice(registry.names()),
    default=None,
    help="Where traces come from: " + "; ".join(f"{p.name}: {p.summary}" for p in registry.platforms().values())
    + ". [default: jsonl; a TRACES file downloaded from a platform is recognised, with a note]",
)
@platform_options("score")
@click.option("--from", "window_from", help="Platform sources: first trace start time (ISO 8601; no zone = UTC).")
@click.option("--to", "window_to", help="Platform sources: end of the window, exclusive (default: now).")
@click.option("--environment", multiple=True, help="Platform sources: only this environment (repeatable).")
@click.option("--trace-name", help="Platform sources: only traces with this name.")
@click.option("--tag", "tags", multiple=True, help="Platform sources: only traces carrying this tag (repeatable).")
@click.option(
    "--write-back/--no-write-back",
    default=None,
    help="Platform sources: write scores back to the platform (default) or only to the store and --out.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that score in parallel without a judge (1: in this process; output stays in input order)."
    " [default: the CPU cores available]",
)
@click.option(
    "--check-links", is_flag=True, help="Check that cited URLs still resolve (citation.dead_rate); makes requests."
)
@click.option(
    "--config",
    "config_path",
    type=reads(dir_okay=False),
    help="tracescore.toml (default: ./tracescore.toml when present); [scoring], [judge], [mapping] and the "
    "platform sections apply.",
)
def score(
    traces: str | None,
    out: str | None,
    store_path: str,
    k: int | None,
    final_answer_prefix: str | None,
    quiet: bool,
    judge_wanted: bool | None,
    judge_model: str | None,
    max_cost: float | None,
    source: str | None,
    window_from: str | None,
    window_to: str | None,
    environment: tuple[str, ...],
    trace_name: str | None,
    tags: tuple[str, ...],
    write_back: bool | None,
    config_path: str | None,
    workers: int | None = None,
    check_links: bool = False,
    engine: str = "local",
    judge_rps: float | None = None,
    judge_sample: float | None = None,
    fmt: str = "terminal",
    **platform: Any,  # the options platforms add (``platform_options``), e.g. a project name
) -> None:
    """Score traces stage by stage and print the stage contingency table.

    TRACES is a JSONL file of canonical traces ('-' for stdin) for --source jsonl; with a platform source the traces
    of the window --from..--to are read from it and, unless --no-write-back, each score is written back to its trace.
    """
    overrides = {"environment": environment, "trace_name": trace_name, "tags": tags, **platform}
    request = _request(source or registry.DEFAULT_SOURCE, traces, window_from, window_to, write_back, overrides)
    if engine == "local":  # the file looked at only once the options are right
        source, download = input_kind(source, traces)
        request = replace(request, kind=source, download=download)
    config = load_config(config_path)
    recipe_options = options(config, k=k, final_answer_prefix=final_answer_prefix, no_judge=judge_wanted is False,
                             judge_model=judge_model, max_cost=max_cost, check_links=check_links,
                             judge_sample=judge_sample, judge=judge_wanted is True)
    json_out = fmt == "json"
    if json_out and out == "-":
        raise click.BadParameter("--out - and --format json would both write to stdout; give --out a file",
                                 param_hint="--format")  # fmt: skip
    if engine == "ray" or judge_rps is not None:
        if engine != "ray" or not registry.get(request.kind).shards:
            files = ", ".join(n for n in registry.names() if registry.get(n).shards)
            raise click.BadParameter(f"--engine ray scores a folder of JSONL files or an export (--source {files});"
                                     " --judge-rps goes with it", param_hint="--engine")
        if json_out:
            raise click.BadParameter("--engine ray shows its shards' tables only", param_hint="--format")
        score_ray(traces, out, recipe_options, config=config, kind=request.kind, store_path=store_path, quiet=quiet,
                  in_flight=config.section("job").judge_concurrency, judge_rps=judge_rps)
        return
    for given, flag in ((traces if request.kind == registry.DEFAULT_SOURCE else None, "TRACES"), (out, "--out")):
        if given not in (None, "-") and Path(given).is_dir():  # an export source reads a folder; JSONL does not
            raise click.BadParameter(f"{given!r} is a folder; score a folder with --engine ray", param_hint=flag)
    to_stdout = out == "-"
    console = fitted_console(stderr=to_stdout or json_out, quiet=quiet or json_out)  # JSON: stdout holds it alone
    kept = store_path != NO_STORE
    with ExitStack() as resources:
        if not kept:  # a store of this run only, gone when it ends: nothing kept, no cache
            store_path = str(Path(resources.enter_context(TemporaryDirectory(prefix="tracescore-"))) / "run.db")
        parts = build_platform(
            config,
            RateLimiter(None),
            resources,
            kind=request.kind,
            path=request.path,
            write_back=request.write_back,
            overrides=request.overrides,
            download=request.download,
        )
        run, summary, scoring = _score(parts, request, recipe_options, store_path=store_path, out=out,
                                       tally=json_out or not quiet, quiet=quiet, workers=workers or cores())
    stored = store_path if kept else None
    finish(run, summary, scoring, parts, console, quiet=quiet or json_out, store_path=stored, out=out)
    if json_out:
        click.echo(json.dumps(as_json(run, summary, scoring, parts, stored, out), ensure_ascii=False))
    end_of(run, scoring, parts, quiet=quiet)


def _request(
    kind: str,
    traces: str | None,
    window_from: str | None,
    window_to: str | None,
    write_back: bool | None,
    overrides: dict[str, Any],
) -> _Request:
    """Check which options go with which source (a file platform, or a platform's downloaded file, takes TRACES; the
    others a window)."""
    download = traces is not None and not registry.get(kind).file and registry.get(kind).download is not None
    if registry.get(kind).file or download:
        if traces is None:
            windowed = "|".join(n for n in registry.names() if not registry.get(n).file)
            raise click.UsageError(f"missing TRACES: give a {kind} file (or '-') or choose --source {windowed}")
        platform_only = [("--from", window_from), ("--to", window_to), ("--write-back", write_back)] + [
            ("--" + name.replace("_", "-").replace("tags", "tag"), value or None) for name, value in overrides.items()
        ]
        for flag, value in platform_only:
            if value is not None:
                raise click.BadParameter(f"{flag} applies to platform sources only", param_hint=flag)
        return _Request(kind, traces, EVERYTHING, None, False, {}, download)
    if traces is not None:
        raise click.UsageError(
            f"TRACES {traces!r} is for a file source (--source {registry.DEFAULT_SOURCE}); --source {kind} reads"
            " --from/--to"
        )
    check_platform_options(kind, overrides, "score")
    start = _parse_time("--from", window_from, kind)
    end = _parse_time("--to", window_to, kind, default=datetime.now(UTC))
    if end <= start:  # a usage error, found before anything is read
        raise click.BadParameter(f"{_iso(end)} is not after --from {_iso(start)}: an empty window", param_hint="--to")
    return _Request(kind, None, start, end, True if write_back is None else write_back, overrides)


def _parse_time(flag: str, value: str | None, kind: str, default: datetime | None = None) -> datetime:
    """ISO 8601 date or datetime; no zone means UTC (the unit the platforms store)."""
    if value is None:
        if default is None:
            raise click.BadParameter(f"required with --source {kind}, e.g. 2026-11-20T00:00:00Z", param_hint=flag)
        return default
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO 8601 time, e.g. 2026-11-20T00:00:00Z", param_hint=flag
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _score(
    parts: Parts,
    request: _Request,
    options: Options,
    *,
    store_path: str,
    out: str | None,
    tally: bool,
    quiet: bool,
    workers: int,
) -> tuple[OneShot, Summary, Scoring]:
    """The one-shot run on the engine, folding each result into the stage table and the judge's budget list.

    Without a judge (CPU-bound) and with ``workers`` > 1 it scores in that many processes; with a judge, in
    ``[job] judge_concurrency`` threads of this one, one judge each (as backfill: usage, cache, budget shared)."""
    summary = Summary()
    store = Store(store_path)
    recipe = build_recipe(options, store_path, opened=store)
    for note in recipe.notes:
        click.echo(f"warning: {note}", err=True)
    scoring = Scoring(recipe)
    parts.adapter = labelled(parts.adapter, store_path)  # reviewer-entered labels (#12), as on every path
    progress = Progress(request.path, quiet=quiet)

    # a quiet run renders no table (``_finish``), so its lines are not folded into one (~5 us a light trace) unless
    # they are shown as JSON; the traces the judge's budget left unjudged are looked for only where there is a judge
    # (``Scoring`` reads them then)
    budget = scoring.judge is not None

    def on_results(done: int, batch: list[Scored]) -> None:
        if tally or budget:
            add, unjudged = summary.add, scoring.unjudged
            for scored in batch:
                data = scored.data
                if data is None:  # scored in a worker process, which folded its chunk's lines into one digest
                    if scored.digest is not None:
                        summary.merge(scored.digest)
                    continue
                if tally:
                    add(data)
                reason = data["missing"].get(GROUNDING_RATE)
                if reason is not None and declared_reason(reason) == Reasons.BUDGET:
                    unjudged.append(str(data["trace_id"]))
        progress.update(done)

    digest = summarize if tally else _untallied
    plan = recipe.processes(parts.adapter, digest=digest) if workers > 1 else None  # CPU-bound: no judge
    try:
        run = score_once(
            parts,
            (request.start, request.end),
            recipe.scorers,
            store,
            workers=workers if plan is not None else recipe.threads,
            plan=plan,
            out=out,
            on_results=on_results,
            counted=progress.counted,
            extra_summary=scoring.as_dict,
            carry=options.carry_evidence,
        )
    finally:
        progress.close()
        store.close()
        recipe.close()
    return run, summary, scoring


def _untallied(lines: list[dict[str, Any]]) -> None:
    """A quiet run's digest of a worker's chunk: nothing (no table is rendered), and the lines need not come back."""
    return None
