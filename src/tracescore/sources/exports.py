"""Export files on a local disk or object storage, and how to cut them into shards that keep every trace whole.

``ExportRoot`` lists and reads the files under a root (a folder or ``s3://bucket/prefix``): object storage through
pyarrow's filesystem layer (S3 credentials, region and ``AWS_ENDPOINT_URL`` from the usual AWS environment), a local
folder through ``os``; rows come from Parquet (in record batches, only the columns asked for; pyarrow), JSONL (also
gzip), JSON arrays and CSV.

A platform export is split into shards, one per export file (``ShardPlan``). A trace's rows can span files (a run
that started before a window edge, children written after it), so the plan is made by one thin pass over every
file reading only the trace id and whether a row is a trace's root: a trace found in one file belongs to that
file's shard; a trace found in several belongs to the first shard (in key order) holding its root, else the first
holding any row of it, and that shard also reads the other files for its rows. Every row of a trace thus lies in
exactly one shard. The planning pass keeps one entry per trace id while it runs (about 100 bytes each); the plan it
leaves holds only the traces that span files (the window edges), which is what travels with the source.

Bad input loses nothing else: what cannot be read is an ``Unreadable`` naming file and line, the rest of the file is
read (``sources.export_rows``).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import posixpath
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from tracescore.errors import ConfigError, SourceError
from tracescore.sources.base import EVERYTHING, Record, Shard
from tracescore.sources.export_rows import BROKEN_STREAM, Unreadable, csv_rows, json_records, jsonl_rows

BATCH_ROWS = 2048
_FORMATS = (".parquet", ".jsonl", ".jsonl.gz", ".json", ".json.gz", ".csv", ".csv.gz")


@dataclass(frozen=True)
class ExportFile:
    """One file of an export: ``rel`` is its path relative to the export root (the shard key), ``uri`` where it is."""

    rel: str
    uri: str
    size: int = 0
    mtime_ns: int = 0


def need_pyarrow(what: str) -> None:
    """One line naming the extra when pyarrow is not installed (object storage and Parquet need it), not a
    ModuleNotFoundError traceback."""
    try:
        import pyarrow.fs  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise ConfigError(f"{what} needs pyarrow, which is not installed: pip install 'tracescore[export]'") from None


class ExportRoot:
    """The files under one export root (a local folder or ``s3://bucket/prefix``): object storage through
    ``pyarrow.fs``, a local root through the ``os`` calls (pyarrow only for Parquet files)."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/")
        self.notes: list[str] = []  # lines skipped as unreadable, with file and line number
        self._remote = "://" in root
        self.fs: Any = None  # a pyarrow filesystem: object storage only
        if not self._remote:
            self.base = str(Path(root).resolve())
            return
        need_pyarrow(f"reading {root!r}")
        import pyarrow.fs as pafs

        try:
            self.fs, self.base = pafs.FileSystem.from_uri(self.root)
        except Exception as exc:
            raise ConfigError(f"cannot open export root {root!r}: {exc}") from None

    def uri(self, rel: str) -> str:
        """The ``uri`` of a path relative to the root."""
        return f"{self.root}/{rel}" if self._remote else str(Path(self.base) / rel)

    def _path(self, uri: str) -> str:
        """The filesystem path of a ``uri`` made by ``uri()`` (or of the root itself)."""
        if uri == self.root:
            return str(self.base)
        if self._remote:
            return str(self.base) + uri[len(self.root) :]
        return uri

    def files(self) -> list[ExportFile]:
        """Every data file and manifest under the root, sorted by relative path (an empty list for an empty or
        missing prefix); ConfigError for a missing local path, SourceError when listing fails."""
        if not self._remote:
            return self._local_files()
        import pyarrow.fs as pafs

        try:
            itself = self.fs.get_file_info(self.base)
            if itself.type == pafs.FileType.File:  # the root names one file: that file alone
                name = posixpath.basename(self.base)
                return [ExportFile(name, self.root, int(itself.size or 0), int(itself.mtime_ns or 0))]
            infos = self.fs.get_file_info(pafs.FileSelector(self.base, recursive=True, allow_not_found=True))
        except Exception as exc:
            raise SourceError(f"cannot list export {self.root!r}: {exc}") from exc
        out = []
        for info in infos:
            if info.type != pafs.FileType.File or not info.path.endswith(_FORMATS):
                continue
            full = str(info.path)
            rel = posixpath.relpath(full, self.base) if self._remote else Path(full).relative_to(self.base).as_posix()
            out.append(ExportFile(rel, self.uri(rel), int(info.size or 0), int(info.mtime_ns or 0)))
        return sorted(out, key=lambda f: f.rel)

    def _local_files(self) -> list[ExportFile]:
        """``files()`` of a local root: the root itself when it names a file, else every data file under it."""
        base = Path(self.base)
        try:
            if base.is_file():
                found = base.stat()
                return [ExportFile(base.name, self.root, found.st_size, found.st_mtime_ns)]
            if not base.exists():
                raise ConfigError(f"{self.root!r} does not exist; give an export folder, file or s3://bucket/prefix")
            out = []
            for folder, _, names in os.walk(base):
                for name in names:
                    if name.endswith(_FORMATS):
                        path = Path(folder) / name
                        found = path.stat()
                        rel = path.relative_to(base).as_posix()
                        out.append(ExportFile(rel, self.uri(rel), found.st_size, found.st_mtime_ns))
        except OSError as exc:
            raise SourceError(f"cannot list export {self.root!r}: {exc}") from exc
        return sorted(out, key=lambda f: f.rel)

    def _open(self, path: str) -> Any:
        """A binary stream of one file (the caller closes it)."""
        return self.fs.open_input_stream(path, compression=None) if self._remote else open(path, "rb")  # noqa: SIM115

    def read_json(self, uri: str) -> Any:
        """A whole JSON document (a manifest)."""
        with self._open(self._path(uri)) as stream:
            return json.loads(stream.read())

    def rows(
        self, uri: str, columns: Sequence[str] | None = None, bad: list[Unreadable] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The rows of one data file as dicts (Parquet: only ``columns`` that exist, batch by batch)."""
        for _, row in self.numbered(uri, columns, bad):
            yield row

    def numbered(
        self, uri: str, columns: Sequence[str] | None = None, bad: list[Unreadable] | None = None, key: str = "trace_id"
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(line or row number, row)`` of one data file. What cannot be read goes to ``bad`` (a row: the file is
        read on; the file or its rest: the rows before the break are kept), with the ``key`` field of the row when it
        is legible (the trace id). Without ``bad``, an unreadable row is a note and an unreadable file a SourceError;
        so is, always, an object store that fails (I/O, after pyarrow's retries), which is no fault of the file."""
        found: list[Unreadable] = [] if bad is None else bad
        first, last = len(found), 0
        path = self._path(uri)
        try:
            for last, row in self._read(path, uri, columns, found, key):  # noqa: B007 - ``last``: where a break came
                yield last, row
        except Exception as exc:  # noqa: BLE001 - any reader's failure is this file's, reported with it
            if self._remote and isinstance(exc, OSError) and not isinstance(exc, BROKEN_STREAM):
                # the object store failed after pyarrow's retries: a source failure (exit 4, the next run retries)
                raise SourceError(f"cannot read export file {uri!r}: {type(exc).__name__}: {exc}") from exc
            found.append(Unreadable(uri, None, f"{type(exc).__name__}: {exc}", after=last))
        if bad is None:
            self.notes.extend(p.note() for p in found[first:] if p.line is not None)
            broken = next((p for p in found[first:] if p.line is None), None)
            if broken is not None:
                raise SourceError(f"cannot read export file {uri!r}: {broken.reason}")

    def _read(
        self, path: str, uri: str, columns: Sequence[str] | None, bad: list[Unreadable], key: str
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        if path.endswith(".parquet"):
            yield from enumerate(self._parquet(path, columns), start=1)
            return
        with self._open(path) as stream:
            raw: Any = gzip.GzipFile(fileobj=stream) if path.endswith(".gz") else stream
            name = path.removesuffix(".gz")
            if name.endswith(".jsonl"):
                yield from jsonl_rows(raw, uri, bad, key)
            elif name.endswith(".csv"):
                text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape")
                try:
                    yield from csv_rows(text, uri, bad, key)
                finally:
                    text.detach()  # the stream is closed with its ``with``
            else:
                yield from json_records(raw.read().decode("utf-8", "surrogateescape"), uri, bad, key)

    def _parquet(self, path: str, columns: Sequence[str] | None) -> Iterator[dict[str, Any]]:
        need_pyarrow(f"reading the Parquet file {path!r}")
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        with self.fs.open_input_file(path) if self._remote else open(path, "rb") as handle:
            parquet = pq.ParquetFile(handle)
            names = set(parquet.schema_arrow.names)
            wanted = [c for c in columns if c in names] if columns is not None else None
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
                yield from batch.to_pylist()


@dataclass
class ShardPlan:
    """Which traces span files: ``owner`` (trace id → the shard key that scores it) and ``extra`` (shard key → the
    other files it reads for those traces' rows). A trace not in ``owner`` lies in one file only."""

    owner: dict[str, str] = field(default_factory=dict)
    extra: dict[str, list[str]] = field(default_factory=dict)

    def keeps(self, key: str, trace_id: str, own_file: bool) -> bool:
        """Whether the shard ``key`` scores the rows of ``trace_id`` found in its own file or in an extra file."""
        owner = self.owner.get(trace_id)
        return owner == key if owner is not None else own_file


def plan_shards(
    files: Iterable[tuple[str, list[str]]], refs: Callable[[str], Iterable[tuple[str, bool]]]
) -> ShardPlan:
    """The plan for shards given as ``(key, [file uris])`` in key order; ``refs(uri)`` yields ``(trace id, is root)``
    for each row of one file (a thin read: two columns)."""
    seen: dict[str, list[tuple[str, str, bool]]] = {}  # trace id → [(key, uri, has its root)]
    order: dict[str, int] = {}
    for index, (key, uris) in enumerate(files):
        order[key] = index
        for uri in uris:
            local: dict[str, bool] = {}
            for trace_id, is_root in refs(uri):
                local[trace_id] = local.get(trace_id, False) or is_root
            for trace_id, root in local.items():
                seen.setdefault(trace_id, []).append((key, uri, root))
    plan = ShardPlan()
    for trace_id, places in seen.items():
        if len({key for key, _, _ in places}) < 2:
            continue
        rooted = [p for p in places if p[2]] or places
        owner = min(rooted, key=lambda p: order[p[0]])[0]
        plan.owner[trace_id] = owner
        extra = plan.extra.setdefault(owner, [])
        extra.extend(uri for key, uri, _ in places if key != owner and uri not in extra)
    return plan


class ExportSource(ABC):
    """What a platform export source shares: read whole (``records``, for the local engine) with a window on each
    trace's root start, and the summary of what it read. A subclass gives ``shards``/``read`` (the
    ``ShardedSource``), ``started`` (a payload's root start) and ``read_line``."""

    export: ExportRoot
    stats: Any  # the platform's read counters, with ``notes``

    @abstractmethod
    def shards(self) -> list[Shard]:
        """The export's shards, keys stable across runs (the shard plan made once, here)."""

    @abstractmethod
    def read(self, shard: Shard) -> Iterator[Record]:
        """The whole traces one shard scores."""

    @abstractmethod
    def started(self, payload: Any) -> Any:
        """When the trace of ``payload`` started (its root's ISO start time), None when unknown."""

    @abstractmethod
    def read_line(self) -> str:
        """One line saying what was read (files, runs, rows, duplicates dropped, traces)."""

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        """Every trace of the export, shard by shard; with a window, only traces whose root starts in it."""
        whole = since <= EVERYTHING and until is None
        for shard in self.shards():
            for record in self.read(shard):
                if whole or in_window(self.started(record.payload), since, until):
                    yield record

    def summary(self, seen: int) -> tuple[str, list[str]]:
        """What was read, and the notes of the source and of the files (lines skipped, runs without manifest)."""
        return self.read_line(), list(self.stats.notes) + list(self.export.notes)


def in_window(start: Any, since: datetime, until: datetime | None) -> bool:
    """Whether an ISO start time lies in ``[since, until)`` (naive times are UTC); a missing or unreadable one is
    kept, so the adapter reports it with the trace."""
    if not start:
        return True
    try:
        moment = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
    except ValueError:
        return True
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment >= since and (until is None or moment < until)


_Export = TypeVar("_Export", bound=ExportSource)


def open_export(source: Callable[[str], _Export], kind: str, path: str | None, where: str = "") -> _Export:
    """The export source of ``[source] kind`` at ``path`` with its shard plan made: a root that is no export fails
    here, before anything is scored, and the plan is made once."""
    if not path:
        raise ConfigError(f"[source] kind = {kind!r} needs path = '<folder or s3://…>'{where}")
    opened = source(path)
    opened.shards()
    return opened
