"""JSONL: a file of canonical traces (the built-in platform; it registers like any other)."""

from __future__ import annotations

from tracescore.platforms.base import Platform

PLATFORM = Platform(
    name="jsonl",
    adapter="tracescore.platforms.jsonl.platform:adapter",
    factory="tracescore.platforms.jsonl.platform:build",
    file=True,
    shards=True,
    summary="a JSONL file of canonical traces (TRACES, or [source] path)",
)
