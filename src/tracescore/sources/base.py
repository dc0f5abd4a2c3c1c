"""What every source yields (``Record``) and the two ways to yield it: a time window (``Source``) or shards.

A source knows paging, filters, rate limits and retries; it keeps no cursor of its own (the pipeline keeps the
watermark in the store and passes ``since``). Records may come in any order (Langfuse and LangSmith list newest first).
A ``ShardedSource`` (export files on disk or object storage) is split into ``Shard``s whose ``key`` is stable across
runs, so a distributed engine can name its outputs after the shard and skip the shards already done on a re-run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

EVERYTHING = datetime(1970, 1, 1, tzinfo=UTC)
"""The ``since`` of a one-shot read of a whole file (with ``until=None``): a file source yields every record."""


@dataclass(frozen=True)
class Record:
    """One native record and where it came from (``line`` for files). ``payload`` is left for the adapter."""

    payload: str | bytes | object
    line: int | None = None
    size: int = 0
    at: tuple[FileRef, int] | None = None  # (file, byte offset) the payload was read at: a worker reads it there
    timestamp: datetime | None = None  # the platform's time of the trace (root start); newest first when set
    url: str | None = None  # the trace in the platform's UI (the result line's ``trace_url``); None for files


@dataclass(frozen=True)
class FileRef:
    """A file as it was opened: its path and identity, so another process can tell that the path still names it (a
    log rotated or replaced since names another file)."""

    path: str
    device: int
    inode: int


class Source(Protocol):
    """Yields the native records whose platform timestamp lies in ``[since, until)``."""

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]: ...


@dataclass(frozen=True)
class Shard:
    """One independently scorable part of an export: ``key`` is stable across runs (derived from the file's path
    relative to the export root, never random), ``uri`` is where it lies (a local path or ``s3://...``)."""

    key: str
    uri: str


class ShardedSource(Protocol):
    """An export split into shards; every record of one trace lies in exactly one shard."""

    def shards(self) -> list[Shard]: ...

    def read(self, shard: Shard) -> Iterator[Record]: ...
