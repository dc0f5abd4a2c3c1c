"""The provider section of a report: "same accuracy, different evidence", one column per provider.

Built from result lines (streaming, like ``Summary``): per group (``--group-by metadata.provider``) the answer's
correct rate and token F1 beside what the search surface gave the agent — support before any fetch, the
SMART / MISSED / BLIND / NO-OP shares of every URL seen, the contradiction ratio, first-support rank, fetch yield and
the tokens the agent read — and, when the same question ran on several providers (``--case-key``), complementarity:
the questions only one provider's surface supported, and the union.

The pooled contradiction ratio of a column is Σ contradicting surfaces / Σ supporting surfaces over the traces that
have a ``surface.contradiction_ratio`` (those where some surface supports; per trace, supporting = SMART + MISSED).
Fetch tokens come from the store (``surface.fetch_yield`` metadata) and are shown only for a stored run.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.report.summary import NO_GROUP, field_value
from tracescore.scorers.answer import ANSWER_CORRECT, ANSWER_TOKEN_F1
from tracescore.scorers.complementarity import Complementarity, complementarity
from tracescore.scorers.semantic import ANSWER_SEMANTIC_MATCH
from tracescore.scorers.surface import (
    CELL_SCORES,
    CELLS,
    SURFACE_CONTRADICTION_RATIO,
    SURFACE_DISCOVERED_SUPPORT,
    SURFACE_FETCH_YIELD,
    SURFACE_FIRST_SUPPORT_RANK,
    SURFACE_SUPPORT_ANY,
)
from tracescore.store.db import Store


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, bool | int | float) else None


@dataclass
class Ratio:
    """A share or a mean: a running numerator over a count (``None`` when nothing was counted, never 0)."""

    total: float = 0.0
    count: int = 0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.total += value
            self.count += 1

    @property
    def value(self) -> float | None:
        return self.total / self.count if self.count else None


@dataclass
class SurfaceColumn:
    """One provider's (group's) answer and surface figures, summed from its result lines."""

    traces: int = 0
    correct: Ratio = field(default_factory=Ratio)
    semantic: Ratio = field(default_factory=Ratio)
    token_f1: Ratio = field(default_factory=Ratio)
    support_any: Ratio = field(default_factory=Ratio)
    cells: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CELLS, 0))
    supporting: int = 0  # Σ SMART + MISSED over traces with a contradiction ratio
    contradicting: float = 0.0  # Σ ratio × supporting over the same traces
    first_rank: Ratio = field(default_factory=Ratio)
    fetch_yield: Ratio = field(default_factory=Ratio)
    discovered: Ratio = field(default_factory=Ratio)  # its total: pages over the traces that have the score
    fetch_tokens: Ratio = field(default_factory=Ratio)
    absent: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # why surface.* was absent

    def add(self, result: Mapping[str, Any], tokens: int | None = None) -> None:
        """Fold one result line (and, from a stored run, the fetch tokens of its trace) into the column."""
        scores: Mapping[str, Any] = result.get("scores") or {}
        self.traces += 1
        self.correct.add(_num(scores.get(ANSWER_CORRECT)))
        self.semantic.add(_num(scores.get(ANSWER_SEMANTIC_MATCH)))
        self.token_f1.add(_num(scores.get(ANSWER_TOKEN_F1)))
        support = _num(scores.get(SURFACE_SUPPORT_ANY))
        if support is None:
            reason = (result.get("missing") or {}).get(SURFACE_SUPPORT_ANY)
            if reason:
                self.absent[str(reason)] += 1
            return
        self.support_any.add(support)
        counts = {c: _num(scores.get(CELL_SCORES[c])) or 0.0 for c in CELLS}
        for cell, n in counts.items():
            self.cells[cell] += int(n)
        ratio = _num(scores.get(SURFACE_CONTRADICTION_RATIO))
        if ratio is not None:
            supporting = int(counts["smart"] + counts["missed"])
            self.supporting += supporting
            self.contradicting += ratio * supporting
        self.first_rank.add(_num(scores.get(SURFACE_FIRST_SUPPORT_RANK)))
        self.fetch_yield.add(_num(scores.get(SURFACE_FETCH_YIELD)))
        self.discovered.add(_num(scores.get(SURFACE_DISCOVERED_SUPPORT)))
        if tokens is not None:
            self.fetch_tokens.add(float(tokens))

    @property
    def urls(self) -> int:
        return sum(self.cells.values())

    def share(self, cell: str) -> float | None:
        """The share of every URL seen that falls in ``cell``."""
        return self.cells[cell] / self.urls if self.urls else None

    @property
    def contradiction_ratio(self) -> float | None:
        return self.contradicting / self.supporting if self.supporting else None


@dataclass
class SurfaceReport:
    """The provider section: a ``SurfaceColumn`` per group and the (case, provider, support) rows for complementarity.

    ``tokens`` (trace id → fetch tokens) comes from the store for a stored run (``fetch_tokens``); empty otherwise.
    """

    group_by: str | None = None
    case_key: str | None = None
    tokens: Mapping[str, int] = field(default_factory=dict)
    columns: dict[str, SurfaceColumn] = field(default_factory=dict)
    rows: list[tuple[str, str, bool | None]] = field(default_factory=list)

    def add(self, result: Mapping[str, Any]) -> None:
        """Fold one result line in (an unreadable line, with errors only, has no group and is skipped)."""
        if result.get("errors") and not result.get("scores") and not result.get("missing"):
            return
        group = (field_value(result, self.group_by) or NO_GROUP) if self.group_by else "all"
        trace_id = result.get("trace_id")
        tokens = self.tokens.get(str(trace_id)) if trace_id is not None else None
        self.columns.setdefault(group, SurfaceColumn()).add(result, tokens)
        if self.group_by and self.case_key and group != NO_GROUP:
            case = field_value(result, self.case_key)
            support = (result.get("scores") or {}).get(SURFACE_SUPPORT_ANY)
            if case is not None:
                self.rows.append((case, group, support if isinstance(support, bool) else None))

    def tap(self, results: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """Pass result lines through, folding each in: one stream feeds both this section and the main report."""
        for result in results:
            self.add(result)
            yield result

    @property
    def labelled(self) -> bool:
        """Whether any trace carries surface labels (else the section is one line of reasons)."""
        return any(c.support_any.count for c in self.columns.values())

    @property
    def absent(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for column in self.columns.values():
            for reason, n in column.absent.items():
                out[reason] += n
        return dict(sorted(out.items(), key=lambda p: -p[1]))

    def sorted_columns(self) -> list[tuple[str, SurfaceColumn]]:
        """Groups by name, the no-value group last (the order of the report's other tables)."""
        return sorted(self.columns.items(), key=lambda p: (p[0] == NO_GROUP, p[0]))

    def complementarity(self) -> Complementarity | None:
        """Which provider's surface alone supported which question, and the union; None without ``--case-key``."""
        return complementarity(self.rows) if self.group_by and self.case_key else None


def fetch_tokens(store: Store, run_id: str) -> dict[str, int]:
    """Trace id → tokens of the pages the agent fetched (``surface.fetch_yield`` metadata) for a stored run."""
    out: dict[str, int] = {}
    for trace_id, metadata in store.query(
        "SELECT trace_id, metadata FROM scores WHERE run_id = ? AND name = ?", (run_id, SURFACE_FETCH_YIELD)
    ):
        tokens = json.loads(metadata or "{}").get("fetch_tokens")
        if isinstance(tokens, int):
            out[str(trace_id)] = tokens
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _ratio_json(ratio: Ratio) -> dict[str, Any]:
    return {"value": _round(ratio.value), "n": ratio.count}


def _column_json(c: SurfaceColumn) -> dict[str, Any]:
    """One column as plain JSON: a sum over no labelled trace is null, never 0 (absent is not zero)."""
    labelled = c.support_any.count > 0
    return {
        "traces": c.traces,
        "labelled": c.support_any.count,
        "correct": _ratio_json(c.correct),
        "semantic_match": _ratio_json(c.semantic),
        "token_f1": _ratio_json(c.token_f1),
        "support_any": _ratio_json(c.support_any),
        "urls": c.urls if labelled else None,
        "cells": {
            cell: {"count": c.cells[cell] if labelled else None, "share": _round(c.share(cell))} for cell in CELLS
        },
        "contradiction_ratio": {
            "value": _round(c.contradiction_ratio),
            "contradicting": round(c.contradicting, 6) if c.supporting else None,
            "supporting": c.supporting if labelled else None,
        },
        "first_support_rank": _ratio_json(c.first_rank),
        "fetch_yield": _ratio_json(c.fetch_yield),
        "discovered_support": int(c.discovered.total) if c.discovered.count else None,
        "fetch_tokens": {"total": int(c.fetch_tokens.total) if c.fetch_tokens.count else None,
                         **_ratio_json(c.fetch_tokens)},  # fmt: skip
        "absent": dict(c.absent),
    }


def surface_to_json(report: SurfaceReport) -> dict[str, Any]:
    """The provider section as plain JSON (the ``surface`` key of ``--format json``)."""
    columns = {name: _column_json(c) for name, c in report.sorted_columns()}
    comp = report.complementarity()
    return {
        "group_by": report.group_by,
        "case_key": report.case_key,
        "columns": columns,
        "complementarity": None
        if comp is None
        else {
            "questions": comp.questions,
            "supported": comp.supported,
            "only": comp.only,
            "union": comp.union,
            "none": comp.none,
        },
    }
