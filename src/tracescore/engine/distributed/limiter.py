"""One rate limiter per external API for the whole cluster: a token bucket owned by one Ray actor.

Every judge worker asks the same actor before each HTTP request (retries included), so the request rate holds
whatever the number of workers (per-worker limits would multiply with it). A 429 with ``Retry-After`` pauses the
bucket: every worker waits, not only the one that was told. ``TokenBucket`` is the arithmetic, with an injected
clock so its spacing is tested without timing anything; ``LimiterActor`` is its async actor.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    """At most ``per_second`` grants a second (None: unlimited) with bursts up to ``burst``; ``pause`` stops all."""

    def __init__(
        self, per_second: float | None, *, burst: int = 1, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if per_second is not None and per_second <= 0:
            raise ValueError(f"per_second must be positive or None, got {per_second!r}")
        self.per_second = per_second
        self.burst = max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._last = clock()
        self.paused_until = 0.0
        self.granted = 0
        self.pauses = 0

    def try_take(self) -> float:
        """Take a grant and return 0.0, or return how long to wait before asking again (nothing taken)."""
        now = self._clock()
        if now < self.paused_until:
            return self.paused_until - now
        if self.per_second is None:
            self.granted += 1
            return 0.0
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.per_second)
        self._last = now
        if self._tokens >= 1 - 1e-9:
            self._tokens = max(0.0, self._tokens - 1)
            self.granted += 1
            return 0.0
        return (1 - self._tokens) / self.per_second

    def pause(self, seconds: float) -> None:
        """Grant nothing for ``seconds`` from now (a 429's Retry-After), then restart with an empty bucket."""
        now = self._clock()
        if now + seconds > self.paused_until:
            self.paused_until = now + seconds
            self.pauses += 1
        self._tokens = 0.0
        self._last = max(self._last, self.paused_until)


class LimiterActor:
    """The bucket as an async Ray actor: ``acquire`` returns once the caller may send one request."""

    def __init__(self, per_second: float | None, burst: int = 1) -> None:
        self.bucket = TokenBucket(per_second, burst=burst)

    async def acquire(self) -> None:
        while True:
            wait = self.bucket.try_take()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    async def pause(self, seconds: float) -> None:
        self.bucket.pause(seconds)

    async def stats(self) -> dict[str, float]:
        return {"granted": self.bucket.granted, "pauses": self.bucket.pauses}
