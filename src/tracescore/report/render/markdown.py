"""Markdown for a PR comment or ``$GITHUB_STEP_SUMMARY``: the report, and the one-screen gate summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tracescore.report.agreement import AgreementSection
from tracescore.report.gate import GateCheck, GateResult
from tracescore.report.render.agreement import agreement_markdown
from tracescore.report.render.budget import BUDGET_TITLE, budget_note, budget_table
from tracescore.report.render.surface import (
    SURFACE_TITLE,
    complementarity_lines,
    links_line,
    surface_note,
    surface_table,
)
from tracescore.report.safe import md_code, md_link, md_text
from tracescore.report.summary import STAGES, Report, Summary, by_stage, score_stage, work_queue
from tracescore.report.surface import SurfaceReport
from tracescore.scorers.diagnosis import CELLS

MAX_IDS = 12  # trace ids listed per cell or queue item before "… and N more"


def _cell(text: str) -> str:
    return md_text(text)


def _ids(ids: Sequence[str], limit: int = MAX_IDS, links: Mapping[str, str] | None = None) -> str:
    """Ids as code spans, each a link to its trace when ``links`` has it."""
    shown = ", ".join(md_link(i, links.get(i)) if links else md_code(i) for i in ids[:limit])
    return shown + (f" … and {len(ids) - limit} more" if len(ids) > limit else "")


def _rate(passed: int, decided: int) -> str:
    return f"{passed / decided:.0%} ({passed}/{decided})" if decided else "—"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "r") -> list[str]:
    out = ["| " + " | ".join(map(_cell, header)) + " |"]
    out.append("| --- | " + " | ".join(("---:" if align == "r" else "---") for _ in header[1:]) + " |")
    out += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]
    return out


def _used_cells(columns: Sequence[tuple[str, Summary]]) -> list[str]:
    return [c for c in CELLS if any(s.cells.get(c) for _, s in columns)]


def render_markdown(
    report: Report, surface: SurfaceReport | None = None, *, agreement: AgreementSection | None = None
) -> str:
    """The report as Markdown: contingency cells with ids, stage rates, judge cost (and agreement), the work queue."""
    overall = report.overall
    columns = report.columns()
    names = [name for name, _ in columns]
    lines = [f"## tracescore report{f' — {report.source}' if report.source else ''}", ""]
    lines.append(
        f"{overall.traces} traces scored, {overall.failed} unreadable, {overall.diagnosed} with a stage cell"
        + (f"; grouped by {md_code(report.group_by)}" if report.group_by else "")
        + "."
    )
    lines += ["", "### Stage contingency", ""]
    lines += _table(
        ["cell", *names],
        [[c, *(str(len(s.cells.get(c, []))) for _, s in columns)] for c in _used_cells(columns)]
        + [["no cell", *(str(sum(s.undiagnosed.values())) for _, s in columns)]],
    )
    lines += ["", "### Stage pass rates", ""]
    rates = [[st, *(_rate(s.stages[st].passed, s.stages[st].decided) for _, s in columns)] for st in STAGES]
    lines += _table(["stage", *names], rates)
    note = budget_note(report)
    lines += ["", md_text(note) + "."] if note else ["", f"### {BUDGET_TITLE}", "", *_table(*budget_table(report))]
    if surface is not None:
        lines += _surface_markdown(surface)
    if (links := links_line(overall)) is not None:
        lines += ["", links]
    if overall.judge.any:
        j = overall.judge
        lines += [
            "",
            f"Judge: {j.calls} calls, {j.input_tokens:,} input + {j.output_tokens:,} output tokens,"
            f" ≈ ${j.cost_usd:.4f}.",
        ]
    lines += agreement_markdown(agreement) if agreement else []
    lines += ["", "### Work queue", ""]
    queue = work_queue(overall)
    if not queue:
        lines.append("Nothing to fix: no trace in a failing cell.")
    for item in queue:
        ids = _ids(item.trace_ids, links=report.links)
        lines.append(f"- **{len(item.trace_ids)} {item.title}** — {item.advice}: {ids}")
    lines += ["", "### Traces per cell", ""]
    for cell in _used_cells([("all", overall)]):
        ids = _ids(overall.cells[cell], limit=10**9, links=report.links)
        lines.append(f"- `{cell}` ({len(overall.cells[cell])}): {ids}")
    if overall.undiagnosed:
        reasons = "; ".join(f"{n} × {md_text(r)}" for r, n in sorted(overall.undiagnosed.items(), key=lambda p: -p[1]))
        lines.append(f"- no cell ({sum(overall.undiagnosed.values())}): {reasons}")
    lines += ["", "### Scores", ""]
    lines += _table(
        ["stage", "score", "present", "mean / share true", "absent"],
        [
            [score_stage(n), n, str(st.present), "—" if st.mean is None else f"{st.mean:.3f}", str(st.absent_count)]
            for n, st in ((n, overall.stats[n]) for n in by_stage(overall.stats))
        ],
    )
    if overall.errors:
        lines += ["", f"{len(overall.errors)} error(s); first: {_cell(overall.errors[0])}"]
    return "\n".join(lines) + "\n"


def _surface_markdown(surface: SurfaceReport) -> list[str]:
    note = surface_note(surface)
    if note is not None:
        return ["", md_text(note) + "."]
    header, rows = surface_table(surface)
    lines = ["", f"### {SURFACE_TITLE}", "", *_table(header, rows), ""]
    return lines + [f"- {md_text(x)}" for x in complementarity_lines(surface)]


_RULE_TITLES = {
    "threshold": "threshold",
    "regression": "no regression (noise band)",
    "newly_failing": "no newly failing case",
    "readable": "every result line read",
    "fabricated": "no fabricated citation",
    "unread": "no unread citation",
}
_ICON = {"pass": "✅", "fail": "❌", "warn": "⚠️"}


def _not_run(result: GateResult) -> list[str]:
    """The rules that did not run and what turns them on (a gate with no baseline checks no regression)."""
    ran = {c.rule for c in result.checks}
    missing = []
    if not result.baseline_runs:
        missing += [f"{_RULE_TITLES[r]} (no --baseline given)" for r in ("regression", "newly_failing")]
    if "threshold" not in ran:
        missing.append(f"{_RULE_TITLES['threshold']} (no --min/--max or [gate.min]/[gate.max])")
    return ["", f"Did not run: {'; '.join(missing)}."] if missing else []


def _check_cases(check: GateCheck, limit: int, links: Mapping[str, str]) -> list[str]:
    """The first cases of a rule, the trace of each a link when its line had a ``trace_url``."""
    out = []
    for c in check.cases[:limit]:
        url = links.get(c.trace_id) if c.trace_id else None
        case = md_link(c.case, url) if c.trace_id == c.case else md_code(c.case)
        trace = f" (trace {md_link(c.trace_id, url)})" if c.trace_id and c.trace_id != c.case else ""
        out.append(f"  - {case} — stage **{c.stage}**{trace}" + (f": {md_text(c.detail)}" if c.detail else ""))
    if len(check.cases) > limit:
        out.append(f"  - … and {len(check.cases) - limit} more (see the JUnit report)")
    return out


def render_gate_markdown(result: GateResult, *, max_cases: int = 8) -> str:
    """A one-screen Markdown summary: verdict, one row per rule and stage, the cases that broke each failed rule."""
    failures = result.failures
    verdict = "passed" if result.passed else f"failed — {len(failures)} of {len(result.checks)} checks"
    lines = [f"## {'✅' if result.passed else '❌'} tracescore gate {verdict}", ""]
    lines.append(
        f"{result.traces} traces"
        + (f" in {md_text(result.source)}" if result.source else "")
        + (f", {result.unreadable} unreadable" if result.unreadable else "")
        + f"; {result.baseline_runs} baseline run(s)."
    )
    lines += _not_run(result)
    banded = [(c.subject, c.band) for c in result.checks if c.band is not None]
    if banded:
        runs = max(b.runs for _, b in banded)
        if runs < 2:
            lines.append(
                "Noise band: one baseline run, an estimate from one run: each band is widened from zero to what one"
                " case flipping moves the mean by; repeat --baseline to measure the spread."
            )
        else:
            spread = sorted(((n, b) for n, b in banded if b.width > 0), key=lambda p: -p[1].width)
            shown = "; ".join(f"{n} {b.low:.3f}–{b.high:.3f} ({b.width * 100:.1f} pts)" for n, b in spread[:6])
            more = f"; {len(spread) - 6} more with narrower bands" if len(spread) > 6 else ""
            flat = len(banded) - len(spread)
            lines.append(
                f"Noise band from {runs} baseline runs: {shown or 'no spread'}{more}"
                + (f"; {flat} score(s) identical in every baseline run" if flat and spread else "")
                + ("; a band of zero width is widened to what one case flipping moves the mean by." if flat else ".")
            )
    lines += [""]
    ordered = sorted(result.checks, key=lambda c: (not c.failed, c.status != "warn"))
    rows = [
        [
            f"{_ICON[c.status]} {_RULE_TITLES[c.rule]}",
            c.subject,
            "—" if c.observed is None else f"{c.observed:.3f}".rstrip("0").rstrip("."),
            c.limit + (f" (band {c.band.low:.3f}–{c.band.high:.3f}, {c.band.width * 100:.1f} pts)" if c.band else ""),
        ]
        for c in ordered
        if c.status != "pass" or c.rule != "regression"
    ]
    rows += [
        [
            "ℹ️ diagnostic (not gated)",
            d.name,
            "—" if d.observed is None else f"{d.observed:.3f}".rstrip("0").rstrip("."),
            f"none (baselines {d.band.low:.3f}–{d.band.high:.3f})" if d.band else "none",
        ]
        for d in result.diagnostics
    ]
    lines += _table(["rule", "stage / score", "observed", "limit"], rows, align="l")
    quiet = sum(1 for c in result.checks if c.rule == "regression" and c.status == "pass")
    if quiet:
        lines.append(f"\n{quiet} score(s) inside their noise band (not listed).")
    for check in failures + [c for c in result.checks if c.status == "warn"]:
        lines += ["", f"**{_RULE_TITLES[check.rule]} — {md_text(check.subject)}**: {md_text(check.message)}"]
        lines += _check_cases(check, max_cases, result.links)
    return "\n".join(lines) + "\n"
