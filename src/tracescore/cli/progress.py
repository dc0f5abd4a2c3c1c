"""What ``score`` says about its input: which platform reads it (a file downloaded from one is recognised), one line
for a file that is not JSONL of traces, a progress line on a terminal while it runs."""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO

import click

from tracescore.errors import InputError, MissingInputError, TracescoreError
from tracescore.platforms import registry
from tracescore.sources.base import Record
from tracescore.sources.documents import read_documents

_HEAD = 65536


def input_problem(path: str) -> str | None:
    """One line when ``path`` is clearly not a JSONL file of traces (binary, a pretty-printed JSON document, a JSON
    array, CR-only line ends, CSV, a tracescore results file). A file with a JSON object on a line of its start is
    JSONL, whatever its other lines hold: each bad line is then reported on its own and the rest scored. A missing file
    is a bad argument (exit 2, as for every command); another read error, and an empty file (one warning when the run
    ends), are left to the reader. A ``.gz`` file is read through gzip."""
    if path == "-":
        return None
    try:
        with open(path, "rb") as raw, (gzip.open(raw) if path.endswith(".gz") else raw) as fh:
            head = fh.read(_HEAD)
    except FileNotFoundError:
        raise MissingInputError(f"no traces file {path!r}; give a JSONL file of traces (or '-' for stdin)") from None
    except (OSError, EOFError):
        return None
    if not head.strip():
        return None
    if b"\n" not in head and b"\r" in head.rstrip(b"\r"):
        return (f"{path} is not JSONL: its lines end with a carriage return only (one JSON trace per line expected;"
                f" e.g. tr '\\r' '\\n' < {path} > traces.jsonl)")
    if _holds_an_object_line(head):
        return _results_file(path, head)
    if b"\x00" in head:
        return f"{path} is not JSONL: it looks like a binary file (one JSON trace per line expected)"
    first = head.lstrip().split(b"\n", 1)[0].strip()
    try:
        value = json.loads(first)
    except ValueError:
        if first in (b"{", b"[") or first.endswith((b"{", b"[")):
            return (f"{path} is not JSONL: it looks like a pretty-printed JSON document (one JSON trace per line"
                    f" expected; e.g. jq -c '.[]' {path} > traces.jsonl)")
        return _csv(path, first)
    if isinstance(value, list):
        return (f"{path} is not JSONL: it is a JSON array (one JSON trace per line expected; e.g."
                f" jq -c '.[]' {path} > traces.jsonl)")
    return None


def input_kind(source: str | None, traces: str | None) -> tuple[str, bool]:
    """The platform that reads TRACES, and whether TRACES is a file downloaded from it. A JSONL file that is not one
    fails here with one line; without ``--source``, a file that a platform recognises as its download
    (``Platform.download``) is read by that platform, with a one-line note."""
    if source is not None and (source != registry.DEFAULT_SOURCE or traces in (None, "-")):
        platform = registry.get(source)
        return source, traces is not None and not platform.file and platform.download is not None
    if traces is None or traces == "-":
        return registry.DEFAULT_SOURCE, False
    problem = input_problem(traces)  # a missing file: exit 2 here
    if source is None:
        document = first_document(traces)
        found = registry.recognise(document) if document is not None else None
        if found is not None:
            name, what = found
            click.echo(f"note: {traces} is {what}: read as --source {name}", err=True)
            return name, not registry.get(name).file
    if problem is not None:
        raise InputError(problem)
    return registry.DEFAULT_SOURCE, False


def _csv(path: str, first: bytes) -> str | None:
    """The line for a CSV file: a first line that is not JSON, holds commas and starts with no JSON bracket."""
    if path.lower().removesuffix(".gz").endswith(".csv") or (b"," in first and not first.startswith((b"{", b"["))):
        return f"{path}: this looks like CSV; tracescore reads JSONL (one trace per line)"
    return None


def _results_file(path: str, head: bytes) -> str | None:
    """The line for a tracescore results file (its first object has ``trace_id`` and a ``scores`` object, as every
    result line has, and no ``question``, which every trace has), once, instead of an error per line."""
    for line in head.split(b"\n"):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            if "trace_id" in value and isinstance(value.get("scores"), dict) and "question" not in value:
                return f"{path} is a tracescore results file: use `tracescore report {path}`"
            return None
    return None


def _holds_an_object_line(head: bytes) -> bool:
    """Whether at least half the whole non-blank lines of ``head`` (the last one may be cut off) are JSON objects: JSONL
    with some bad lines, not a JSON array written one object per line (``{…},`` lines, one object at its end)."""
    lines = [line.strip() for line in (head.split(b"\n")[:-1] if len(head) == _HEAD else head.split(b"\n"))]
    lines = [line for line in lines if line]
    objects = 0
    for line in lines:
        if line.startswith(b"{") and line.endswith(b"}"):
            try:
                objects += isinstance(json.loads(line), dict)
            except (ValueError, RecursionError):
                continue
    return objects > 0 and 2 * objects >= len(lines)


class Progress:
    """``N traces, R/s, ETA`` on stderr, redrawn at most every ``every`` seconds, only when stderr is a terminal."""

    def __init__(
        self,
        path: str | None,
        *,
        quiet: bool = False,
        stream: IO[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        every: float = 0.5,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.clock = clock
        self.every = every
        self.total = _size(path)
        self.bytes = 0
        self.started = clock()
        self.shown_at = self.started
        self.drawn = False

    def counted(self, records: Iterator[Record]) -> Iterator[Record]:
        """Count each record's bytes as it streams past (for the ETA); nothing to count when no line is drawn."""
        return self._counting(records) if self.enabled else records

    def _counting(self, records: Iterator[Record]) -> Iterator[Record]:
        for record in records:
            self.bytes += record.size
            yield record

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.shown_at < self.every:
            return
        self.shown_at = now
        elapsed = max(now - self.started, 1e-9)
        line = f"scoring: {done} traces, {done / elapsed:.1f}/s"
        if self.total and self.bytes:
            left = elapsed * (self.total - self.bytes) / self.bytes
            line += f", ETA {int(left) // 60}m{int(left) % 60:02d}s"
        self.stream.write("\r" + line + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _size(path: str | None) -> int | None:
    if path is None or path == "-":
        return None
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def first_document(path: str) -> object | None:
    """The first JSON document of the file at ``path`` (its first line when that is JSON, else the whole file read
    as JSON documents: a pretty-printed download), or None when there is none."""
    try:
        with open(path, "rb") as raw, (gzip.open(raw) if path.endswith(".gz") else raw) as fh:
            head = fh.read(_HEAD)
    except (OSError, EOFError):
        return None
    line = next((part for part in head.split(b"\n") if part.strip()), b"")
    try:
        first: object = json.loads(line)
        return first
    except (ValueError, RecursionError):
        pass
    try:
        documents = read_documents(path)
    except TracescoreError:
        return None
    return documents[0][1] if documents else None
