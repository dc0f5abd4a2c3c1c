"""Reports: the stage contingency table, per-stage rates and the work queue they imply, never an average of stages.

``Summary`` is built incrementally from result lines (dicts in the documented result format), so a report over a
large file streams; ``build_report`` adds one ``Summary`` per group (``--group-by``) and stage counts over time.
The stage verdicts of one result (``stage_verdicts``) live in ``verdicts.py``; the gate reuses them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracescore.report.budget import Budgets
from tracescore.report.fit import needed_width, print_table
from tracescore.report.safe import term, visible
from tracescore.report.tally import StageCount, Summary as Summary, summarize as summarize
from tracescore.report.verdicts import (
    STAGES as STAGES,
    by_stage as by_stage,
    field_value as field_value,
    score_stage as score_stage,
    stage_verdicts as stage_verdicts,
)

NO_GROUP = "(none)"


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


QUEUED = frozenset(key for key, _, _ in _QUEUE)  # the cells the work queue names


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
    links: dict[str, str] = field(default_factory=dict)  # trace id → its ``trace_url`` (lines read from a platform)
    budget: Budgets = field(default_factory=Budgets)  # #33: the retrieval budget per column, the queue's queries

    def add(self, result: Mapping[str, Any]) -> None:
        """Fold one result line into the overall summary, its group and its time buckets (and its trace link)."""
        url, trace_id = result.get("trace_url"), result.get("trace_id")
        if isinstance(url, str) and isinstance(trace_id, str):
            self.links[trace_id] = url
        if result.get("errors") and not result.get("scores") and not result.get("missing"):
            self.overall.add(result)
            return  # unreadable: counted overall only, it has no group and no time
        verdicts = stage_verdicts(result)
        self.overall.add(result, verdicts)
        key = None
        if self.group_by:
            key = field_value(result, self.group_by) or NO_GROUP
            self.groups.setdefault(key, Summary()).add(result, verdicts)
        self.budget.add(result, key, QUEUED)
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
    """One Summary as plain JSON: cells with their trace ids, stage rates, score stats, judge usage, work queue; with
    ``[scoring] judge_sample``, the rate and the flagged traces' judged scores apart (``judge_sample``)."""
    out = {
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
        "scorer_errors": summary.scorer_errors,
    }
    if summary.sample_rate is not None:
        out["judge_sample"] = _sample_json(summary)
    return out


def _sample_json(summary: Summary) -> dict[str, Any]:
    """The judged shares are over the sampled traces only (``present`` is their n); the traces judged because a
    deterministic stage flagged them are counted apart, with their own means."""
    return {
        "rate": summary.sample_rate,
        "flagged_traces": summary.flagged,
        "flagged_scores": {n: {"present": s.present, "mean": _round(s.mean)}
                           for n, s in sorted(summary.flagged_stats.items())},
    }  # fmt: skip


def report_to_json(report: Report) -> dict[str, Any]:
    """The whole report as plain JSON (the ``--format json`` output)."""
    granularity, buckets = report.timeline()
    budget = report.budget
    return {
        "source": report.source,
        "group_by": report.group_by,
        "overall": summary_to_json(report.overall),
        "groups": {name: summary_to_json(s) for name, s in report.columns()} if report.group_by else {},
        "retrieval_budget": {"overall": budget.overall.to_json(),
                             "groups": {name: budget.groups[name].to_json() for name, _ in report.columns()
                                        if name in budget.groups}},  # fmt: skip
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


def score_table(title: str | None = None, *, reasons: bool = False) -> Table:
    """The table of scores by stage: names and numbers are never wrapped (folded only on a console too narrow for
    them, never cut with an ellipsis), headers and reasons wrap at words."""
    table = Table(title=title)
    table.add_column("stage", no_wrap=True, overflow="fold")
    table.add_column("score", no_wrap=True, overflow="fold")
    for column in ("present", "mean /\nshare true", "absent"):
        table.add_column(column, justify="right", no_wrap=True, overflow="fold")
    if reasons:
        table.add_column("top reason absent", overflow="fold")
    return table


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
        table.caption = term(f"{undiagnosed} traces without a cell: " + "; ".join(
            f"{n} × {reason}" for reason, n in sorted(summary.undiagnosed.items(), key=lambda p: -p[1])[:3]
        ))  # fmt: skip
    print_table(console, table)

    scored: list[tuple[str, list[Text | str], str]] = []
    for name in by_stage(summary.stats):
        stat = summary.stats[name]
        values: list[Text | str] = [term(score_stage(name)), term(name), str(stat.present), _fmt(stat.mean)]
        scored.append((name, [*values, str(stat.absent_count)], stat.top_reason))
    stages = score_table("Per-stage summary", reasons=True)
    for _, values, top in scored:
        stages.add_row(*values, term(top))
    below: list[str] = []
    if needed_width(console, stages) > console.width:  # no room beside: the reasons go below, words whole
        stages = score_table("Per-stage summary")
        for _, values, _ in scored:
            stages.add_row(*values)
        below = [f"  {name}: {top}" for name, _, top in scored if top]
    print_table(console, stages)
    if summary.sample_rate is not None:
        console.print(term(f"judged scores over the sampled traces only (judge_sample {summary.sample_rate:g}, n ="
                           f" present); {summary.flagged} flagged traces judged apart"), highlight=False)
    if below:
        console.print(Text("Top reason absent", style="bold"))
        for line in below:
            console.print(term(line), highlight=False)
    for message in summary.errors[:20]:
        console.print(Text.assemble(("error ", "red"), visible(message)), highlight=False, soft_wrap=True)
    if len(summary.errors) > 20:
        console.print(f"… and {len(summary.errors) - 20} more errors (see the results file or the store)")
    if raised := summary.scorer_errors:
        counted = ", ".join(f"{name} on {n} trace{'s' if n != 1 else ''}" for name, n in raised.items())
        console.print(term(f"scorer errors: {counted} (its scores there absent, not computed)"), highlight=False)
