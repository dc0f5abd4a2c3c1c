"""The one sink protocol: where a run's results go, a batch at a time, and the two abilities a sink may have.

Every sink satisfies ``Sink`` (a platform's ``BatchWriter`` over its ``ScoreBuffer``, the ``--out`` ``JsonlSink``),
so the engine, ``push`` and ``backfill --dry-run`` call its methods directly instead of asking whether it has them.
``attach`` and ``preview`` have defaults here for a sink that keeps no ledger (subclass ``Sink`` to inherit them):
attaching does nothing, a preview is None (nothing this sink writes is ever removed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypedDict, TypeVar

from tracescore.errors import SinkError
from tracescore.result import TraceResult
from tracescore.sinks.records import WriteReport
from tracescore.sinks.sessions import SessionScores

if TYPE_CHECKING:
    from tracescore.store.db import Store


class RemovalPreview(TypedDict):
    """What a write-back would remove (``backfill --dry-run``): our scores on the traces, those superseded for sure
    (whatever the new values), the superseded ones by name."""

    ours: int
    superseded: int
    superseded_by_name: dict[str, int]


class Sink(Protocol):
    """Writes the present scores of a batch of results idempotently (deterministic ids) and says what it did.

    The report says per score: delivered (``accepted``), rejected with a reason a retry cannot fix (``rejected``), or
    not delivered after the bounded retries (``undelivered``: a platform sink raises SinkError, the engine stops and
    leaves those traces unmarked).
    """

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        """Write one batch; the report holds this batch's part only."""
        ...

    def attach(self, store: Store, run_id: str) -> None:
        """Give the sink the run's store before the first write: a platform sink records there what it wrote (its
        ledger) and removes the scores this run supersedes. A sink without a ledger does nothing."""
        return None

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview | None:
        """What writing these traces again would remove from the platform, read from ``store``; None for a sink
        that never removes anything."""
        return None

    def write_sessions(self, sessions: Sequence[SessionScores]) -> WriteReport | None:
        """Write each session's scores where the platform keeps them (``sinks/sessions``); None for a sink that has
        no place for them (a file of result lines)."""
        return None


class ScoreBuffer(Protocol):
    """Not a sink of its own: the platform half a ``BatchWriter`` drives. It queues results, sends on ``flush`` and
    counts into one running ``report``; ``attach`` and ``preview`` are the ``Sink`` abilities it lends the writer."""

    report: WriteReport

    def write(self, result: TraceResult) -> object: ...

    def flush(self) -> object: ...

    def attach(self, store: Store, run_id: str) -> None: ...

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview | None: ...

    def write_sessions(self, sessions: Sequence[SessionScores]) -> object: ...


_B = TypeVar("_B", bound=ScoreBuffer)


class BatchWriter(Sink, Generic[_B]):
    """A platform's ``Sink`` over its score buffer (its caches kept across batches): each batch returns its part of
    the buffer's running report; scores not delivered after the retries raise SinkError (the engine stops and
    leaves those traces unmarked)."""

    def __init__(self, sink: _B, *, platform: str, scores: str = "scores") -> None:
        self.sink = sink
        self._words = platform, scores

    def attach(self, store: Store, run_id: str) -> None:
        self.sink.attach(store, run_id)

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview | None:
        return self.sink.preview(store, trace_ids)

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        """Write the results that have scores, flush, and return what this batch did."""

        def send() -> None:
            for result in results:
                if result.scores:
                    self.sink.write(result)
            self.sink.flush()

        return self._counted(send)

    def write_sessions(self, sessions: Sequence[SessionScores]) -> WriteReport:
        """Write the sessions' scores and return what that did (SinkError as ``write``)."""
        return self._counted(lambda: self.sink.write_sessions(sessions))

    def _counted(self, send: Callable[[], object]) -> WriteReport:
        report = self.sink.report
        accepted, rejected, retried, requests, removed, stale = (
            report.accepted, len(report.rejected), report.retried, report.requests, report.removed, report.kept_stale
        )
        send()
        batch = WriteReport(
            accepted=report.accepted - accepted,
            rejected=list(report.rejected[rejected:]),
            retried=report.retried - retried,
            requests=report.requests - requests,
            removed=report.removed - removed,
            kept_stale=report.kept_stale - stale,
        )
        if batch.undelivered:
            platform, scores = self._words
            raise SinkError(f"{platform} did not take {len(batch.undelivered)} {scores}: {batch.undelivered[0].reason}")
        return batch
