"""Adapters: turn one native record into the canonical Trace, or raise AdapterError with a clear reason.

The generic ones live here (JSONL, the shared field paths); each platform's adapter lives in its folder under
``platforms/`` and is found through ``platforms.registry.get_adapter``.
"""

from __future__ import annotations

from collections.abc import Callable

from tracescore.adapters.jsonl import trace_from_json
from tracescore.trace import Trace

__all__ = ["Adapter", "trace_from_json"]

Adapter = Callable[[object], Trace]
