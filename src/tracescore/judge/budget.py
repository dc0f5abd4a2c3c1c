"""The one budget check of the judged stages: before each trace, a run's ``max_cost`` and the judge's daily allowance.

Every judged scorer asks ``budget_reason`` before it calls the judge: once the judge's estimated spend in this run
reaches ``max_cost`` (``--max-cost`` / ``[scoring] max_cost``), or the allowance of the judge (``[job]
max_cost_per_day`` / ``max_calls_per_day``, ``engine/daily.py``) says today's is spent, the trace's judged scores are
absent with that reason (not computed: an earlier score stays) and its deterministic scores are still computed.
"""

from __future__ import annotations

from typing import Protocol

from tracescore.judge.protocol import Judge, JudgeUsage
from tracescore.reasons import Reasons


class Allowance(Protocol):
    """A budget beyond the run (the day's): why ``trace_id`` may not be judged now, given the run's usage so far."""

    def spent(self, usage: JudgeUsage, trace_id: str) -> str | None: ...


def budget_reason(judge: Judge, max_cost: float | None, trace_id: str) -> str | None:
    """Why ``trace_id`` is left unjudged for budget (None: judge it): the run's ``max_cost``, then the judge's
    ``allowance`` when it has one (a ``JudgePool`` of the scheduled job)."""
    usage = judge.usage
    if max_cost is not None and usage.cost_usd >= max_cost:
        return Reasons.BUDGET.format(spent=usage.cost_usd, limit=max_cost)
    allowance: Allowance | None = getattr(judge, "allowance", None)
    return allowance.spent(usage, trace_id) if allowance is not None else None
