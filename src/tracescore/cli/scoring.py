"""The scorers of one ``score`` run and the judge they share (cached in the store): usage, budget, failures."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console

from tracescore import catalog
from tracescore.adapters import Adapter
from tracescore.calibrate.carry import grounding_agreement
from tracescore.catalog import Reasons
from tracescore.engine.judging import JudgePool, StoreJudgeCache
from tracescore.errors import ConfigError
from tracescore.judge.anthropic import DEFAULT_MODEL, AnthropicJudge
from tracescore.judge.cache import CachingJudge
from tracescore.judge.protocol import Judge
from tracescore.links import LinkChecker
from tracescore.scorers import Scorer, default_scorers
from tracescore.scorers.deadlinks import dead_link_scorer
from tracescore.scorers.grounding import NO_JUDGE, grounding_scorer
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.semantic import semantic_scorer
from tracescore.scorers.surface import surface_scorer
from tracescore.store import Store
from tracescore.store.linkcache import StoreLinkCache

__all__ = ["Scoring", "ScoringOptions", "build_scoring", "judged_scores", "without_judge"]



def judged_scores() -> str:
    """Every judged score of the catalog, a family whose scores are all judged as ``family.*`` (for help texts)."""
    families: dict[str, list[catalog.Entry]] = {}
    for entry in catalog.CATALOG:
        families.setdefault(entry.name.split(".")[0], []).append(entry)
    parts = []
    for family, entries in families.items():
        judged = [e.name for e in entries if e.judged]
        if judged:
            parts.append(f"{family}.*" if len(judged) == len(entries) else ", ".join(judged))
    return ", ".join(parts)

@dataclass(frozen=True)
class ScoringOptions:
    """The deterministic stages' options and the judge's (command line over config over defaults)."""

    k: int = 5
    final_answer_prefix: str = "FINAL ANSWER:"
    no_judge: bool = False
    judge_off_reason: str | None = None
    judge_model: str = DEFAULT_MODEL
    max_cost: float | None = None
    check_links: bool = False
    merge_partial: str | None = None  # [judge] merge_partial
    rubrics: Rubrics = field(default_factory=Rubrics)  # [judge] rubric, surface_rubric, semantic_rubric
    judge_concurrency: int = 1  # [job] judge_concurrency: traces scored at once with a judge (a thread each)


@dataclass
class Scoring:
    """The scorers of one run and the judge they share: its usage, the traces left unjudged, closing it."""

    scorers: list[Scorer]
    judge: Judge | None
    max_cost: float | None
    unjudged: list[str] = field(default_factory=list)
    no_judge_reason: str = ""  # why the judged scores are absent (when there is no judge)
    links: LinkChecker | None = None  # --check-links: its cache is the store's
    link_cache: StoreLinkCache | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.links is not None and self.link_cache is not None:
            out["links"] = {"requests": self.links.requests, "cache_hits": self.link_cache.hits}
        if self.judge is None:
            return out
        return out | {"judge": self.judge.usage.as_dict() | {"model": self.judge.model}, "unjudged": self.unjudged}

    def print_usage(self, console: Console) -> None:
        if self.links is not None and self.link_cache is not None:
            console.print(
                f"links: {self.links.requests} HTTP requests, {self.link_cache.hits} answered from the store",
                highlight=False,
                soft_wrap=True,
            )
        if self.judge is None:
            return
        console.print(self.judge.usage.line(), highlight=False, soft_wrap=True)  # one line a log can grep
        if self.unjudged:
            shown = ", ".join(self.unjudged[:10])
            more = f" (+{len(self.unjudged) - 10} more)" if len(self.unjudged) > 10 else ""
            click.echo(
                f"judge budget reached (--max-cost {self.max_cost}): {len(self.unjudged)} traces left unjudged:"
                f" {shown}{more}",
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

    def close(self) -> None:
        if self.links is not None:
            self.links.close()
        if self.judge is not None and callable(getattr(self.judge, "close", None)):
            self.judge.close()  # type: ignore[attr-defined]


def build_scoring(store: Store, options: ScoringOptions) -> Scoring:
    """Deterministic scorers plus the judged ones (judge cached in ``store``, or absent with the reason)."""
    judge, no_judge_reason = _build_judge(options, store)
    agreement = grounding_agreement(store, judge.model, options.rubrics.grounding.version) if judge else None
    scorers = _scorers(options, judge, no_judge_reason, agreement)
    scoring = Scoring(scorers, judge, options.max_cost, no_judge_reason=no_judge_reason)
    if options.check_links:  # off by default: it makes network requests
        try:
            scoring.link_cache = StoreLinkCache(store)
            scoring.links = LinkChecker(cache=scoring.link_cache)
        except ImportError as exc:
            raise ConfigError(f"--check-links needs httpx ({exc}): pip install 'tracescore[links]'") from exc
        scorers.append(dead_link_scorer(checker=scoring.links))
    return scoring


def _scorers(
    options: ScoringOptions, judge: Judge | None, no_judge_reason: str, agreement: Any = None
) -> list[Scorer]:
    """The scorers of a ``score`` run (``judge=None``: every judged score absent with ``no_judge_reason``)."""
    return default_scorers(k=options.k, final_answer_prefix=options.final_answer_prefix or None) + [
        grounding_scorer(
            judge=judge,
            no_judge_reason=no_judge_reason,
            max_cost=options.max_cost,
            agreement=agreement,
            merge_partial=options.merge_partial,
            rubric=options.rubrics.grounding,
        ),
        surface_scorer(
            judge=judge, no_judge_reason=no_judge_reason, max_cost=options.max_cost, rubric=options.rubrics.surface
        ),
        semantic_scorer(
            judge=judge,
            final_answer_prefix=options.final_answer_prefix or None,
            no_judge_reason=no_judge_reason,
            max_cost=options.max_cost,
            rubric=options.rubrics.semantic,
        ),
    ]


def without_judge(adapter: Adapter, options: ScoringOptions, no_judge_reason: str) -> tuple[Adapter, list[Scorer]]:
    """The adapter and the scorers of a run without a judge, built again in each worker process (``--workers``)."""
    return adapter, _scorers(options, None, no_judge_reason)


def _build_judge(options: ScoringOptions, store: Store) -> tuple[Judge | None, str]:
    """The judge for this run (cached in the store), or None with the reason its scores will be absent."""
    if options.no_judge:
        return None, Reasons.JUDGE_OFF_FLAG.text
    if options.judge_off_reason:
        return None, options.judge_off_reason
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return None, NO_JUDGE
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            judge = AnthropicJudge(model=options.judge_model)
        except ImportError as exc:
            click.echo(f"warning: the judge needs the anthropic SDK ({exc}): pip install 'tracescore[judge]'", err=True)
            return None, Reasons.NO_SDK.text
    for warning in caught:
        click.echo(f"warning: {warning.message}", err=True)
    if options.max_cost is not None and not judge.usage.priced:
        raise ConfigError(
            f"--max-cost needs a price for judge model {options.judge_model!r}, which is not in the price table;"
            f" use a priced model (e.g. {DEFAULT_MODEL!r}) or drop --max-cost"
        )
    if options.judge_concurrency <= 1:
        return CachingJudge(judge, store), NO_JUDGE
    made = [judge]  # the first thread takes the judge built here; each other thread gets its own, as backfill's do

    def factory() -> Judge:
        return made.pop() if made else AnthropicJudge(model=options.judge_model)

    return JudgePool(factory, options.judge_model, StoreJudgeCache(store.path)), NO_JUDGE
