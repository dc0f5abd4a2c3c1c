"""Sinks: write each score as its own named score, idempotently (local store, JSONL file, platforms)."""

from __future__ import annotations

from tracescore.sinks.jsonl import JsonlSink
from tracescore.sinks.store import Store

__all__ = ["JsonlSink", "Store"]
