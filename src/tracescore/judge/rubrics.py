"""Rubrics are versioned data (top-level ``scorers/*.toml``, bundled in the wheel as ``tracescore/_rubrics``).

A team's own rubric is a TOML file in the same format: ``name``, ``version`` (recorded on every judged score and in
the calibration key: change it whenever the text or the labels change), ``labels`` (the verdicts the scorer maps,
all of them) and ``system`` (the text the judge receives). ``find_rubric`` takes a bundled name or a file path.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from tracescore.errors import ConfigError

_KEYS = ("labels", "name", "system", "version")


@dataclass(frozen=True)
class Rubric:
    """A judge prompt as data: its name, version (recorded on every judged score), label set and system text."""

    name: str
    version: str
    system: str = field(repr=False)
    labels: tuple[str, ...] = ()
    origin: str = field(default="", compare=False)  # the file it was read from


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
    """The bundled rubric ``name`` (``grounding``, ``surface``, ``semantic``), else from the repo's folder."""
    for folder in _rubric_dirs():
        path = folder / f"{name}.toml"
        if path.is_file():
            return read_rubric(path)
    searched = ", ".join(str(d) for d in _rubric_dirs())
    raise ConfigError(f"unknown rubric {name!r}: no {name}.toml in {searched}")


def read_rubric(path: Path) -> Rubric:
    """The rubric in the TOML file ``path``; ConfigError naming the file and the key that is wrong or missing."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read rubric file {str(path)!r}: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"rubric file {str(path)!r}: not valid TOML ({exc})") from exc
    where = f"rubric file {str(path)!r}"
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; allowed keys: {', '.join(_KEYS)}")
    for key in _KEYS:
        if key not in data:
            raise ConfigError(f"{where}: missing key {key!r}; a rubric has {', '.join(_KEYS)}")
    for key in ("name", "version", "system"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise ConfigError(f"{where}: key {key!r} must be a non-empty string, got {_shown(data[key])}")
    labels = data["labels"]
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x.strip() for x in labels):
        raise ConfigError(f"{where}: key 'labels' must be a non-empty list of strings, got {_shown(labels)}")
    return Rubric(
        name=data["name"].strip(),
        version=data["version"].strip(),
        system=data["system"].strip(),
        labels=tuple(x.strip() for x in labels),
        origin=str(path),
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def find_rubric(value: str, *, base: Path | None = None) -> Rubric:
    """A bundled rubric by name (``"grounding"``), or the rubric in a TOML file (a path ending ``.toml`` or holding a
    ``/``; relative to ``base``, the config file's folder, when given)."""
    if not (value.endswith(".toml") or "/" in value or "\\" in value):
        return load_rubric(value)
    path = Path(value).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    if not path.is_file():
        raise ConfigError(f"rubric file {str(path)!r} not found; give a bundled rubric name or a TOML file's path")
    rubric = read_rubric(path)
    try:
        bundled = load_rubric(rubric.name)
    except ConfigError:
        return rubric
    if bundled.version == rubric.version and bundled != rubric:
        raise ConfigError(
            f"rubric file {str(path)!r}: key 'version' = {rubric.version!r} is the bundled {rubric.name} rubric's"
            " version, but the text or labels differ; give your rubric its own version (e.g."
            f" {rubric.version.rsplit('-', 1)[0]}-team-1) so its scores and calibrations stay apart"
        )
    return rubric


def check_labels(rubric: Rubric, labels: Collection[str], scorer: str) -> None:
    """ConfigError unless ``rubric`` declares exactly the verdicts the ``scorer`` maps (``labels``)."""
    alien = [x for x in rubric.labels if x not in labels]
    missing = [x for x in labels if x not in rubric.labels]
    if alien or missing:
        problem = (
            f"label(s) {', '.join(map(repr, alien))} that the {scorer} scorer cannot map"
            if alien
            else f"no label(s) {', '.join(map(repr, missing))}"
        )
        exactly = ", ".join(map(repr, labels))
        where = f"rubric file {rubric.origin!r}"
        raise ConfigError(f"{where}: key 'labels' has {problem}; the {scorer} scorer maps exactly {exactly}")
