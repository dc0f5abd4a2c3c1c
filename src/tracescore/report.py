"""Reports: the stage contingency table and per-stage summaries, never an average of stages.

``Summary`` is built incrementally from result lines (dicts in the documented result format), so a report over a
large file streams; rendering to the terminal uses rich.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracescore.scorers.diagnosis import CELLS

__all__ = ["StageStat", "Summary", "render_terminal", "summarize"]


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
class Summary:
    """Counts per contingency cell (with trace ids), per-score statistics and unreadable inputs."""

    traces: int = 0
    failed: int = 0
    cells: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CELLS})
    undiagnosed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    stats: dict[str, StageStat] = field(default_factory=lambda: defaultdict(StageStat))
    categorical: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    errors: list[str] = field(default_factory=list)

    def add(self, result: Mapping[str, Any]) -> None:
        """Fold one result line into the summary."""
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


def summarize(results: Iterable[Mapping[str, Any]]) -> Summary:
    """A Summary of many result lines."""
    summary = Summary()
    for result in results:
        summary.add(result)
    return summary


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_terminal(summary: Summary, console: Console) -> None:
    """The contingency table (rows: stage verdicts, columns: answer right/wrong) and a per-stage summary."""
    table = Table(
        min_width=60, title=f"Stage contingency ({summary.traces} traces scored, {summary.failed} unreadable)"
    )
    table.add_column("retrieval / grounding")
    table.add_column("answer right", justify="right")
    table.add_column("answer wrong", justify="right")
    rows = [
        r
        for r in ("retrieval_fail", "ungrounded", "grounded", "retrieval_pass")
        if r in ("retrieval_fail", "retrieval_pass")
        or summary.cells.get(f"{r}/right")
        or summary.cells.get(f"{r}/wrong")
    ]
    for row in rows:
        table.add_row(
            row, str(len(summary.cells.get(f"{row}/right", []))), str(len(summary.cells.get(f"{row}/wrong", [])))
        )
    undiagnosed = sum(summary.undiagnosed.values())
    if undiagnosed:
        table.caption = f"{undiagnosed} traces without a cell: " + "; ".join(
            f"{n} × {reason}" for reason, n in sorted(summary.undiagnosed.items(), key=lambda p: -p[1])[:3]
        )
    console.print(table)

    stages = Table(title="Per-stage summary")
    stages.add_column("score", no_wrap=True, min_width=28)
    for column in ("present", "mean / share true", "absent"):
        stages.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    stages.add_column("top reason absent", overflow="ellipsis", no_wrap=True, max_width=46)
    for name in sorted(summary.stats):
        stat = summary.stats[name]
        top = max(stat.absent.items(), key=lambda p: p[1])[0] if stat.absent else ""
        stages.add_row(name, str(stat.present), _fmt(stat.mean), str(stat.absent_count), top)
    console.print(stages)
    for message in summary.errors[:20]:
        console.print(Text.assemble(("error ", "red"), message), highlight=False)
    if len(summary.errors) > 20:
        console.print(f"… and {len(summary.errors) - 20} more errors (see the results file or the store)")
