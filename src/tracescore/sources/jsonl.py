"""The embedded default source: a JSONL file of canonical traces, streamed line by line (never loaded whole)."""

from __future__ import annotations

import gzip
import json
import os
import stat
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from tracescore.errors import InputError, MissingInputError
from tracescore.sources.base import FileRef, Record

_BUFFER = 1 << 20  # read 1 MiB at a time: with the default 8 KiB, a 78 KB line took ten reads and as many copies


def read_jsonl(path: str | Path | IO[bytes]) -> Iterator[Record]:
    """Yield every non-blank line of a JSONL file (``-`` or a binary stream for stdin; ``.gz``: gzip) with its 1-based
    number."""
    if isinstance(path, str | Path):
        if str(path) == "-":
            yield from _lines(sys.stdin.buffer)
            return
        try:
            handle = open(path, "rb", buffering=_BUFFER)  # noqa: SIM115 - closed below, generator-owned
        except OSError as exc:  # missing, unreadable, a folder: a bad argument or [source] path, nothing ran
            raise MissingInputError(f"cannot read traces file {str(path)!r}: {exc.strerror}") from exc
        with handle:
            if str(path).endswith(".gz"):  # no offset to read a line again at: each line travels with its record
                try:
                    with gzip.open(handle) as unzipped:
                        yield from _lines(unzipped)  # type: ignore[arg-type]
                except (OSError, EOFError) as exc:  # not gzip, or cut short: the lines before it were scored
                    raise InputError(f"cannot read traces file {str(path)!r} on: {exc}") from exc
            else:
                yield from _lines(handle, str(path))
    else:
        yield from _lines(path)


def _lines(handle: IO[bytes], name: str | None = None) -> Iterator[Record]:
    """The non-blank lines of ``handle``; from a file (``name``), each with where it lies there."""
    ref = None
    if name is not None:
        opened = os.fstat(handle.fileno())
        if stat.S_ISREG(opened.st_mode):  # a pipe or device cannot be read again at an offset
            ref = FileRef(name, opened.st_dev, opened.st_ino)
    offset = 0
    for number, raw in enumerate(handle, start=1):
        if not raw.isspace():  # a blank line is skipped (isspace stops at the first character; strip copies the line)
            yield Record(payload=raw, line=number, size=len(raw), at=(ref, offset) if ref is not None else None)
        offset += len(raw)


class JsonlSource:
    """A JSONL file of canonical traces as a windowed ``Source``: lines whose ``timestamp`` is in ``[since, until)``.

    A line without a readable timestamp is yielded in every window, so the adapter reports it (it is never skipped
    silently); the pipeline's per-trace marks keep it from being reported twice.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        for record in read_jsonl(self.path):
            moment = record_time(record.payload)
            if moment is None or (moment >= since and (until is None or moment < until)):
                yield record


def record_time(payload: object) -> datetime | None:
    """The ``timestamp`` of a canonical trace line as aware UTC, or None when it has none or cannot be read."""
    try:
        data = json.loads(payload) if isinstance(payload, str | bytes | bytearray) else payload
        value = data.get("timestamp") if isinstance(data, dict) else None
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):  # RecursionError: a line nested thousands deep; the adapter reports it
        return None
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
