"""Shared bits of the job tests: canonical sample traces re-timed into a window, and small real sources/sinks."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from tests.conftest import SAMPLES
from tracescore.result import TraceResult
from tracescore.sinks.base import Sink
from tracescore.sinks.records import WriteReport, records_from_result
from tracescore.sources.base import Record
from tracescore.sources.jsonl import JsonlSource


def write_traces(
    path: Path, start: datetime, count: int, *, step: timedelta = timedelta(seconds=10), prefix: str = "t"
) -> list[str]:
    """``count`` sample traces (cycled), ids ``{prefix}-{n}``, timestamps ``start + n*step``; returns their ids."""
    samples = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    ids = []
    with path.open("a", encoding="utf-8") as fh:
        for n in range(count):
            trace = dict(samples[n % len(samples)])
            trace["id"] = f"{prefix}-{n:05d}"
            trace["timestamp"] = (start + n * step).isoformat()
            fh.write(json.dumps(trace) + "\n")
            ids.append(trace["id"])
    return ids


class CountingSink(Sink):
    """A real idempotent sink in memory: upserts score records by id, counts deliveries, can fail on demand (no
    ledger: ``attach`` and ``preview`` are the protocol's defaults)."""

    def __init__(self, fail_on_batch: int | None = None) -> None:
        self.stored: dict[str, dict[str, object]] = {}
        self.deliveries: Counter[str] = Counter()
        self.batches = 0
        self.fail_on_batch = fail_on_batch
        self._lock = threading.Lock()

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        from tracescore.errors import SinkError

        self.batches += 1
        if self.fail_on_batch is not None and self.batches == self.fail_on_batch:
            raise SinkError("platform unavailable (injected)")
        report = WriteReport(requests=1, batches=1)
        for result in results:
            records, refused = records_from_result(result)
            report.rejected.extend(refused)
            with self._lock:
                for record in records:
                    self.stored[record.id] = record.to_json()
                    self.deliveries[record.id] += 1
            report.accepted += len(records)
        return report


class DoublingSource(JsonlSource):
    """Serves every record twice (a repeated page)."""

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        for record in super().records(since, until):
            yield record
            yield record


def make_setup(
    tmp_path: Path,
    source: object,
    *,
    sink: object = None,
    workers: int = 4,
    scorers: list | None = None,
    lookback_minutes: float = 15.0,
    chunks: int = 4,
    write_batch: int = 10,
):  # type: ignore[no-untyped-def]
    """A ``JobSetup`` over a real JSONL source, the real adapter and scorers, and ``sink``."""
    from tracescore.engine.core import Limits
    from tracescore.engine.plan import deterministic_scorers
    from tracescore.engine.setup import JobSetup
    from tracescore.limits import RateLimiter
    from tracescore.platforms.registry import get_adapter
    from tracescore.sections import JobSettings

    return JobSetup(
        source=source,  # type: ignore[arg-type]
        source_key="test-source",
        adapter=get_adapter("jsonl"),
        scorers=scorers if scorers is not None else deterministic_scorers(),
        sink=sink,  # type: ignore[arg-type]
        store_path=tmp_path / "ts.db",
        limits=Limits(workers=workers, queue_size=8, write_batch=write_batch, write_interval=0.2),
        lookback_minutes=lookback_minutes,
        chunks=chunks,
        fingerprint="fp",
        limiter=RateLimiter(),
        judge_retries=JobSettings().judge_retries,
    )
