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


def test_a_run_refused_before_the_holder_wrote_who_it_is_still_names_it(tmp_path: Path) -> None:
    """The holder takes the lock, then writes who it is: a run refused in between read an empty file and named no
    one (two `tracescore run` started at once). It reads the file again, for a moment, until the holder has."""
    import fcntl
    import json
    import threading

    store = tmp_path / "ts.db"
    held = open(lock_path(store), "a+", encoding="utf-8")  # noqa: SIM115 - the holder's file, locked, still empty
    fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def write_who() -> None:
        time.sleep(0.1)
        held.write(json.dumps({"pid": 1, "host": "h", "command": "tracescore run", "since": "2026-12-02T00:00:00"}))
        held.flush()

    writer = threading.Thread(target=write_who)
    writer.start()
    try:
        with pytest.raises(LockError) as refused:
            StoreLock(store, "tracescore run").acquire()
    finally:
        writer.join()
        held.close()
    assert "another run holds the lock" in str(refused.value)
    assert "(tracescore run, pid 1 on h" in str(refused.value)


def test_a_holder_that_never_says_who_it_is_is_refused_without_a_name(tmp_path: Path) -> None:
    import fcntl

    store = tmp_path / "ts.db"
    with open(lock_path(store), "a+", encoding="utf-8") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(LockError) as refused:
            StoreLock(store, "tracescore run").acquire()
    assert str(refused.value).endswith("ts.db.lock'; it is released when that run ends")
