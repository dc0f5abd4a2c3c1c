"""Score a LangSmith window end to end: read root runs with their children, adapt, score, write feedback (or not).

The CLI's ``score --source langsmith`` is a thin shell around ``score_langsmith_window``; tests and cron jobs can
call it directly. The sink is flushed even when reading stops with an error, so feedback of traces already read is
kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tracescore.config import Config
from tracescore.engine.pipeline import RunCounts, score_records
from tracescore.platforms.langsmith.adapter import langsmith_adapter
from tracescore.platforms.langsmith.sink import LangSmithSink
from tracescore.platforms.langsmith.source import LangSmithSource
from tracescore.result import TraceResult
from tracescore.scorers import Scorer
from tracescore.sinks.records import Rejection

if TYPE_CHECKING:  # pragma: no cover
    from langsmith import Client

__all__ = ["LangSmithRun", "score_langsmith_window"]


@dataclass
class LangSmithRun:
    """What one LangSmith run did: traces (counts) and feedback written (None without write-back)."""

    counts: RunCounts = field(default_factory=RunCounts)
    write: dict[str, Any] | None = None
    rejected: list[Rejection] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The run summary stored with the run."""
        out: dict[str, Any] = dict(self.counts.as_dict())
        if self.write is not None:
            out["write"] = self.write
        return out


def score_langsmith_window(
    client: Client,
    project: str,
    start: datetime,
    end: datetime,
    scorers: Sequence[Scorer],
    *,
    config: Config,
    write_back: bool = True,
    extend_trace_retention: bool | None = None,
    run: LangSmithRun | None = None,
) -> Iterator[TraceResult]:
    """Yield the result of every root run of ``project`` started in ``[start, end)``; with ``write_back`` each
    present score also becomes one feedback on its root run (``extend_trace_retention`` overrides the config)."""
    settings = config.langsmith
    run = run if run is not None else LangSmithRun()
    sink = None
    if write_back:
        sink = LangSmithSink(
            client,
            extend_trace_retention=settings.extend_trace_retention
            if extend_trace_retention is None
            else extend_trace_retention,
            feedback_source_type=settings.feedback_source_type,
        )
    source = LangSmithSource(client, project=project, page_size=settings.page_size)
    try:
        for result in score_records(source.records(start, end), langsmith_adapter(config.mapping), scorers,
                                    run.counts):
            if sink is not None and result.scores:
                run.rejected += sink.write(result)
            yield result
    finally:
        if sink is not None:
            try:
                run.rejected += sink.flush()
            finally:
                sink.close()
                run.write = sink.summary()
