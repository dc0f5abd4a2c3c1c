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
from tracescore.sinks.base import Sink
from tracescore.sources.base import EVERYTHING as EVERYTHING, ShardedSource, Source
from tracescore.store.db import Store


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
    push: bool = False  # built by ``tracescore push``: write-only, nothing is read
    keep_versions: bool = False  # ``[sinks] keep_versions``: the sink writes versioned names, old versions kept

    def where(self) -> str:
        return f" in {self.config_dir / 'tracescore.toml'}" if self.config_dir else ""


class SourceStats(Protocol):
    """What a source counted while reading (requests, rows, notes), for the run summary's ``read``."""

    def as_dict(self) -> dict[str, Any]: ...


@dataclass
class Parts:
    """A built platform: the source, a stable key of what it reads (cursor scope), the adapter, the sink, what the
    source counts, the same source split into shards (``--engine ray``) when it can be, the summary line."""

    source: Source
    key: str
    adapter: Adapter
    sink: Sink | None
    describe: str = ""
    stats: SourceStats | None = None
    summary: Callable[[int], tuple[str, list[str]]] | None = None  # traces seen → (what was read/written, notes)
    sharded: ShardedSource | None = None


@dataclass(frozen=True)
class Option:
    """A command-line option a platform adds (e.g. LangSmith's ``--project``): offered by the commands named in
    ``commands`` (``score``, ``init``, ``calibrate``), its value handed to the factory as ``overrides[key]``."""

    flag: str
    help: str
    commands: frozenset[str]
    is_flag: bool = False
    required: str = ""  # when set, ``score --source <this platform>`` needs it: what to give, for the message

    @property
    def key(self) -> str:
        """The parameter (and ``overrides``) name: ``--extend-trace-retention`` → ``extend_trace_retention``."""
        return self.flag.removeprefix("--").replace("-", "_")


@dataclass
class QueueContext:
    """What a platform's label-queue factory may use: the store, the queue's name, the platform options given
    (e.g. ``project``), the ``[source]`` keys, the limiter every request passes, the resources its client closes
    with."""

    store: Store
    name: str
    options: dict[str, Any]
    project: str | None
    limiter: RateLimiter
    resources: ExitStack


@dataclass(frozen=True)
class Platform:
    """One platform, with what it can do: its name (``[source] kind`` and ``--source``), its config sections, its
    factory (source, and the sink when it writes back), whether it is a ``push --to`` target, its label queue
    (``calibrate --to``), the command-line options it adds."""

    name: str
    factory: str  # "module:function" taking a PlatformContext, returning Parts
    adapter: str  # "module:function" taking a MappingConfig (or nothing), returning the Adapter
    sections: dict[str, type[BaseModel]] = field(default_factory=dict)
    file: bool = False  # reads a file (``score TRACES --source <name>``; the whole file: since EVERYTHING, no until)
    shards: bool = False  # a folder or export of it splits into shards (``--engine ray``; ``Parts.sharded``)
    sdk: str | None = None  # the optional package it needs, checked before the factory runs
    extra: str | None = None  # pip extra that installs it
    summary: str = ""
    server: str | None = None  # "module:function" → one line on the server the environment points at (inspect)
    push: bool = False  # writes scores back: its factory builds a sink (``score``/``run`` write-back, ``push --to``)
    queue: str | None = None  # "module:function" taking a QueueContext, returning its LabelQueue (``calibrate``)
    dashboard: str | None = None  # "module:function" taking a DashboardContext, returning its DashboardTarget
    options: tuple[Option, ...] = ()
    credentials: tuple[str, ...] = ()  # the environment variables its client reads (named in the starter config)
    # "module:function" reading one document of a file downloaded from the platform's UI or API
    # (``sources.documents.Download``): ``score FILE --source <name>``, and how ``score FILE`` recognises such a file
    download: str | None = None


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
