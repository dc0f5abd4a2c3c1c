"""Langfuse blob-storage exports as a source: whole traces from the files of completed export runs.

Layout (Langfuse's export worker): ``{prefix}{project-id}/{table}/{run}.{parquet|jsonl|jsonl.gz|json|csv}`` per
table (``observations_v2`` enriched observations; ``traces`` and ``observations`` in the legacy modes; ``scores``,
not read) and, written last, ``{prefix}{project-id}/manifests/{run}.json`` listing the run's files. Only runs with a
manifest are read: a run without one (still being written, or failed) is skipped and reported in the notes.

Rows are snake_case with ``YYYY-MM-DD HH:MM:SS.ffffff`` UTC times; they are turned into the rows of the v2
observations API (camelCase, ISO times, input/output as raw text, metadata values decoded) and grouped by trace,
so the same Langfuse adapter reads an exported trace exactly as it reads one from the API. Adjacent runs overlap:
rows are de-duplicated by observation id (the later run's copy wins). Trace-level rows of the legacy ``traces``
table go in the payload's ``trace`` object. One shard per run (its observation file; key = the file's path
relative to the export root); a trace spanning runs is scored by the run holding its root (``sources.exports``).
A row that cannot be read (not JSON, not UTF-8, no ``trace_id``; the rows of a file after a break) is reported with
file and line: as the error of the trace it belongs to (its legible ``trace_id``, or the trace whose observations name
it as their parent), which is then not scored from its other rows, else as an error of its own.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tracescore.adapters.fields import parse_maybe_json
from tracescore.errors import ConfigError
from tracescore.platforms.base import Parts, PlatformContext
from tracescore.platforms.langfuse.adapter import langfuse_adapter
from tracescore.sources.base import Record, Shard
from tracescore.sources.export_rows import Unreadable, unread_error, unread_records, with_unread
from tracescore.sources.exports import (
    ExportFile,
    ExportRoot,
    ExportSource,
    ShardPlan,
    open_export,
    plan_shards,
)

OBSERVATION_TABLES = ("observations_v2", "observations")
TRACE_TABLE = "traces"
_RENAME = {
    "trace_id": "traceId",
    "parent_observation_id": "parentObservationId",
    "start_time": "startTime",
    "end_time": "endTime",
    "completion_start_time": "completionStartTime",
    "status_message": "statusMessage",
    "project_id": "projectId",
    "session_id": "sessionId",
    "user_id": "userId",
    "trace_name": "traceName",
    "model_parameters": "modelParameters",
    "provided_model_name": "providedModelName",
    "usage_details": "usageDetails",
    "cost_details": "costDetails",
    "created_at": "createdAt",
    "updated_at": "updatedAt",
    "is_root_observation": "isRootObservation",
}
_TIMES = ("startTime", "endTime", "completionStartTime", "createdAt", "updatedAt", "timestamp")
_THIN = ("id", "trace_id", "parent_observation_id")


@dataclass
class ExportStats:
    """What the export source read: runs (complete, skipped), files, rows, duplicate rows dropped, traces, rows and
    files that could not be read, notes."""

    runs: int = 0
    skipped_runs: int = 0
    files: int = 0
    rows: int = 0
    duplicate_rows: int = 0
    traces: int = 0
    unreadable: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, notes=list(self.notes))


@dataclass(frozen=True)
class _Run:
    """One completed export run: its observation file (the shard) and its other files, by table."""

    stem: str
    observations: ExportFile
    traces: ExportFile | None


def _time(value: Any) -> Any:
    """An export time (``2026-11-20 09:00:00.000000``, ISO text or a datetime) as the API's ISO ``…Z`` text."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return value
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat().replace("+00:00", "Z")


def _metadata(value: Any) -> Any:
    """ClickHouse ``Map(String, String)``: a dict (JSON) or key/value pairs (Parquet); each value JSON-decoded."""
    value = parse_maybe_json(value)
    if isinstance(value, list) and all(isinstance(p, list | tuple) and len(p) == 2 for p in value):
        value = dict(value)
    if isinstance(value, dict):
        return {str(k): parse_maybe_json(v) for k, v in value.items()}
    return value


def api_row(row: dict[str, Any]) -> dict[str, Any]:
    """One exported observation row as the v2 observations API returns it (the adapter's input)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = _RENAME.get(key, key)
        if name in _TIMES:
            value = _time(value)
        elif name == "metadata":
            value = _metadata(value)
        elif name == "tags":
            value = list(parse_maybe_json(value) or [])
        out[name] = value
    if out.get("parentObservationId") == "":
        out["parentObservationId"] = None
    return out


def _trace_row(row: dict[str, Any]) -> dict[str, Any]:
    """A legacy ``traces`` row as the adapter's ``trace`` object."""
    out = api_row(row)
    for key in ("input", "output"):
        out[key] = parse_maybe_json(out.get(key))
    return out


