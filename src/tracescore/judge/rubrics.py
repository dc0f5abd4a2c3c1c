"""Rubrics are versioned data (top-level ``scorers/*.toml``, bundled in the wheel as ``tracescore/_rubrics``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from tracescore.errors import ConfigError

__all__ = ["Rubric", "load_rubric"]


@dataclass(frozen=True)
class Rubric:
    """A judge prompt as data: its name, version (recorded on every judged score), label set and system text."""

    name: str
    version: str
    system: str
    labels: tuple[str, ...] = ()


def _rubric_dirs() -> list[Path]:
    dirs: list[Path] = []
    try:
        bundled = resources.files("tracescore") / "_rubrics"
        if bundled.is_dir():
            dirs.append(Path(str(bundled)))
    except (ModuleNotFoundError, FileNotFoundError):  # pragma: no cover - only in odd installs
        pass
    dirs.append(Path(__file__).resolve().parents[3] / "scorers")  # editable install: the repo's folder
    return dirs


@cache
def load_rubric(name: str) -> Rubric:
    """The rubric ``name`` (``claims``, ``grounding``) from the bundled rubrics, else from the repo's folder."""
    for folder in _rubric_dirs():
        path = folder / f"{name}.toml"
        if path.is_file():
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            try:
                return Rubric(
                    name=data["name"],
                    version=data["version"],
                    system=data["system"].strip(),
                    labels=tuple(data.get("labels", ())),
                )
            except KeyError as exc:
                raise ConfigError(f"rubric {str(path)!r} lacks the key {exc.args[0]!r}") from exc
    searched = ", ".join(str(d) for d in _rubric_dirs())
    raise ConfigError(f"unknown rubric {name!r}: no {name}.toml in {searched}")
