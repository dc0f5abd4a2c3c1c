"""The embedded default source: a JSONL file of canonical traces, streamed line by line (never loaded whole)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tracescore.errors import InputError

__all__ = ["Record", "read_jsonl"]


@dataclass(frozen=True)
class Record:
    """One native record and where it came from (``line`` for files). ``payload`` is left for the adapter."""

    payload: str | bytes | object
    line: int | None = None
    size: int = 0


def read_jsonl(path: str | Path | IO[bytes]) -> Iterator[Record]:
    """Yield every non-blank line of a JSONL file (``-`` or a binary stream for stdin) with its 1-based number."""
    if isinstance(path, str | Path):
        if str(path) == "-":
            import sys

            yield from _lines(sys.stdin.buffer)
            return
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below, generator-owned
        except OSError as exc:
            raise InputError(f"cannot read traces file {str(path)!r}: {exc.strerror}") from exc
        with handle:
            yield from _lines(handle)
    else:
        yield from _lines(path)


def _lines(handle: IO[bytes]) -> Iterator[Record]:
    for number, raw in enumerate(handle, start=1):
        if raw.strip():
            yield Record(payload=raw, line=number, size=len(raw))
