"""What the gate enforces: ``GateConfig`` from ``--min``/``--max`` and the ``[gate]`` table, score names checked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tracescore import catalog
from tracescore.calibrate.trust import MIN_KAPPA
from tracescore.config import load_config
from tracescore.errors import ConfigError

__all__ = [
    "DEFAULT_CASE_KEY",
    "GateConfig",
    "check_limit",
    "check_score_name",
    "load_gate_config",
    "parse_limit",
]


DEFAULT_CASE_KEY = "trace_id"


def check_score_name(name: str) -> None:
    """Raise ``ConfigError`` unless ``name`` is a numeric or boolean catalog score (the message names the closest)."""
    found = catalog.entry(name.split("@", 1)[0])
    if found is None:
        near = catalog.closest(name)
        hint = f"did you mean {near}?" if near else "see the score catalog in the README"
        raise ConfigError(f"unknown score {name!r}; {hint}")
    if found.kind == "CATEGORICAL":
        raise ConfigError(f"{name!r} is categorical; a limit needs a numeric or boolean score")


def check_limit(name: str, value: float, sign: int) -> None:
    """Raise ``ConfigError`` unless a ``min`` (``sign`` +1) or ``max`` (-1) limit on ``name`` could fail and could
    pass: a finite number inside the score's range, not at the edge a mean can never cross (``≥ 0`` on a rate)."""
    found = catalog.entry(name.split("@", 1)[0])
    if found is None:
        return
    low, high = found.low, found.high
    span = f"{low:g}..{high:g}" if math.isfinite(high) else f"≥ {low:g}"
    op = "≥" if sign > 0 else "≤"
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"limit {name} {op} {value:g} is outside the score's range ({span})")
    if (sign > 0 and value == low) or (sign < 0 and value == high):
        raise ConfigError(f"limit {name} {op} {value:g} can never fail: the score's values lie in {span}")


@dataclass(frozen=True)
class GateConfig:
    """What the gate enforces. ``minimums``/``maximums`` map score names to limits on the run's mean."""

    minimums: Mapping[str, float] = field(default_factory=dict)
    maximums: Mapping[str, float] = field(default_factory=dict)
    allow_unread: bool = False
    tolerance: float = 0.0
    case_key: str = DEFAULT_CASE_KEY
    min_judge_kappa: float = MIN_KAPPA

    def __post_init__(self) -> None:
        for name in [*self.minimums, *self.maximums]:
            check_score_name(name)
        for name, value in self.minimums.items():
            check_limit(name, value, +1)
        for name, value in self.maximums.items():
            check_limit(name, value, -1)

    def merged(
        self,
        minimums: Mapping[str, float] | None = None,
        maximums: Mapping[str, float] | None = None,
        **changes: Any,
    ) -> GateConfig:
        """This config with command-line limits laid over it (the command line wins per score)."""
        return replace(
            self,
            minimums={**self.minimums, **(minimums or {})},
            maximums={**self.maximums, **(maximums or {})},
            **{k: v for k, v in changes.items() if v is not None},
        )


def parse_limit(text: str) -> tuple[str, float]:
    """``retrieval.recall_at_5=0.9`` → (name, value); the message names the bad text and the expected form."""
    name, sep, raw = text.partition("=")
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not sep or not name.strip() or math.isnan(value):
        raise ConfigError(f"bad limit {text!r}; expected NAME=NUMBER, e.g. retrieval.recall_at_5=0.9")
    check_score_name(name.strip())
    return name.strip(), value


def load_gate_config(path: str | Path) -> GateConfig:
    """The ``[gate]`` section of a ``tracescore.toml`` (validated by ``config.GateSettings``); none means no limits."""
    settings = load_config(path).section("gate")
    return GateConfig(
        minimums=dict(settings.min),
        maximums=dict(settings.max),
        allow_unread=settings.allow_unread,
        tolerance=settings.tolerance,
        case_key=settings.case_key,
        min_judge_kappa=settings.min_judge_kappa,
    )
