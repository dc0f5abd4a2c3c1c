"""The ``tracescore`` command: parse options, call the library, turn its errors into one-line messages."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from tracescore import __version__
from tracescore.adapters import get_adapter
from tracescore.errors import ConfigError, TracescoreError
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.judge.protocol import Judge
from tracescore.pipeline import RunCounts, score_records
from tracescore.report import Summary, render_terminal
from tracescore.result import TraceResult
from tracescore.scorers import Scorer, default_scorers
from tracescore.scorers.grounding import BUDGET_REASON, NO_JUDGE, grounding_scorer
from tracescore.sinks import JsonlSink, Store
from tracescore.sources.jsonl import Record, read_jsonl

__all__ = ["main"]

EXIT_INPUT_ERRORS = 1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracescore")
def main() -> None:
    """Whose bug is it? Score search-agent traces stage by stage: retrieval, grounding, citations, answer."""


@main.command()
@click.argument("traces", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--out", type=click.Path(dir_okay=False), help="Write one JSON result line per trace here.")
@click.option(
    "--store",
    "store_path",
    default="tracescore.db",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Local SQLite store that keeps every run, result and citation row.",
)
@click.option(
    "-k",
    "--k",
    "k",
    default=5,
    show_default=True,
    type=click.IntRange(min=1),
    help="Cut-off of retrieval.recall_at_{k}; part of the score name.",
)
@click.option(
    "--final-answer-prefix",
    default="FINAL ANSWER:",
    show_default=True,
    help="Score only the text after this marker when present (empty to disable).",
)
@click.option("--quiet", "-q", is_flag=True, help="No tables, only errors.")
@click.option(
    "--no-judge",
    is_flag=True,
    help="Skip the judged stages (grounding, citation support) even with ANTHROPIC_API_KEY set.",
)
@click.option("--judge-model", default=DEFAULT_MODEL, show_default=True, help="Anthropic model of the judge.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    default=None,
    metavar="USD",
    help="Stop judging (between traces) once the judge's estimated spend reaches this; the rest stay unjudged.",
)
@click.option(
    "--source",
    type=click.Choice(["jsonl", "langfuse", "langsmith"]),
    default="jsonl",
    show_default=True,
    help="Where traces come from: a JSONL file (TRACES), a Langfuse project (keys from LANGFUSE_* variables) or a "
    "LangSmith project (--project; LANGSMITH_API_KEY, LANGSMITH_ENDPOINT).",
)
@click.option("--project", help="LangSmith: the project (session) name whose root runs are scored.")
@click.option(
    "--extend-trace-retention",
    is_flag=True,
    default=None,
    help="LangSmith: let feedback upgrade each trace to extended (400-day, billed) retention. Off by default.",
)
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
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="tracescore.toml with [mapping] and platform sections (default: ./tracescore.toml when present).",
)
def score(
    traces: str | None,
    out: str | None,
    store_path: str,
    k: int,
    final_answer_prefix: str,
    quiet: bool,
    no_judge: bool,
    judge_model: str,
    max_cost: float | None,
    source: str,
    window_from: str | None,
    window_to: str | None,
    environment: tuple[str, ...],
    trace_name: str | None,
    tags: tuple[str, ...],
    write_back: bool | None,
    config_path: str | None,
    project: str | None = None,
    extend_trace_retention: bool | None = None,
) -> None:
    """Score traces stage by stage and print the stage contingency table.

    TRACES is a JSONL file of canonical traces (``-`` for stdin) for ``--source jsonl``; with ``--source langfuse``
    the traces of the window ``--from``..``--to`` are read from Langfuse and, unless ``--no-write-back``, each score
    is written back to its trace.
    """
    if source == "jsonl":
        if traces is None:
            raise click.UsageError("missing TRACES: give a JSONL file (or '-') or choose --source langfuse")
        platform_only = (
            ("--from", window_from),
            ("--to", window_to),
            ("--write-back", write_back),
            ("--environment", environment or None),
            ("--trace-name", trace_name),
            ("--tag", tags or None),
            ("--project", project),
            ("--extend-trace-retention", extend_trace_retention),
        )
        for flag, value in platform_only:
            if value is not None:
                raise click.BadParameter(f"{flag} applies to platform sources only", param_hint=flag)
    elif traces is not None:
        raise click.UsageError(f"TRACES {traces!r} is for --source jsonl; --source {source} reads --from/--to")
    options = _ScoringOptions(k, final_answer_prefix, no_judge, judge_model, max_cost)
    if source == "langsmith":
        _score_langsmith(
            out=out,
            store_path=store_path,
            options=options,
            quiet=quiet,
            project=project,
            window_from=window_from,
            window_to=window_to,
            write_back=True if write_back is None else write_back,
            extend_trace_retention=extend_trace_retention,
            config_path=config_path,
        )
        return
    if source == "langfuse":
        _score_langfuse(
            out=out,
            store_path=store_path,
            options=options,
            quiet=quiet,
            window_from=window_from,
            window_to=window_to,
            filters={"environment": environment, "trace_name": trace_name, "tags": tags},
            write_back=True if write_back is None else write_back,
            config_path=config_path,
        )
        return
    assert traces is not None
    console = Console(stderr=False, quiet=quiet, width=max(120, Console().width))
    counts = RunCounts()
    summary = Summary()
    scoring: _Scoring | None = None
    try:
        total = _size(traces)
        store = Store(store_path)
        scoring = _scoring(store, options)
        run_id = store.start_run("score", source=f"jsonl:{traces}")
        sink = JsonlSink(out) if out else None
        progress = Progress(
            TextColumn("scoring"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
            disable=quiet or total is None or total < 1_000_000,
        )
        with progress:
            task = progress.add_task("score", total=total)
            records = _counted(read_jsonl(traces), progress, task)
            _record(
                score_records(records, get_adapter("jsonl"), scoring.scorers, counts),
                store,
                run_id,
                sink,
                summary,
                scoring,
            )
        if sink:
            sink.close()
        store.finish_run(run_id, counts.as_dict() | {"results": out} | scoring.as_dict(), status="done")
        store.close()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if scoring is not None:
            scoring.close()
    render_terminal(summary, console)
    scoring.print_usage(console)
    if not quiet:
        console.print(f"run {run_id} stored in {store_path}" + (f"; results in {out}" if out else ""), highlight=False)
    if counts.failed:
        click.echo(f"{counts.failed} of {counts.seen} lines could not be scored (see above)", err=True)
        sys.exit(EXIT_INPUT_ERRORS)


@dataclass(frozen=True)
class _ScoringOptions:
    """What every ``score`` source shares: the deterministic stages' options and the judge's."""

    k: int
    final_answer_prefix: str
    no_judge: bool
    judge_model: str
    max_cost: float | None


@dataclass
class _Scoring:
    """The scorers of one run and the judge they share: its usage, the traces left unjudged, closing it."""

    scorers: list[Scorer]
    judge: Judge | None
    max_cost: float | None
    unjudged: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        if self.judge is None:
            return {}
        return {"judge": self.judge.usage.as_dict() | {"model": self.judge.model}, "unjudged": self.unjudged}

    def print_usage(self, console: Console) -> None:
        if self.judge is None:
            return
        console.print(self.judge.usage.line(), highlight=False)
        if self.unjudged:
            shown = ", ".join(self.unjudged[:10])
            more = f" (+{len(self.unjudged) - 10} more)" if len(self.unjudged) > 10 else ""
            click.echo(
                f"judge budget reached (--max-cost {self.max_cost}): {len(self.unjudged)} traces left unjudged:"
                f" {shown}{more}",
                err=True,
            )

    def close(self) -> None:
        if self.judge is not None and callable(getattr(self.judge, "close", None)):
            self.judge.close()  # type: ignore[attr-defined]


def _scoring(store: Store, options: _ScoringOptions) -> _Scoring:
    """Deterministic scorers plus the judged ones (judge cached in ``store``, or absent with the reason)."""
    judge, no_judge_reason = _build_judge(options.no_judge, options.judge_model, store)
    if judge is not None and options.max_cost is not None and not judge.usage.priced:
        raise ConfigError(
            f"--max-cost needs a price for judge model {options.judge_model!r}, which is not in the price table;"
            f" use a priced model (e.g. {DEFAULT_MODEL!r}) or drop --max-cost"
        )
    scorers = default_scorers(k=options.k, final_answer_prefix=options.final_answer_prefix or None) + [
        grounding_scorer(judge=judge, no_judge_reason=no_judge_reason, max_cost=options.max_cost)
    ]
    return _Scoring(scorers, judge, options.max_cost)


def _record(
    results: Iterable[TraceResult],
    store: Store,
    run_id: str,
    sink: JsonlSink | None,
    summary: Summary,
    scoring: _Scoring,
) -> None:
    """Fold each result into the summary, the store (committed every 500) and ``--out``."""
    for n, result in enumerate(results, start=1):
        summary.add(result.to_json())
        if result.missing.get("grounding.rate", "").startswith(BUDGET_REASON):
            scoring.unjudged.append(str(result.trace_id))
        store.add_result(run_id, result)
        if sink:
            sink.write(result)
        if n % 500 == 0:
            store.commit()


def _build_judge(no_judge: bool, model: str, store: Store) -> tuple[Judge | None, str]:
    """The judge for this run (cached in the store), or None with the reason its scores will be absent."""
    if no_judge:
        return None, "judge turned off (--no-judge)"
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return None, NO_JUDGE
    from tracescore.judge.anthropic import AnthropicJudge
    from tracescore.judge.cache import CachingJudge

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            judge = AnthropicJudge(model=model)
        except ImportError as exc:
            click.echo(f"warning: the judge needs the anthropic SDK ({exc}): pip install 'tracescore[judge]'", err=True)
            return None, "judge unavailable: anthropic SDK not installed"
        except ConfigError:
            raise
    for warning in caught:
        click.echo(f"warning: {warning.message}", err=True)
    return CachingJudge(judge, store), NO_JUDGE


def _parse_time(flag: str, value: str | None, default: datetime | None = None) -> datetime:
    """ISO 8601 date or datetime; no zone means UTC (the unit Langfuse and LangSmith store)."""
    if value is None:
        if default is None:
            raise click.BadParameter("required with --source langfuse, e.g. 2026-11-20T00:00:00Z", param_hint=flag)
        return default
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO 8601 time, e.g. 2026-11-20T00:00:00Z", param_hint=flag
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _score_platform(
    source: str,
    results: Callable[[list[Scorer]], Iterable[TraceResult]],
    run_summary: Callable[[], dict[str, Any]],
    *,
    out: str | None,
    store_path: str,
    options: _ScoringOptions,
    console: Console,
) -> str:
    """What every platform ``score`` shares: store, judge, result loop, ``--out`` and tables; returns the run id."""
    summary = Summary()
    scoring: _Scoring | None = None
    try:
        store = Store(store_path)
        scoring = _scoring(store, options)
        run_id = store.start_run("score", source=source)
        sink = JsonlSink(out) if out else None
        status = "failed"
        try:
            _record(results(scoring.scorers), store, run_id, sink, summary, scoring)
            status = "done"
        finally:
            if sink:
                sink.close()
            store.finish_run(run_id, run_summary() | {"results": out} | scoring.as_dict(), status=status)
            store.close()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if scoring is not None:
            scoring.close()
    render_terminal(summary, console)
    scoring.print_usage(console)
    return run_id


def _score_langfuse(
    *,
    out: str | None,
    store_path: str,
    options: _ScoringOptions,
    quiet: bool,
    window_from: str | None,
    window_to: str | None,
    filters: dict[str, Any],
    write_back: bool,
    config_path: str | None,
) -> None:
    """``score --source langfuse``: read the window, score, write back, store, print the table and the write report."""
    from tracescore.config import load_config
    from tracescore.langfuse_client import LangfuseCredentials, make_client
    from tracescore.langfuse_run import LangfuseRun, score_langfuse_window
    from tracescore.sources.langfuse import LangfuseWindow

    start = _parse_time("--from", window_from)
    end = _parse_time("--to", window_to, default=datetime.now(UTC))
    console = Console(stderr=False, quiet=quiet, width=max(120, Console().width))
    run = LangfuseRun()
    try:
        config = load_config(config_path)
        window = LangfuseWindow.from_settings(start, end, config.langfuse, **filters)
        credentials = LangfuseCredentials.from_env()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc

    def results(scorers: list[Scorer]) -> Iterator[TraceResult]:
        with make_client(credentials, timeout=config.langfuse.timeout) as client:
            yield from score_langfuse_window(client, window, scorers, config=config, write_back=write_back, run=run)

    source = f"langfuse:{credentials.base_url} {start.isoformat()}..{end.isoformat()}"
    run_id = _score_platform(
        source, results, run.as_dict, out=out, store_path=store_path, options=options, console=console
    )
    if not quiet:
        read = run.read
        console.print(
            f"read {read.traces} traces ({read.rows} observations, {read.requests} requests, {read.retries} retried)"
            + (
                f"; wrote {run.write.accepted} scores in {run.write.requests} requests ({run.write.retried} retried)"
                if run.write is not None
                else "; no write-back"
            ),
            highlight=False,
        )
        console.print(f"run {run_id} stored in {store_path}" + (f"; results in {out}" if out else ""), highlight=False)
    rejected = run.write.rejected if run.write is not None else []
    for rejection in rejected:
        click.echo(f"rejected: {rejection}", err=True)
    for note in run.read.notes + (run.write.notes if run.write is not None else []):
        click.echo(f"note: {note}", err=True)
    counts = run.counts
    if counts.failed:
        click.echo(f"{counts.failed} of {counts.seen} traces could not be scored", err=True)
    if rejected:
        click.echo(f"{len(rejected)} score(s) rejected by Langfuse (see above)", err=True)
    if counts.failed or rejected:
        sys.exit(EXIT_INPUT_ERRORS)


def _score_langsmith(
    *,
    out: str | None,
    store_path: str,
    options: _ScoringOptions,
    quiet: bool,
    project: str | None,
    window_from: str | None,
    window_to: str | None,
    write_back: bool,
    extend_trace_retention: bool | None,
    config_path: str | None,
) -> None:
    """``score --source langsmith``: read the window, score, write feedback, store, print the table and the report."""
    from tracescore.config import load_config
    from tracescore.langsmith_run import LangSmithRun, score_langsmith_window
    from tracescore.sources.langsmith import make_client

    if not project:
        raise click.BadParameter("required with --source langsmith: the project name", param_hint="--project")
    if window_from is None:
        raise click.BadParameter("required with --source langsmith, e.g. 2026-11-20T00:00:00Z", param_hint="--from")
    start = _parse_time("--from", window_from)
    end = _parse_time("--to", window_to, default=datetime.now(UTC))
    console = Console(stderr=False, quiet=quiet, width=max(120, Console().width))
    run = LangSmithRun()
    try:
        config = load_config(config_path)
        settings = config.langsmith
        client = make_client(timeout_ms=int(settings.timeout * 1000), retries=settings.retries)
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc

    def results(scorers: list[Scorer]) -> Iterator[TraceResult]:
        yield from score_langsmith_window(
            client,
            project,
            start,
            end,
            scorers,
            config=config,
            write_back=write_back,
            extend_trace_retention=extend_trace_retention,
            run=run,
        )

    source = f"langsmith:{project} {start.isoformat()}..{end.isoformat()}"
    run_id = _score_platform(
        source, results, run.as_dict, out=out, store_path=store_path, options=options, console=console
    )
    written = run.write
    if not quiet:
        console.print(
            f"read {run.counts.seen} traces from LangSmith project {project!r}"
            + (
                f"; feedback: {written['created']} created, {written['updated']} updated, "
                f"{written['unchanged']} unchanged, {written['rejected']} not written "
                f"({written['requests']} requests)"
                if written is not None
                else "; no write-back"
            ),
            highlight=False,
        )
        console.print(f"run {run_id} stored in {store_path}" + (f"; results in {out}" if out else ""), highlight=False)
    for rejection in run.rejected:
        click.echo(f"not written: {rejection}", err=True)
    counts = run.counts
    if counts.failed:
        click.echo(f"{counts.failed} of {counts.seen} traces could not be scored", err=True)
    if run.rejected:
        click.echo(f"{len(run.rejected)} feedback(s) not written to LangSmith (see above)", err=True)
    if counts.failed or run.rejected:
        sys.exit(EXIT_INPUT_ERRORS)


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path) if path != "-" else None
    except OSError:
        return None  # read_jsonl raises the clear error


def _counted(records: Iterator[Record], progress: Progress, task: TaskID) -> Iterator[Record]:
    """Advance the progress bar by each record's size in bytes as it streams past."""
    for record in records:
        progress.advance(task, record.size)
        yield record


