"""``tracescore report`` and ``tracescore gate``: read results (a file or a stored run), report or enforce."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click
from rich.markdown import Markdown

from tracescore.cli.browser import html_to_open, open_in_browser
from tracescore.cli.exits import EXIT_GATE_FAILED, end, store_option
from tracescore.cli.paths import reads, write_text, writes
from tracescore.errors import NothingToDoError, OutputError, TracescoreError
from tracescore.report.agreement import agreement_section, agreement_to_json, judges_of
from tracescore.report.gate import GateConfig, load_gate_config, parse_limit, run_gate
from tracescore.report.gate_config import DEFAULT_CASE_KEY
from tracescore.report.keys import FieldCheck
from tracescore.report.render import (
    gate_to_json,
    render_gate_markdown,
    render_html,
    render_junit,
    render_markdown,
    render_report_terminal,
)
from tracescore.report.render.sessions import render_sessions_terminal, sessions_markdown
from tracescore.report.runs import RUN_PREFIX, partial_reason, resolve_run, results_from
from tracescore.report.safe import fitted_console
from tracescore.report.sessions import GROUP_BY_SESSION, SessionTap, sessions_to_json
from tracescore.report.summary import build_report, report_to_json
from tracescore.report.surface import SurfaceReport, fetch_tokens, surface_to_json
from tracescore.store.db import Store

REPORT_FORMATS = ("terminal", "markdown", "json", "html")
GATE_FORMATS = ("terminal", "markdown", "json")

_store_option = store_option("Local store to read run:… specs and the judge's calibrations from.", written=False)


def _write(text: str, out: str | None) -> None:
    if not out or out == "-":
        click.echo(text, nl=False)
        return
    write_text(out, text)


@click.command()
@click.argument("results", type=reads())
@_store_option
@click.option("--group-by", metavar="FIELD", help="One column per value of this field, e.g. metadata.provider;"
              " 'session': the sessions (conversations) with their session scores and turns.")
@click.option(
    "--format", "fmt", type=click.Choice(REPORT_FORMATS), default="terminal", show_default=True, help="Output format."
)
@click.option("--out", type=writes(dir_okay=False, allow_dash=True), help="Write the report here instead of stdout.")
@click.option("--case-key", metavar="FIELD", help="Field naming the question across providers (complementarity).")
@click.option(
    "--open",
    "open_it",
    is_flag=True,
    help="Write the HTML report (to --out, else a new file in the temp folder) and open it in the browser.",
)
def report(
    results: str,
    store_path: str,
    group_by: str | None,
    fmt: str,
    out: str | None,
    case_key: str | None,
    open_it: bool = False,
) -> None:
    """Report a result file or stored run (run:latest, run:ID): stage cells with ids, rates, the work queue, and the
    judge's agreement with human labels from the calibrations in --store (when that store exists)."""
    if open_it:
        fmt, out = html_to_open(fmt, out)
    notes: list[str] = []
    label, lines = results_from(results, store_path, notes)
    _warn([f"note: {note}" for note in notes])
    partial = partial_reason(results, store_path)
    if partial is not None:
        click.echo(f"warning: {partial}", err=True)
    by_session = group_by == GROUP_BY_SESSION
    group_by = None if by_session else group_by
    sessions = SessionTap(_score_metadata(results, store_path))
    lines = sessions.tap(lines)
    named = {"--group-by": group_by, "--case-key": case_key}
    fields = FieldCheck(label, {flag: path for flag, path in named.items() if path})
    lines = fields.tap(lines)
    tokens = {}
    if results.startswith(RUN_PREFIX):  # fetch tokens per trace live in the store's score metadata
        with Store(store_path) as store:
            tokens = fetch_tokens(store, resolve_run(store, results))
    surface = SurfaceReport(group_by=group_by or None, case_key=case_key, tokens=tokens)
    judges: set[tuple[str, str]] = set()
    built = build_report(judges_of(surface.tap(lines), judges), group_by=group_by, source=label)
    _warn(fields.verify())
    agreement = agreement_section(Store(store_path), judges) if os.path.isfile(store_path) else None
    views = sessions.sections() if by_session or fmt == "html" else []  # the HTML report shows them when there are
    if by_session and not views:
        _warn(["note: --group-by session: no result line carries a session_id"])
    if fmt == "terminal":
        if out and out != "-":
            text = io.StringIO()
            console = fitted_console(file=text)
            render_report_terminal(built, console, surface, agreement=agreement)
            render_sessions_terminal(views, console)
            _write(text.getvalue(), out)
        else:
            render_report_terminal(built, console := fitted_console(), surface, agreement=agreement)
            render_sessions_terminal(views, console)
    elif fmt == "markdown":
        _write(render_markdown(built, surface, agreement=agreement) + "\n".join(sessions_markdown(views)), out)
    elif fmt == "json":
        whole = report_to_json(built) | {"surface": surface_to_json(surface)}
        if agreement:
            whole["agreement"] = agreement_to_json(agreement)
        if by_session:
            whole["sessions"] = sessions_to_json(views)
        _write(json.dumps(whole, indent=2, ensure_ascii=False) + "\n", out)
    else:
        _write(render_html(built, surface, agreement=agreement, sessions=views), out)
    if out and out != "-":
        click.echo(f"wrote the {fmt} report to {out}", err=True)
    if open_it and out:
        open_in_browser(out)


