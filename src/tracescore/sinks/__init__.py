"""Sinks: write each score as its own named score, idempotently (JSONL file here; platforms in ``platforms/``)."""

from __future__ import annotations

from tracescore.sinks.jsonl import JsonlSink

__all__ = ["JsonlSink"]
