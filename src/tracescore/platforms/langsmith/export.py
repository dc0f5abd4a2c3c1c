"""LangSmith bulk exports as a source: root and child runs grouped by ``trace_id`` into whole traces.

A bulk export writes Parquet (zstd) files of runs, with the fields of the Run data format (``id``, ``trace_id``,
``parent_run_id``, ``is_root``, ``dotted_order``, ``run_type``, ``name``, ``start_time``, ``inputs``, ``outputs``,
``extra``, ``error``, ``session_id``, …; JSON fields as text) under Hive paths
``export_id=…/tenant_id=…/session_id=…/runs/year=…/month=…/day=…/``. There is no manifest: the export is read once
LangSmith reports it ``COMPLETED``. One shard per file (key = its path relative to the export root); a trace whose
runs lie in several files (a day edge, several part files) is scored by the file holding its root run
(``sources.exports``). Each trace goes through the same LangSmith adapter as the API path, as
``{"id", "project", "root", "runs", "example": None, "error"}``; a trace whose root run is not in the export is one
reported error, not a crash. So is a trace with a run that could not be read (a record that is not JSON or not
UTF-8, the runs of a file after a break; ``sources.exports``), with file and line; an unreadable run of no legible
trace is an error of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tracescore.adapters.fields import parse_maybe_json
from tracescore.errors import ConfigError
from tracescore.platforms.base import Parts, PlatformContext
from tracescore.platforms.langsmith.adapter import langsmith_adapter
from tracescore.sources.base import Record, Shard
from tracescore.sources.export_rows import Unreadable, unread_error, unread_records
from tracescore.sources.exports import (
    ExportRoot,
    ExportSource,
    ShardPlan,
    open_export,
    plan_shards,
)

_JSON_FIELDS = ("inputs", "outputs", "extra", "events", "serialized", "tags", "inputs_s3_urls", "outputs_s3_urls")
_THIN = ("id", "trace_id", "parent_run_id", "is_root")
_SESSION = re.compile(r"(?:^|/)session_id=([^/]+)/")


@dataclass
class BulkExportStats:
    """What the bulk-export source read: files, runs, duplicate runs dropped, traces, traces without a root, runs
    and files that could not be read."""

    files: int = 0
    runs: int = 0
    duplicate_runs: int = 0
    traces: int = 0
    rootless: int = 0
    unreadable: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, notes=list(self.notes))


def _plain(value: Any) -> Any:
    """Parquet values as the API's JSON: datetimes as ISO text (UTC), the rest as is."""
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return moment.isoformat()
    return value


def api_run(row: dict[str, Any], session_id: str | None) -> dict[str, Any]:
    """One exported run as the API returns it: JSON fields decoded, times as ISO text, ids as text."""
    run = {k: _plain(v) for k, v in row.items()}
    for key in _JSON_FIELDS:
        if isinstance(run.get(key), str):
            run[key] = parse_maybe_json(run[key])
    for key in ("id", "trace_id", "parent_run_id", "session_id", "reference_example_id"):
        if run.get(key) not in (None, ""):
            run[key] = str(run[key])
        elif key in run:
            run[key] = None
    if not run.get("session_id") and session_id:
        run["session_id"] = session_id
    return run


def _is_root(row: dict[str, Any]) -> bool:
    flag = row.get("is_root")
    return bool(flag) if flag is not None else not row.get("parent_run_id")