EXIT_GATE_FAILED = 1
EXIT_GATE_BAD_CONFIG = 2  # a bad option, [gate] value or score name (click's usage errors exit 2 too)
EXIT_GATE_CANNOT_RUN = 6  # a results file, baseline or store missing, or holding no scored trace
REPORT_FORMATS = ("terminal", "markdown", "json", "html")


class _CannotRun(click.ClickException):
    """report/gate could not run: a results file, baseline or store missing, unwritable or holding no scored trace."""

    exit_code = EXIT_GATE_CANNOT_RUN


class _BadGateConfig(click.ClickException):
    """A bad [gate] value or score name, exiting like click's usage errors."""

    exit_code = EXIT_GATE_BAD_CONFIG


def _cannot_run(exc: TracescoreError) -> click.ClickException:
    """A report/gate error as a one-line message with its exit code: 2 bad config, 6 could not run."""
    return _BadGateConfig(str(exc)) if isinstance(exc, ConfigError) else _CannotRun(str(exc))


_F = TypeVar("_F", bound=Callable[..., Any])


def _store_option(f: _F) -> _F:
    return click.option(
        "--store",
        "store_path",
        default="tracescore.db",
        show_default=True,
        type=click.Path(dir_okay=False),
        help="Local store to read run:… specs from.",
    )(f)


