"""The judge for concurrent scoring: one judge per scoring thread, one shared cache, their usage summed.

``AnthropicJudge`` keeps its usage counters and HTTP connections per instance; sharing one between threads would race
on the counters. ``JudgePool`` gives each scoring thread its own judge (so judge calls in flight = scoring threads),
answers from the content-addressed cache in the local store first, and reports the sum of every judge's usage, so
the run summary, the progress bar's cost so far and the ``max_cost`` budget see the whole run. Two threads asking the
same request (two traces with the same judge call) make one call: the second waits and reads the cached reply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracescore.engine.daily import DailyBudget
from tracescore.judge.cache import CachingJudge
from tracescore.judge.protocol import Judge, JudgeReply, JudgeRequest, JudgeUsage
from tracescore.store.db import Store

_SUMMED = ("calls", "attempts", "retries", "failures", "cache_hits", "input_tokens", "output_tokens",
           "cache_read_tokens", "cache_write_tokens", "cost_usd")


class StoreJudgeCache:
    """The store's judge cache over a connection of its own, serialised by a lock (the writer keeps its own)."""

    def __init__(self, store_path: str | Path) -> None:
        self.store_path = Path(store_path)
        self._store: Any = None
        self._lock = threading.Lock()

    def _open(self) -> Any:
        if self._store is None:
            self._store = Store(self.store_path)
        return self._store

    def judge_cache_get(self, key: str) -> str | None:
        with self._lock:
            return self._open().judge_cache_get(key)  # type: ignore[no-any-return]

    def judge_cache_put(self, key: str, *, model: str, rubric: str, request: str, reply: str) -> None:
        with self._lock:
            self._open().judge_cache_put(key, model=model, rubric=rubric, request=request, reply=reply)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


class JudgePool:
    """A ``Judge`` whose calls go to the calling thread's own judge (made by ``factory`` on first use)."""

    def __init__(self, factory: Callable[[], Judge], model: str, cache: StoreJudgeCache | None = None) -> None:
        self.factory = factory
        self.model = model
        self.cache = cache
        self._local = threading.local()
        self._judges: list[Judge] = []
        self._lock = threading.Lock()
        self.batch_usage = JudgeUsage()  # what ``--judge-batch`` spent (filled by the batch prefill)
        self._flights: dict[str, list[Any]] = {}  # content key -> [lock, threads asking]: one call per request
        self.allowance: DailyBudget | None = None  # [job] max_cost_per_day / max_calls_per_day (judge/budget.py)

    def _mine(self) -> Judge:
        judge = getattr(self._local, "judge", None)
        if judge is None:
            inner = self.factory()
            with self._lock:
                self._judges.append(inner)
            judge = CachingJudge(inner, self.cache) if self.cache is not None else inner
            self._local.judge = judge
        return judge

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """Judge ``request``; a thread asking what another is already asking waits for that reply (then cached)."""
        key = request.key(self.model)
        with self._lock:
            flight = self._flights.setdefault(key, [threading.Lock(), 0])
            flight[1] += 1
        try:
            with flight[0]:
                return self._mine().judge(request)
        finally:
            with self._lock:
                flight[1] -= 1
                if not flight[1]:
                    del self._flights[key]

    @property
    def usage(self) -> JudgeUsage:
        """The sum of every thread's judge usage (a snapshot)."""
        with self._lock:
            judges = list(self._judges)
        total = JudgeUsage()
        for u in [j.usage for j in judges] + [self.batch_usage]:
            for name in _SUMMED:
                setattr(total, name, getattr(total, name) + getattr(u, name))
            total.priced = total.priced and u.priced
            total.errors += u.errors[-10:]
        return total

    def usage_dict(self) -> dict[str, Any]:
        return self.usage.as_dict() | {"model": self.model}

    def close(self) -> None:
        """Close every thread's judge; their usage still counts (a run reports it after closing its judges)."""
        with self._lock:
            judges = list(self._judges)
        for judge in judges:
            close = getattr(judge, "close", None)
            if callable(close):
                close()
        if self.cache is not None:
            self.cache.close()
        if self.allowance is not None:
            self.allowance.record(self.usage, close=True)
