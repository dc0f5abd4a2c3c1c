"""What ``score`` shows of a run and of the scoring its recipe built (``engine/recipe.py``): the tables or one JSON
object, judge usage, budget, failures, and the exit code they come to."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console

from tracescore.cli.exits import EXIT_INPUT, end
from tracescore.engine.judging import JudgePool
from tracescore.engine.recipe import Recipe
from tracescore.engine.runner import OneShot
from tracescore.errors import JudgeError, TracescoreError
from tracescore.platforms.base import Parts
from tracescore.reasons import Reasons
from tracescore.report.summary import Summary, render_terminal, summary_to_json

NOTHING_STORED = "nothing stored (--store none): no run, no cache"

_WHY_OFF = {  # an absence reason of the judged scores -> why the judge is off, as the summary line says it
    Reasons.NO_JUDGE.text: "no ANTHROPIC_API_KEY set",
    Reasons.JUDGE_OFF_FLAG.text: "--no-judge",
    Reasons.JUDGE_OFF.text: "[scoring] judge = false",
    Reasons.NO_SDK.text: "anthropic SDK not installed: pip install 'tracescore[judge]'",
}


def judge_off_why(reason: str) -> str:
    """Why the judge is off, for ``judge: off (…)``: the setting or the missing piece, from the reason its scores are
    absent for."""
    return _WHY_OFF.get(reason, reason)


@dataclass
class Scoring:
    """What ``score`` shows of its recipe: the judge's usage, the traces left unjudged, the link checks."""

    recipe: Recipe
    unjudged: list[str] = field(default_factory=list)

    @property
    def judge(self) -> JudgePool | None:
        return self.recipe.judge

    @property
    def off(self) -> str | None:
        """Why the judge is off (``--no-judge``, no key, no SDK), or None when it runs."""
        return None if self.judge is not None else judge_off_why(self.recipe.no_judge_reason)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        links, cache = self.recipe.links, self.recipe.link_cache
        if links is not None and cache is not None:
            out["links"] = {"requests": links.requests, "cache_hits": cache.hits}
        if self.judge is None:
            return out
        return out | {"judge": self.judge.usage_dict(), "unjudged": self.unjudged}

    def print_usage(self, console: Console) -> None:
        links, cache = self.recipe.links, self.recipe.link_cache
        if links is not None and cache is not None:
            console.print(
                f"links: {links.requests} HTTP requests, {cache.hits} answered from the store",
                highlight=False,
                soft_wrap=True,
            )
        if self.judge is None:
            console.print(f"judge: off ({self.off})", highlight=False, soft_wrap=True)
            return
        console.print(self.judge.usage.line(), highlight=False, soft_wrap=True)  # one line a log can grep
        if self.unjudged:
            shown = ", ".join(self.unjudged[:10])
            more = f" (+{len(self.unjudged) - 10} more)" if len(self.unjudged) > 10 else ""
            click.echo(
                f"judge budget reached (--max-cost {self.recipe.options.max_cost}): {len(self.unjudged)} traces left"
                f" unjudged: {shown}{more}",
                err=True,
            )

    def all_failed(self) -> str | None:
        """One line when every judge call of the run failed (``judge: 2 of 2 calls failed: <cause>``), else None."""
        if self.judge is None:
            return None
        usage = self.judge.usage
        if not usage.failures or usage.calls or usage.cache_hits:
            return None
        cause = usage.errors[-1].split("attempt(s): ", 1)[-1] if usage.errors else "unknown cause"
        return f"judge: {usage.failures} of {usage.failures} calls failed: {cause}"


def finish(
    run: OneShot,
    summary: Summary,
    scoring: Scoring,
    parts: Parts,
    console: Console,
    *,
    quiet: bool,
    store_path: str | None,
    out: str | None,
) -> None:
    """Tables, the platform's read/write line, rejections, the judge line, where the results are (``store_path``
    None: ``--store none``, nothing kept); ``end_of`` then says how it ended."""
    counts = run.counts
    if run.input_error is not None:
        raise run.input_error
    if run.stopped is not None and counts.seen == 0:  # nothing was read: no empty tables before the reason
        raise TracescoreError(run.stopped)
    if not quiet:  # a quiet console renders every table and then drops it: skip the work (~70 ms at 20k traces)
        render_terminal(summary, console)
    scoring.print_usage(console)
    if parts.summary is not None:
        line, notes = parts.summary(counts.seen)
        if not quiet:
            console.print(line, highlight=False, soft_wrap=True)
        for note in notes:
            click.echo(f"note: {note}", err=True)
    if not quiet:
        where = f"; results in {out}" if out else ""
        stored = f"run {run.run_id} stored in {store_path}" if store_path else NOTHING_STORED
        console.print(stored + where, highlight=False, soft_wrap=True)
    if out is None and not sys.stdout.isatty():  # ``score > results.jsonl``: the tables went there, not the results
        if store_path is None:
            click.echo("warning: the results were kept nowhere (--store none and no --out): add --out results.jsonl",
                       err=True)
        elif not quiet:
            named = "" if store_path == "tracescore.db" else f" --store {store_path}"
            click.echo(f"note: results are in the store only ({store_path}): add --out results.jsonl, or get them"
                       f" with `tracescore report run:latest{named} --format json`", err=True)
    for rejection in run.write.rejected:
        click.echo(f"rejected: {rejection}", err=True)


def as_json(
    run: OneShot, summary: Summary, scoring: Scoring, parts: Parts, store_path: str | None, out: str | None
) -> dict[str, Any]:
    """``--format json``: the run (id, store, output, what was read) and its summary as ``report --format json``
    gives it, the judge on (with its usage) or off (and why)."""
    whole: dict[str, Any] = {"run_id": run.run_id, "source": parts.describe, "store": store_path, "out": out,
                             "seen": run.counts.seen, "rejected": list(run.write.rejected)}  # fmt: skip
    if parts.summary is not None:
        whole["platform"] = parts.summary(run.counts.seen)[0]
    whole |= summary_to_json(summary)
    extra = scoring.as_dict()
    whole["judge"] = {"on": scoring.judge is not None, "off": scoring.off} | whole["judge"] | extra.pop("judge", {})
    return whole | extra


def end_of(run: OneShot, scoring: Scoring, parts: Parts, *, quiet: bool) -> None:
    """What stopped the run or could not be scored, said last; then the exit code of the table."""
    counts = run.counts
    if run.stopped is not None:
        raise TracescoreError(run.stopped)
    judge_failed = scoring.all_failed()
    if judge_failed is not None:
        raise JudgeError(judge_failed)
    if counts.seen == 0 and parts.summary is None:
        click.echo(f"warning: {parts.describe.partition(':')[2]} holds no trace: nothing scored", err=True)
    if counts.failed:
        unit = "lines" if parts.summary is None else "traces"
        where = "each is in the results with its reason; run without -q to list them" if quiet else "see above"
        click.echo(f"{counts.failed} of {counts.seen} {unit} could not be scored ({where})", err=True)
    if run.write.rejected:
        platform = parts.describe.split(":")[0]
        click.echo(f"{len(run.write.rejected)} score(s) rejected by {platform} (see above)", err=True)
    if counts.failed or run.write.rejected:
        end(EXIT_INPUT)

