"""The one registry of platforms, the built-in JSONL included: every folder under ``platforms/`` with a ``PLATFORM``.

The CLI's ``--source``, ``push --to`` and ``calibrate --to`` choices, the options a platform adds to a command, the
``[source] kind`` values and the platform config sections all come from here; nothing outside ``platforms/`` names
a platform or builds its client.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import cast

import tracescore.platforms as _package
from tracescore.adapters import Adapter
from tracescore.adapters.mapping import MappingConfig
from tracescore.errors import ConfigError, TracescoreError
from tracescore.platforms.base import LabelQueue, Option, Parts, Platform, PlatformContext, QueueContext
from tracescore.platforms.dashboards import DashboardContext, DashboardTarget
from tracescore.sources.documents import Download, DownloadSource

DEFAULT_SOURCE = "jsonl"  # ``score``, ``inspect`` and ``[source] kind`` without a choice: a file, no credentials


@cache
def platforms() -> dict[str, Platform]:
    """Every platform folder's ``PLATFORM`` (and its ``MORE_PLATFORMS``, e.g. its export source), by name (imports
    their declarations, never their SDKs)."""
    found: dict[str, Platform] = {}
    for info in sorted(pkgutil.iter_modules(_package.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        for platform in (getattr(module, "PLATFORM", None), *getattr(module, "MORE_PLATFORMS", ())):
            if isinstance(platform, Platform):
                found[platform.name] = platform
    return found


def names() -> list[str]:
    """The platform names, the default first."""
    return sorted(platforms(), key=lambda n: (n != DEFAULT_SOURCE, n))


def push_targets() -> list[str]:
    """The platforms that write scores back (``push --to``)."""
    return [n for n in names() if platforms()[n].push]


def queue_targets() -> list[str]:
    """The platforms with a label queue (``calibrate --to``/``--from``)."""
    return [n for n in names() if platforms()[n].queue is not None]


def dashboard_targets() -> list[str]:
    """The platforms ``tracescore dashboard --to`` can make a dashboard on (or list its manual steps for)."""
    return [n for n in names() if platforms()[n].dashboard is not None]


def options(command: str) -> list[tuple[Option, list[str]]]:
    """The options platforms add to ``command``, each once, with the platforms that declare it."""
    found: dict[str, tuple[Option, list[str]]] = {}
    for name in names():
        for option in platforms()[name].options:
            if command in option.commands:
                found.setdefault(option.flag, (option, []))[1].append(name)
    return list(found.values())


def get(name: str) -> Platform:
    """The platform ``name``; a ConfigError names the known ones."""
    try:
        return platforms()[name]
    except KeyError:
        known = ", ".join(repr(n) for n in names())
        raise ConfigError(f"source kind {name!r} is not available; expected one of {known}") from None


def build(name: str, context: PlatformContext) -> Parts:
    """Build platform ``name``: a missing SDK is one line with the pip command, then its factory runs."""
    platform = get(name)
    _need_sdk(platform)
    factory = cast(Callable[[PlatformContext], Parts], _load(platform.factory))
    return factory(context)


def build_queue(name: str, context: QueueContext) -> LabelQueue:
    """The label queue of platform ``name`` (its client closes with ``context.resources``); a ConfigError names the
    platforms that have one, or the pip command of a missing SDK."""
    factory = cast(Callable[[QueueContext], LabelQueue], _ability(name, "queue", queue_targets, "no label queue"))
    return factory(context)


def build_dashboard(name: str, context: DashboardContext) -> DashboardTarget:
    """The dashboard maker of platform ``name``; a ConfigError names the platforms that have one, or the pip
    command of a missing SDK."""
    make = _ability(name, "dashboard", dashboard_targets, "no dashboards")
    return cast(Callable[[DashboardContext], DashboardTarget], make)(context)


def _ability(name: str, attribute: str, targets: Callable[[], list[str]], lacking: str) -> object:
    """The factory of an optional ability of platform ``name`` (``Platform.queue``, ``Platform.dashboard``)."""
    platform = platforms().get(name)
    path = getattr(platform, attribute) if platform is not None else None
    if platform is None or path is None:
        known = ", ".join(repr(n) for n in targets())
        raise ConfigError(f"{name!r} has {lacking}; expected one of {known}")
    _need_sdk(platform)
    return _load(path)


def build_download(name: str, context: PlatformContext) -> Parts:
    """A file downloaded from platform ``name`` (``context.path``) read with its adapter: no client, no sink. An
    InputError names what the platform expected when the file is not its download."""
    platform = get(name)
    if platform.download is None:
        readers = ", ".join(n for n in names() if platforms()[n].download)
        raise ConfigError(f"--source {name} reads no downloaded file; the platforms that do: {readers}")
    path = str(context.path)
    source = DownloadSource(path, cast(Download, _load(platform.download)))
    key = f"{name}-download:{Path(path).resolve()}"
    return Parts(source, key, get_adapter(name, context.mapping), None, describe=f"{name}:{path}")


def recognise(document: object) -> tuple[str, str] | None:
    """``(platform, what it is)`` for the first platform whose download reader takes ``document`` (the first JSON
    document of a file), None when none does."""
    for name in names():
        reader = platforms()[name].download
        if reader is None:
            continue
        try:
            what, _ = cast(Download, _load(reader))(document)
        except TracescoreError:
            continue
        return name, what
    return None


def get_adapter(name: str, mapping: MappingConfig | None = None) -> Adapter:
    """The adapter of platform ``name`` with ``mapping`` (the defaults without one)."""
    make = cast(Callable[[MappingConfig | None], Adapter], _load(get(name).adapter))
    return make(mapping)


def server_line(name: str) -> str | None:
    """What platform ``name`` says about the server the environment points at (e.g. LangSmith's query backend), or
    None when it declares nothing or its SDK is not installed."""
    platform = get(name)
    if platform.server is None or (platform.sdk is not None and importlib.util.find_spec(platform.sdk) is None):
        return None
    describe = cast(Callable[[], str], _load(platform.server))
    return describe()


def _need_sdk(platform: Platform) -> None:
    if platform.sdk is not None and importlib.util.find_spec(platform.sdk) is None:
        raise ConfigError(
            f"{platform.name} needs the {platform.sdk} SDK: pip install 'tracescore[{platform.extra or platform.name}]'"
        )


def _load(path: str) -> object:
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
