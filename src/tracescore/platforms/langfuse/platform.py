"""Langfuse as a platform: the windowed source and the batch sink the engine drives, over one bare client.

The source takes the engine's ``since``/``until``; the sink returns what each batch did, typed per score (delivered,
rejected with a reason, undelivered after the retries): the engine stops on undelivered scores so their traces are
not marked done and the watermark does not pass them.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tracescore.adapters.fields import split_path
from tracescore.adapters.mapping import MappingConfig
from tracescore.platforms.base import LabelQueue, Parts, PlatformContext, QueueContext
from tracescore.platforms.langfuse.adapter import langfuse_adapter
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client, request_options
from tracescore.platforms.langfuse.links import TraceLinks
from tracescore.platforms.langfuse.queue import LangfuseLabelQueue
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.platforms.langfuse.sink import LangfuseScoreSink
from tracescore.platforms.langfuse.source import LangfuseWindow, ReadStats, read_experiment_items, read_langfuse
from tracescore.secrets import redact
from tracescore.sinks.base import BatchWriter
from tracescore.sources.base import Record
from tracescore.trace import Labels

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI


def metadata_keys_to_expand(mapping: MappingConfig) -> list[str]:
    """Top-level metadata keys that may hold labels: Langfuse cuts longer values at 200 characters unless named."""
    keys = {str(split_path(p)[0]) for p in mapping.labels_paths if split_path(p)}
    return sorted(keys | set(Labels.model_fields))


class LangfuseJobSource:
    """Whole traces whose root starts in ``[since, until)``, with the ``[langfuse]`` filters (or the overrides)."""

    def __init__(
        self, client: LangfuseAPI, settings: LangfuseSettings, mapping: MappingConfig, where: str = "Langfuse",
        base_url: str | None = None, **filters: Any,
    ) -> None:
        self.client = client
        self.settings = settings
        self.where = where  # the host and the variable it came from, for messages
        self.filters = filters
        self.expand = metadata_keys_to_expand(mapping)
        self.stats = ReadStats()
        options = request_options(settings.timeout)
        self.links = TraceLinks(client, base_url, self.stats.notes.append, options) if base_url else None

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        window = LangfuseWindow.from_settings(since, until or datetime.now(UTC), self.settings, **self.filters)
        experiments = (
            read_experiment_items(self.client, window, self.settings, stats=self.stats, where=self.where)
            if self.settings.experiment_labels
            else None
        )
        records = read_langfuse(
            self.client,
            window,
            self.settings,
            expand_metadata=self.expand,
            stats=self.stats,
            experiment_items=experiments,
            where=self.where,
        )
        yield from self.links.attach(records) if self.links is not None else records


class LangfuseJobSink(BatchWriter[LangfuseScoreSink]):
    """Writes a batch of results with one ``LangfuseScoreSink`` (its score-config cache kept across batches)."""

    def __init__(self, sink: LangfuseScoreSink) -> None:
        super().__init__(sink, platform="Langfuse")


def build(context: PlatformContext) -> Parts:
    """Credentials from the environment, one client for reading and writing, every request through the limiter."""
    credentials = LangfuseCredentials.from_env()
    settings: LangfuseSettings = context.sections["langfuse"]
    client = context.resources.enter_context(
        make_client(credentials, timeout=settings.timeout, on_request=context.limiter.httpx_hook)
    )
    overrides = {k: v for k, v in context.overrides.items() if k in ("environment", "trace_name", "tags") and v}
    filters: list[Any] = [
        *overrides.get("environment", settings.environment),
        overrides.get("trace_name", settings.trace_name) or "",
        *overrides.get("tags", settings.tags),
    ]
    where = redact(f"langfuse:{credentials.base_url}")  # a password in the URL is neither stored nor shown
    key = where + ("|" + ",".join(map(str, filters)) if any(filters) else "")
    score_sink = LangfuseScoreSink(client, settings, keep_versions=context.keep_versions)
    sink = LangfuseJobSink(score_sink) if context.write_back else None
    source = LangfuseJobSource(
        client, settings, context.mapping, credentials.where, base_url=credentials.base_url, **overrides
    )

    def summary(seen: int) -> tuple[str, list[str]]:
        read = source.stats
        line = f"read {read.traces} traces ({read.rows} observations, {read.requests} requests, {read.retries} retried)"
        if sink is None:
            return line + "; no write-back", list(read.notes)
        written = sink.sink.report
        line += f"; wrote {written.accepted} scores in {written.requests} requests ({written.retried} retried)"
        line += f", removed {written.removed} superseded or vanished" if written.removed else ""
        return line, list(read.notes) + list(written.notes)

    return Parts(
        source,
        key,
        langfuse_adapter(context.mapping),
        sink,
        describe=where,
        stats=source.stats,
        summary=summary,
    )


def label_queue(context: QueueContext) -> LabelQueue:
    """The calibration queue over one client (credentials from the environment), every request through the
    limiter."""
    credentials = LangfuseCredentials.from_env()
    client = context.resources.enter_context(make_client(credentials, on_request=context.limiter.httpx_hook))
    return LangfuseLabelQueue(client, context.store, name=context.name)
