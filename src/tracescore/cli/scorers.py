"""``tracescore scorers``: every installed scorer, tracescore's and plugins' alike, as the registry loaded them."""

from __future__ import annotations

import json

import click

from tracescore.catalog import describe
from tracescore.cli.paths import reads
from tracescore.config import load_config


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for a person, json for a program (the same facts).")  # fmt: skip
@click.option("--config", "config_path", type=reads(dir_okay=False),
              help="tracescore.toml whose [[criteria]] to list too. [default: ./tracescore.toml when there is one]")
def scorers(fmt: str, config_path: str | None) -> None:
    """List every installed scorer: its entry-point name (what [scoring] scorers / disable and [scorers.<name>]
    take), package and version, stage, scores with kind and direction, and options with their defaults; and the
    judged criteria the config declares ([[criteria]])."""
    load_config(config_path)  # its [[criteria]] join the registry (a bad one: exit 2 naming the key)
    found = describe()
    if fmt == "json":
        click.echo(json.dumps(found, indent=2, default=str))
        return
    for s in found:
        judged = ", judged" if s["judged"] else ""
        click.echo(f"{s['name']}  ({s['package']} {s['package_version']}; stage {'/'.join(s['stage'])};"
                   f" version {s['version']}{judged})")  # fmt: skip
        for spec in s["scores"]:
            better = f", {spec['better']} is better" if spec["better"] else ", diagnostic"
            click.echo(f"  {spec['name']}: {spec['kind']}{better}")
        for option in s["options"]:
            click.echo(f"  option {option['name']} = {option['default']!r} ({option['type']})")
