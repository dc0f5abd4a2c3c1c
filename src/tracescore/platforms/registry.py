"""The one registry of platforms, the built-in JSONL included: every folder under ``platforms/`` with a ``PLATFORM``.

The CLI's ``--source`` choices, the ``[source] kind`` values and the platform config sections all come from here.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import cast

import tracescore.platforms as _package
from tracescore.adapters import Adapter
from tracescore.adapters.mapping import MappingConfig
from tracescore.errors import ConfigError
from tracescore.platforms.base import Parts, Platform, PlatformContext

__all__ = ["build", "get", "get_adapter", "names", "platforms", "server_line"]


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
    """The platform names, JSONL first (the default)."""
    return sorted(platforms(), key=lambda n: (n != "jsonl", n))


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
    if platform.sdk is not None and importlib.util.find_spec(platform.sdk) is None:
        raise ConfigError(
            f"--source {name} needs the {platform.sdk} SDK: pip install 'tracescore[{platform.extra or name}]'"
        )
    factory = cast(Callable[[PlatformContext], Parts], _load(platform.factory))
    return factory(context)


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


def _load(path: str) -> object:
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
