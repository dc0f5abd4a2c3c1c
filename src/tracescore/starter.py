"""``tracescore init``'s starter ``tracescore.toml``: the chosen source set, every other key shown with its default,
all from the declarations in ``config.py`` and the platforms' own (nothing here to keep in step by hand)."""

from __future__ import annotations

import json
from typing import Any

from tracescore.catalog import describe
from tracescore.config import JobSettings, ScoringSettings, SourceSettings, option_of, schema
from tracescore.platforms import registry


def _credentials() -> list[str]:
    return [" / ".join(p.credentials) for p in registry.platforms().values() if p.credentials]


def starter_config(
    kind: str = registry.DEFAULT_SOURCE, path: str | None = None, *, project: str | None = None
) -> str:
    """A commented ``tracescore.toml``: the chosen source set, every other key shown with its default."""
    platform = registry.get(kind)
    lines = [
        "# tracescore.toml: read by every command (`score`, `run`, `backfill`, `gate`) or given with --config.",
        "# Credentials come only from the environment, never from this file:",
        *(f"#   {names}" for names in _credentials()),
        "#   ANTHROPIC_API_KEY (the judge; with [judge] provider = \"bedrock\" / \"vertex\": AWS / Google credentials)",
        "# Uncomment a key to change it; a wrong key or value stops the run with the key and what is allowed.",
        "",
        "[source]",
        f"kind = {json.dumps(kind)}",
    ]
    set_here = {"kind"}
    if kind == registry.DEFAULT_SOURCE:
        lines.append(f"path = {json.dumps(path or 'traces.jsonl')}")
        set_here.add("path")
    if option_of(platform, "project"):
        lines.append(f"project = {json.dumps(project)}" if project else f'# project = "<{kind} project name>"')
        set_here.add("project")
    for name, model in (("source", SourceSettings), ("job", JobSettings), ("scoring", ScoringSettings)):
        if name != "source":
            lines += ["", f"[{name}]"]
        for key, info in model.model_fields.items():
            if name == "source" and key in set_here:
                continue
            lines.append(f"# {info.description}")
            lines.append(f"# {key} = {_toml(info.get_default(call_default_factory=True))}")
    for scorer in describe():  # each installed scorer's options, declared in its signature
        if scorer["options"]:
            lines += ["", f"# [scorers.{scorer['name']}]"]
            lines += [f"# {o['name']} = {_toml(o['default'])}  # {o['type']}" for o in scorer["options"]]
    for name, section in sorted(schema().items()):
        if name in ("source", "job", "scoring", "scorers", "mapping"):
            continue
        lines += ["", f"# [{name}]"]
        for key, info in section.model_fields.items():
            default = info.get_default(call_default_factory=True)
            lines.append(f"# {key} = {_toml(default)}" + (f"  # {info.description}" if info.description else ""))
    lines += ["", "# [mapping]: how native records become traces; see the README for every key and its default."]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value)
