"""A self-contained HTML report (inline CSS and SVG, no script, no external resource): opens with no network."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape as _escape

from tracescore.report.agreement import AgreementSection
from tracescore.report.render.agreement import agreement_html
from tracescore.report.render.budget import BUDGET_TITLE, budget_note, budget_table
from tracescore.report.render.queue import QUEUE_CSS, queue_tables
from tracescore.report.render.sessions import sessions_html
from tracescore.report.render.surface import (
    SURFACE_TITLE,
    complementarity_lines,
    links_line,
    surface_note,
    surface_table,
)
from tracescore.report.render.svg import FEW, bar_chart, line_chart
from tracescore.report.safe import html_link, visible
from tracescore.report.sessions import SessionView
from tracescore.report.summary import STAGES, Report, by_stage, score_stage, work_queue
from tracescore.report.surface import SurfaceReport
from tracescore.scorers.diagnosis import CELLS

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:980px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,th,td.name{text-align:left}
td.ids{text-align:left;font-family:ui-monospace,monospace;font-size:12px;max-width:560px}
.muted{color:#666}svg.chart{display:block;margin:8px 0;background:#fafafa;border:1px solid #eee}
li{margin:4px 0}code{font-size:12px}
.warn{color:#a40000;font-weight:600}td.diag{background:#eef6ee}caption{text-align:left;color:#666}
""" + QUEUE_CSS


def escape(text: str) -> str:
    """HTML text of a value: its unsafe characters spelled out (``visible``), then escaped."""
    return _escape(visible(text))


def _rate(passed: int, decided: int) -> str:
    return f"{passed / decided:.0%} <span class=muted>({passed}/{decided})</span>" if decided else "—"