class LangfuseExport(ExportSource):
    """A Langfuse export (folder or ``s3://…``): a ``ShardedSource`` (one shard per completed run) that can also be
    read whole (``records``), for the local engine."""

    def __init__(self, root: str) -> None:
        self.export = ExportRoot(root)
        self.stats = ExportStats()
        self._runs: dict[str, _Run] | None = None
        self._plan: ShardPlan | None = None

    # -- the export's runs ----------------------------------------------------------------------------------------
    def runs(self) -> dict[str, _Run]:
        """The completed runs by shard key; runs without a manifest are skipped with a note."""
        if self._runs is not None:
            return self._runs
        files = self.export.files()
        by_dir: dict[str, dict[str, ExportFile]] = {}
        for f in files:
            folder, name = posixpath.split(f.rel)
            by_dir.setdefault(folder, {})[_stem(name)] = f
        runs: dict[str, _Run] = {}
        manifests = [f for f in files if posixpath.basename(posixpath.dirname(f.rel)) == "manifests"]
        complete: set[str] = set()
        for manifest in manifests:
            project_dir = posixpath.dirname(posixpath.dirname(manifest.rel))
            stem = _stem(posixpath.basename(manifest.rel))
            try:
                listed = self.export.read_json(manifest.uri).get("files", [])
            except (OSError, ValueError, AttributeError) as exc:
                self.stats.notes.append(f"run {manifest.rel}: manifest unreadable ({exc}); run skipped")
                continue
            complete.add(f"{project_dir}/{stem}")
            tables = {str(f.get("table")) for f in listed if isinstance(f, dict)}
            table = next((t for t in OBSERVATION_TABLES if t in tables), None)
            found = by_dir.get(posixpath.join(project_dir, table or ""), {}).get(stem) if table else None
            if found is None:
                self.stats.notes.append(f"run {manifest.rel}: its manifest lists no observation file found here")
                continue
            traces = by_dir.get(posixpath.join(project_dir, TRACE_TABLE), {}).get(stem)
            runs[found.rel] = _Run(stem, found, traces)
        for folder, named in by_dir.items():
            project_dir, table = posixpath.split(folder)
            if table not in OBSERVATION_TABLES:
                continue
            for stem, f in named.items():
                if f"{project_dir}/{stem}" not in complete:
                    self.stats.skipped_runs += 1
                    self.stats.notes.append(f"run {f.rel} skipped: no manifest (incomplete or still being written)")
        if not runs and not self.stats.skipped_runs:
            raise ConfigError(
                f"{self.export.root!r} holds no Langfuse export run (expected {{project-id}}/manifests/*.json and "
                "{project-id}/observations_v2/*); give the export prefix"
            )
        self.stats.runs = len(runs)
        self._runs = dict(sorted(runs.items()))
        return self._runs

    def plan(self) -> ShardPlan:
        """Which traces span runs, and which run scores them (one thin pass over id columns)."""
        if self._plan is None:
            runs = self.runs()
            self._plan = plan_shards(
                ((key, [run.observations.uri]) for key, run in runs.items()), self._refs
            )
        return self._plan

    def _refs(self, uri: str) -> Iterator[tuple[str, bool]]:
        bad: list[Unreadable] = []  # reported when the shard is read; a legible trace id places the row here
        for row in self.export.rows(uri, _THIN, bad):
            if row.get("trace_id"):
                yield str(row["trace_id"]), not row.get("parent_observation_id")
        yield from ((p.trace_id, False) for p in bad if p.trace_id)

    # -- ShardedSource --------------------------------------------------------------------------------------------
    def shards(self) -> list[Shard]:
        """One shard per completed run, keyed by its observation file's path relative to the export root. The plan
        is made here, once, so a copy of the source sent to workers after this call carries it."""
        self.plan()
        return [Shard(key, run.observations.uri) for key, run in self.runs().items()]

    def read(self, shard: Shard) -> Iterator[Record]:
        """The whole traces this shard scores: its run's rows, plus rows of its spanning traces from other runs; then
        the rows that could not be read and belong to no trace here (each as a record carrying its error)."""
        runs, plan = self.runs(), self.plan()
        run = runs[shard.key]
        extra = plan.extra.get(shard.key, [])
        files = [(run, True)] + [(r, False) for r in runs.values() if r.observations.uri in extra]
        files.sort(key=lambda item: item[0].observations.rel)
        traces: dict[str, dict[str, dict[str, Any]]] = {}
        trace_rows: dict[str, dict[str, Any]] = {}
        problems: list[tuple[Unreadable, bool]] = []
        orphans: list[tuple[str, int, dict[str, Any]]] = []  # own rows without a trace id: (uri, line, row)
        for source, own in files:
            self.stats.files += own
            bad: list[Unreadable] = []
            uri = source.observations.uri
            for n, row in self.export.numbered(uri, bad=bad):
                trace_id = str(row.get("trace_id") or "")
                if not trace_id:
                    if own:  # a row of another run's file is that run's to report
                        orphans.append((uri, n, row))
                    continue
                if not plan.keeps(shard.key, trace_id, own):
                    continue
                self.stats.rows += 1
                rows = traces.setdefault(trace_id, {})
                obs = api_row(row)
                if obs.get("id") in rows:
                    self.stats.duplicate_rows += 1
                rows[str(obs.get("id"))] = obs
            if source.traces is not None:
                for n, row in self.export.numbered(source.traces.uri, bad=bad, key="id"):
                    if row.get("id") in (None, ""):
                        bad.append(Unreadable(source.traces.uri, n, "trace row without an id"))
                    else:
                        trace_rows[str(row.get("id"))] = _trace_row(row)
            problems += [(p, own) for p in bad]
        problems += [(_orphan(uri, n, row, traces), True) for uri, n, row in orphans]
        flagged, loose = unread_records(problems, traces, lambda t, own: plan.keeps(shard.key, t, own))
        self.stats.unreadable += len(loose) + sum(map(len, flagged.values()))
        for trace_id, rows in traces.items():
            self.stats.traces += 1
            payload: dict[str, Any] = {"id": trace_id, "observations": list(rows.values())}
            if trace_id in trace_rows:
                payload["trace"] = trace_rows[trace_id]
            if trace_id in flagged:
                payload["error"] = unread_error(trace_id, flagged[trace_id])
            yield Record(payload=payload)  # no byte size: an ETA from the export's size would mislead
        yield from loose

    # -- ExportSource ---------------------------------------------------------------------------------------------
    def started(self, payload: Any) -> Any:
        """The earliest start of the trace's root observations (of any observation when none is a root)."""
        rows = payload.get("observations") or []
        roots = [r for r in rows if not r.get("parentObservationId")] or rows
        starts = [str(r.get("startTime")) for r in roots if r.get("startTime")]
        return min(starts) if starts else None

    def read_line(self) -> str:
        """Traces, complete runs, observations, duplicates dropped and runs skipped for want of a manifest."""
        s = self.stats
        unreadable = f", {s.unreadable} unreadable rows or files reported" if s.unreadable else ""
        return (
            f"read {s.traces} traces from {s.runs} complete export runs ({s.rows} observations,"
            f" {s.duplicate_rows} duplicates dropped, {s.skipped_runs} runs without manifest skipped{unreadable})"
        )


