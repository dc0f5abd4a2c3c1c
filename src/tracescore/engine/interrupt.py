"""SIGINT and SIGTERM as a stop request: what a terminal's Ctrl-C and a Kubernetes pod eviction do to a command.

``on_signals()`` (the command line, for the duration of a command) replaces Python's default handlers. While an engine
runs it is ``listening``: the first signal only sets its stop event, and the engine stops at its own safe point (after
the batch it is committing, never in the middle of it) and raises ``Interrupted``. Outside an engine (building the
run, a loop of its own), or at a second signal, the handler raises ``Interrupted`` where the main thread is, as
Python's ``KeyboardInterrupt`` would, but with the signal's exit code and without a traceback.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from types import FrameType

from tracescore.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
ABANDON_S = 0.5
"""After a signal, how long the engine waits for its threads and worker processes before it abandons them."""

_events: list[threading.Event] = []
_received: list[int] = []  # the signals of the current command, first first


def received() -> int | None:
    """The first signal received since ``on_signals()`` began, or None."""
    return _received[0] if _received else None


def _handle(signum: int, frame: FrameType | None) -> None:
    first = not _received
    _received.append(signum)
    if first and _events:
        for event in _events:
            event.set()
        return
    raise Interrupted(signum)


@contextmanager
def on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM stop the command cleanly while inside (only the main thread can handle signals: elsewhere
    this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.signal(sig, _handle) for sig in SIGNALS}
    _received.clear()
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        _received.clear()


@contextmanager
def listening(stop: threading.Event) -> Iterator[None]:
    """While inside, a first signal sets ``stop`` instead of raising (the engine stops at its own safe point)."""
    if received() is not None:  # it came before the engine started: stop at once
        stop.set()
    _events.append(stop)
    try:
        yield
    finally:
        _events.remove(stop)


@contextmanager
def keep_handlers() -> Iterator[None]:
    """Whatever a library inside sets for SIGINT/SIGTERM is undone on leaving (``ray.init`` makes SIGTERM exit with
    code 15, which would end a command without its line, its store record or its exit code)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in before.items():
            if handler is not None:
                signal.signal(sig, handler)


def ignore_in_worker() -> None:
    """In a worker process: leave SIGINT and SIGTERM (sent to the whole process group) to the parent, which ends
    its workers itself once it has stopped."""
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def end_pool(pool: ProcessPoolExecutor) -> None:
    """After a signal: cancel the chunks queued and kill the worker processes (what they were scoring is abandoned:
    it was never written, so those traces stay unmarked)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor has no public handle
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()
    for process in processes:
        process.join(ABANDON_S)