def render_html(
    report: Report,
    surface: SurfaceReport | None = None,
    *,
    agreement: AgreementSection | None = None,
    sessions: Sequence[SessionView] = (),
) -> str:
    """The report as one HTML page: stage rates per group and over time as SVG, cells with ids, the judge's
    agreement with human labels (when given, the confusion matrix as a table), the work queue, the sessions with
    their turns (when the results have any)."""
    overall = report.overall
    columns = report.columns()
    names = [n for n, _ in columns]
    title = "tracescore report" + (f" — {report.source}" if report.source else "")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">{overall.traces} traces scored, {overall.failed} unreadable, {overall.diagnosed} with a'
        " stage cell" + (f"; grouped by <code>{escape(report.group_by)}</code>" if report.group_by else "") + ".</p>",
    ]
    bars = {(n, st): s.stages[st].rate for n, s in columns for st in STAGES}
    out += ["<h2>Stage pass rates per group</h2>", bar_chart("chart-groups", STAGES, names, bars)]
    granularity, buckets = report.timeline()
    labels = [b for b, _ in buckets]
    points = {(st, b): counts[st].rate for b, counts in buckets for st in STAGES}
    sizes = {(st, b): counts[st].decided for b, counts in buckets for st in STAGES}
    out.append(f"<h2>Stage pass rates over time (per {granularity})</h2>")
    if labels:
        out.append(line_chart("chart-time", labels, STAGES, points, sizes))
        out.append(f'<p class="muted">Hover a point for its n; a hollow point rests on fewer than {FEW} traces.</p>')
    else:
        out.append('<p class="muted">No timestamps in these results.</p>')

    out += ["<h2>Stage contingency</h2>", '<table id="cells"><tr><th>cell</th>']
    out += [f"<th>{escape(n)}</th>" for n in names] + ["<th>trace ids</th></tr>"]
    for cell in CELLS:
        if not any(s.cells.get(cell) for _, s in columns):
            continue
        counts = "".join(f"<td>{len(s.cells.get(cell, []))}</td>" for _, s in columns)
        ids = _cell_ids(report, cell)
        out.append(f'<tr data-cell="{escape(cell)}"><td>{escape(cell)}</td>{counts}<td class="ids">{ids}</td></tr>')
    undiagnosed = "".join(f"<td>{sum(s.undiagnosed.values())}</td>" for _, s in columns)
    reasons = "; ".join(f"{n} × {escape(r)}" for r, n in sorted(overall.undiagnosed.items(), key=lambda p: -p[1]))
    out.append(f'<tr data-cell="none"><td>no cell</td>{undiagnosed}<td class="ids">{reasons}</td></tr></table>')

    out += ['<h2>Stage pass rates</h2><table id="stages"><tr><th>stage</th>']
    out += [f"<th>{escape(n)}</th>" for n in names] + ["</tr>"]
    for st in STAGES:
        row = "".join(f"<td>{_rate(s.stages[st].passed, s.stages[st].decided)}</td>" for _, s in columns)
        out.append(f"<tr><td>{st}</td>{row}</tr>")
    out.append("</table>")
    out += _budget_html(report)
    if surface is not None:
        out += _surface_html(surface)
    if (links := links_line(overall)) is not None:
        out.append(f'<p id="links">{escape(links)}</p>')
    if overall.judge.any:
        j = overall.judge
        out.append(
            f"<p>Judge: {j.calls} calls, {j.input_tokens:,} input + {j.output_tokens:,} output tokens,"
            f" ≈ ${j.cost_usd:.4f}.</p>"
        )

    if agreement:
        out.append(agreement_html(agreement))
    out.append('<h2>Work queue</h2><ul id="queue">')
    queue = work_queue(overall)
    if not queue:
        out.append("<li>Nothing to fix: no trace in a failing cell.</li>")
    for item in queue:
        ids = ", ".join(html_link(f"<code>{escape(i)}</code>", report.links.get(i)) for i in item.trace_ids)
        out.append(
            f'<li data-key="{escape(item.key)}"><b>{len(item.trace_ids)} {escape(item.title)}</b> —'
            f" {escape(item.advice)}: {ids}</li>"
        )
    out.append("</ul>")
    out += queue_tables(report, queue)
    out += sessions_html(sessions)

    out.append('<h2>Scores</h2><table id="scores"><tr><th>stage</th><th>score</th><th>present</th>')
    out.append("<th>mean / share true</th><th>absent</th></tr>")
    for name in by_stage(overall.stats):
        stat = overall.stats[name]
        mean = "—" if stat.mean is None else f"{stat.mean:.3f}"
        out.append(
            f'<tr><td>{escape(score_stage(name))}</td><td class="name">{escape(name)}</td><td>{stat.present}</td>'
            f"<td>{mean}</td>"
            f"<td>{stat.absent_count}</td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def _cell_ids(report: Report, cell: str) -> str:
    """The trace ids of a cell: one list, or in a grouped view one list per group, each named."""
    links = report.links

    def linked(ids: list[str]) -> str:
        return ", ".join(html_link(escape(i), links.get(i)) for i in ids)

    if not report.group_by:
        return linked(report.overall.cells.get(cell, []))
    return "".join(
        f'<div data-group="{escape(name)}"><b>{escape(name)}</b>: {linked(ids)}</div>'
        for name, summary in report.columns()
        if (ids := summary.cells.get(cell))
    )


def _budget_html(report: Report) -> list[str]:
    """The retrieval budget beside the stage split: one column per group."""
    note = budget_note(report)
    if note is not None:
        return [f'<p id="budget" class="muted">{escape(note)}.</p>']
    return [*_columns_html("budget", BUDGET_TITLE, *budget_table(report)), "</table>"]


def _columns_html(table_id: str, title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A titled table of text cells, left open (``</table>`` is the caller's)."""
    out = [f"<h2>{escape(title)}</h2>", f'<table id="{table_id}"><tr>']
    out += [f"<th>{escape(h)}</th>" for h in header] + ["</tr>"]
    return out + ["<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows]


def _surface_html(surface: SurfaceReport) -> list[str]:
    """The provider section: a table with one column per provider, then complementarity."""
    note = surface_note(surface)
    if note is not None:
        return [f'<p id="surface" class="muted">{escape(note)}.</p>']
    out = _columns_html("surface", SURFACE_TITLE, *surface_table(surface))
    out.append('</table><ul id="complementarity">')
    out += [f"<li>{escape(line)}</li>" for line in complementarity_lines(surface)]
    out.append("</ul>")
    return out
