"""The ``tracescore`` command: parse options, call the library, turn its errors into one-line messages."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from tracescore import __version__
from tracescore.adapters import get_adapter
from tracescore.errors import TracescoreError
from tracescore.pipeline import RunCounts, score_records
from tracescore.report import Summary, render_terminal
from tracescore.scorers import default_scorers
from tracescore.sinks import JsonlSink, Store
from tracescore.sources.jsonl import read_jsonl

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
    "--source",
    type=click.Choice(["jsonl", "langfuse"]),
    default="jsonl",
    show_default=True,
    help="Where traces come from: a JSONL file (TRACES) or a Langfuse project (keys from LANGFUSE_* variables).",
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
    source: str,
    window_from: str | None,
    window_to: str | None,
    environment: tuple[str, ...],
    trace_name: str | None,
    tags: tuple[str, ...],
    write_back: bool | None,
    config_path: str | None,
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
        )
        for flag, value in platform_only:
            if value is not None:
                raise click.BadParameter(f"{flag} applies to platform sources only", param_hint=flag)
    elif traces is not None:
        raise click.UsageError(f"TRACES {traces!r} is for --source jsonl; --source {source} reads --from/--to")
    if source == "langfuse":
        _score_langfuse(
            out=out,
            store_path=store_path,
            k=k,
            final_answer_prefix=final_answer_prefix,
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
    scorers = default_scorers(k=k, final_answer_prefix=final_answer_prefix or None)
    counts = RunCounts()
    summary = Summary()
    try:
        total = os.path.getsize(traces) if traces != "-" else None
        store = Store(store_path)
        run_id = store.start_run("score", source=f"jsonl:{traces}")
        sink = JsonlSink(out) if out else None
        progress = Progress(
            TextColumn("scoring"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("bytes"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
            disable=quiet or total is None or total < 1_000_000,
        )
        with progress:
            task = progress.add_task("score", total=total)
            for n, result in enumerate(
                score_records(_counted(read_jsonl(traces), progress, task), get_adapter("jsonl"), scorers, counts),
                start=1,
            ):
                summary.add(result.to_json())
                store.add_result(run_id, result)
                if sink:
                    sink.write(result)
                if n % 500 == 0:
                    store.commit()
        if sink:
            sink.close()
        store.finish_run(run_id, counts.as_dict() | {"results": out}, status="done")
        store.close()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc
    render_terminal(summary, console)
    if not quiet:
        console.print(f"run {run_id} stored in {store_path}" + (f"; results in {out}" if out else ""), highlight=False)
    if counts.failed:
        click.echo(f"{counts.failed} of {counts.seen} lines could not be scored (see above)", err=True)
        sys.exit(EXIT_INPUT_ERRORS)


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


def _score_langfuse(
    *,
    out: str | None,
    store_path: str,
    k: int,
    final_answer_prefix: str,
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
    scorers = default_scorers(k=k, final_answer_prefix=final_answer_prefix or None)
    summary = Summary()
    run = LangfuseRun()
    try:
        config = load_config(config_path)
        window = LangfuseWindow.from_settings(start, end, config.langfuse, **filters)
        credentials = LangfuseCredentials.from_env()
        store = Store(store_path)
        run_id = store.start_run(
            "score", source=f"langfuse:{credentials.base_url} {start.isoformat()}..{end.isoformat()}"
        )
        sink = JsonlSink(out) if out else None
        status = "failed"
        try:
            with make_client(credentials, timeout=config.langfuse.timeout) as client:
                results = score_langfuse_window(client, window, scorers, config=config, write_back=write_back, run=run)
                for n, result in enumerate(results, start=1):
                    summary.add(result.to_json())
                    store.add_result(run_id, result)
                    if sink:
                        sink.write(result)
                    if n % 500 == 0:
                        store.commit()
            status = "done"
        finally:
            if sink:
                sink.close()
            store.finish_run(run_id, run.as_dict() | {"results": out}, status=status)
            store.close()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc
    render_terminal(summary, console)
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


def _counted(records, progress, task):  # type: ignore[no-untyped-def]
    for record in records:
        progress.advance(task, record.size)
        yield record


if __name__ == "__main__":  # pragma: no cover
    main()
