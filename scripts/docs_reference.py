"""The generated reference pages: a MkDocs hook (``hooks:`` in ``mkdocs.yml``) that fills each marker line
``<!-- generated: NAME -->`` of a docs page with a table read from the code, at build time. Nothing in those tables is
written by hand, so they cannot drift from what the code declares:

- ``scores``: the score catalog, from the scorer registry's declarations (``tracescore.registry`` / ``catalog``):
  name, stage, kind, direction, range, version, absence reasons with their class, definition;
- ``config``: every ``tracescore.toml`` section and key from the pydantic models (``tracescore.config.schema``),
  with type, default and description, and each installed scorer's ``[scorers.<name>]`` options (its signature);
- ``errors`` and ``outcomes``: the exit codes, from the error classes (``tracescore.errors``, ``exit_code``) and the
  outcome table (``tracescore.cli.exits.OUTCOMES``).

The CLI reference is mkdocs-click's (``::: mkdocs-click`` in ``docs/reference/cli.md``) and the Python API
mkdocstrings' (``::: tracescore``). Each render function takes what it renders as an argument (a registry, the
sections, the error classes), so a test renders a fake registry or section and sees it in the page.
"""

from __future__ import annotations

import math
import re
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

MARKER = re.compile(r"^<!-- generated: (\w+) -->$", re.M)
_ARROW = {1: "higher is better", -1: "lower is better", 0: "neither (diagnostic)"}


def _cell(text: object) -> str:
    """A table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("``", "`").replace("|", "\\|")


def _range(low: float, high: float) -> str:
    if math.isinf(low) and math.isinf(high):
        return ""
    shown = ["−∞" if math.isinf(low) else f"{low:g}", "∞" if math.isinf(high) else f"{high:g}"]
    return f"{shown[0]} .. {shown[1]}"


def scores_markdown(loaded: Any = None) -> str:
    """The score catalog of ``loaded`` (a ``tracescore.registry.Registry``; default: the installed one), one table per
    stage, and the reasons every score or every judged score can be absent for."""
    from tracescore import catalog, registry

    loaded = registry.load() if loaded is None else loaded
    entries = catalog.entries(loaded)
    out: list[str] = []
    for stage in dict.fromkeys(e.stage for e in entries):
        out += [f"### {stage}", "", "| score | kind | direction | range | scorer (version) | absent when | meaning |",
                "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for e in (e for e in entries if e.stage == stage):
            own = [r for r in e.spec.reasons]
            reasons = "<br>".join(f"`{_cell(r.text)}` ({r.kind or 'as the inner reason'})" for r in own)
            judged = "; judged" if e.judged else ""
            kind = e.kind.lower() + (f": {', '.join(e.categories)}" if e.categories else "")
            out.append(f"| `{e.name}` | {kind} | {_ARROW[e.direction]} | {_range(e.low, e.high)} |"
                       f" `{e.scorer}` ({e.version}{judged}) | {reasons} | {_cell(e.definition)} |")  # fmt: skip
        out.append("")
    out += ["### Reasons any score can be absent for", "", "| reason | class |", "| --- | --- |"]
    out += [f"| `{_cell(r.text)}` | {r.kind} |" for r in catalog.ANY_SCORE]
    out += ["", "### Reasons any judged score can be absent for", "", "| reason | class |", "| --- | --- |"]
    out += [f"| `{_cell(r.text)}` | {r.kind} |" for r in catalog.JUDGED]
    return "\n".join(out) + "\n"


def _type(annotation: Any) -> str:
    from tracescore.registry import type_name

    if typing.get_origin(annotation) is not None or annotation is type(None):
        return str(annotation).replace("typing.", "").replace("NoneType", "None")
    return type_name(annotation)


def _default(field: Any) -> str:
    if field.default is PydanticUndefined:
        if field.default_factory is not None:
            return f"`{field.default_factory()!r}`"
        return "required"
    value = field.default
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{value!r}`"


def _model_rows(model: type[BaseModel], prefix: str = "") -> Iterable[tuple[str, str, str, str]]:
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        yield key, _type(field.annotation), _default(field), field.description or ""
        inner = [a for a in (field.annotation, *typing.get_args(field.annotation))
                 if isinstance(a, type) and issubclass(a, BaseModel)]  # fmt: skip
        for sub in inner:
            yield from _model_rows(sub, f"{key}.")


def config_markdown(sections: Mapping[str, type[BaseModel]] | None = None, loaded: Any = None) -> str:
    """Every section of ``tracescore.toml`` (default: ``tracescore.config.schema()``) with each key's type, default
    and description, then each installed scorer's ``[scorers.<name>]`` options."""
    from tracescore import registry
    from tracescore.config import schema

    sections = schema() if sections is None else sections
    loaded = registry.load() if loaded is None else loaded
    out: list[str] = []
    for name, model in sections.items():
        out += [f"### `[{name}]`", "", _cell((model.__doc__ or "").strip()), ""]
        rows = list(_model_rows(model)) if "root" not in model.model_fields else []
        if rows:
            out += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
            out += [f"| `{k}` | `{_cell(t)}` | {_cell(d)} | {_cell(desc)} |" for k, t, d, desc in rows]
            out.append("")
    out += ["### `[scorers.<name>]`: each scorer's options", ""]
    for name, inst in loaded.installed.items():
        fields = inst.scorer.options_model.model_fields
        out += [f"#### `[scorers.{name}]`", "", f"`{inst.value}` ({inst.package})", ""]
        if not fields:
            out += ["No option.", ""]
            continue
        out += ["| option | type | default |", "| --- | --- | --- |"]
        out += [f"| `{n}` | `{_cell(registry.type_name(f.annotation))}` | `{_cell(repr(_shown(f.default)))}` |"
                for n, f in fields.items()]  # fmt: skip
        out.append("")
    return "\n".join(out) + "\n"


