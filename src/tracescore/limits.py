"""A thread-safe request-rate limiter (token bucket) that also counts the requests it let through.

Platform sources and sinks call ``acquire()`` before each HTTP request (an httpx ``request`` event hook does it for
SDK clients), so the configured platform request rate holds across reading and writing, and the run summary can say
how many requests a run made.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class RateLimiter:
    """At most ``per_minute`` requests per minute (None: unlimited), with bursts up to ``burst``; counts requests.

    ``clock`` and ``sleep`` are injectable so tests check the spacing on a fake clock, never on wall-clock speed.
    """

    def __init__(
        self,
        per_minute: float | None = None,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_minute is not None and per_minute <= 0:
            raise ValueError(f"per_minute must be positive or None, got {per_minute!r}")
        self.per_minute = per_minute
        self.burst = max(1, burst)
        self.count = 0
        self.waited = 0.0
        self._tokens = float(self.burst)
        self._clock, self._sleep = clock, sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block until a request may go out, then count it."""
        while True:
            with self._lock:
                if self.per_minute is None:
                    self.count += 1
                    return
                now = self._clock()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.per_minute / 60.0)
                self._last = now
                if self._tokens >= 1 - 1e-9:  # float rounding of the refill must not cost another sleep
                    self._tokens = max(0.0, self._tokens - 1)
                    self.count += 1
                    return
                wait = (1 - self._tokens) * 60.0 / self.per_minute
                self.waited += wait
            self._sleep(wait)

    def httpx_hook(self, request: Any) -> None:
        """``httpx.Client(event_hooks={"request": [limiter.httpx_hook]})``: every SDK request goes through here."""
        self.acquire()