def _write(text: str, out: str | None) -> None:
    if not out or out == "-":
        click.echo(text, nl=False)
        return
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise _CannotRun(f"cannot write {out!r}: {exc.strerror}") from exc


@main.command()
@click.argument("results")
@_store_option
@click.option("--group-by", metavar="FIELD", help="One column per value of this field, e.g. metadata.provider.")
@click.option(
    "--format", "fmt", type=click.Choice(REPORT_FORMATS), default="terminal", show_default=True, help="Output format."
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
def report(results: str, store_path: str, group_by: str | None, fmt: str, out: str | None) -> None:
    """Report a result file or stored run (run:latest, run:ID): stage cells with ids, rates, the work queue."""
    import json

    from tracescore.render import render_html, render_markdown, render_report_terminal
    from tracescore.report import build_report, report_to_json
    from tracescore.runs import results_from

    try:
        label, lines = results_from(results, store_path)
        built = build_report(lines, group_by=group_by, source=label)
    except TracescoreError as exc:
        raise _cannot_run(exc) from exc
    if fmt == "terminal":
        if out:
            with open(out, "w", encoding="utf-8") as fh:
                render_report_terminal(built, Console(file=fh, width=160, force_terminal=False))
        else:
            render_report_terminal(built, Console(width=max(120, Console().width)))
    elif fmt == "markdown":
        _write(render_markdown(built), out)
    elif fmt == "json":
        _write(json.dumps(report_to_json(built), indent=2, ensure_ascii=False) + "\n", out)
    else:
        _write(render_html(built), out)


def _limits(values: tuple[str, ...]) -> dict[str, float]:
    from tracescore.gate import parse_limit

    out: dict[str, float] = {}
    for text in values:
        try:
            name, value = parse_limit(text)
        except TracescoreError as exc:
            raise click.BadParameter(str(exc)) from exc
        out[name] = value
    return out


@main.command()
@click.argument("results")
@click.option("--baseline", "baselines", multiple=True, help="Baseline result file or run:…; repeat for a noise band.")
@click.option("--min", "minimums", multiple=True, metavar="NAME=VALUE", help="Lowest allowed mean of a score.")
@click.option("--max", "maximums", multiple=True, metavar="NAME=VALUE", help="Highest allowed mean of a score.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Read the [gate] table of this file (default: ./tracescore.toml when present).",
)
@click.option("--allow-unread/--no-allow-unread", default=None, help="Let cited-but-never-fetched URLs pass (warn).")
@click.option("--tolerance", type=click.FloatRange(min=0), help="Slack added to the baseline noise band (absolute).")
@click.option("--case-key", metavar="FIELD", help="Field naming the case across runs (default trace_id).")
@click.option("--markdown", "markdown_out", type=click.Path(dir_okay=False), help="Write the Markdown summary here.")
@click.option("--junit", "junit_out", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
@_store_option
def gate(
    results: str,
    baselines: tuple[str, ...],
    minimums: tuple[str, ...],
    maximums: tuple[str, ...],
    config_path: str | None,
    allow_unread: bool | None,
    tolerance: float | None,
    case_key: str | None,
    markdown_out: str | None,
    junit_out: str | None,
    store_path: str,
) -> None:
    """Gate RESULTS stage by stage: thresholds, no newly failing case, no fabricated or unread citation."""
    from tracescore.gate import GateConfig, load_gate_config, run_gate
    from tracescore.render import render_gate_markdown, render_junit
    from tracescore.runs import results_from

    mins, maxs = _limits(minimums), _limits(maximums)
    try:
        if config_path is None and os.path.isfile("tracescore.toml"):
            config_path = "tracescore.toml"
        base = load_gate_config(config_path) if config_path else GateConfig()
        config = base.merged(mins, maxs, allow_unread=allow_unread, tolerance=tolerance, case_key=case_key)
        label, current = results_from(results, store_path)
        loaded = [results_from(spec, store_path) for spec in baselines]
        outcome = run_gate(
            current, [lines for _, lines in loaded], config, source=label, baseline_names=[n for n, _ in loaded]
        )
    except TracescoreError as exc:
        raise _cannot_run(exc) from exc
    summary = render_gate_markdown(outcome)
    click.echo(summary, nl=False)
    if markdown_out:
        _write(summary, markdown_out)
    if junit_out:
        _write(render_junit(outcome), junit_out)
    if not outcome.passed:
        sys.exit(EXIT_GATE_FAILED)


from tracescore.cli_job import backfill, init, run  # noqa: E402 - the job commands (issue #6)

main.add_command(run)
main.add_command(backfill)
main.add_command(init)

if __name__ == "__main__":  # pragma: no cover
    main()
