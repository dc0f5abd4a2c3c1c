"""LangSmith as a job platform: the root runs of a project in the engine's window, feedback written per batch.

Thin wrappers over ``sources/langsmith.py`` and ``sinks/langsmith.py``. Every HTTP request of the SDK's session goes
through the job's rate limiter. Feedback that could not be created or updated (after the SDK's retries) is a
SinkError, so its traces are not marked done and the watermark does not pass them; a refusal that a retry cannot fix
(no session id, a conflicting feedback config) is a rejection, reported with the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from tracescore.config import Config
from tracescore.errors import ConfigError, SinkError
from tracescore.result import TraceResult
from tracescore.sinks.records import WriteReport

if TYPE_CHECKING:
    from tracescore.adapters import Adapter
    from tracescore.limits import RateLimiter
    from tracescore.platforms.langsmith.sink import LangSmithSink
    from tracescore.platforms.langsmith.source import LangSmithSource

__all__ = ["LangSmithJobSink", "langsmith_platform"]

_UNDELIVERED = ("create_feedback failed", "update_feedback failed")


class LangSmithJobSink:
    """Writes a batch of results with one ``LangSmithSink`` and returns what the batch did."""

    def __init__(self, sink: LangSmithSink) -> None:
        self.sink = sink

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        report = self.sink.report
        accepted, requests = report.accepted, report.requests
        rejected = []
        for result in results:
            if result.scores:
                rejected += self.sink.write(result)
        rejected += self.sink.flush()
        undelivered = [r for r in rejected if r.reason.startswith(_UNDELIVERED)]
        if undelivered:
            raise SinkError(f"LangSmith did not take {len(undelivered)} feedback: {undelivered[0].reason}")
        return WriteReport(accepted=report.accepted - accepted, rejected=rejected, requests=report.requests - requests)


def _limit(client: Any, limiter: RateLimiter) -> None:
    """Route every request of the client's ``requests`` session through ``limiter`` (rate and count)."""
    session = client.session
    send = session.request

    def limited(*args: Any, **kwargs: Any) -> Any:
        limiter.acquire()
        return send(*args, **kwargs)

    session.request = limited


def langsmith_platform(
    config: Config, limiter: RateLimiter, write_back: bool, resources: ExitStack
) -> tuple[LangSmithSource, str, Adapter, LangSmithJobSink | None]:
    """Credentials from the environment, one client for reading and writing, the project from ``[source]``."""
    from tracescore.platforms.langsmith.adapter import langsmith_adapter
    from tracescore.platforms.langsmith.sink import LangSmithSink
    from tracescore.platforms.langsmith.source import LangSmithSource, make_client

    project = config.section("source").project
    if not project:
        where = f" in {config.path}" if config.path else ""
        raise ConfigError(f"[source] kind = 'langsmith' needs project = '<LangSmith project name>'{where}")
    settings = config.section("langsmith")
    client = make_client(timeout_ms=int(settings.timeout * 1000), retries=settings.retries)
    resources.callback(client.close) if callable(getattr(client, "close", None)) else None
    _limit(client, limiter)
    sink = None
    if write_back:
        sink = LangSmithJobSink(
            LangSmithSink(
                client,
                extend_trace_retention=settings.extend_trace_retention,
                feedback_source_type=settings.feedback_source_type,
            )
        )
        resources.callback(sink.sink.close)
    key = f"langsmith:{client.api_url}:{project}"
    source = LangSmithSource(client, project=project, page_size=settings.page_size)
    return source, key, langsmith_adapter(config.mapping), sink
