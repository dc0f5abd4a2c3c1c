"""One trace's result held against per-score limits, as ``tracescore.check(trace, min=…, max=…)`` holds it.

A limit is on one trace's value (the gate's limits are on a run's mean; the names and ranges are checked the same
way, ``report/gate_config.py``). A value past its limit breaks the limit's stage; so does a score a limit names
that is absent, with its reason (unless the check skips absences). The failure says one line per broken stage:
the stage, each broken score with its value, the limit and the score's comment (an absent one: its reason).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from tracescore.catalog import entry
from tracescore.errors import ConfigError
from tracescore.report.gate_config import check_limit, check_score_name
from tracescore.result import TraceResult
from tracescore.scores import ScoreValue

Absent = Literal["fail", "skip"]
ABSENT_POLICIES: tuple[Absent, ...] = ("fail", "skip")


@dataclass(frozen=True)
class Limit:
    """``name`` at least (``sign`` +1) or at most (-1) ``bound`` on one trace."""

    name: str
    bound: float
    sign: int

    @property
    def text(self) -> str:
        return f"{'≥' if self.sign > 0 else '≤'} {_number(self.bound)}"

    def holds(self, value: float) -> bool:
        return value >= self.bound if self.sign > 0 else value <= self.bound


def _number(value: float) -> str:
    return f"{value:g}"


def _bound(name: str, value: object, sign: int) -> Limit:
    check_score_name(name)
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"limit {name}={value!r} is not a number; give a number (or true/false for a boolean score)")
    check_limit(name, float(value), sign)
    return Limit(name, float(value), sign)


def limits(minimum: Mapping[str, object] | None, maximum: Mapping[str, object] | None) -> list[Limit]:
    """The limits of ``min=`` and ``max=`` (ConfigError naming an unknown score, the closest name, or a limit that
    could never fail)."""
    found = [_bound(n, v, +1) for n, v in (minimum or {}).items()]
    found += [_bound(n, v, -1) for n, v in (maximum or {}).items()]
    if not found:
        raise ConfigError("tracescore.check needs a limit: min={name: value} and/or max={name: value}, with names"
                          " from the score catalog")
    return found


@dataclass(frozen=True)
class Broken:
    """A limit a trace did not meet: its value past the limit, or absent (``value`` None) with ``note`` the reason."""

    stage: str
    limit: Limit
    value: ScoreValue | None
    note: str | None

    @property
    def text(self) -> str:
        name, needs = self.limit.name, f"(needs {self.limit.text})"
        if self.value is None:
            return f"{name} absent {needs}: {self.note or 'not computed'}"
        shown = str(self.value).lower() if isinstance(self.value, bool) else _number(float(self.value))
        return f"{name} = {shown} {needs}" + (f": {self.note}" if self.note else "")


@dataclass(frozen=True)
class Verdict:
    """What a check found on one trace: the limits broken by a value, and those whose score is absent."""

    result: TraceResult
    broken: list[Broken] = field(default_factory=list)
    absent: list[Broken] = field(default_factory=list)

    def failure(self, absent: Absent) -> str | None:
        """The failure message (None: the trace passes): a header, then one line per broken stage."""
        if self.result.errors and not self.result.scores:
            return f"trace {self._id} not scored: " + "; ".join(self.result.errors)
        broken = self.broken + (self.absent if absent == "fail" else [])
        if not broken:
            return None
        stages: dict[str, list[str]] = {}
        for b in broken:
            stages.setdefault(b.stage, []).append(b.text)
        head = f"trace {self._id}: {len(stages)} stage(s) broken"
        return "\n".join([head, *(f"  {stage}: " + "; ".join(texts) for stage, texts in stages.items())])

    def skipped(self) -> str | None:
        """Why the check is skipped under ``absent="skip"`` (None: it is not): every limit held or was absent."""
        if self.broken or not self.absent or (self.result.errors and not self.result.scores):
            return None
        return f"trace {self._id}: " + "; ".join(b.text for b in self.absent)

    @property
    def _id(self) -> str:
        return self.result.trace_id or "(no id)"


def verdict(result: TraceResult, checked: list[Limit]) -> Verdict:
    """``result`` held against ``checked``, in the order the limits were given."""
    broken: list[Broken] = []
    absent: list[Broken] = []
    for limit in checked:
        found = entry(limit.name.split("@", 1)[0])
        stage = found.stage if found is not None else "other"
        score = result.scores.get(limit.name)
        if score is None or score.value is None:
            reason = score.reason if score is not None else "not scored (not in this trace's result)"
            absent.append(Broken(stage, limit, None, reason))
        elif isinstance(score.value, str) or not limit.holds(float(score.value)):
            broken.append(Broken(stage, limit, score.value, score.comment))
    return Verdict(result, broken, absent)
