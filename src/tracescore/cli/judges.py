"""``tracescore judges``: every installed judge provider, tracescore's and plugins' alike, as the registry loaded them,
with what each needs (credentials and environment variables, the package to install, the ``[judge]`` keys)."""

from __future__ import annotations

import json
from typing import Any

import click

from tracescore.judge.registry import GROUP, installed
from tracescore.judge.settings import PROVIDER_KEYS


def describe() -> list[dict[str, Any]]:
    """Every installed judge provider as ``tracescore judges`` shows it."""
    out = []
    for name, inst in installed().items():
        p = inst.provider
        default = p.default_model if isinstance(p.default_model, str) else None
        out.append({
            "name": name,
            "entry_point": f"{GROUP}: {name} = {inst.value}",
            "package": inst.dist,
            "package_version": inst.dist_version,
            "description": p.description,
            "default_model": default,
            "needs": p.needs,
            "env": list(p.env),
            "install": p.install,
            "config_keys": [f"[judge] {k}" if k in PROVIDER_KEYS else f"[judge.options] {k}" for k in p.keys],
        })  # fmt: skip
    return out


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for a person, json for a program (the same facts).")  # fmt: skip
def judges(fmt: str) -> None:
    """List every installed judge: its [judge] provider name, package, what it needs (keys, environment variables,
    the extra to install) and the [judge] keys it reads."""
    found = describe()
    if fmt == "json":
        click.echo(json.dumps(found, indent=2))
        return
    for j in found:
        click.echo(f"{j['name']}  ({j['package']} {j['package_version']}): {j['description']}")
        click.echo(f"  default model: {j['default_model'] or '(none: set it in [judge])'}")
        if j["needs"]:
            click.echo(f"  needs: {j['needs']}")
        if j["env"]:
            click.echo(f"  environment: {', '.join(j['env'])}")
        if j["install"]:
            click.echo(f"  install: {j['install']}")
        click.echo(f"  config: {', '.join(j['config_keys'])}")
