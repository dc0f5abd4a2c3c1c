"""Langfuse source: whole traces of a time window, read as observations from ``GET /api/public/v2/observations``.

One paged scan of the window at the largest page size (1000), asking only for the field groups the adapter reads.
Rows come newest first; they are grouped by ``trace_id`` and a trace is handed on as soon as no row of it can still
come (the scan has passed its root's start time), so a trace straddling a page boundary is still whole, memory stays
bounded by the traces in flight, and a repeated page (same observation ids) is dropped. A trace counts in the window
when its root observation starts in ``[start, end)``; rows are read up to ``end + overhang`` so that a trace rooted
just before ``end`` is still whole, and rows of traces rooted before ``start`` are left to the window holding their
root. Traces are handed on newest root first, each with its root's start as ``Record.timestamp`` (so a backfill
cuts its slices from one scan, ``engine.slices``). Filters: environment, trace name, tags (all of them). Experiment
traces get their dataset item from ``GET /api/public/experiment-items`` (``read_experiment_items``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from tracescore.errors import ConfigError, SourceError
from tracescore.platforms.langfuse.client import (
    classify_error,
    describe_error,
    failure_line,
    request_options,
    retry_policy,
)
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.retry import Verdict, call_with_retries
from tracescore.sources.base import Record

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI

#: field groups of experiment items: ``io`` holds the dataset item's expected output
EXPERIMENT_FIELDS = ("core", "io", "itemMetadata")
MAX_EXPERIMENT_PAGE = 100

#: field groups the adapter needs: ``basic`` is required for name and isRootObservation (without it they vanish)
FIELDS = ("core", "basic", "io", "metadata")
MAX_PAGE_SIZE = 1000


@dataclass(frozen=True)
class LangfuseWindow:
    """Which traces to read: root start time in ``[start, end)``, optional environment, name and tag filters."""

    start: datetime
    end: datetime
    environment: tuple[str, ...] = ()
    trace_name: str | None = None
    tags: tuple[str, ...] = ()
    overhang: timedelta = timedelta(minutes=10)

    def __post_init__(self) -> None:
        for name, moment in (("--from", self.start), ("--to", self.end)):
            if moment.tzinfo is None:
                raise ConfigError(f"{name} {moment.isoformat()!r} has no timezone; add one, e.g. 'Z' or '+00:00'")
        if self.end <= self.start:
            raise ConfigError(f"empty window: --to {self.end.isoformat()} is not after --from {self.start.isoformat()}")

    @classmethod
    def from_settings(
        cls, start: datetime, end: datetime, settings: LangfuseSettings, **override: Any
    ) -> LangfuseWindow:
        """A window with the filters of ``[langfuse]``, overridden by non-empty command-line values."""
        values: dict[str, Any] = {
            "environment": tuple(settings.environment),
            "trace_name": settings.trace_name,
            "tags": tuple(settings.tags),
            "overhang": timedelta(seconds=settings.trace_overhang),
        }
        values.update({k: v for k, v in override.items() if v})
        return cls(start=start.astimezone(UTC), end=end.astimezone(UTC), **values)

    @property
    def scan_end(self) -> datetime:
        """Rows are read up to ``end + overhang``, so a trace rooted just before ``end`` still comes whole."""
        return self.end + self.overhang

    def query(self) -> dict[str, Any]:
        """The list filters: plain query parameters, or one JSON ``filter`` when name/tags need it (it overrides
        every plain filter, so the time window and environment go in it too)."""
        if not self.trace_name and not self.tags:
            out: dict[str, Any] = {"from_start_time": self.start, "to_start_time": self.scan_end}
            if self.environment:
                out["environment"] = list(self.environment)
            return out
        conditions: list[dict[str, Any]] = [
            {"type": "datetime", "column": "startTime", "operator": ">=", "value": _iso(self.start)},
            {"type": "datetime", "column": "startTime", "operator": "<", "value": _iso(self.scan_end)},
        ]
        if self.environment:
            conditions.append(
                {
                    "type": "stringOptions",
                    "column": "environment",
                    "operator": "any of",
                    "value": list(self.environment),
                }
            )
        if self.trace_name:
            conditions.append({"type": "string", "column": "traceName", "operator": "=", "value": self.trace_name})
        if self.tags:
            conditions.append(
                {"type": "arrayOptions", "column": "tags", "operator": "all of", "value": list(self.tags)}
            )
        return {"filter": json.dumps(conditions)}


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


class ObservationPager:
    """Cursor paging state (no I/O): the parameters of the next request, updated from each response."""

    def __init__(self, base: dict[str, Any], page_size: int = MAX_PAGE_SIZE) -> None:
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ConfigError(f"page_size {page_size} out of range; Langfuse allows 1..{MAX_PAGE_SIZE}")
        self.base = dict(base, limit=page_size)
        self.cursor: str | None = None
        self.done = False
        self.pages = 0

    def next_params(self) -> dict[str, Any]:
        return dict(self.base, cursor=self.cursor) if self.cursor else dict(self.base)

    def update(self, cursor: str | None) -> None:
        """Take the cursor of the response just read; no cursor means the last page."""
        self.pages += 1
        self.done = not cursor
        self.cursor = cursor or None


@dataclass
class ReadStats:
    """What the source did: requests, retries, pages, rows, duplicate and late rows, traces, rows of traces rooted
    outside the window (read for the overhang or started before it), rows without a trace id."""

    requests: int = 0
    retries: int = 0
    pages: int = 0
    rows: int = 0
    duplicate_rows: int = 0
    traces: int = 0
    orphan_rows: int = 0
    outside_rows: int = 0
    late_rows: int = 0
    experiment_items: int = 0
    notes: list[str] = field(default_factory=list)
    retry_reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("retry_reasons", "notes")} | {
            "notes": list(self.notes)
        }


def _start(row: dict[str, Any]) -> datetime:
    value = row.get("startTime")
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _is_root(row: dict[str, Any]) -> bool:
    flag = row.get("isRootObservation")
    return bool(flag) if flag is not None else not row.get("parentObservationId")


Assembled = tuple[str, list[dict[str, Any]], datetime]
"""A whole trace: its id, its rows (oldest first), its root's start time."""


