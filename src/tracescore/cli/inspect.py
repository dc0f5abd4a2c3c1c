"""``tracescore inspect``: what the adapter found in one native record, and what it skipped and why."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tracescore.cli.exits import EXIT_INPUT, end
from tracescore.config import load_config
from tracescore.errors import ConfigError
from tracescore.platforms.inspect import inspect_record, render_report
from tracescore.platforms.registry import DEFAULT_SOURCE, get_adapter, names, server_line


@click.command()
@click.argument("record_file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--source", "source", default=DEFAULT_SOURCE, show_default=True, help="Which adapter reads the record."
)
@click.option("--line", type=click.IntRange(min=1), default=1, show_default=True, help="The line of a JSONL file.")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False),
    help="tracescore.toml of the [mapping] (default: ./tracescore.toml when it exists).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def inspect(record_file: str, source: str, line: int, config_path: str | None, as_json: bool) -> None:
    """Show what the adapter made of one record of RECORD_FILE (a JSON document, or line --line of a JSONL file).

    Searches, hits, fetches, question, answer, labels and blind spots found; every tool call skipped, with the
    reason and a hint for ``[mapping]``; for a platform, what its server says (e.g. the query backend it reads). Exits 1
    when the record cannot be adapted at all.
    """
    if source not in names():
        raise ConfigError(f"unknown source {source!r}; expected one of {', '.join(repr(n) for n in names())}")
    text = Path(record_file).read_text(encoding="utf-8-sig", errors="replace")
    native: object = None
    if line == 1:
        try:
            native = json.loads(text)
        except (ValueError, RecursionError):
            native = None
    if native is None:
        lines = [x for x in text.splitlines() if x.strip()]
        if line > len(lines):
            raise ConfigError(f"{record_file} has {len(lines)} record line(s); --line {line} is past the end")
        native = lines[line - 1]
    mapping = load_config(config_path).mapping  # --config, else ./tracescore.toml when there is one, as score
    report = inspect_record(native, get_adapter(source, mapping))
    click.echo(report.model_dump_json(indent=2) if as_json else render_report(report))
    server = server_line(source)
    if server:
        click.echo(server, err=as_json)  # beside the JSON, never inside it
    if report.error:
        end(EXIT_INPUT)
