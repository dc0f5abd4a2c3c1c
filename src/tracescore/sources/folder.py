"""A folder of JSONL trace files as a ``ShardedSource``: one file is one shard, keyed by its path under the folder.

``tracescore score traces_dir/ --engine ray`` scores each file in its own task; the key (``day=01/part-3.jsonl``)
is stable across runs, so the per-shard results are named after it and a re-run skips the files already done.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tracescore.errors import InputError
from tracescore.sources.base import Record, Shard
from tracescore.sources.jsonl import read_jsonl

SUFFIX = ".jsonl"


class FolderSource:
    """Every ``*.jsonl`` file under ``root`` (recursively, sorted by key); hidden files and folders are left out."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def shards(self) -> list[Shard]:
        """One shard per JSONL file; an absent folder or one without a JSONL file is an ``InputError``."""
        if not self.root.is_dir():
            raise InputError(f"no traces folder {str(self.root)!r}; give a folder of .jsonl files")
        shards = [
            Shard(key=path.relative_to(self.root).as_posix(), uri=str(path))
            for path in self.root.rglob(f"*{SUFFIX}")
            if path.is_file() and not any(p.startswith(".") for p in path.relative_to(self.root).parts)
        ]
        if not shards:
            raise InputError(f"{str(self.root)!r} holds no {SUFFIX} file; put one JSONL file of traces per shard in it")
        return sorted(shards, key=lambda s: s.key)

    def read(self, shard: Shard) -> Iterator[Record]:
        """The shard's lines, streamed, with their 1-based line numbers."""
        return read_jsonl(shard.uri)
