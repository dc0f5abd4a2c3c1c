"""What the gate enforces: ``GateConfig`` from ``--min``/``--max`` and the ``[gate]`` table, score names checked."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tracescore import catalog
from tracescore.calibrate.trust import MIN_KAPPA
from tracescore.config import load_config
from tracescore.errors import ConfigError
from tracescore.scorers.trajectory import RENAMED

DEFAULT_CASE_KEY = "trace_id"


def check_score_name(name: str) -> None:
    """Raise ``ConfigError`` unless ``name`` is a numeric or boolean catalog score (the message says what was meant:
    ``_hint``)."""
    found = catalog.entry(name.split("@", 1)[0])
    if found is None:
        raise ConfigError(f"unknown score {name!r}; {_hint(name)}")
    if found.kind == "CATEGORICAL":
        raise ConfigError(f"{name!r} is categorical; a limit needs a numeric or boolean score")


_PART = re.compile(r"[._\s-]+")


def _parts(name: str) -> list[str]:
    return [p for p in _PART.split(name.lower()) if p]


def _part_matches(typed: str, part: str) -> bool:
    """A typed part names a part of a score name: the same, its start (``hallu``), or a slip of the keys (``recal``)."""
    return typed == part or (len(typed) >= 3 and part.startswith(typed)) or (
        difflib.SequenceMatcher(None, typed, part).ratio() >= 0.8
    )


def _hint(name: str) -> str:
    """What an unknown score name meant: the limitable catalog names whose parts hold every part typed (``recall`` →
    ``retrieval.recall_at_5``, ``fabricated`` → ``citation.fabricated_count``), the closest first; else the names of
    the stage it starts with; else where the names are listed. Read from the catalog, recall shown with k = 5."""
    renamed = RENAMED.get(name.split("@", 1)[0])
    if renamed is not None:  # a name from before its stage was given (#43): its name now
        return f"did you mean {renamed}?"
    limitable = [e for e in catalog.entries() if e.kind != "CATEGORICAL"]
    names = {e.name.replace("{k}", "5"): e for e in limitable}
    typed = _parts(name.split("@", 1)[0])
    found = [n for n in names if typed and all(any(_part_matches(t, p) for p in _parts(n)) for t in typed)]
    found.sort(key=lambda n: -difflib.SequenceMatcher(None, name.lower(), n).ratio())
    if found:
        shown = found[:3]
        return "did you mean " + (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]) + "?"
    stage = typed[0] if typed else ""
    same = [n for n, e in names.items() if stage in (e.stage, n.split(".", 1)[0])]
    if same:
        return f"the {stage} scores are " + ", ".join(same)
    prefixes = ", ".join(dict.fromkeys(n.split(".", 1)[0] + ".*" for n in names))
    return f"see the score catalog in the README (names start with their stage: {prefixes})"


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
