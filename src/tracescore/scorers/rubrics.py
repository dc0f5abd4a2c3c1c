"""Which rubric each judged stage sends: ``[judge] rubric`` (grounding), ``surface_rubric`` and ``semantic_rubric``,
each a bundled rubric's name or the path of a TOML file in the bundled format (``scorers/*.toml``).

A rubric must declare exactly the verdicts its scorer maps (grounding: supported, partial, contradicted,
unsupported; surface: supports, contradicts, neither; semantic: match, no match), and the three stages need three
different versions (a judged score is told apart by its rubric version). ``Rubrics`` travels with the run's
construction into each scorer factory (``rubric=``), the batch prefill and the estimate: nothing reads a global.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from tracescore.errors import ConfigError
from tracescore.judge.rubrics import Rubric, check_labels, find_rubric, load_rubric
from tracescore.scorers.grounding import LABELS as GROUNDING_LABELS
from tracescore.scorers.semantic import LABELS as SEMANTIC_LABELS
from tracescore.scorers.surface import LABELS as SURFACE_LABELS

RUBRIC_KEYS: Mapping[str, tuple[str, tuple[str, ...]]] = MappingProxyType(
    {
        "rubric": ("grounding", GROUNDING_LABELS),
        "surface_rubric": ("surface", SURFACE_LABELS),
        "semantic_rubric": ("semantic", SEMANTIC_LABELS),
    }
)
"""``[judge]`` key → (its stage and bundled rubric, the verdicts that stage's scorer maps)."""


@dataclass(frozen=True)
class Rubrics:
    """The rubric of each judged stage (the bundled ones by default)."""

    grounding: Rubric = field(default_factory=lambda: load_rubric("grounding"))
    surface: Rubric = field(default_factory=lambda: load_rubric("surface"))
    semantic: Rubric = field(default_factory=lambda: load_rubric("semantic"))


def choose_rubrics(values: Mapping[str, str | None], *, base: Path | None = None, source: str = "") -> Rubrics:
    """The ``Rubrics`` named by the ``[judge]`` keys in ``values`` (None or absent: the bundled one), each checked;
    ConfigError naming the config file, the key, the rubric file and what is wrong in it."""
    chosen: dict[str, Rubric] = {}
    for key, (stage, labels) in RUBRIC_KEYS.items():
        value = values.get(key) or stage
        where = f"{source + ': ' if source else ''}[judge] {key} = {value!r}"
        try:
            rubric = find_rubric(value, base=base)
            check_labels(rubric, labels, stage)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        chosen[stage] = rubric
    versions: dict[str, str] = {}
    for key, (stage, _) in RUBRIC_KEYS.items():
        version = chosen[stage].version
        if version in versions:
            raise ConfigError(
                f"{source + ': ' if source else ''}[judge] {key}: version {version!r} is also the version of"
                f" [judge] {versions[version]}; each judged stage needs a rubric of its own version"
            )
        versions[version] = key
    return Rubrics(**chosen)
