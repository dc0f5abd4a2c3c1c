"""Reports: the stage contingency table, per-stage rates and the work queue they imply, never an average of stages.

``Summary`` is built incrementally from result lines (dicts in the documented result format), so a report over a
large file streams; ``build_report`` adds one ``Summary`` per group (``--group-by``) and stage counts over time.
The stage verdicts of one result (``stage_verdicts``) live here only; the gate reuses them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracescore import catalog
from tracescore.scorers.diagnosis import CELLS, MIN_GROUNDING, MIN_RECALL

__all__ = [
    "STAGES",
    "JudgeUsage",
    "Report",
    "StageCount",
    "StageStat",
    "Summary",
    "WorkItem",
    "build_report",
    "by_stage",
    "field_value",
    "render_terminal",
    "report_to_json",
    "score_stage",
    "stage_verdicts",
    "summary_to_json",
    "summarize",
    "work_queue",
]

# the catalog's stages that have a pass/fail verdict per trace (surface has counts, diagnosis is the cell itself)
STAGES: tuple[str, ...] = tuple(s for s in catalog.STAGES if s in ("retrieval", "grounding", "citations", "answer"))
NO_GROUP = "(none)"
_RESULT_KEYS = frozenset(
    ("trace_id", "scores", "missing", "errors", "notes", "comments", "line", "timestamp", "metadata", "judge")
)


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, bool | int | float) else None


def stage_verdicts(result: Mapping[str, Any], *, unread_fails: bool = True) -> dict[str, bool | None]:
    """Pass (True), fail (False) or undecided (None) per stage of one result line, from its scores.

    retrieval and answer come from the ``diagnosis`` cell (answer from ``answer.correct`` first); grounding from
    the grounded/ungrounded row or ``grounding.rate``; citations pass when no cited URL is fabricated or (unless
    ``unread_fails`` is off) unread.
    """
    scores: Mapping[str, Any] = result.get("scores") or {}
    cell = scores.get("diagnosis")
    row, _, col = cell.partition("/") if isinstance(cell, str) else ("", "", "")
    out: dict[str, bool | None] = dict.fromkeys(STAGES)
    if row:
        out["retrieval"] = row != "retrieval_fail"
    else:
        recall = next((_num(v) for n, v in scores.items() if n.startswith("retrieval.recall_at_")), None)
        out["retrieval"] = None if recall is None else recall >= MIN_RECALL
    if row in ("grounded", "ungrounded"):
        out["grounding"] = row == "grounded"
    elif (rate := _num(scores.get("grounding.rate"))) is not None:
        out["grounding"] = rate >= MIN_GROUNDING
    correct = scores.get("answer.correct")
    if isinstance(correct, bool):
        out["answer"] = correct
    elif col:
        out["answer"] = col == "right"
    fabricated = _num(scores.get("citation.fabricated_count"))
    if fabricated is not None:
        unread = (_num(scores.get("citation.unfetched_rate")) or 0.0) if unread_fails else 0.0
        out["citations"] = fabricated == 0 and unread == 0
    return out


def score_stage(name: str) -> str:
    """The catalog stage of a score name (``other`` for a name the catalog does not hold)."""
    found = catalog.entry(name.split("@", 1)[0])
    return found.stage if found else "other"


def by_stage(names: Iterable[str]) -> list[str]:
    """Score names in the catalog's stage order (retrieval, grounding, citations, answer, …), by name within one."""
    order: dict[str, int] = {stage: i for i, stage in enumerate(catalog.STAGES)}
    return sorted(names, key=lambda n: (order.get(score_stage(n), len(order)), n))


def field_value(result: Mapping[str, Any], path: str) -> str | None:
    """The value at a dotted path of a result line (``metadata.provider``), as text; bare names look in metadata."""
    parts = path.split(".")
    node: Any = result if parts[0] in _RESULT_KEYS else result.get("metadata") or {}
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if node is None:
        return None
    if isinstance(node, list | tuple):
        return ",".join(str(v) for v in node)
    return str(node).lower() if isinstance(node, bool) else str(node)


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
        fabricated = _num(result.get("scores", {}).get("citation.fabricated_count"))
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


@dataclass(frozen=True)
class WorkItem:
    """One line of the work queue: which cell, what it means for the team, and the trace ids behind it."""

    key: str
    title: str
    advice: str
    trace_ids: tuple[str, ...]


_QUEUE: tuple[tuple[str, str, str], ...] = (
    (
        "retrieval_fail/right",
        "right answers with retrieval failing — check these first",
        "a stale required_doc_ids label, or an answer from the model's memory rather than from its sources",
    ),
    ("retrieval_fail/wrong", "retrieval bugs", "fix the retriever (query, provider, index), not the prompt"),
    (
        "ungrounded/wrong",
        "grounding bugs",
        "the answer is not supported by what was retrieved: fix the prompt or generation, not the retriever",
    ),
    (
        "ungrounded/right",
        "right but ungrounded answers",
        "the model answered from memory; its sources do not back the answer",
    ),
    (
        "grounded/wrong",
        "reasoning bugs",
        "the evidence was retrieved and used, yet the answer is wrong: fix the reasoning step or the answer label",
    ),
    (
        "retrieval_pass/wrong",
        "wrong answers with retrieval passing",
        "a grounding or reasoning bug: run the judge to tell them apart",
    ),
)


def work_queue(summary: Summary) -> list[WorkItem]:
    """What the cells imply the team should fix, most urgent first; empty cells give no item."""
    items = [
        WorkItem(key, title, advice, tuple(summary.cells.get(key, [])))
        for key, title, advice in _QUEUE
        if summary.cells.get(key)
    ]
    if summary.fabricated:
        items.append(
            WorkItem(
                "citation.fabricated",
                "answers citing fabricated URLs",
                "a cited URL never appeared in any search hit or fetch: the agent made it up",
                tuple(summary.fabricated),
            )
        )
    return items