@dataclass
class _Pending:
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    root_start: datetime | None = None


class TraceAssembler:
    """Groups newest-first observation rows into whole traces (no I/O).

    ``add`` takes a page and returns the traces that are complete: their root started after the oldest row seen so
    far, so every later row is older than the root and cannot belong to them. ``finish`` returns the rest. Each
    comes as (trace id, rows, root start), newest root first, so the traces of a scan come newest first. Only
    traces rooted in ``[window_start, window_end)`` are returned (rows of others are counted as outside the window).
    Rows are de-duplicated by observation id; rows for a trace already handed on are counted as late.
    """

    def __init__(
        self, window_start: datetime, window_end: datetime | None = None, stats: ReadStats | None = None
    ) -> None:
        self.window_start = window_start
        self.window_end = window_end
        self.stats = stats if stats is not None else ReadStats()
        self._pending: dict[str, _Pending] = {}
        self._done: set[str] = set()

    def add(self, rows: Sequence[dict[str, Any]]) -> list[Assembled]:
        oldest: datetime | None = None
        for row in rows:
            self.stats.rows += 1
            trace_id = row.get("traceId")
            if not trace_id:
                self.stats.orphan_rows += 1
                continue
            start = _start(row)
            oldest = start if oldest is None or start < oldest else oldest
            if trace_id in self._done:
                self.stats.late_rows += 1
                continue
            pending = self._pending.setdefault(trace_id, _Pending())
            if row["id"] in pending.rows:
                self.stats.duplicate_rows += 1
                continue
            pending.rows[row["id"]] = row
            if _is_root(row) and (pending.root_start is None or start < pending.root_start):
                pending.root_start = start
        if oldest is None:
            return []
        ready = [t for t, p in self._pending.items() if p.root_start is not None and p.root_start > oldest]
        return self._newest_first([out for t in ready if (out := self._close(t)) is not None])

    def finish(self) -> list[Assembled]:
        """Every trace still pending whose root started in the window; rows of traces rooted earlier are dropped."""
        return self._newest_first([out for t in list(self._pending) if (out := self._close(t)) is not None])

    @staticmethod
    def _newest_first(traces: list[Assembled]) -> list[Assembled]:
        return sorted(traces, key=lambda t: (t[2], t[0]), reverse=True)

    def _close(self, trace_id: str) -> Assembled | None:
        pending = self._pending[trace_id]
        root = pending.root_start
        if root is None or root < self.window_start or (self.window_end is not None and root >= self.window_end):
            self.stats.outside_rows += len(pending.rows)
            del self._pending[trace_id]
            self._done.add(trace_id)
            return None
        return self._emit(trace_id)

    def _emit(self, trace_id: str) -> Assembled:
        pending = self._pending.pop(trace_id)
        assert pending.root_start is not None  # _close hands on only traces with a root
        self._done.add(trace_id)
        self.stats.traces += 1
        rows = sorted(pending.rows.values(), key=lambda r: (_start(r), str(r.get("id"))))
        return trace_id, rows, pending.root_start


