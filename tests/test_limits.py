"""The request-rate limiter on a fake clock: spacing and counting, independent of the machine's speed."""

from __future__ import annotations

from tracescore.limits import RateLimiter


class _Clock:
    """Moves only when the limiter sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.grants: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_requests_are_spaced_by_the_rate_on_an_injected_clock() -> None:
    clock = _Clock()
    limiter = RateLimiter(per_minute=600, clock=clock, sleep=clock.sleep)  # one request per 0.1 s
    for _ in range(5):
        limiter.acquire()
        clock.grants.append(clock.now)
    assert limiter.count == 5
    assert [round(b - a, 9) for a, b in zip(clock.grants, clock.grants[1:], strict=False)] == [0.1] * 4
    assert round(limiter.waited, 9) == 0.4


def test_time_that_passed_between_requests_is_credited_and_unlimited_never_sleeps() -> None:
    clock = _Clock()
    limiter = RateLimiter(per_minute=600, burst=2, clock=clock, sleep=clock.sleep)
    limiter.acquire()
    limiter.acquire()  # the burst
    clock.now += 0.05  # half a token came back by itself
    limiter.acquire()
    assert round(clock.now, 9) == 0.1 and round(limiter.waited, 9) == 0.05
    free = RateLimiter(clock=clock, sleep=clock.sleep)
    for _ in range(100):
        free.acquire()
    assert free.count == 100 and free.waited == 0 and round(clock.now, 9) == 0.1
