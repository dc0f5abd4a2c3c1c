"""The provider section as text cells, shared by the terminal, Markdown and HTML renderers."""

from __future__ import annotations

from tracescore.report.summary import Summary
from tracescore.report.surface import Ratio, SurfaceColumn, SurfaceReport
from tracescore.scorers.citations import CITATION_UNFETCHED_RATE
from tracescore.scorers.deadlinks import CITATION_DEAD_RATE
from tracescore.scorers.surface import CELLS

SURFACE_TITLE = "Same accuracy, different evidence: the search surface per provider"
_CELL_TITLES = {"smart": "SMART", "missed": "MISSED", "blind": "BLIND", "noop": "NO-OP"}


def _share(ratio: Ratio) -> str:
    value = ratio.value
    return "—" if value is None else f"{value:.0%} ({int(ratio.total)}/{ratio.count})"


def _mean(ratio: Ratio, digits: int = 3) -> str:
    value = ratio.value
    return "—" if value is None else f"{value:.{digits}f} (n={ratio.count})"


def _cell(c: SurfaceColumn, cell: str) -> str:
    share = c.share(cell)
    return "—" if share is None else f"{share:.0%} ({c.cells[cell]}/{c.urls})"


def _rows(c: SurfaceColumn) -> list[tuple[str, str]]:
    cells = [(f"{_CELL_TITLES[cell]} share", _cell(c, cell)) for cell in CELLS]
    ratio = c.contradiction_ratio
    tokens = c.fetch_tokens
    return [
        ("traces (with surface labels)", f"{c.traces} ({c.support_any.count})"),
        ("answer correct", _share(c.correct)),
        ("answer semantic match", _share(c.semantic)),
        ("answer token F1 (mean)", _mean(c.token_f1)),
        ("surface support before any fetch", _share(c.support_any)),
        *cells,
        (
            "contradiction ratio (contradicting / supporting)",
            "—" if ratio is None else f"{ratio:.2f} ({c.contradicting:g}/{c.supporting})",
        ),
        ("first support rank (mean)", _mean(c.first_rank, 2)),
        ("fetch yield (mean)", _mean(c.fetch_yield)),
        ("discovered support (pages)", f"{c.discovered.total:g}" if c.discovered.count else "—"),
        (
            "fetch tokens (total; per trace; stored runs)",
            f"{int(tokens.total):,}; {tokens.value:,.0f}" if tokens.count else "—",
        ),
    ]


def surface_table(report: SurfaceReport) -> tuple[list[str], list[list[str]]]:
    """Header (measure, one column per provider) and rows of the provider section."""
    columns = report.sorted_columns()
    header = ["measure", *(name for name, _ in columns)]
    per = [_rows(c) for _, c in columns]
    labels = [label for label, _ in per[0]] if per else []
    return header, [[label, *(rows[i][1] for rows in per)] for i, label in enumerate(labels)]


def surface_note(report: SurfaceReport) -> str | None:
    """One line when no trace carries surface labels: why (the absent reasons), else None."""
    if report.labelled:
        return None
    reasons = "; ".join(f"{n} × {reason}" for reason, n in list(report.absent.items())[:3])
    return "surface: not scored" + (f" ({reasons})" if reasons else " (no surface.* scores in these results)")


def complementarity_lines(report: SurfaceReport) -> list[str]:
    """Complementarity in plain sentences (questions only one provider's surface supported, the union)."""
    comp = report.complementarity()
    if comp is None:
        if report.group_by:
            return ["Complementarity: give --case-key FIELD (the field naming the question across providers)."]
        return []
    if not comp.questions:
        return [f"Complementarity: no question (by {report.case_key}) ran on two providers with surface labels."]
    out = [
        f"Complementarity over {comp.questions} question(s) run on several providers (by {report.case_key}):"
        f" the union of the providers' surfaces supports {comp.union} ({comp.union / comp.questions:.0%})."
    ]
    for provider in comp.providers:
        only = comp.only[provider]
        more = f" … and {len(only) - 10} more" if len(only) > 10 else ""
        listed = f": {', '.join(only[:10])}{more}" if only else ""
        out.append(f"{provider}: supports {comp.supported[provider]}, alone {len(only)}{listed}")
    if comp.none:
        out.append(f"no provider's surface supports {len(comp.none)}: {', '.join(comp.none[:10])}")
    return out


def links_line(summary: Summary) -> str | None:
    """``citation.dead_rate`` beside ``citation.unfetched_rate`` (the "dead or unfetched" reading), when checked."""
    dead = summary.stats.get(CITATION_DEAD_RATE)
    if dead is None or dead.mean is None:
        return None
    unread = summary.stats.get(CITATION_UNFETCHED_RATE)
    unfetched = "—" if unread is None or unread.mean is None else f"{unread.mean:.3f} (n={unread.present})"
    return (
        f"Cited links (--check-links): dead rate {dead.mean:.3f} (n={dead.present}, {dead.absent_count} absent)"
        f" beside unfetched rate {unfetched}: dead or unfetched."
    )
