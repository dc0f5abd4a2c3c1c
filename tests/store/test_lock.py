from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracescore.errors import LockError
from tracescore.store.lock import StoreLock, lock_path

HOLD = """
import sys, time
from tracescore.store.lock import StoreLock
lock = StoreLock(sys.argv[1], "tracescore run")
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def _holder(store: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _end(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


def test_second_run_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    store = tmp_path / "ts.db"
    proc = _holder(store)
    try:
        with pytest.raises(LockError) as err:
            StoreLock(store, "tracescore run").acquire()
        message = str(err.value)
        assert "another run holds the lock" in message
        assert f"pid {proc.pid}" in message and "tracescore run" in message
    finally:
        _end(proc)


def test_lock_of_a_killed_run_is_taken_over(tmp_path: Path) -> None:
    store = tmp_path / "ts.db"
    proc = _holder(store)
    os.kill(proc.pid, signal.SIGKILL)
    _end(proc)
    assert lock_path(store).read_text()  # the dead holder's note is still there ...
    lock = StoreLock(store, "tracescore backfill")
    lock.acquire()  # ... but the kernel released its lock with the process
    assert f'"pid": {os.getpid()}' in lock_path(store).read_text()
    lock.release()


def test_lock_is_released_and_reusable_in_process(tmp_path: Path) -> None:
    store = tmp_path / "ts.db"
    with StoreLock(store, "a"):
        with pytest.raises(LockError):
            StoreLock(store, "b").acquire()
    with StoreLock(store, "c"):
        time.sleep(0)
