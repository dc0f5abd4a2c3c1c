"""Adapters: turn one native record into the canonical Trace, or raise AdapterError with a clear reason.

Platforms register with ``register(name, adapter)``, the built-ins included, so a new platform is a new file.
"""

from __future__ import annotations

from collections.abc import Callable

from tracescore.adapters.jsonl import trace_from_json
from tracescore.errors import ConfigError
from tracescore.platforms.langfuse.adapter import langfuse_adapter
from tracescore.platforms.langsmith.adapter import trace_from_langsmith
from tracescore.trace import Trace

__all__ = ["Adapter", "get_adapter", "register", "registered", "trace_from_json"]

Adapter = Callable[[object], Trace]
_ADAPTERS: dict[str, Adapter] = {}


def register(name: str, adapter: Adapter) -> None:
    """Make ``adapter`` available under ``name`` (e.g. ``"langfuse"``)."""
    _ADAPTERS[name] = adapter


def registered() -> list[str]:
    return sorted(_ADAPTERS)


def get_adapter(name: str) -> Adapter:
    """The adapter registered under ``name``; a ConfigError names the known ones."""
    try:
        return _ADAPTERS[name]
    except KeyError:
        known = ", ".join(repr(n) for n in registered())
        raise ConfigError(f"unknown adapter {name!r}; expected one of {known}") from None


register("jsonl", trace_from_json)
register("langfuse", langfuse_adapter())
register("langsmith", trace_from_langsmith)
