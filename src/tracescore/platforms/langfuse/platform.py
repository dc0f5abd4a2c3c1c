"""Langfuse as a job platform: the windowed source and the batch sink the engine drives, over one bare client.

Thin wrappers over ``sources/langfuse.py`` and ``sinks/langfuse.py``: the source takes the engine's ``since``/
``until``; the sink returns what each batch did, and turns scores that were not delivered (after the bounded
retries) into a SinkError, so their traces are not marked done and the watermark does not pass them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tracescore.config import Config
from tracescore.errors import SinkError
from tracescore.result import TraceResult
from tracescore.sinks.records import WriteReport
from tracescore.sources.jsonl import Record

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI

    from tracescore.adapters import Adapter
    from tracescore.limits import RateLimiter
    from tracescore.platforms.langfuse.sink import LangfuseScoreSink
    from tracescore.platforms.langfuse.source import ReadStats

__all__ = ["LangfuseJobSink", "LangfuseJobSource", "langfuse_platform"]

_UNDELIVERED = "not delivered after"


class LangfuseJobSource:
    """Whole traces whose root starts in ``[since, until)``, with the ``[langfuse]`` filters."""

    def __init__(self, client: LangfuseAPI, config: Config) -> None:
        from tracescore.platforms.langfuse.run import metadata_keys_to_expand
        from tracescore.platforms.langfuse.source import ReadStats

        self.client = client
        self.config = config
        self.expand = metadata_keys_to_expand(config)
        self.stats: ReadStats = ReadStats()

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        from datetime import UTC
        from datetime import datetime as dt

        from tracescore.platforms.langfuse.source import LangfuseWindow, read_experiment_items, read_langfuse

        settings = self.config.langfuse
        window = LangfuseWindow.from_settings(since, until or dt.now(UTC), settings)
        experiments = (
            read_experiment_items(self.client, window, settings, stats=self.stats)
            if settings.experiment_labels
            else None
        )
        yield from read_langfuse(
            self.client,
            window,
            settings,
            expand_metadata=self.expand,
            stats=self.stats,
            experiment_items=experiments,
        )


class LangfuseJobSink:
    """Writes a batch of results with one ``LangfuseScoreSink`` (its score-config cache kept across batches)."""

    def __init__(self, sink: LangfuseScoreSink) -> None:
        self.sink = sink

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        report = self.sink.report
        accepted, rejected, requests, retried = report.accepted, len(report.rejected), report.requests, report.retried
        for result in results:
            if result.scores:
                self.sink.write(result)
        self.sink.flush()
        new = report.rejected[rejected:]
        undelivered = [r for r in new if r.reason.startswith(_UNDELIVERED)]
        if undelivered:
            raise SinkError(f"Langfuse did not take {len(undelivered)} scores: {undelivered[0].reason}")
        return WriteReport(
            accepted=report.accepted - accepted,
            rejected=list(new),
            retried=report.retried - retried,
            requests=report.requests - requests,
        )


def langfuse_platform(
    config: Config, limiter: RateLimiter, write_back: bool, resources: ExitStack
) -> tuple[LangfuseJobSource, str, Adapter, LangfuseJobSink | None]:
    """Credentials from the environment, one client for reading and writing, every request through ``limiter``."""
    from tracescore.platforms.langfuse.adapter import langfuse_adapter
    from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
    from tracescore.platforms.langfuse.sink import LangfuseScoreSink

    credentials = LangfuseCredentials.from_env()
    settings = config.langfuse
    client = resources.enter_context(
        make_client(credentials, timeout=settings.timeout, on_request=limiter.httpx_hook)
    )
    filters: list[Any] = [*settings.environment, settings.trace_name or "", *settings.tags]
    key = f"langfuse:{credentials.base_url}" + ("|" + ",".join(map(str, filters)) if any(filters) else "")
    sink = LangfuseJobSink(LangfuseScoreSink(client, settings)) if write_back else None
    return LangfuseJobSource(client, config), key, langfuse_adapter(config.mapping), sink
