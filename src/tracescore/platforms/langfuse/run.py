"""Score a Langfuse window end to end: read whole traces, adapt, score, and write each score back (or not).

The CLI's ``score --source langfuse`` is a thin shell around ``score_langfuse_window``; tests and cron jobs can call
it directly. The sink is flushed even when reading stops with an error, so scores of traces already read are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracescore.adapters.fields import split_path
from tracescore.config import Config
from tracescore.engine.pipeline import RunCounts, score_records
from tracescore.platforms.langfuse.adapter import langfuse_adapter
from tracescore.platforms.langfuse.sink import LangfuseScoreSink
from tracescore.platforms.langfuse.source import LangfuseWindow, ReadStats, read_experiment_items, read_langfuse
from tracescore.result import TraceResult
from tracescore.scorers import Scorer
from tracescore.sinks.records import WriteReport
from tracescore.trace import Labels

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI

__all__ = ["LangfuseRun", "metadata_keys_to_expand", "score_langfuse_window"]


@dataclass
class LangfuseRun:
    """What one Langfuse run did: traces (counts), reads (stats) and writes (report, None without write-back)."""

    counts: RunCounts = field(default_factory=RunCounts)
    read: ReadStats = field(default_factory=ReadStats)
    write: WriteReport | None = None

    def as_dict(self) -> dict[str, Any]:
        """The run summary stored with the run."""
        out: dict[str, Any] = {**self.counts.as_dict(), "read": self.read.as_dict()}
        if self.write is not None:
            out["write"] = self.write.as_dict()
        return out


def metadata_keys_to_expand(config: Config) -> list[str]:
    """Top-level metadata keys that may hold labels: Langfuse cuts longer values at 200 characters unless named."""
    keys = {str(split_path(p)[0]) for p in config.mapping.labels_paths if split_path(p)}
    return sorted(keys | set(Labels.model_fields))


def score_langfuse_window(
    client: LangfuseAPI,
    window: LangfuseWindow,
    scorers: Sequence[Scorer],
    *,
    config: Config,
    write_back: bool = True,
    run: LangfuseRun | None = None,
) -> Iterator[TraceResult]:
    """Yield the result of every trace of ``window``; with ``write_back`` their scores go to Langfuse as well."""
    run = run if run is not None else LangfuseRun()
    sink = None
    if write_back:
        run.write = run.write if run.write is not None else WriteReport()
        sink = LangfuseScoreSink(client, config.langfuse, report=run.write)
    experiments = (
        read_experiment_items(client, window, config.langfuse, stats=run.read)
        if (config.langfuse.experiment_labels)
        else None
    )
    records = read_langfuse(
        client,
        window,
        config.langfuse,
        expand_metadata=metadata_keys_to_expand(config),
        stats=run.read,
        experiment_items=experiments,
    )
    try:
        for result in score_records(records, langfuse_adapter(config.mapping), scorers, run.counts):
            if sink is not None and result.scores:
                sink.write(result)
            yield result
    finally:
        if sink is not None:
            sink.close()
