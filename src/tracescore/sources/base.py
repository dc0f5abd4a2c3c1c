"""The ``Source`` protocol: native records of one platform in a time window ``[since, until)``.

A source knows paging, filters, rate limits and retries; it keeps no cursor of its own (the pipeline keeps the
watermark in the store and passes ``since``). Records may come in any order (Langfuse and LangSmith list newest first).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Protocol

from tracescore.sources.jsonl import Record

__all__ = ["Source"]


class Source(Protocol):
    """Yields the native records whose platform timestamp lies in ``[since, until)``."""

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]: ...
