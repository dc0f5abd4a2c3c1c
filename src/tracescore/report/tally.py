"""``Summary``: many result lines counted by contingency cell, stage, score and judge usage, folded in one at a time."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.report.verdicts import STAGES, as_number, stage_verdicts
from tracescore.scorers.diagnosis import CELLS

__all__ = [
    "JudgeUsage",
    "StageCount",
    "StageStat",
    "Summary",
    "summarize",
]


@dataclass
class StageStat:
    """One score name across traces: how many present, absent (by reason) and their mean / share true."""

    present: int = 0
    total: float = 0.0
    absent: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    @property
    def mean(self) -> float | None:
        return self.total / self.present if self.present else None

    @property
    def absent_count(self) -> int:
        return sum(self.absent.values())


@dataclass
class StageCount:
    """Passes among decided traces of one stage, and the trace ids that failed it."""

    passed: int = 0
    decided: int = 0
    failed_ids: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None

    def add(self, verdict: bool | None, trace_id: str | None = None) -> None:
        """Count one trace's verdict; a failure keeps its id when one is given."""
        if verdict is None:
            return
        self.decided += 1
        if verdict:
            self.passed += 1
        elif trace_id is not None:
            self.failed_ids.append(trace_id)


@dataclass
class JudgeUsage:
    """Judge tokens and estimated cost, summed from the optional ``judge`` object of result lines or run summaries."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, usage: object) -> None:
        if not isinstance(usage, Mapping):
            return
        self.calls += int(usage.get("calls") or 0)
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        self.cost_usd += float(usage.get("cost_usd") or 0.0)

    @property
    def any(self) -> bool:
        return bool(self.calls or self.input_tokens or self.output_tokens or self.cost_usd)


@dataclass
class Summary:
    """Counts per contingency cell (with trace ids), per-stage pass counts, per-score statistics, judge usage."""

    traces: int = 0
    failed: int = 0
    cells: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CELLS})
    undiagnosed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    stats: dict[str, StageStat] = field(default_factory=lambda: defaultdict(StageStat))
    categorical: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    stages: dict[str, StageCount] = field(default_factory=lambda: {s: StageCount() for s in STAGES})
    fabricated: dict[str, float] = field(default_factory=dict)
    judge: JudgeUsage = field(default_factory=JudgeUsage)
    errors: list[str] = field(default_factory=list)

    def add(self, result: Mapping[str, Any], verdicts: Mapping[str, bool | None] | None = None) -> None:
        """Fold one result line (and its ``stage_verdicts``, when already computed) into the summary."""
        self.judge.add(result.get("judge"))
        if result.get("errors") and not result.get("scores") and not result.get("missing"):
            self.failed += 1
            self.errors += list(result["errors"])
            return
        self.traces += 1
        self.errors += list(result.get("errors", []))
        tid = str(result.get("trace_id"))
        for name, value in result.get("scores", {}).items():
            if isinstance(value, str):
                self.categorical[name][value] += 1
                continue
            stat = self.stats[name]
            stat.present += 1
            stat.total += float(value)
        for name, reason in result.get("missing", {}).items():
            if name == "diagnosis":
                self.undiagnosed[reason] += 1
            else:
                self.stats[name].absent[reason] += 1
        cell = result.get("scores", {}).get("diagnosis")
        if isinstance(cell, str):
            self.cells.setdefault(cell, []).append(tid)
        for stage, verdict in (verdicts if verdicts is not None else stage_verdicts(result)).items():
            self.stages[stage].add(verdict, tid)
        fabricated = as_number(result.get("scores", {}).get("citation.fabricated_count"))
        if fabricated:
            self.fabricated[tid] = fabricated

    @property
    def diagnosed(self) -> int:
        return sum(len(ids) for ids in self.cells.values())


def summarize(results: Iterable[Mapping[str, Any]]) -> Summary:
    """A Summary of many result lines."""
    summary = Summary()
    for result in results:
        summary.add(result)
    return summary
