"""LangSmith as a platform: the root runs of a project in the engine's window, feedback written per batch.

Every HTTP request of the SDK's session goes through the job's rate limiter. Feedback that could not be created or
updated after the SDK's retries is undelivered (typed on the rejection): a SinkError, so its traces are not marked
done and the watermark does not pass them; a refusal a retry cannot fix (no session id, a conflicting feedback
config) is a rejection, reported with the trace.
"""

from __future__ import annotations

import os
from typing import Any

from tracescore.errors import ConfigError
from tracescore.limits import RateLimiter
from tracescore.platforms.base import LabelQueue, Parts, PlatformContext, QueueContext
from tracescore.platforms.langsmith.adapter import langsmith_adapter
from tracescore.platforms.langsmith.backend import CLICKHOUSE_ONLY, V1_API, V2_API, detect_backend
from tracescore.platforms.langsmith.query_v2 import make_v2_client
from tracescore.platforms.langsmith.queue import LangSmithLabelQueue
from tracescore.platforms.langsmith.settings import LangSmithSettings
from tracescore.platforms.langsmith.sink import LangSmithSink
from tracescore.platforms.langsmith.source import LangSmithSource, make_client
from tracescore.secrets import redact
from tracescore.sinks.base import BatchWriter

_PUSH_PROJECT = "(push)"  # push reads nothing (the results name their runs): the project only names its store scope


class LangSmithJobSink(BatchWriter[LangSmithSink]):
    """Writes a batch of results with one ``LangSmithSink`` and returns what the batch did."""

    def __init__(self, sink: LangSmithSink) -> None:
        super().__init__(sink, platform="LangSmith", scores="feedback")


def _limit(client: Any, limiter: RateLimiter) -> None:
    """Route every request of the client's ``requests`` session through ``limiter`` (rate and count)."""
    session = client.session
    send = session.request

    def limited(*args: Any, **kwargs: Any) -> Any:
        limiter.acquire()
        return send(*args, **kwargs)

    session.request = limited


def build(context: PlatformContext) -> Parts:
    """Credentials from the environment, one client for reading and writing, the project from ``[source]``."""
    project = _PUSH_PROJECT if context.push else context.overrides.get("project") or context.project
    if not project:
        raise ConfigError(f"[source] kind = 'langsmith' needs project = '<LangSmith project name>'{context.where()}")
    settings: LangSmithSettings = context.sections["langsmith"]
    client = make_client(timeout_ms=int(settings.timeout * 1000), retries=settings.retries)
    if callable(getattr(client, "close", None)):
        context.resources.callback(client.close)
    _limit(client, context.limiter)
    sink = None
    if context.write_back:
        retention = context.overrides.get("extend_trace_retention")
        sink = LangSmithJobSink(
            LangSmithSink(
                client,
                extend_trace_retention=settings.extend_trace_retention if retention is None else retention,
                feedback_source_type=settings.feedback_source_type,
                keep_versions=context.keep_versions,
            )
        )
        context.resources.callback(sink.sink.close)
    key = redact(f"langsmith:{client.api_url}:{project}")  # a password in the endpoint URL is not stored
    source = LangSmithSource(
        client,
        project=project,
        page_size=settings.page_size,
        v2_client=lambda: make_v2_client(
            client, timeout=settings.timeout, retries=settings.retries, on_request=context.limiter.acquire
        ),
    )
    context.resources.callback(source.close)

    def summary(seen: int) -> tuple[str, list[str]]:
        read = source.stats
        line = f"read {seen} traces from LangSmith project {project!r} (query backend {read.backend}, {read.api})"
        if sink is None:
            return line + "; no write-back", list(read.notes)
        w = sink.sink.summary()
        return (
            line + f"; feedback: {w['created']} created, {w['updated']} updated, {w['unchanged']} unchanged,"
            f" {w['rejected']} not written, {w['removed']} removed ({w['requests']} requests)",
            list(read.notes) + list(w.get("notes", [])),
        )

    return Parts(
        source,
        key,
        langsmith_adapter(context.mapping),
        sink,
        describe=f"langsmith:{project}",
        stats=source.stats,
        summary=summary,
    )


def describe_server() -> str:
    """The query backend of the deployment ``LANGSMITH_ENDPOINT`` names (``inspect --source langsmith``)."""
    if not (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")):
        return "LangSmith query backend: not checked (set LANGSMITH_API_KEY and LANGSMITH_ENDPOINT to read /info)"
    client = make_client(timeout_ms=10_000, retries=1)
    try:
        backend, note = detect_backend(client)
    finally:
        client.close()
    where = redact(str(client.api_url))
    reads = V1_API if backend == CLICKHOUSE_ONLY else V2_API
    line = f"LangSmith query backend at {where}: {backend} (runs are read through {reads})"
    return line + (f"; {note}" if note else "")


def label_queue(context: QueueContext) -> LabelQueue:
    """The calibration queue of the project (``--project``, else ``[source] project``), every request of the
    client through the limiter."""
    project = context.options.get("project") or context.project
    if not project:
        raise ConfigError("langsmith needs the project whose runs are queued: pass --project NAME")
    client = make_client()
    context.resources.callback(client.close)
    _limit(client, context.limiter)
    return LangSmithLabelQueue(client, context.store, project=project, name=context.name)
