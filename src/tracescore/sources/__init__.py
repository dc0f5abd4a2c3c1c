"""Sources: yield platform-native records in a window. They know paging, filters and retries, not scoring."""

from __future__ import annotations

from tracescore.sources.base import Record
from tracescore.sources.jsonl import read_jsonl

__all__ = ["Record", "read_jsonl"]