class LangSmithExport(ExportSource):
    """A LangSmith bulk export (folder or ``s3://…``): a ``ShardedSource`` (one shard per Parquet file) that can
    also be read whole (``records``), for the local engine."""

    def __init__(self, root: str) -> None:
        self.export = ExportRoot(root)
        self.stats = BulkExportStats()
        self._shards: list[Shard] | None = None
        self._plan: ShardPlan | None = None

    def shards(self) -> list[Shard]:
        """One shard per run file under ``…/runs/``, keyed by its path relative to the export root. The plan is made
        here, once, so a copy of the source sent to workers after this call carries it."""
        self.plan()
        return list(self._files())

    def _files(self) -> list[Shard]:
        if self._shards is None:
            files = [f for f in self.export.files() if "/runs/" in f"/{f.rel}"]
            if not files:
                raise ConfigError(
                    f"{self.export.root!r} holds no LangSmith bulk export (expected …/session_id=…/runs/year=…/"
                    "month=…/day=…/*.parquet); give the export's destination prefix"
                )
            self._shards = [Shard(f.rel, f.uri) for f in files]
        return self._shards

    def plan(self) -> ShardPlan:
        """Which traces span files, and which file scores them (one thin pass over id columns)."""
        if self._plan is None:
            self._plan = plan_shards(((s.key, [s.uri]) for s in self._files()), self._refs)
        return self._plan

    def _refs(self, uri: str) -> Iterator[tuple[str, bool]]:
        bad: list[Unreadable] = []  # reported when the shard is read; a legible trace id places the run here
        for row in self.export.rows(uri, _THIN, bad):
            trace_id = row.get("trace_id") or row.get("id")
            if trace_id:
                yield str(trace_id), _is_root(row)
        yield from ((p.trace_id, False) for p in bad if p.trace_id)

    def read(self, shard: Shard) -> Iterator[Record]:
        """The whole traces this shard scores: its file's runs, plus runs of its spanning traces from other files."""
        plan = self.plan()
        extra = plan.extra.get(shard.key, [])
        files = [(s, s.key == shard.key) for s in self._files() if s.key == shard.key or s.uri in extra]
        traces: dict[str, dict[str, dict[str, Any]]] = {}
        problems: list[tuple[Unreadable, bool]] = []
        for source, own in files:
            self.stats.files += own
            match = _SESSION.search("/" + source.key)
            session = match.group(1) if match else None
            bad: list[Unreadable] = []
            for n, row in self.export.numbered(source.uri, bad=bad):
                trace_id = str(row.get("trace_id") or row.get("id") or "")
                if not trace_id:
                    bad.append(Unreadable(source.uri, n, "run without an id or trace_id"))
                if not trace_id or not plan.keeps(shard.key, trace_id, own):
                    continue
                self.stats.runs += 1
                runs = traces.setdefault(trace_id, {})
                run = api_run(row, session)
                if run.get("id") in runs:
                    self.stats.duplicate_runs += 1
                runs[str(run.get("id"))] = run
            problems += [(p, own) for p in bad]
        flagged, loose = unread_records(problems, traces, lambda t, own: plan.keeps(shard.key, t, own))
        self.stats.unreadable += len(loose) + sum(map(len, flagged.values()))
        for trace_id, runs in traces.items():
            self.stats.traces += 1
            payload = self._payload(trace_id, list(runs.values()))
            if trace_id in flagged:  # before the root's absence: the unreadable run may be the root
                payload["error"] = unread_error(trace_id, flagged[trace_id])
            yield Record(payload=payload)
        yield from loose

    def _payload(self, trace_id: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
        roots = [r for r in runs if _is_root(r)]
        root = min(roots, key=lambda r: str(r.get("dotted_order") or r.get("start_time") or "")) if roots else None
        payload: dict[str, Any] = {"id": str(root["id"]) if root else trace_id, "root": root, "example": None}
        if root is None:
            self.stats.rootless += 1
            payload["error"] = f"trace {trace_id}: its root run is not in the export ({len(runs)} child runs only)"
            payload["runs"] = runs
            return payload
        session = root.get("session_id")
        payload["project"] = {"id": session, "name": None, "reference_dataset_id": None} if session else None
        payload["runs"] = sorted(
            (r for r in runs if r is not root), key=lambda r: str(r.get("dotted_order") or r.get("start_time") or "")
        )
        payload["error"] = None
        return payload

    def started(self, payload: Any) -> Any:
        """The start time of the trace's root run."""
        root = payload.get("root") if isinstance(payload, dict) else None
        return root.get("start_time") if isinstance(root, dict) else None

    def read_line(self) -> str:
        """Traces, files, runs, duplicate runs dropped and traces without their root run."""
        s = self.stats
        unreadable = f", {s.unreadable} unreadable runs or files reported" if s.unreadable else ""
        return (
            f"read {s.traces} traces from {s.files} export files ({s.runs} runs, {s.duplicate_runs} duplicates"
            f" dropped, {s.rootless} traces without their root run{unreadable})"
        )


def build(context: PlatformContext) -> Parts:
    """The bulk export named by TRACES (or ``[source] path``): a folder or ``s3://bucket/prefix``; no write-back
    here (``tracescore push`` writes the results back)."""
    source = open_export(LangSmithExport, "langsmith-export", context.path, context.where())
    key = f"langsmith-export:{context.path}"
    return Parts(source, key, langsmith_adapter(context.mapping), None, describe=key, stats=source.stats,
                 summary=source.summary, sharded=source)