def _hour(timestamp: object) -> str | None:
    """``YYYY-MM-DDTHH:00`` of an ISO timestamp, in UTC when it has an offset; None when it is not one."""
    if not isinstance(timestamp, str):
        return None
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    if moment.utcoffset():
        moment = moment.astimezone(UTC)
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:00"


@dataclass
class Report:
    """An overall Summary, one Summary per group (``group_by``) and stage pass counts per hour (UTC)."""

    source: str = ""
    group_by: str | None = None
    overall: Summary = field(default_factory=Summary)
    groups: dict[str, Summary] = field(default_factory=dict)
    hours: dict[str, dict[str, StageCount]] = field(default_factory=dict)

    def add(self, result: Mapping[str, Any]) -> None:
        """Fold one result line into the overall summary, its group and its time buckets."""
        if result.get("errors") and not result.get("scores") and not result.get("missing"):
            self.overall.add(result)
            return  # unreadable: counted overall only, it has no group and no time
        verdicts = stage_verdicts(result)
        self.overall.add(result, verdicts)
        if self.group_by:
            key = field_value(result, self.group_by) or NO_GROUP
            self.groups.setdefault(key, Summary()).add(result, verdicts)
        hour = _hour(result.get("timestamp"))
        if hour is not None:
            counts = self.hours.get(hour) or self.hours.setdefault(hour, {s: StageCount() for s in STAGES})
            for stage, verdict in verdicts.items():
                counts[stage].add(verdict)

    def timeline(self) -> tuple[str, list[tuple[str, dict[str, StageCount]]]]:
        """Stage counts over time: per day, or per hour when all traces fall on one day."""
        days: dict[str, dict[str, StageCount]] = {}
        for hour, counts in self.hours.items():
            day = days.setdefault(hour[:10], {s: StageCount() for s in STAGES})
            for stage, count in counts.items():
                day[stage].passed += count.passed
                day[stage].decided += count.decided
        granularity, buckets = ("hour", self.hours) if len(days) <= 1 else ("day", days)
        return granularity, sorted(buckets.items())

    def columns(self) -> list[tuple[str, Summary]]:
        """The groups side by side (sorted, the no-value group last), or the overall summary alone."""
        if not self.group_by:
            return [("all", self.overall)]
        return sorted(self.groups.items(), key=lambda p: (p[0] == NO_GROUP, p[0]))


def build_report(results: Iterable[Mapping[str, Any]], *, group_by: str | None = None, source: str = "") -> Report:
    """A Report over many result lines, streaming."""
    report = Report(source=source, group_by=group_by or None)
    for result in results:
        report.add(result)
    return report


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _stage_json(count: StageCount, ids: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"passed": count.passed, "decided": count.decided, "rate": _round(count.rate)}
    if ids:
        out["failed_trace_ids"] = list(count.failed_ids)
    return out


def summary_to_json(summary: Summary) -> dict[str, Any]:
    """One Summary as plain JSON: cells with their trace ids, stage rates, score stats, judge usage, work queue."""
    return {
        "traces": summary.traces,
        "unreadable": summary.failed,
        "cells": {c: {"count": len(ids), "trace_ids": list(ids)} for c, ids in summary.cells.items()},
        "undiagnosed": dict(summary.undiagnosed),
        "stages": {s: _stage_json(c) for s, c in summary.stages.items()},
        "scores": {
            name: {
                "stage": score_stage(name),
                "present": stat.present,
                "mean": _round(stat.mean),
                "absent": stat.absent_count,
                "absent_reasons": dict(stat.absent),
            }
            for name, stat in sorted(summary.stats.items())
        },
        "categorical": {n: dict(v) for n, v in summary.categorical.items()},
        "judge": {
            "calls": summary.judge.calls,
            "input_tokens": summary.judge.input_tokens,
            "output_tokens": summary.judge.output_tokens,
            "cost_usd": round(summary.judge.cost_usd, 6),
        },
        "work_queue": [
            {"key": w.key, "title": w.title, "advice": w.advice, "trace_ids": list(w.trace_ids)}
            for w in work_queue(summary)
        ],
        "errors": list(summary.errors),
    }


def report_to_json(report: Report) -> dict[str, Any]:
    """The whole report as plain JSON (the ``--format json`` output)."""
    granularity, buckets = report.timeline()
    return {
        "source": report.source,
        "group_by": report.group_by,
        "overall": summary_to_json(report.overall),
        "groups": {name: summary_to_json(s) for name, s in report.columns()} if report.group_by else {},
        "timeline": {
            "granularity": granularity,
            "buckets": [
                {"bucket": label, "stages": {s: _stage_json(c, ids=False) for s, c in counts.items()}}
                for label, counts in buckets
            ],
        },
    }


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
    stages.add_column("stage", no_wrap=True)
    stages.add_column("score", no_wrap=True, min_width=28)
    for column in ("present", "mean / share true", "absent"):
        stages.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    stages.add_column("top reason absent", overflow="ellipsis", no_wrap=True, max_width=46)
    for name in by_stage(summary.stats):
        stat = summary.stats[name]
        top = max(stat.absent.items(), key=lambda p: p[1])[0] if stat.absent else ""
        stages.add_row(score_stage(name), name, str(stat.present), _fmt(stat.mean), str(stat.absent_count), top)
    console.print(stages)
    for message in summary.errors[:20]:
        console.print(Text.assemble(("error ", "red"), message), highlight=False)
    if len(summary.errors) > 20:
        console.print(f"… and {len(summary.errors) - 20} more errors (see the results file or the store)")
