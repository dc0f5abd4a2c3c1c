"""``tracescore run``, ``backfill`` and ``init``: the production job, thin over ``tracescore.engine``.

Exit status: the error classes' codes and the outcomes of ``cli/exits.py`` (the same for every command). The last
line on stderr says why in one line; the run summary on stdout is a few lines on a terminal, one JSON line when piped
or with ``--format json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from tracescore.cli.exits import EXIT_GAPS, end
from tracescore.cli.job_summary import as_json, emit, finish, format_option, given_up_line
from tracescore.cli.paths import write_text
from tracescore.cli.platform_options import check_platform_options, platform_options
from tracescore.config import DEFAULT_CONFIG_FILE, load_config
from tracescore.engine.batch import BATCH_DISCOUNT
from tracescore.engine.estimate import dry_run as estimate_dry_run
from tracescore.engine.gaps import check_gaps as find_gaps
from tracescore.engine.runner import backfill_job, run_job
from tracescore.engine.setup import JobSetup, build_setup
from tracescore.errors import ConfigError, LockError, TracescoreError
from tracescore.judge.providers import refuse_batch
from tracescore.platforms import registry
from tracescore.report.safe import console as safe_console
from tracescore.starter import starter_config
from tracescore.store.db import Store
from tracescore.store.state import JobState, MarkReader


class _When(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """An ISO 8601 date or time; without an offset it is UTC."""

    name = "datetime"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 date or time (e.g. 2026-11-01, 2026-11-01T12:00Z)", param, ctx)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


WHEN = _When()
_config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True),
    help="tracescore.toml to read (default: ./tracescore.toml).",
)


def _setup(config_path: str | None, judge_sample: float | None = None) -> JobSetup:
    config = load_config(config_path)
    if config.path is None:  # the job's source, store and write-back live in the file: no guessing them
        platforms = "|".join(n for n in registry.names() if not registry.get(n).file)
        raise ConfigError(
            f"no {DEFAULT_CONFIG_FILE} here and no --config: write one with `tracescore init` (a JSONL traces file)"
            f" or `tracescore init --platform {platforms}`, then run again"
        )
    setup = build_setup(config, judge_sample=judge_sample)
    click.get_current_context().call_on_close(setup.close)
    for note in setup.notes:  # the recipe's warnings, as ``score`` prints them
        click.echo(f"warning: {note}", err=True)
    return setup


@click.command()
@_config_option
@click.option("--check-gaps", is_flag=True, help="Score nothing: list traces older than the lookback no run scored.")
@click.option("--since", type=WHEN, help="Start the window here instead of at the watermark minus the lookback.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@format_option
def run(config_path: str | None, check_gaps: bool, since: datetime | None, quiet: bool, fmt: str | None) -> None:
    """Score traces newer than the stored watermark minus the lookback, write back, advance the watermark."""
    setup = _setup(config_path)
    if check_gaps:
        report = find_gaps(setup, since=since)
        if report.window is None:
            end(EXIT_GAPS, f"no completed run of {setup.source_key} yet: nothing to check")
        for trace_id, moment in report.gaps:
            emit({"gap": trace_id, "timestamp": moment.isoformat() if moment else None})
        for reason in report.unreadable:
            emit({"unreadable": reason})
        for trace_id, moment, tries in report.given_up:
            emit({"given_up": trace_id, "timestamp": moment.isoformat() if moment else None, "judge_tries": tries})
        assert report.window is not None
        emit(
            {
                "check_gaps": True,
                "source": setup.source_key,
                "window": [w.isoformat() for w in report.window],
                "checked": report.checked,
                "gaps": len(report.gaps),
                "unreadable": len(report.unreadable),
                "given_up": len(report.given_up),
            }
        )
        if report.gaps or report.unreadable:
            end(
                EXIT_GAPS,
                f"{len(report.gaps) + len(report.unreadable)} traces older than the lookback were never"
                " scored; score them with `tracescore backfill --from … --to …` or raise [job] lookback",
            )
        if report.given_up:
            why = given_up_line(len(report.given_up))
            end(EXIT_GAPS, f"{why}; judge them with `tracescore backfill --from … --to …`")
        return
    with _stopped("run stopped"):
        outcome = run_job(setup, since=since)
    if not outcome.summary.get("seen"):
        window = outcome.summary.get("window") or ["?", "?"]
        click.echo(
            f"tracescore: the window {window[0]} .. {window[1]} of {setup.source_key} held 0 traces; nothing scored."
            " To score older traces: `tracescore run --since 2026-11-01T00:00Z` (once) or"
            " `tracescore backfill --from … --to …`",
            err=True,
        )
    finish(outcome, fmt, setup.judge_off)


@contextmanager
def _stopped(what: str) -> Iterator[None]:
    """A failure that stopped the job says so first (``stopped: …``); its class keeps its exit code (``cli/main.py``).
    A held lock and a bad config stopped nothing: their message is left as it is."""
    try:
        yield
    except (LockError, ConfigError):
        raise
    except TracescoreError as exc:
        exc.args = (f"{what}: {exc}",)
        raise


@click.command()
@_config_option
@click.option("--from", "start", type=WHEN, help="Oldest trace time to score (inclusive).")
@click.option("--to", "stop", type=WHEN, help="Newest trace time to score (exclusive).")
@click.option("--resume", is_flag=True, help="Continue the last unfinished backfill (same window without --from/--to).")
@click.option("--dry-run", is_flag=True, help="Count traces and estimate judge calls, tokens and cost; call nothing.")
@click.option("--judge-batch", is_flag=True, help="Judge each slice through the provider's batch API (half the price).")
@click.option("--judge-sample", type=click.FloatRange(min=0, max=1), default=None, metavar="RATE",
              help="Judge this share of traces, chosen by a hash of the trace id (plus flagged ones).")
@click.option("--judge-only", is_flag=True,
              help="Judge only the traces a judge budget left out; write only their judged scores.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@format_option
def backfill(
    config_path: str | None,
    start: datetime | None,
    stop: datetime | None,
    resume: bool,
    dry_run: bool,
    judge_batch: bool,
    quiet: bool,
    judge_sample: float | None = None,
    judge_only: bool = False,
    fmt: str | None = None,
) -> None:
    """Re-score history in [--from, --to): progress, judge cost and ETA; a killed backfill resumes where it stopped."""
    if start is not None and stop is not None and stop <= start:  # a usage error, before the config is read
        raise click.BadParameter(f"{stop.isoformat()} is not after --from {start.isoformat()}", param_hint="--to")
    if judge_only and (judge_batch or dry_run):
        raise click.UsageError("--judge-only cannot be combined with --judge-batch or --dry-run")
    setup = _setup(config_path, judge_sample)
    if judge_batch:
        refuse_batch(setup.judge_provider)  # Anthropic's Message Batches or OpenAI's Batch API (judge/providers.py)
    if dry_run:
        _dry_run(setup, start, stop, judge_batch, as_json=as_json(fmt))
        return
    bar = _Bar(quiet)
    with _stopped("backfill stopped (run it again to resume)"), bar:
        outcome = backfill_job(
            setup,
            start=start,
            stop=stop,
            resume=resume,
            judge_batch=judge_batch,
            on_progress=bar.update,
            on_start=bar.start,
            judge_only=judge_only,
        )
    finish(outcome, fmt, setup.judge_off)


def _dry_run(
    setup: JobSetup, start: datetime | None, stop: datetime | None, judge_batch: bool, *, as_json: bool
) -> None:
    if start is None or stop is None or start >= stop:
        raise ConfigError("--dry-run needs --from and --to, with --from before --to")
    assert start is not None and stop is not None
    windows = [(start, stop)]  # one listing of the window: read slice by slice it would cost a request per slice
    seen: list[str] = []
    with _stopped("dry run stopped"):
        done = _done_lookup(setup, start, stop)

        def counted(trace_id: str) -> bool:
            seen.append(trace_id)
            return bool(done(trace_id)) if done is not None else False

        estimate = estimate_dry_run(
            setup.source,
            setup.adapter,
            windows,
            window=(start, stop),
            done=counted,
            model=setup.judge_model,
            rubrics=setup.rubrics,
            judges=setup.judges,
            redact=setup.redact,
            plan=setup.scorer_plan,
        )
    removals = _removals(setup, seen)
    if judge_batch and estimate.cost_usd is not None:
        estimate.cost_usd *= BATCH_DISCOUNT
    if as_json:  # on a terminal the line below says it
        emit(estimate.as_dict() | {"source": setup.source_key, "judge_off": setup.judge_off,
                                    "judge_batch": judge_batch, "removals": removals})  # fmt: skip
    cost = "unknown (no judge price table)" if estimate.cost_usd is None else f"~${estimate.cost_usd:.2f}"
    click.echo(
        f"{estimate.traces} traces ({estimate.already_done} already scored by a backfill of this window and setup,"
        f" {estimate.unreadable} unreadable"
        + ("" if estimate.not_sampled is None else f", {estimate.not_sampled} left out by judge_sample")
        + f"); judge estimate: {estimate.judge.calls} calls,"
        f" {estimate.judge.input_tokens} input + {estimate.judge.output_tokens} output tokens, {cost}"
        f" with {estimate.model}" + (f" (but the judge will not run: {setup.judge_off})" if setup.judge_off else ""),
        err=True,
    )


def _removals(setup: JobSetup, trace_ids: list[str]) -> dict[str, Any] | None:
    """What the write-back would remove from the platform: our scores on these traces, those superseded for sure."""
    if setup.sink is None or not Path(setup.store_path).exists():
        return None
    with Store(setup.store_path) as store:
        found = setup.sink.preview(store, trace_ids)
    if found is None:  # a sink that never removes anything
        return None
    click.echo(
        f"removals: {found['superseded']} of our {found['ours']} scores on these traces are superseded and would be"
        " removed once re-written; any that become absent on the re-score for a reason that does not apply (not a"
        " judge failure) would be removed too",
        err=True,
    )
    return dict(found)


def _done_lookup(setup: JobSetup, start: datetime, stop: datetime) -> Any:
    """``trace_id → already done?`` for an unfinished backfill of exactly this window (None when there is none)."""
    if not Path(setup.store_path).exists():
        return None
    store = Store(setup.store_path)
    job = JobState(store).backfill_of(setup.source_key, setup.fingerprint, start, stop)
    if job is None:
        store.close()
        return None
    marks = MarkReader(store)
    return lambda trace_id: marks.marked(job.scope, trace_id) is not None


class _Bar:
    """The backfill progress bar on stderr: slices done, traces, traces/s, judge cost so far, ETA."""

    def __init__(self, quiet: bool) -> None:
        self.progress = Progress(
            TextColumn("backfill"),
            BarColumn(bar_width=24),
            TextColumn(
                "{task.completed:.0f}/{task.total:.0f} slices, {task.fields[traces]} traces"
                " ({task.fields[rate]:.1f}/s, {task.fields[failed]} failed), judge ${task.fields[cost]:.2f}"
            ),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=safe_console(stderr=True),
            disable=quiet,
        )
        self.task = self.progress.add_task("backfill", total=1, traces=0, rate=0.0, failed=0, cost=0.0)
        self._done_before = 0

    def __enter__(self) -> _Bar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def start(self, job: Any, resumed: bool) -> None:
        left = len(job.windows())
        self._done_before = job.chunks - left
        self.progress.update(self.task, total=job.chunks, completed=self._done_before)
        if resumed and not left:
            self.progress.console.print(
                f"backfill {job.id} of this window and scoring setup is already complete: nothing to do"
                " (a change of scorers, k or judge model starts a new one)",
                highlight=False,
            )
        elif resumed:
            self.progress.console.print(
                f"resuming backfill {job.id}: {self._done_before}/{job.chunks} slices already done", highlight=False
            )

    def update(self, counts: Any) -> None:
        done = counts.scored + counts.failed
        rate = done / counts.duration_s if counts.duration_s else 0.0
        self.progress.update(
            self.task,
            completed=self._done_before + counts.windows_done,
            traces=done,
            rate=rate,
            failed=counts.failed,
            cost=counts.judge_cost_usd,
        )


@click.command()
@click.argument("path", default=DEFAULT_CONFIG_FILE, type=click.Path(dir_okay=False))
@click.option(
    "--platform",
    "--source",
    "kind",
    type=click.Choice(registry.names()),
    default=registry.DEFAULT_SOURCE,
    show_default=True,
    help="Where the job reads traces (and writes scores back to, for a platform): a JSONL file by default.",
)
@click.option("--traces", "traces_path", help=f"The traces file, for --platform {registry.DEFAULT_SOURCE}.")
@platform_options("init")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(path: str, kind: str, traces_path: str | None, force: bool, **platform: Any) -> None:
    """Write a commented starter tracescore.toml."""
    check_platform_options(kind, platform, "init", require=False)
    target = Path(path)
    if target.exists() and not force:
        raise ConfigError(f"{path} exists; pass --force to overwrite it")
    write_text(path, starter_config(kind, traces_path, project=platform.get("project")))
    then = f"run `tracescore run --config {path}`"
    if registry.get(kind).file:  # a file source needs no platform credentials (the judge's key stays optional)
        where = "" if traces_path else "point [source] path (now traces.jsonl) at your traces file, then "
        click.echo(f"wrote {path}: {where}{then} (no credentials needed; ANTHROPIC_API_KEY turns on the judged"
                   " stages)")  # fmt: skip
    else:
        click.echo(f"wrote {path}: set the {kind} credentials in the environment, then {then}")
