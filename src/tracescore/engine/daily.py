"""The judge's daily allowance of the scheduled job: ``[job] max_cost_per_day`` (USD per UTC day) and
``max_calls_per_day``, over every run of the day.

The allowance is the run's ``max_cost`` check carried across runs (``judge.budget.budget_reason`` asks both): the
spend of the day is what the store's ledger holds for the other runs of that day (``store/spend.py``) plus what
this run's judge has spent since the day began. Before each trace's judged stages the allowance says whether the day
is spent; once it is, the later traces of the day are left unjudged with ``Reasons.DAILY_BUDGET`` (not computed: an
earlier judged score stays, ``backfill --judge-only`` judges them later), and the first trace after UTC midnight is
judged again. The run's figure is kept in the ledger whenever it grew, so a killed run's spend still counts. A check
comes before a trace's calls, so a day ends at most one trace's cost past its limit (one trace per scoring thread in
flight: ``[job] judge_concurrency``).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from tracescore.judge.protocol import JudgeUsage
from tracescore.reasons import Reasons
from tracescore.store.db import Store
from tracescore.store.spend import day_spent, record_spend

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class DayLimits:
    """``[job] max_cost_per_day`` (USD) and ``max_calls_per_day``: None for no limit."""

    max_cost: float | None = None
    max_calls: int | None = None

    @property
    def any(self) -> bool:
        return self.max_cost is not None or self.max_calls is not None


class DailyBudget:
    """The judge's allowance for the UTC day of ``clock()`` (an ``Allowance``), kept in the store at ``store_path``."""

    def __init__(self, store_path: str | Path, limits: DayLimits, clock: Clock = utc_now) -> None:
        self.store_path, self.limits, self.clock = Path(store_path), limits, clock
        self.run = uuid.uuid4().hex  # this run's rows in the ledger
        self._lock = threading.Lock()
        self._store: Store | None = None
        self._day: date | None = None
        self._before = (0.0, 0)  # what the other runs spent on ``_day``
        self._start = (0.0, 0)  # this run's usage when ``_day`` began (its calls before midnight count for the eve)
        self._kept = (0.0, 0)  # this run's spend on ``_day`` as last recorded
        self.left: dict[str, str] = {}  # traces left unjudged → the day they were left on
        self.spent_days: dict[str, tuple[float, int]] = {}  # day → this run's spend on it

    def spent(self, usage: JudgeUsage, trace_id: str) -> str | None:
        """Why ``trace_id`` may not be judged now (the day's allowance is spent), or None; records the spend."""
        with self._lock:
            day = self.clock().astimezone(UTC).date()
            if day != self._day:
                self._roll(day, usage)
            mine = (usage.cost_usd - self._start[0], usage.calls - self._start[1])
            self._keep(mine)
            cost, calls = self._before[0] + mine[0], self._before[1] + mine[1]
            reason = self._over(cost, calls, day)
            if reason is not None:
                self.left.setdefault(trace_id, day.isoformat())
            return reason

    def _over(self, cost: float, calls: int, day: date) -> str | None:
        limits = self.limits
        if limits.max_cost is not None and cost >= limits.max_cost:
            spent, limit = f"${cost:.4f}", f"${limits.max_cost:.4f}"
        elif limits.max_calls is not None and calls >= limits.max_calls:
            spent, limit = f"{calls} calls", f"{limits.max_calls} calls"
        else:
            return None
        return Reasons.DAILY_BUDGET.format(spent=spent, limit=limit, day=day.isoformat())

    def _roll(self, day: date, usage: JudgeUsage) -> None:
        """A new day (the run's first check, or midnight passed): what the other runs spent on it, from the store."""
        if self._day is not None:
            self._keep((usage.cost_usd - self._start[0], usage.calls - self._start[1]))
        self._day, self._start, self._kept = day, (usage.cost_usd, usage.calls), (0.0, 0)
        self._before = day_spent(self._open(), day, besides=self.run)

    def _keep(self, mine: tuple[float, int]) -> None:
        if mine != self._kept and self._day is not None:
            record_spend(self._open(), self._day, self.run, mine[0], mine[1])
            self._kept = mine
            self.spent_days[self._day.isoformat()] = mine

    def _open(self) -> Store:
        if self._store is None:
            self._store = Store(self.store_path)
        return self._store

    def record(self, usage: JudgeUsage, *, close: bool = False) -> None:
        """Record the run's spend now (its calls after the last check: the run summary's figure); ``close``: and
        close the ledger's connection (the judge closes)."""
        with self._lock:
            if self._day is not None:
                self._keep((usage.cost_usd - self._start[0], usage.calls - self._start[1]))
            if close and self._store is not None:
                self._store.close()
                self._store = None

    def summary(self) -> dict[str, Any]:
        """For the run summary: the limits, the day's spend over every run, the traces left unjudged, when judging
        resumes (the next UTC midnight after the last day a trace was left on)."""
        with self._lock:
            day = self._day or self.clock().astimezone(UTC).date()
            mine = self.spent_days.get(day.isoformat(), (0.0, 0))
            cost, calls = self._before[0] + mine[0], self._before[1] + mine[1]
            out: dict[str, Any] = {
                "max_cost_per_day": self.limits.max_cost, "max_calls_per_day": self.limits.max_calls,
                "day": day.isoformat(), "day_cost_usd": round(cost, 6), "day_calls": calls,
                "left_unjudged": len(self.left), "left_unjudged_ids": sorted(self.left)[:20],
            }  # fmt: skip
            if self.left:
                last = max(date.fromisoformat(d) for d in self.left.values())
                out["resumes_at"] = datetime.combine(last + timedelta(days=1), datetime.min.time(), UTC).isoformat()
            return out
