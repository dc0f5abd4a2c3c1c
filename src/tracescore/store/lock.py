"""One run at a time per store: an OS file lock (``fcntl.flock``) beside the store, released when the process dies.

A lock left by a killed process is therefore never stale: the kernel drops it with the process, and the next run
takes it over. The lock file also records who holds it (pid, host, command, since) for the "another run holds the
lock" message. ``flock`` is not reliable on network file systems: keep the store on a local disk.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from tracescore.errors import LockError


def lock_path(store_path: str | Path) -> Path:
    path = Path(store_path)
    return path.with_name(path.name + ".lock")


class StoreLock:
    """Exclusive, non-blocking lock of a store for one run; ``LockError`` names the holder when it is taken."""

    def __init__(self, store_path: str | Path, command: str) -> None:
        self.path = lock_path(store_path)
        self.command = command
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        import fcntl

        try:
            fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        except OSError as exc:
            raise LockError(f"cannot create lock file {str(self.path)!r}: {exc.strerror}") from exc
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fh)
            fh.close()
            raise LockError(
                f"another run holds the lock on {str(self.path)!r}{holder}; it is released when that run ends"
            ) from None
        fh.seek(0)
        fh.truncate()
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": self.command,
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        fh.write(json.dumps(info))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            import fcntl

            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_HOLDER_WAIT_S = 1.0  # how long a refused run reads the lock file again for who holds it


def _holder(fh: IO[str]) -> str:
    """Who holds the lock, as its file says. The holder writes that just after taking the lock, so a run refused in
    between read an empty file and named no one: it reads again, for a moment, before the message goes without it."""
    deadline = time.monotonic() + _HOLDER_WAIT_S
    while True:
        fh.seek(0)
        described = _describe(fh.read())
        if described or time.monotonic() >= deadline:
            return described
        time.sleep(0.02)


def _describe(text: str) -> str:
    try:
        info: Any = json.loads(text)
    except ValueError:
        return ""
    if not isinstance(info, dict):
        return ""
    return f" ({info.get('command', 'a run')}, pid {info.get('pid')} on {info.get('host')}, since {info.get('since')})"
