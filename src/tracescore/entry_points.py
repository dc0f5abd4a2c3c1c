"""Reading one entry-point group, the same way for every registry (scorers: ``tracescore.registry``; judges:
``tracescore.judge.registry``): tracescore's own distribution first, then each plugin distribution's, each by name
(one order on every machine, whatever the installer wrote). A name registered twice, an entry point that cannot be
imported or one that is not what its group holds stops the command (``ConfigError``, exit 2) in one line naming the
entry point and its package. Imports only the contract (``tracescore.errors``), so any registry may use it.
"""

from __future__ import annotations

import importlib.metadata as metadata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tracescore.errors import ConfigError

T = TypeVar("T")  # what the group's entry points load (a scorer, a judge provider)
R = TypeVar("R")  # the registry's record of one installed entry point


@dataclass(frozen=True)
class Origin:
    """Where an installed entry point comes from: its name, where it points, its distribution and version."""

    name: str
    value: str
    dist: str
    dist_version: str

    @property
    def package(self) -> str:
        return f"{self.dist} {self.dist_version}"


def load_group(
    group: str, *, kind: str, want: type[T], what: str, make: Callable[[str, str, str, str, T], R]
) -> list[R]:
    """Every entry point of ``group`` loaded, in order, each as ``make(name, value, dist, version, loaded)``.
    ``kind`` names the entry points in a message (``"scorer"``, ``"judge"``); ``want`` is what each must load to
    and ``what`` says it (``"a @tracescore.scorer function"``). ConfigError (exit 2) on a name registered twice,
    before anything is imported, then on the first entry point that cannot be imported or is not a ``want``."""
    found = list(metadata.entry_points(group=group))
    dist = {id(ep): (ep.dist.name if ep.dist is not None else "") for ep in found}
    found.sort(key=lambda ep: (dist[id(ep)] != "tracescore", dist[id(ep)], ep.name))
    names = [ep.name for ep in found]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        owners = ", ".join(dist[id(ep)] or "?" for ep in found if ep.name == twice[0])
        raise ConfigError(f"{kind} entry point {twice[0]!r} is registered twice (by {owners})")
    return [make(ep.name, ep.value, *_distribution(ep), _load(ep, kind, want, what)) for ep in found]


def _distribution(ep: metadata.EntryPoint) -> tuple[str, str]:
    return (ep.dist.name, ep.dist.version) if ep.dist is not None else ("unknown", "?")


def _load(ep: metadata.EntryPoint, kind: str, want: type[T], what: str) -> T:
    dist, version = _distribution(ep)
    try:
        value = ep.load()
    except Exception as exc:  # noqa: BLE001 - any import failure of a plugin stops the command, named
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ConfigError(
            f"{kind} entry point {ep.name!r} = {ep.value!r} ({dist} {version}) cannot be imported:"
            f" {type(exc).__name__}: {line}"
        ) from None
    if not isinstance(value, want):
        raise ConfigError(
            f"{kind} entry point {ep.name!r} = {ep.value!r} ({dist} {version}) is not {what}"
            f" (got {type(value).__name__})"
        )
    return value
