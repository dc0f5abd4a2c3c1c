"""The retrieval budget table as text cells (one column per group, as the stage split), shared by the terminal,
Markdown and HTML renderers."""

from __future__ import annotations

from tracescore.report.budget import PER_CHARS, Budget
from tracescore.report.summary import Report

BUDGET_TITLE = "Retrieval budget (per answer: a trace with a search or fetch step)"


def _fixed(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _rows(b: Budget) -> list[str]:
    correct = "—" if b.correct_per_chars is None else f"{b.correct_per_chars:.2f} ({b.correct}/{b.decided})"
    return [str(b.answers), _fixed(b.searches_per_answer), _fixed(b.fetches_per_answer),
            _fixed(b.chars_per_answer, 0), correct]  # fmt: skip


_LABELS = ("answers", "searches per answer", "fetches per answer", "characters read per answer",
           f"correct answers per {PER_CHARS:,} characters read")  # fmt: skip


def budget_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """(header, rows): a row per figure, a column per group of the report (or "all")."""
    columns = report.columns()
    budget = report.budget
    cells = [_rows(budget.overall if not report.group_by else budget.groups.get(name, Budget()))
             for name, _ in columns]  # fmt: skip
    rows = [[label, *(c[i] for c in cells)] for i, label in enumerate(_LABELS)]
    return ["budget", *(name for name, _ in columns)], rows


def budget_note(report: Report) -> str | None:
    """Why the table is left out (no line carries the trajectory scores), or None when it is shown."""
    if report.budget.any:
        return None
    return (
        "Retrieval budget: no trace in these results has trajectory.search_calls"
        " (scored before the trajectory scores, or before #43 named them so?)"
    )
