"""What the engine counts and bounds: the run summary (``JobCounts``), the concurrency knobs (``Limits``), which
windows are complete (``Windows``), and the judge's spend so far (``UsageMeter``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.sections import JobSettings

FAILURES_KEPT = 50

UsageMeter = Callable[[], Mapping[str, Any]]
"""What the judge spent so far: ``{"calls", "input_tokens", "output_tokens", "cost_usd", ...}`` (``JudgeUsage``)."""


@dataclass(frozen=True)
class Limits:
    """Concurrency knobs: judge calls (scoring threads) in flight, queue bounds, write batching."""

    workers: int = JobSettings.model_fields["judge_concurrency"].default  # [job] judge_concurrency
    queue_size: int = 64
    write_batch: int = 50
    write_interval: float = 1.0


@dataclass
class JobCounts:
    """The run summary: traces seen, scored, failed, skipped; scores written; requests; judge spend; duration."""

    seen: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    duplicates: int = 0
    scorer_errors: int = 0
    scores_written: int = 0
    scores_rejected: int = 0
    scores_removed: int = 0  # our superseded or vanished scores removed from the platform
    kept_stale: int = 0  # our scores left on the platform because this run did not compute them (marked stale)
    sink_requests: int = 0
    requests: int = 0
    judge_calls: float = 0
    judge_cache_hits: float = 0
    judge_input_tokens: float = 0
    judge_output_tokens: float = 0
    judge_cost_usd: float = 0.0
    duration_s: float = 0.0
    windows_done: int = 0
    failures: list[str] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)

    def tally(self, duration_s: float, requests: int, usage: UsageMeter | None) -> None:
        """Bring the totals up to date: the run's duration so far, the requests made, the judge's spend."""
        self.duration_s, self.requests = duration_s, requests
        if usage is not None:
            spent = usage()
            self.judge_calls = spent.get("calls", 0)
            self.judge_cache_hits = spent.get("cache_hits", 0)
            self.judge_input_tokens = spent.get("input_tokens", 0)
            self.judge_output_tokens = spent.get("output_tokens", 0)
            self.judge_cost_usd = float(spent.get("cost_usd", 0.0))

    def fail(self, message: str) -> None:
        self.failed += 1
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append(message)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("failures", "rejections")}
        out["judge_cost_usd"] = round(self.judge_cost_usd, 6)
        out["duration_s"] = round(self.duration_s, 3)
        out["failures"] = list(self.failures)
        out["rejections"] = list(self.rejections)
        return out


class Windows:
    """Which windows are complete: closed by the reader and with nothing outstanding; thread-safe."""

    def __init__(self, count: int) -> None:
        self._lock = threading.Lock()
        self.outstanding = [0] * count
        self.closed = [False] * count
        self.next = 0  # windows below this index are complete and reported

    def add(self, chunk: int, n: int = 1) -> None:
        with self._lock:
            self.outstanding[chunk] += n

    def close(self, chunk: int) -> None:
        with self._lock:
            self.closed[chunk] = True

    def done(self, chunk: int, n: int = 1) -> None:
        with self._lock:
            self.outstanding[chunk] -= n

    def advance(self) -> int | None:
        """The index of the newest window that just became complete with all before it, or None."""
        with self._lock:
            newest = None
            while self.next < len(self.closed) and self.closed[self.next] and self.outstanding[self.next] == 0:
                newest = self.next
                self.next += 1
            return newest
