"""The agreement section in the terminal (rich), in Markdown and in HTML (the confusion matrix as a table)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracescore.calibrate.trust import sampled_note
from tracescore.report.agreement import AgreementEntry, AgreementSection

TITLE = "Judge agreement with human labels"
NEVER = "never calibrated against human labels: its judged scores are unmeasured guesses (see `tracescore calibrate`)"


def _num(value: Any) -> str:
    return "—" if value is None else f"{float(value):.2f}"


def _estimate(stats: Mapping[str, Any] | None) -> str:
    """``0.66 (95% CI 0.40–0.85)``, or ``—`` with the reason the figure is absent."""
    stats = stats or {}
    if stats.get("value") is None:
        return "—" + (f" ({stats['reason']})" if stats.get("reason") else "")
    interval = stats.get("interval")
    text = _num(stats["value"])
    if interval:
        text += f" (95% CI {_num(interval[0])}–{_num(interval[1])})"
    elif stats.get("reason"):
        text += f" ({stats['reason']})"
    return text


def _heading(e: AgreementEntry) -> str:
    used = " — judge of these results" if e.used else ""
    return f"{e.judge_model} · rubric {e.rubric_version} · {e.label}{used}"


def _summary(e: AgreementEntry) -> list[str]:
    """The figures of one entry as short lines (shared by all three formats)."""
    c = e.calibration
    if c is None:
        return [NEVER]
    where = f"calibration {c.calibration_id[:8]}, measured {c.measured_at.date().isoformat()}"
    return figure_lines(e.figures, e.partial, where)


def figure_lines(f: Mapping[str, Any], partial: tuple[bool | None, str] | None = None, where: str = "") -> list[str]:
    """Measured figures (``Agreement.as_dict()``) as short lines: n, raw, kappa, AUROC, the ceiling, PARTIAL."""
    kind = "linear-weighted kappa" if f.get("weights") == "linear" else "kappa"
    lines = [
        f"n = {f.get('n', 0)} labelled items" + (f" ({where})" if where else ""),
        f"raw agreement {_estimate(f.get('raw'))}",
        f"{kind} {_estimate(f.get('kappa'))}",
    ]
    if sampled_note(f):  # [scoring] judge_sample: the items came from the judged (sampled and flagged) traces
        lines.insert(1, f"items from {sampled_note(f)}")
    if f.get("weights") == "linear":
        lines.append(f"unweighted kappa {_estimate(f.get('kappa_unweighted'))}")
    lines.append(f"AUROC {_estimate(f.get('auroc'))}")
    for pair, stats in (f.get("pairwise_auroc") or {}).items():  # ordinal: each level against the next (WiCE)
        lines.append(f"AUROC {pair} {_estimate(stats)}")
    ceiling = f.get("human_human")
    if ceiling:
        lines.append(
            f"human–human ceiling: kappa {_estimate(ceiling.get('kappa'))}, raw {_estimate(ceiling.get('raw'))}"
            f" on {ceiling.get('n', 0)} reviewer pair(s)"
        )
    else:
        lines.append("human–human ceiling: no item labelled by two reviewers")
    if partial is not None:
        lines.append(partial[1])  # "PARTIAL not above chance: …" when its kappa interval includes 0
    return lines


def _per_label(f: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for c in f.get("categories", []):
        rows.append(
            [
                c,
                str(f.get("support", {}).get(c, 0)),
                _num(f.get("precision", {}).get(c)),
                _num(f.get("recall", {}).get(c)),
                _estimate(f.get("per_class_kappa", {}).get(c)) if f.get("per_class_kappa") else "—",
            ]
        )
    return rows


_PER_LABEL_HEADER = ["label", "human count", "precision", "recall", "kappa (one vs rest)"]


# -- terminal -----------------------------------------------------------------------------------------------------
def render_agreement_terminal(section: AgreementSection, console: Console) -> None:
    """Each entry: its figures, the confusion matrix (human rows × judge columns) and per-label figures."""
    if not section:
        return
    console.print(Text(TITLE, style="bold"), highlight=False)
    for e in section.entries:
        render_figures_terminal(_heading(e), _summary(e), e.figures, console)


def render_figures_terminal(heading: str, lines: list[str], f: Mapping[str, Any], console: Console) -> None:
    """One measured label in the terminal: heading, figure lines, confusion matrix, per-label table."""
    console.print(Text(heading, style="bold"), highlight=False)
    for line in lines:
        style = "red" if line.startswith("PARTIAL not above chance") or line == NEVER else ""
        console.print(Text("  " + line, style=style), highlight=False)
    if not f.get("categories"):
        return
    matrix = Table(title="confusion (rows: human, columns: judge)", title_justify="left")
    matrix.add_column("human \\ judge", overflow="fold")
    for c in f["categories"]:
        matrix.add_column(c, justify="right", overflow="fold")
    for c, row in zip(f["categories"], f.get("confusion", []), strict=False):
        matrix.add_row(c, *map(str, row))
    console.print(matrix)
    per = Table()
    for n, h in enumerate(_PER_LABEL_HEADER):
        per.add_column(h, justify="left" if n == 0 else "right", overflow="fold")
    for row in _per_label(f):
        per.add_row(*row)
    console.print(per)


# -- Markdown -----------------------------------------------------------------------------------------------------
def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(map(_md, header)) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    return out + ["| " + " | ".join(map(_md, row)) + " |" for row in rows]


def agreement_markdown(section: AgreementSection) -> list[str]:
    """Markdown lines of the section (none when there is nothing to show)."""
    if not section:
        return []
    out = ["", f"### {TITLE}"]
    for e in section.entries:
        out += ["", f"#### {_md(_heading(e))}", ""]
        out += [f"- {'**' + line + '**' if line.startswith('PARTIAL not above') else line}" for line in _summary(e)]
        f = e.figures
        if f.get("categories"):
            cats = list(f["categories"])
            out += ["", "Confusion matrix (rows: human, columns: judge):", ""]
            out += _md_table(
                ["human \\ judge", *cats], [[c, *map(str, r)] for c, r in zip(cats, f["confusion"], strict=False)]
            )
            out += [""]
            out += _md_table(_PER_LABEL_HEADER, _per_label(f))
    return out


# -- HTML ---------------------------------------------------------------------------------------------------------
def agreement_html(section: AgreementSection) -> str:
    """The section as HTML: figures as a list, the confusion matrix and per-label figures as tables."""
    if not section:
        return ""
    out = [f'<h2 id="agreement">{TITLE}</h2>']
    for e in section.entries:
        key = escape(f"{e.judge_model}|{e.rubric_version}|{e.label}", quote=True)
        out.append(f'<section class="agreement" data-judge="{key}"><h3>{escape(_heading(e))}</h3><ul>')
        for line in _summary(e):
            cls = ' class="warn"' if line.startswith("PARTIAL not above chance") or line == NEVER else ""
            out.append(f"<li{cls}>{escape(line)}</li>")
        out.append("</ul>")
        f = e.figures
        if f.get("categories"):
            cats = list(f["categories"])
            out.append('<table class="confusion"><caption>Confusion matrix (rows: human, columns: judge)</caption>')
            out.append("<tr><th>human \\ judge</th>" + "".join(f"<th>{escape(c)}</th>" for c in cats) + "</tr>")
            for c, row in zip(cats, f["confusion"], strict=False):
                i = cats.index(c)
                cells = "".join(f"<td{' class=diag' if i == j else ''}>{v}</td>" for j, v in enumerate(row))
                out.append(f'<tr data-human="{escape(c)}"><th>{escape(c)}</th>{cells}</tr>')
            out.append('</table><table class="per-label"><tr>')
            out.append("".join(f"<th>{escape(h)}</th>" for h in _PER_LABEL_HEADER) + "</tr>")
            for row in _per_label(f):
                out.append("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>")
            out.append("</table>")
        out.append("</section>")
    return "\n".join(out)
