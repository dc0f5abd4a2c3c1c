"""The JSONL file as a platform: the generic JSONL source and adapter; no write-back (scores go to the store)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from tracescore.adapters import Adapter, trace_from_json
from tracescore.adapters.mapping import MappingConfig
from tracescore.errors import ConfigError
from tracescore.platforms.base import EVERYTHING, Parts, PlatformContext
from tracescore.sources.base import Record
from tracescore.sources.folder import FolderSource
from tracescore.sources.jsonl import JsonlSource, read_jsonl


class FileSource(JsonlSource):
    """The JSONL source; asked for everything (``since`` at ``EVERYTHING``, no ``until``) it streams every line
    without reading timestamps, and ``-`` is stdin."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.name = str(path)

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        if since <= EVERYTHING and until is None:
            return read_jsonl(self.name)
        return super().records(since, until)


def build(context: PlatformContext) -> Parts:
    """The file named by ``[source] path`` (relative to the config file) or by the command line; a folder of JSONL
    files is sharded, one file a shard (``--engine ray``)."""
    if not context.path:
        raise ConfigError(f"[source] kind = 'jsonl' needs path = '<traces file>'{context.where()}")
    if context.path == "-":
        return Parts(FileSource("-"), "jsonl:-", trace_from_json, None, describe="jsonl:-")
    path = Path(context.path)
    if context.config_dir is not None and not path.is_absolute():
        path = context.config_dir / path
    return Parts(
        FileSource(path), f"jsonl:{path.resolve()}", trace_from_json, None, describe=f"jsonl:{context.path}",
        sharded=FolderSource(path) if path.is_dir() else None,
    )


def adapter(mapping: MappingConfig | None = None) -> Adapter:
    """Canonical traces need no mapping."""
    return trace_from_json
