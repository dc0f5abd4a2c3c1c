"""The judge cache of a distributed run: write-once Parquet files beside the results, keyed by the same content hash
as the store's judge cache (``JudgeRequest.key``: model + rubric + prefix + content + schema).

Each judge worker appends every new reply to its own write-ahead JSONL file the moment it arrives (one ``write`` +
``flush``: a killed process loses nothing the API already answered), and on a clean close turns it into one Parquet
file written once under its final name (temp file, then rename). A later run loads every Parquet file and every
write-ahead file a killed run left, so no answered request is paid for twice; ``compact`` turns those leftovers
into Parquet before the workers start. The columns are the store's ``judge_cache`` table's.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

_COLUMNS = ("key", "model", "rubric", "request", "reply", "created_at")
_WAL = "wal-"


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as one Parquet file under ``path``, atomically (hidden temp name, then rename)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    table = pa.Table.from_pylist(rows, schema=pa.schema([(c, pa.string()) for c in _COLUMNS]))
    temp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, temp, compression="zstd")
    os.replace(temp, path)


def _wal_rows(path: Path) -> list[dict[str, Any]]:
    """The whole lines of a write-ahead file (a line cut short by a kill is dropped: that reply was never used)."""
    rows = []
    with path.open("rb") as fh:
        for raw in fh:
            try:
                row = json.loads(raw)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("key"), str) and isinstance(row.get("reply"), str):
                rows.append(row)
    return rows


def compact(folder: str | Path) -> int:
    """Turn each write-ahead file a killed run left into a Parquet file of the same name; returns how many."""
    folder = Path(folder)
    done = 0
    for wal in sorted(folder.glob(f"{_WAL}*.jsonl")):
        rows = _wal_rows(wal)
        if rows:
            _write_parquet(wal.with_name(wal.stem.removeprefix(_WAL) + ".parquet"), rows)
        wal.unlink()
        done += 1
    return done


class ParquetJudgeCache:
    """A ``JudgeCache`` over a folder: every reply already there answers from memory; new ones go to ``writer``'s
    write-ahead file at once and to its own Parquet file on ``close``. Thread-safe; an entry is never rewritten."""

    def __init__(self, folder: str | Path, writer: str) -> None:
        import pyarrow.parquet as pq

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.writer = writer
        self.loaded = 0
        self._replies: dict[str, str] = {}
        self._new: list[dict[str, Any]] = []
        self._wal: IO[str] | None = None
        self._lock = threading.Lock()
        for path in sorted(self.folder.glob("*.parquet")):
            if path.name.startswith("."):
                continue
            table = pq.read_table(path, columns=["key", "reply"])
            self._replies.update(zip(table.column("key").to_pylist(), table.column("reply").to_pylist(), strict=True))
        for path in sorted(self.folder.glob(f"{_WAL}*.jsonl")):
            self._replies.update((row["key"], row["reply"]) for row in _wal_rows(path))
        self.loaded = len(self._replies)

    def judge_cache_get(self, key: str) -> str | None:
        with self._lock:
            return self._replies.get(key)

    def judge_cache_put(self, key: str, *, model: str, rubric: str, request: str, reply: str) -> None:
        row = {"key": key, "model": model, "rubric": rubric, "request": request, "reply": reply,
               "created_at": datetime.now(UTC).isoformat()}
        with self._lock:
            if key in self._replies:
                return
            self._replies[key] = reply
            self._new.append(row)
            if self._wal is None:
                self._wal = (self.folder / f"{_WAL}{self.writer}.jsonl").open("a", encoding="utf-8")
            self._wal.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._wal.flush()

    def close(self) -> int:
        """Write this writer's new replies as one Parquet file, drop its write-ahead file; returns how many."""
        with self._lock:
            rows, self._new = self._new, []
            if rows:
                _write_parquet(self.folder / f"{self.writer}.parquet", rows)
            if self._wal is not None:
                self._wal.close()
                self._wal = None
                (self.folder / f"{_WAL}{self.writer}.jsonl").unlink(missing_ok=True)
            return len(rows)