def _shown(value: Any) -> Any:
    from datetime import timedelta

    from tracescore.durations import format_duration

    return format_duration(value) if isinstance(value, timedelta) else value


def _tree(root: type[BaseException]) -> list[type[BaseException]]:
    found = [root]
    for sub in root.__subclasses__():
        found += _tree(sub)
    return found


def errors_markdown(root: type[BaseException] | None = None) -> str:
    """Each error class under ``root`` (default ``TracescoreError``) with its exit code and docstring, then
    ``Interrupted``'s codes."""
    import signal

    from tracescore import errors

    root = errors.TracescoreError if root is None else root
    out = ["| error class | exit code | meaning |", "| --- | --- | --- |"]
    for kind in _tree(root):
        depth = len([c for c in kind.__mro__ if issubclass(c, root)]) - 1
        name = "&nbsp;&nbsp;" * 2 * depth + f"`{kind.__name__}`"
        out.append(f"| {name} | {kind.exit_code} | {_cell((kind.__doc__ or '').strip())} |")  # type: ignore[attr-defined]
    for sig in (signal.SIGINT, signal.SIGTERM):
        code = errors.Interrupted(sig).exit_code
        doc = _cell(errors.Interrupted.__doc__ or "")
        out.append(f"| `Interrupted` ({signal.Signals(sig).name}) | {code} | {doc} |")
    return "\n".join(out) + "\n"


def outcomes_markdown(outcomes: Mapping[int, str] | None = None) -> str:
    """The outcome codes of a command that did its work (``tracescore.cli.exits.OUTCOMES``)."""
    if outcomes is None:
        from tracescore.cli.exits import OUTCOMES as outcomes
    out = ["| exit code | outcome |", "| --- | --- |"]
    out += [f"| {code} | {_cell(text)} |" for code, text in sorted(outcomes.items())]
    return "\n".join(out) + "\n"


GENERATORS = {"scores": scores_markdown, "config": config_markdown, "errors": errors_markdown,
              "outcomes": outcomes_markdown}  # fmt: skip


def fill(markdown: str) -> str:
    """``markdown`` with each ``<!-- generated: NAME -->`` line replaced by its table (an unknown NAME: KeyError)."""
    return MARKER.sub(lambda m: GENERATORS[m.group(1)]().rstrip("\n"), markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The MkDocs hook: fill the markers of every page."""
    return fill(markdown)
