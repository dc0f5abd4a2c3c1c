"""How ``run`` and ``backfill`` end: their summary for a person on a terminal (a few lines) or as one JSON object
(piped, or ``--format json``), the daily budget's note, and the outcome code."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from tracescore.cli.exits import EXIT_INPUT, end
from tracescore.cli.scoring import judge_off_why

JOB_FORMATS = ("terminal", "json")

format_option = click.option(
    "--format", "fmt", type=click.Choice(JOB_FORMATS), default=None,
    help="The run summary on stdout: a few lines for a person, or one JSON object (every count, ids and reasons)."
    " [default: terminal on a terminal, else json]",
)  # fmt: skip


def emit(summary: dict[str, Any]) -> None:
    click.echo(json.dumps(summary, default=str, sort_keys=False))


def as_json(fmt: str | None) -> bool:
    """Whether the summary goes out as JSON: asked for, or stdout is a pipe or a file (cron, a log, ``jq``)."""
    return fmt == "json" or (fmt is None and not sys.stdout.isatty())


def _short(s: dict[str, Any], judge_off: str | None) -> list[str]:
    """The run summary for a person: what was read and scored, written, the judge, where the rest is."""
    window = " .. ".join(str(w)[:16] + "Z" for w in s.get("window") or [])
    written = (f"{s.get('scores_written', 0)} scores written ({s.get('scores_rejected', 0)} rejected,"
               f" {s.get('scores_removed', 0)} removed, {s.get('kept_stale', 0)} kept stale)")  # fmt: skip
    judge = (f"judge: off ({judge_off_why(judge_off)})" if judge_off else
             f"judge: {s.get('judge_calls', 0)} calls ({s.get('judge_cache_hits', 0)} from the cache),"
             f" ~${s.get('judge_cost_usd', 0.0):.4f}")  # fmt: skip
    lines = [
        f"{s.get('command')}: {s.get('seen', 0)} traces seen, {s.get('scored', 0)} scored, {s.get('failed', 0)}"
        f" unreadable; {written} in {s.get('duration_s', 0):.1f} s",
        f"  {s.get('source')}, window {window}; {judge}",
    ]
    if s.get("watermark"):
        lines.append(f"  watermark now {s['watermark']}")
    if retry := s.get("judge_retry"):
        lines.append(f"  judged again: {retry['retried']} traces whose judge had failed, {retry['healed']} healed,"
                     f" {retry['due']} still due, {len(retry['given_up'])} given up")  # fmt: skip
    if sessions := s.get("sessions"):
        lines.append(_sessions_line(sessions))
    lines.append(f"  run {s.get('run_id')} ({s.get('status')}); every count, id and reason: --format json")
    return lines


def _sessions_line(s: dict[str, Any]) -> str:
    """What the run did with conversations: session scores written, sessions still active, a backfill's look-back."""
    parts = []
    if "written" in s:
        sent = f" ({s['scores_written']} scores sent, {s['scores_removed']} removed)" if s.get("scores_written") or \
            s.get("scores_removed") else ""  # fmt: skip
        parts.append(f"{s['written']} sessions' scores written{sent}, {s.get('waiting', 0)} still active")
    if s.get("carry_evidence") is False:
        parts.append("evidence not carried across turns")
    elif "lookback" in s:
        read, scored = s.get("turns_read_before", 0), s.get("turns_scored_before", 0)
        parts.append(f"{read} turns read from the {s['lookback']} before the slices, {scored} before the window"
                     " scored to complete their sessions")  # fmt: skip
    if "error" in s:
        parts.append(f"stopped: {s['error']}")
    return "  sessions: " + "; ".join(parts)


def given_up_line(n: int) -> str:
    return f"{n} traces given up after [job] judge_retries runs whose judge failed (their judged scores absent)"


def finish(outcome: Any, fmt: str | None, judge_off: str | None) -> None:
    if as_json(fmt):
        emit(outcome.summary)
    else:
        click.echo("\n".join(_short(outcome.summary, judge_off)))
    s = outcome.summary
    budget = s.get("judge_budget") or {}
    if budget.get("left_unjudged"):  # [job] max_cost_per_day / max_calls_per_day spent
        click.echo(
            f"daily judge budget spent on {budget['day']} (${budget['day_cost_usd']:.4f}, {budget['day_calls']}"
            f" calls): {budget['left_unjudged']} traces left unjudged; judging resumes at {budget['resumes_at']}, or"
            " judge them with `tracescore backfill --judge-only --from … --to …`",
            err=True,
        )
    given_up = (s.get("judge_retry") or {}).get("given_up")
    if given_up:
        click.echo(f"{given_up_line(len(given_up))} this run: {', '.join(given_up[:5])}", err=True)
    if outcome.counts_failed:
        end(
            EXIT_INPUT,
            f"{s.get('failed', 0)} traces unreadable and {s.get('scores_rejected', 0)} scores rejected"
            f" of {s.get('seen', 0)} traces seen (ids and reasons in the summary and the store, run {outcome.run_id})",
        )
