"""The ``tracescore`` command: parse options, call the library, turn its errors into one-line messages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from tracescore import __version__
from tracescore.adapters import get_adapter
from tracescore.errors import TracescoreError
from tracescore.pipeline import RunCounts, score_records
from tracescore.report import Summary, render_terminal
from tracescore.scorers import default_scorers
from tracescore.sinks import JsonlSink, Store
from tracescore.sources.jsonl import Record, read_jsonl

__all__ = ["main"]

EXIT_INPUT_ERRORS = 1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracescore")
def main() -> None:
    """Whose bug is it? Score search-agent traces stage by stage: retrieval, grounding, citations, answer."""


@main.command()
@click.argument("traces", type=click.Path(dir_okay=False, allow_dash=True))
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
def score(traces: str, out: str | None, store_path: str, k: int, final_answer_prefix: str, quiet: bool) -> None:
    """Score a JSONL file of canonical traces (``-`` for stdin) and print the stage contingency table."""
    console = Console(stderr=False, quiet=quiet, width=max(120, Console().width))
    scorers = default_scorers(k=k, final_answer_prefix=final_answer_prefix or None)
    counts = RunCounts()
    summary = Summary()
    try:
        total = _size(traces)
        store = Store(store_path)
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


if __name__ == "__main__":  # pragma: no cover
    main()
