"""What ``score`` shows of the scoring its recipe built (``engine/recipe.py``): judge usage, budget, failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console

from tracescore import catalog
from tracescore.engine.judging import JudgePool
from tracescore.engine.recipe import Recipe

__all__ = ["Scoring", "judged_scores"]



def judged_scores() -> str:
    """Every judged score of the catalog, a family whose scores are all judged as ``family.*`` (for help texts)."""
    families: dict[str, list[catalog.Entry]] = {}
    for entry in catalog.entries():
        families.setdefault(entry.name.split(".")[0], []).append(entry)
    parts = []
    for family, entries in families.items():
        judged = [e.name for e in entries if e.judged]
        if judged:
            parts.append(f"{family}.*" if len(judged) == len(entries) else ", ".join(judged))
    return ", ".join(parts)

@dataclass
class Scoring:
    """What ``score`` shows of its recipe: the judge's usage, the traces left unjudged, the link checks."""

    recipe: Recipe
    unjudged: list[str] = field(default_factory=list)

    @property
    def judge(self) -> JudgePool | None:
        return self.recipe.judge

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
