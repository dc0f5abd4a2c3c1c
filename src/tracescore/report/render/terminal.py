"""The report in the terminal (rich): cells side by side per group, stage pass rates, the work queue with ids."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tracescore.report.agreement import AgreementSection
from tracescore.report.fit import print_table
from tracescore.report.render.agreement import render_agreement_terminal
from tracescore.report.render.budget import BUDGET_TITLE, budget_note, budget_table
from tracescore.report.render.surface import (
    SURFACE_TITLE,
    complementarity_lines,
    links_line,
    surface_note,
    surface_table,
)
from tracescore.report.safe import link_url, term, visible
from tracescore.report.summary import STAGES, Report, by_stage, score_stage, score_table, work_queue
from tracescore.report.surface import SurfaceReport
from tracescore.scorers.diagnosis import CELLS

MAX_IDS = 12  # ids shown per work-queue item
MAX_CELL_IDS = 200  # ids shown per cell


def _ids(ids: tuple[str, ...] | list[str], limit: int = MAX_IDS, links: Mapping[str, str] | None = None) -> Text:
    """The ids, each an OSC 8 hyperlink to its trace when ``links`` has it (given only for a terminal)."""
    out = Text()
    for n, trace_id in enumerate(ids[:limit]):
        href = link_url(links.get(trace_id)) if links else None
        out.append(", " if n else "")
        out.append(visible(trace_id), style=Style(link=href) if href else "")
    return out.append(f" … and {len(ids) - limit} more" if len(ids) > limit else "")


def render_report_terminal(
    report: Report,
    console: Console,
    surface: SurfaceReport | None = None,
    *,
    agreement: AgreementSection | None = None,
) -> None:
    """Contingency cells and stage pass rates with one column per group, then judge cost, the judge's agreement with
    human labels (when given) and the work queue."""
    overall = report.overall
    columns = report.columns()
    trace_links = report.links if console.is_terminal else None  # a pipe or a file gets plain ids, no escape codes
    title = f"Stage contingency ({overall.traces} traces scored, {overall.failed} unreadable)"
    if report.group_by:
        title += f" by {visible(report.group_by)}"
    console.print(Text(title, style="bold"), highlight=False)
    cells = Table()
    cells.add_column("cell", overflow="fold")
    for name, _ in columns:
        cells.add_column(term(name), justify="right", overflow="fold")
    for cell in CELLS:
        if any(s.cells.get(cell) for _, s in columns):
            cells.add_row(cell, *(str(len(s.cells.get(cell, []))) for _, s in columns))
    cells.add_row("no cell", *(str(sum(s.undiagnosed.values())) for _, s in columns))
    print_table(console, cells)

    console.print(Text("Stage pass rates (passed / decided; undecided traces not counted)", style="bold"))
    rates = Table()
    rates.add_column("stage", overflow="fold")
    for name, _ in columns:
        rates.add_column(term(name), justify="right", overflow="fold")
    for stage in STAGES:
        row = []
        for _, s in columns:
            c = s.stages[stage]
            row.append(f"{c.rate:.0%} ({c.passed}/{c.decided})" if c.rate is not None else "—")
        rates.add_row(stage, *row)
    print_table(console, rates)
    _budget(report, console)

    console.print(Text("Scores (mean over present values; absent ones counted, never as 0)", style="bold"))
    stats = score_table()
    for name in by_stage(overall.stats):
        st = overall.stats[name]
        mean = "—" if st.mean is None else f"{st.mean:.3f}"
        stats.add_row(term(score_stage(name)), term(name), str(st.present), mean, str(st.absent_count))
    print_table(console, stats)

    if surface is not None:
        _surface(surface, console)
    if (links := links_line(overall)) is not None:
        console.print(links, highlight=False)
    if overall.judge.any:
        j = overall.judge
        console.print(
            f"judge: {j.calls} calls, {j.input_tokens:,} input + {j.output_tokens:,} output tokens,"
            f" ≈ ${j.cost_usd:.4f}",
            highlight=False,
        )
    if agreement:
        render_agreement_terminal(agreement, console)
    console.print(Text("Traces per cell", style="bold"))
    for cell in CELLS:
        if overall.cells.get(cell):
            ids = overall.cells[cell]
            line = Text.assemble(f"  {cell} ({len(ids)}): ", _ids(ids, limit=MAX_CELL_IDS, links=trace_links))
            console.print(line, highlight=False)
    console.print(Text("Work queue", style="bold"))
    queue = work_queue(overall)
    if not queue:
        console.print("  nothing to fix: no trace in a failing cell")
    for item in queue:
        console.print(
            Text.assemble(
                (f"  {len(item.trace_ids)} {item.title}", "bold"),
                f" — {item.advice}: ",
                _ids(item.trace_ids, links=trace_links),
            ),
            highlight=False,
        )
    for message in overall.errors[:10]:
        console.print(Text.assemble(("error ", "red"), visible(message)), highlight=False, soft_wrap=True)
    if len(overall.errors) > 10:
        console.print(f"… and {len(overall.errors) - 10} more errors", highlight=False)


def _budget(report: Report, console: Console) -> None:
    """The retrieval budget beside the stage split: one column per group."""
    note = budget_note(report)
    if note is not None:
        console.print(term(note), highlight=False)
        return
    _columns(BUDGET_TITLE, *budget_table(report), console)


def _columns(title: str, header: list[str], rows: list[list[str]], console: Console) -> None:
    """A titled table of text cells: the first column names the row, one right-aligned column per group."""
    console.print(Text(title, style="bold"))
    table = Table()
    table.add_column(term(header[0]), overflow="fold")
    for name in header[1:]:
        table.add_column(term(name), justify="right", overflow="fold")
    for row in rows:
        table.add_row(*map(term, row))
    print_table(console, table)


def _surface(surface: SurfaceReport, console: Console) -> None:
    """The provider section: one column per provider, then complementarity."""
    note = surface_note(surface)
    if note is not None:
        console.print(term(note), highlight=False)
        return
    _columns(SURFACE_TITLE, *surface_table(surface), console)
    for line in complementarity_lines(surface):
        console.print(term(line), highlight=False)
