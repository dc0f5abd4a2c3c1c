"""What a platform declares (``Platform``) and what its factory gets (``PlatformContext``) and returns (``Parts``).

A platform is one folder under ``platforms/`` whose ``__init__.py`` defines ``PLATFORM``; the registry finds it, so
adding one needs no edit outside its folder. The factory is named by a dotted path and imported only when that
platform is used, so its SDK stays an optional import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from tracescore.adapters import Adapter
from tracescore.adapters.mapping import MappingConfig
from tracescore.calibrate.labels import Label
from tracescore.calibrate.sampling import Item
from tracescore.limits import RateLimiter
from tracescore.result import TraceResult
from tracescore.sinks.records import WriteReport
from tracescore.sources.base import EVERYTHING, Source

__all__ = [
    "EVERYTHING",
    "BatchSink",
    "LabelQueue",
    "Parts",
    "Platform",
    "PlatformContext",
    "QueueRef",
    "Window",
]



class BatchSink(Protocol):
    """A platform sink: writes the present scores of a batch of results idempotently (deterministic ids).

    The report says per score: delivered (``accepted``), rejected with a reason a retry cannot fix (``rejected``),
    or not delivered after the bounded retries (``undelivered``: the engine stops and leaves those traces unmarked).
    """

    def write(self, results: Sequence[TraceResult]) -> WriteReport: ...


@dataclass(frozen=True)
class Window:
    """The traces a one-shot ``score`` asked for, in platform terms (filters override the config's)."""

    environment: tuple[str, ...] = ()
    trace_name: str | None = None
    tags: tuple[str, ...] = ()
    project: str | None = None


@dataclass
class PlatformContext:
    """What a platform factory may use: its own config sections, the mapping, the ``[source]`` keys, the limiter."""

    sections: dict[str, Any]
    mapping: MappingConfig
    path: str | None
    project: str | None
    config_dir: Path | None
    limiter: RateLimiter
    write_back: bool
    resources: ExitStack
    overrides: dict[str, Any] = field(default_factory=dict)
    keep_versions: bool = False  # ``[sinks] keep_versions``: the sink writes versioned names, old versions kept

    def where(self) -> str:
        return f" in {self.config_dir / 'tracescore.toml'}" if self.config_dir else ""


@dataclass
class Parts:
    """A built platform: the source, a stable key of what it reads (cursor scope), the adapter, the sink, stats."""

    source: Source
    key: str
    adapter: Adapter
    sink: BatchSink | None
    describe: str = ""
    stats: Any = None
    summary: Callable[[int], tuple[str, list[str]]] | None = None  # traces seen → (what was read/written, notes)


@dataclass(frozen=True)
class Platform:
    """One platform: its name (``[source] kind`` and ``--source``), its config sections, its factory, its extra."""

    name: str
    factory: str  # "module:function" taking a PlatformContext, returning Parts
    adapter: str  # "module:function" taking a MappingConfig (or nothing), returning the Adapter
    sections: dict[str, type[BaseModel]] = field(default_factory=dict)
    file: bool = False  # reads a file (``score TRACES --source <name>``; the whole file: since EVERYTHING, no until)
    sdk: str | None = None  # the optional package it needs, checked before the factory runs
    extra: str | None = None  # pip extra that installs it
    summary: str = ""
    server: str | None = None  # "module:function" → one line on the server the environment points at (inspect)


@dataclass(frozen=True)
class QueueRef:
    """A platform's annotation queue as set up: its id and name, and the id of each label's config (by label name)."""

    platform: str
    queue_id: str
    name: str
    configs: dict[str, str] = field(default_factory=dict)


class LabelQueue(Protocol):
    """A platform annotation queue for judge calibration (``platforms/<name>/queue.py``).

    ``setup`` creates the label schema and the queue once (a second call finds them); ``push`` queues blind items,
    never one the store remembers as queued there; ``pull`` returns the labels people gave since ``since``, never
    a value this package wrote.
    """

    def setup(self) -> QueueRef: ...

    def push(self, items: Sequence[Item]) -> int: ...

    def pull(self, since: datetime | None = None) -> list[Label]: ...