def _orphan(uri: str, n: int, row: dict[str, Any], traces: dict[str, dict[str, dict[str, Any]]]) -> Unreadable:
    """A row without a trace id, placed in the trace holding its parent observation, or whose observations name it
    as their parent, if any."""
    obs_id, parent = row.get("id"), row.get("parent_observation_id")
    owner = None
    for trace_id, rows in traces.items():
        if (parent and parent in rows) or (
            obs_id and any(r.get("parentObservationId") == obs_id for r in rows.values())
        ):
            owner = trace_id
            break
    return Unreadable(uri, n, f"observation {obs_id!r} has no trace_id", owner)


def _stem(name: str) -> str:
    """``2026-11-20T10-00-00.jsonl.gz`` → ``2026-11-20T10-00-00``."""
    for suffix in (".gz", ".parquet", ".jsonl", ".json", ".csv"):
        name = name.removesuffix(suffix)
    return name


def build(context: PlatformContext) -> Parts:
    """The export named by TRACES (or ``[source] path``): a folder or ``s3://bucket/prefix``; no write-back here
    (``tracescore push`` writes the results back)."""
    source = open_export(LangfuseExport, "langfuse-export", context.path, context.where())
    key = f"langfuse-export:{context.path}"
    adapter = functools.partial(with_unread, adapter=langfuse_adapter(context.mapping))  # picklable: processes
    return Parts(source, key, adapter, None, describe=key, stats=source.stats, summary=source.summary, sharded=source)