def read_langfuse(
    client: LangfuseAPI,
    window: LangfuseWindow,
    settings: LangfuseSettings | None = None,
    *,
    expand_metadata: Sequence[str] = (),
    stats: ReadStats | None = None,
    sleep: Callable[[float], None] | None = None,
    experiment_items: Mapping[str, dict[str, Any]] | None = None,
    where: str = "Langfuse",
) -> Iterator[Record]:
    """Yield one ``Record`` per whole trace of ``window``: payload ``{"id": trace_id, "observations": [rows]}``,
    plus ``"experiment_item"`` when ``experiment_items`` (see ``read_experiment_items``) has the trace.

    Raises SourceError when a page cannot be read after the bounded retries (what was yielded stays valid).
    """
    settings = settings or LangfuseSettings()
    stats = stats if stats is not None else ReadStats()
    pager = ObservationPager(
        {
            "fields": ",".join(FIELDS),
            **window.query(),
            **({"expand_metadata": ",".join(expand_metadata)} if expand_metadata else {}),
        },
        page_size=settings.page_size,
    )
    assembler = TraceAssembler(window.start, window.end, stats)
    policy = retry_policy(settings.max_attempts, settings.backoff)
    options = request_options(settings.timeout)

    def on_retry(attempt: int, verdict: Verdict) -> None:
        stats.retries += 1
        stats.retry_reasons.append(verdict.description)

    while not pager.done:
        params = pager.next_params()
        sent = [0]

        def fetch(params: dict[str, Any] = params, sent: list[int] = sent) -> Any:
            stats.requests += 1
            sent[0] += 1
            return client.observations.get_many(**params, request_options=options)

        extra = {"sleep": sleep} if sleep is not None else {}
        try:
            page = call_with_retries(fetch, classify=classify_error, policy=policy, on_retry=on_retry, **extra)
        except Exception as exc:
            page_no = pager.pages + 1
            doing = f"read the traces of {_iso(window.start)} .. {_iso(window.end)} (observations page {page_no})"
            raise SourceError(failure_line(doing, exc, sent[0], where)) from exc
        stats.pages += 1
        rows = [o.dict(by_alias=True) if hasattr(o, "dict") else dict(o) for o in page.data]
        pager.update(page.meta.cursor)
        for trace in assembler.add(rows):
            yield _record(trace, experiment_items)
    for trace in assembler.finish():
        yield _record(trace, experiment_items)


def _record(trace: Assembled, experiment_items: Mapping[str, dict[str, Any]] | None) -> Record:
    trace_id, rows, root_start = trace
    payload: dict[str, Any] = {"id": trace_id, "observations": rows}
    if experiment_items and trace_id in experiment_items:
        payload["experiment_item"] = experiment_items[trace_id]
    return Record(payload=payload, line=None, size=len(rows), timestamp=root_start)


def read_experiment_items(
    client: LangfuseAPI,
    window: LangfuseWindow,
    settings: LangfuseSettings | None = None,
    *,
    stats: ReadStats | None = None,
    sleep: Callable[[float], None] | None = None,
    where: str = "Langfuse",
) -> dict[str, dict[str, Any]]:
    """trace id → experiment item (``expectedOutput``, ``experimentItemMetadata``, ids) for experiment traces of the
    window, read with ``GET /api/public/experiment-items`` (100 per page). A server without the endpoint (404/405,
    e.g. self-hosted v3) gives ``{}`` and a note; other failures after the retries raise SourceError."""
    settings = settings or LangfuseSettings()
    stats = stats if stats is not None else ReadStats()
    policy = retry_policy(settings.max_attempts, settings.backoff)
    options = request_options(settings.timeout)
    items: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    extra = {"sleep": sleep} if sleep is not None else {}

    def on_retry(attempt: int, verdict: Verdict) -> None:
        stats.retries += 1
        stats.retry_reasons.append(verdict.description)

    while True:
        sent = [0]

        def fetch(cursor: str | None = cursor, sent: list[int] = sent) -> Any:
            stats.requests += 1
            sent[0] += 1
            return client.experiments.list_items(
                from_start_time=window.start,
                to_start_time=window.end,
                fields=",".join(EXPERIMENT_FIELDS),
                limit=MAX_EXPERIMENT_PAGE,
                cursor=cursor,
                request_options=options,
            )

        try:
            page = call_with_retries(fetch, classify=classify_error, policy=policy, on_retry=on_retry, **extra)
        except Exception as exc:
            if getattr(exc, "status_code", None) in (404, 405):
                stats.notes.append(f"no experiment labels: no experiment-items API here ({describe_error(exc)})")
                return {}
            doing = f"read the traces of {_iso(window.start)} .. {_iso(window.end)}"  # labels come first: an aside
            raise SourceError(failure_line(doing, exc, sent[0], where)) from exc
        for item in page.data:
            row = item.dict(by_alias=True)
            items.setdefault(str(row["traceId"]), row)
        stats.experiment_items = len(items)
        cursor = page.meta.cursor
        if not cursor:
            return items
