"""Bounded retries as named constants, honouring ``Retry-After``: one retry layer per request, never multiplied.

The caller says which exceptions are worth another attempt (and how long the server asked to wait); the loop does
the rest and reports each retry, so sinks and sources can count them in the run summary.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts, and the exponential backoff between them when the server names no wait."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 60.0
    jitter: float = 0.1

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1``: the server's Retry-After (capped), else backoff."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        backoff: float = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        return backoff * (1.0 + random.uniform(-self.jitter, self.jitter))


DEFAULT_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Verdict:
    """Whether a failure is worth another attempt, how long the server asked to wait, and a one-line description."""

    retry: bool
    retry_after: float | None = None
    description: str = ""


def call_with_retries(
    fn: Callable[[], T],
    *,
    classify: Callable[[BaseException], Verdict],
    policy: RetryPolicy = DEFAULT_POLICY,
    on_retry: Callable[[int, Verdict], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``fn`` until it returns, a failure is not retryable, or ``policy.max_attempts`` are used up.

    The last exception propagates unchanged (the caller re-raises it as its own error with the context it knows).
    """
    attempt = 1
    while True:
        try:
            return fn()
        except Exception as exc:
            verdict = classify(exc)
            if not verdict.retry or attempt >= policy.max_attempts:
                raise
            if on_retry is not None:
                on_retry(attempt, verdict)
            sleep(policy.delay(attempt, verdict.retry_after))
            attempt += 1