def _score_metadata(results: str, store_path: str) -> Callable[[str], dict[str, Any]] | None:
    """For a ``run:`` spec: each trace's score metadata in that run (the session grounding rate pools the turns'
    claim verdicts from it); None for a file, whose lines carry none."""
    if not results.startswith(RUN_PREFIX) or not os.path.isfile(store_path):
        return None
    with Store(store_path) as store:
        run_id = resolve_run(store, results)
        rows = store.query("SELECT trace_id, score_metadata FROM results WHERE run_id = ?", (run_id,))
    found = {str(t): json.loads(m) for t, m in rows if m}
    return lambda trace_id: found.get(trace_id, {})


def _warn(lines: list[str]) -> None:
    for line in lines:
        click.echo(line, err=True)


def _limits(values: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for text in values:
        try:
            name, value = parse_limit(text)
        except TracescoreError as exc:
            raise click.BadParameter(str(exc)) from exc
        out[name] = value
    return out


@click.command()
@click.argument("results", type=reads())
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    type=reads(),
    help="Baseline result file or run:…; repeat for a noise band.",
)
@click.option("--min", "minimums", multiple=True, metavar="NAME=VALUE", help="Lowest allowed mean of a score.")
@click.option("--max", "maximums", multiple=True, metavar="NAME=VALUE", help="Highest allowed mean of a score.")
@click.option(
    "--config",
    "config_path",
    type=reads(dir_okay=False),
    help="Read the [gate] table of this file (default: ./tracescore.toml when present).",
)
@click.option("--allow-unread/--no-allow-unread", default=None, help="Let cited-but-never-fetched URLs pass (warn).")
@click.option("--tolerance", type=click.FloatRange(min=0), help="Slack added to the baseline noise band (absolute).")
@click.option("--case-key", metavar="FIELD", help="Field naming the case across runs (default trace_id).")
@click.option("--markdown", "markdown_out", type=writes(dir_okay=False), help="Write the Markdown summary here.")
@click.option("--junit", "junit_out", type=writes(dir_okay=False), help="Write JUnit XML here.")
@click.option(
    "--allow-partial", is_flag=True, help="Gate the results of an interrupted run (or a .partial file) too (warn)."
)
@click.option(
    "--format", "fmt", type=click.Choice(GATE_FORMATS), default=None,
    help="The verdict on stdout: tables, Markdown (a PR comment), or one JSON object (each rule with observed, limit"
    " and verdict). [default: terminal on a terminal, else markdown]",
)  # fmt: skip
@_store_option
def gate(
    results: str,
    baselines: tuple[str, ...],
    minimums: tuple[str, ...],
    maximums: tuple[str, ...],
    config_path: str | None,
    allow_unread: bool | None,
    tolerance: float | None,
    case_key: str | None,
    markdown_out: str | None,
    junit_out: str | None,
    store_path: str,
    allow_partial: bool = False,
    fmt: str | None = None,
) -> None:
    """Gate RESULTS stage by stage: thresholds, no newly failing case, no fabricated or unread citation."""
    mins, maxs = _limits(minimums), _limits(maximums)
    if config_path is None and os.path.isfile("tracescore.toml"):
        config_path = "tracescore.toml"
    base = load_gate_config(config_path) if config_path else GateConfig()
    config = base.merged(mins, maxs, allow_unread=allow_unread, tolerance=tolerance, case_key=case_key)
    notes: list[str] = []
    label, current = results_from(results, store_path, notes)
    loaded = [results_from(spec, store_path, notes) for spec in baselines]
    _warn([f"note: {note}" for note in notes])
    _partial(results, store_path, allow_partial)
    key = {"--case-key": config.case_key} if config.case_key != DEFAULT_CASE_KEY else {}
    checks = [FieldCheck(name, key) for name, _ in [(label, current), *loaded]]
    outcome = run_gate(
        checks[0].tap(current),
        [check.tap(lines) for check, (_, lines) in zip(checks[1:], loaded, strict=True)],
        config,
        source=label,
        baseline_names=[n for n, _ in loaded],
        store=Store(store_path) if os.path.isfile(store_path) else None,  # judge calibrations, when any
    )
    _warn([line for check in checks for line in check.verify()])
    summary = render_gate_markdown(outcome)
    fmt = fmt or ("terminal" if sys.stdout.isatty() else "markdown")
    if fmt == "json":
        click.echo(json.dumps(gate_to_json(outcome), ensure_ascii=False))
    elif fmt == "terminal":  # a person reads it: render the Markdown, not its ** and backticks
        fitted_console().print(Markdown(summary))
    else:
        click.echo(summary, nl=False)
    unwritten: list[OutputError] = []
    for text, out in ((summary, markdown_out), (render_junit(outcome) if junit_out else "", junit_out)):
        if out:
            try:
                _write(text, out)
            except OutputError as exc:
                unwritten.append(exc)
    if not outcome.passed:  # the verdict first: a failed gate is 1 whatever else went wrong
        _warn([f"tracescore: {exc}" for exc in unwritten])
        end(EXIT_GATE_FAILED)
    if unwritten:
        _warn([f"tracescore: {exc}" for exc in unwritten[:-1]])
        raise unwritten[-1]


def _partial(results: str, store_path: str, allow: bool) -> None:
    """An interrupted run's results (or a ``.partial`` file) gate nothing unless ``--allow-partial`` (then a warning):
    the traces it never reached would pass unseen."""
    reason = partial_reason(results, store_path)
    if reason is None:
        return
    if not allow:
        raise NothingToDoError(f"{reason}; pass --allow-partial to gate these results anyway")
    click.echo(f"warning: {reason}", err=True)
