"""The ``tracescore`` command: parse options, call the library, turn its errors into one-line messages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # pragma: no cover
    from tracescore.adapters import Adapter
    from tracescore.sinks.langsmith import LangSmithSink
    from tracescore.sources.jsonl import Record

__all__ = ["main"]

EXIT_INPUT_ERRORS = 1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracescore")
def main() -> None:
    """Whose bug is it? Score search-agent traces stage by stage: retrieval, grounding, citations, answer."""


def _when(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    """An ISO 8601 time with a timezone (``Z`` allowed); a naive time is refused rather than guessed."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 time; e.g. 2026-11-20T00:00:00Z") from None
    if moment.tzinfo is None:
        raise click.BadParameter(f"{value!r} has no timezone; add one, e.g. {value}Z for UTC")
    return moment


@main.command()
@click.argument("traces", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--source",
    type=click.Choice(["jsonl", "langsmith"]),
    default="jsonl",
    show_default=True,
    help="Where traces come from: a JSONL file (TRACES) or a platform.",
)
@click.option("--project", help="LangSmith project (session) name to read root runs from (--source langsmith).")
@click.option("--from", "start", callback=_when, help="Start of the window, ISO 8601 with timezone (inclusive).")
@click.option("--to", "end", callback=_when, help="End of the window, ISO 8601 with timezone (exclusive; default now).")
@click.option("--write-back", is_flag=True, help="Write each score back to the platform (LangSmith: feedback per key).")
@click.option(
    "--extend-trace-retention",
    is_flag=True,
    help="LangSmith: let feedback upgrade the trace to extended (400-day, billed) retention. Off by default.",
)
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
def score(
    traces: str | None,
    source: str,
    project: str | None,
    start: datetime | None,
    end: datetime | None,
    write_back: bool,
    extend_trace_retention: bool,
    out: str | None,
    store_path: str,
    k: int,
    final_answer_prefix: str,
    quiet: bool,
) -> None:
    """Score traces (a JSONL file, ``-`` for stdin, or a platform window) and print the stage contingency table."""
    console = Console(stderr=False, quiet=quiet, width=max(120, Console().width))
    scorers = default_scorers(k=k, final_answer_prefix=final_answer_prefix or None)
    counts = RunCounts()
    summary = Summary()
    platform_sink: LangSmithSink | None = None
    records: Iterator[Record]
    if source == "jsonl" and traces is None:
        raise click.BadParameter("give a TRACES file (or - for stdin), or --source langsmith --project NAME")
    try:
        if source == "langsmith":
            records, adapter, platform_sink, label = _langsmith(project, start, end, write_back, extend_trace_retention)
            total = None
        else:
            assert traces is not None
            records, adapter, label = read_jsonl(traces), get_adapter("jsonl"), f"jsonl:{traces}"
            total = os.path.getsize(traces) if traces != "-" else None
        store = Store(store_path)
        run_id = store.start_run("score", source=label)
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
                score_records(_counted(records, progress, task), adapter, scorers, counts),
                start=1,
            ):
                summary.add(result.to_json())
                store.add_result(run_id, result)
                if sink:
                    sink.write(result)
                if platform_sink is not None and result.ok:
                    for rejection in platform_sink.write(result):
                        click.echo(f"not written: {rejection}", err=True)
                if n % 500 == 0:
                    store.commit()
        if platform_sink is not None:
            for rejection in platform_sink.flush():
                click.echo(f"not written: {rejection}", err=True)
        if sink:
            sink.close()
        written = platform_sink.summary() if platform_sink is not None else None
        store.finish_run(run_id, counts.as_dict() | {"results": out, "written": written}, status="done")
        store.close()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if platform_sink is not None:
            platform_sink.close()
    if written is not None and not quiet:
        console.print(
            f"LangSmith feedback: {written['created']} created, {written['updated']} updated, "
            f"{written['unchanged']} unchanged, {written['rejected']} not written",
            highlight=False,
        )
    render_terminal(summary, console)
    if not quiet:
        console.print(f"run {run_id} stored in {store_path}" + (f"; results in {out}" if out else ""), highlight=False)
    if counts.failed:
        click.echo(f"{counts.failed} of {counts.seen} traces could not be scored (see above)", err=True)
        sys.exit(EXIT_INPUT_ERRORS)
    if written is not None and written["rejected"]:
        sys.exit(EXIT_INPUT_ERRORS)


def _langsmith(
    project: str | None, start: datetime | None, end: datetime | None, write_back: bool, extend_trace_retention: bool
) -> tuple[Iterator[Record], Adapter, LangSmithSink | None, str]:
    """Records, adapter, sink (or None) and run label of a LangSmith window; the SDK is imported only here."""
    from datetime import UTC

    from tracescore.adapters.langsmith import langsmith_adapter
    from tracescore.config import load_config
    from tracescore.sinks.langsmith import LangSmithSink
    from tracescore.sources.langsmith import LangSmithSource, make_client

    if not project:
        raise click.BadParameter("--source langsmith needs --project NAME", param_hint="--project")
    if start is None:
        raise click.BadParameter("--source langsmith needs --from (e.g. 2026-11-20T00:00:00Z)", param_hint="--from")
    config = load_config()
    settings = config.langsmith
    client = make_client(timeout_ms=int(settings.timeout * 1000), retries=settings.retries)
    source = LangSmithSource(client, project=project, page_size=settings.page_size)
    records = source.records(start, end or datetime.now(UTC))
    sink = None
    if write_back:
        sink = LangSmithSink(
            client,
            extend_trace_retention=extend_trace_retention or settings.extend_trace_retention,
            feedback_source_type=settings.feedback_source_type,
        )
    return records, langsmith_adapter(config.mapping), sink, f"langsmith:{project}"


def _counted(records, progress, task):  # type: ignore[no-untyped-def]
    for record in records:
        progress.advance(task, record.size)
        yield record


if __name__ == "__main__":  # pragma: no cover
    main()
