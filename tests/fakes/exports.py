"""Platform exports generated from the cookbook's canonical sample traces, laid out as the vendors write them.

``write_langfuse_export``: a Langfuse blob-storage export (``{project}/observations_v2/{run}.parquet|jsonl`` and
``{project}/manifests/{run}.json``): two runs whose windows overlap (the edge traces' rows are in both), one trace
whose late children land only in the second run, and a third run without its manifest (an unfinished run: its trace
must not be scored). ``write_langsmith_export``: a LangSmith bulk export (Parquet, zstd) under
``export_id=…/tenant_id=…/session_id=…/runs/year=…/month=…/day=…/``, one trace's child runs in a second part file.
Both return what a reader must find. The Ray engine's tests import these too.
"""

from __future__ import annotations

import gzip
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.fakes.langsmith_runs import load_samples, run_tree

__all__ = ["ExportLayout", "langfuse_rows", "load_samples", "write_langfuse_export", "write_langsmith_export"]

PROJECT = "proj-export"
EXPORT_ID = "0b5e7c52-0000-4000-8000-00000000e1f0"
TENANT_ID = "7e0a1d00-0000-4000-8000-000000000001"
PROJECT_NAME = "search-agent"
SESSION_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, f"project:{PROJECT_NAME}"))  # the id FakeLangSmith gives it
UNFINISHED = "tr-unfinished"


@dataclass
class ExportLayout:
    """What was written: the root folder, trace ids a reader must yield, the run/file left without a manifest, the
    trace whose rows span two files, the number of rows written twice (window overlap)."""

    root: Path
    trace_ids: list[str]
    skipped: str | None = None
    spanning: str | None = None
    duplicated_rows: int = 0
    files: list[str] = field(default_factory=list)
    platform_ids: dict[str, str] = field(default_factory=dict)  # sample id → the platform's trace id

    def sample_id(self, platform_id: str) -> str:
        """The sample a platform trace id was generated from."""
        return {v: k for k, v in self.platform_ids.items()}.get(platform_id, platform_id)


def _export_time(moment: datetime) -> str:
    """Langfuse's export time format: ``YYYY-MM-DD HH:MM:SS.ffffff`` in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _raw(value: Any) -> Any:
    """Input/output as the export stores them: objects as JSON text, text as is."""
    return value if value is None or isinstance(value, str) else json.dumps(value)


def langfuse_rows(sample: dict[str, Any], *, trace_id: str | None = None) -> list[dict[str, Any]]:
    """One canonical sample as enriched-observation export rows: an AGENT root (question in, answer out, labels in
    metadata), a RETRIEVER per search, a ``fetch_url`` TOOL per fetch; trace context on every row."""
    tid = trace_id or sample["id"]
    start = datetime.fromisoformat(sample["timestamp"])
    labels = {k: v for k, v in (sample.get("labels") or {}).items() if v is not None}

    def obs(n: int, kind: str, name: str, parent: str | None, inputs: Any, outputs: Any,
            metadata: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"{tid}-o{n:02d}", "trace_id": tid, "project_id": PROJECT, "environment": "production",
            "type": kind, "name": name, "parent_observation_id": parent,
            "start_time": _export_time(start + timedelta(milliseconds=n * 10)),
            "end_time": _export_time(start + timedelta(milliseconds=n * 10 + 5)),
            "level": "DEFAULT", "status_message": "", "input": _raw(inputs), "output": _raw(outputs),
            "metadata": {k: json.dumps(v) for k, v in metadata.items()},
            "trace_name": "search-agent", "tags": [], "session_id": "", "user_id": "",
        }

    root = f"{tid}-o00"
    rows = [obs(0, "AGENT", "agent", None, {"question": sample["question"]}, sample["answer"], {"labels": labels})]
    for n, step in enumerate(sample["steps"], start=1):
        if step["kind"] == "search":
            docs = [{"page_content": h.get("snippet") or "", "type": "Document",
                     "metadata": {"doc_id": h.get("doc_id"), "source": h.get("url"), "title": h.get("title")}}
                    for h in step["hits"]]
            rows.append(obs(n, "RETRIEVER", "retriever", root, {"query": step["query"]}, {"documents": docs}, {}))
        else:
            rows.append(obs(n, "TOOL", "fetch_url", root, {"url": step.get("url"), "doc_id": step.get("doc_id")},
                            {"text": step.get("text") or "", "status": step.get("status")}, {}))
    return rows


def _write_rows(path: Path, rows: list[dict[str, Any]], fmt: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("jsonl", "jsonl.gz"):
        text = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
        path.write_bytes(gzip.compress(text) if fmt == "jsonl.gz" else text)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows)
    if "metadata" in table.column_names:  # ClickHouse Map(String, String) → a Parquet map column
        maps = pa.array([list(r["metadata"].items()) for r in rows], type=pa.map_(pa.string(), pa.string()))
        table = table.set_column(table.column_names.index("metadata"), "metadata", maps)
    pq.write_table(table, path, compression="zstd")


def _stem(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H-%M-%S")


_TRACE_CONTEXT = ("trace_name", "tags", "session_id", "user_id")


def _legacy(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Legacy-mode tables: observations without trace context, and one ``traces`` row per trace (name, tags, the
    question and answer as the trace's input/output, the labels in its metadata)."""
    observations = [{k: v for k, v in r.items() if k not in _TRACE_CONTEXT} for r in rows]
    for r in observations:  # the question, answer and labels only in the trace's own row
        if r["parent_observation_id"] is None:
            r.update(input=None, output=None, metadata={})
    traces = [{"id": r["trace_id"], "timestamp": r["start_time"], "name": r["trace_name"], "environment":
               r["environment"], "tags": [], "input": r["input"], "output": r["output"], "metadata": r["metadata"],
               "session_id": None, "user_id": None, "project_id": PROJECT}
              for r in rows if r["parent_observation_id"] is None]
    return observations, traces


def write_langfuse_export(root: Path, samples: list[dict[str, Any]] | None = None, *, fmt: str = "parquet",
                          prefix: str = "", legacy: bool = False) -> ExportLayout:
    """A Langfuse export of ``samples`` (default: the cookbook's) under ``root/prefix``, in ``fmt`` (parquet, jsonl,
    jsonl.gz); ``legacy``: the legacy mode's ``observations`` + ``traces`` tables instead of ``observations_v2``."""
    samples = samples if samples is not None else load_samples()
    ordered = sorted(samples, key=lambda s: (s["timestamp"], s["id"]))
    half = len(ordered) // 2
    first, second = ordered[:half], ordered[half:]
    edge = datetime.fromisoformat(second[0]["timestamp"])
    run1_end, run2_end = edge + timedelta(minutes=5), edge + timedelta(days=1)
    run1 = [r for s in first for r in langfuse_rows(s)]
    run2 = [r for s in second for r in langfuse_rows(s)]
    # overlap: the first traces of run 2 were exported by run 1 too (adjacent windows overlap) ...
    overlap = [r for s in second[:2] for r in langfuse_rows(s)]
    # ... and run 1's last trace had late children that only run 2 carries
    spanning = first[-1]["id"]
    late = [r for r in run1 if r["trace_id"] == spanning and r["parent_observation_id"]][-1:]
    run1 = [r for r in run1 if r not in late] + overlap
    run2 = late + run2
    unfinished = langfuse_rows(first[0], trace_id=UNFINISHED)
    base = root / prefix / PROJECT if prefix else root / PROJECT
    ext = fmt
    table = "observations" if legacy else "observations_v2"
    layout = ExportLayout(root=root, trace_ids=[s["id"] for s in ordered], spanning=spanning,
                          duplicated_rows=len(overlap), platform_ids={s["id"]: s["id"] for s in ordered})
    window_start = datetime.fromisoformat(ordered[0]["timestamp"]) - timedelta(hours=1)
    for start, end, rows, manifest in ((window_start, run1_end, run1, True), (edge, run2_end, run2, True),
                                       (run2_end, run2_end + timedelta(hours=1), unfinished, False)):
        rel = f"{table}/{_stem(end)}.{ext}"
        trace_rows: list[dict[str, Any]] = []
        if legacy:
            rows, trace_rows = _legacy(rows)
            _write_rows(base / f"traces/{_stem(end)}.{ext}", trace_rows, fmt)
        _write_rows(base / rel, rows, fmt)
        layout.files.append(f"{PROJECT}/{rel}")
        if not manifest:
            layout.skipped = f"{PROJECT}/{rel}"
            continue
        scores = base / f"scores/{_stem(end)}.{ext}"
        _write_rows(scores, [{"id": "s-0", "trace_id": rows[0]["trace_id"], "name": "user-feedback", "value": 1.0}],
                    fmt)
        kind = "PARQUET" if fmt == "parquet" else "JSONL"
        tables = [table, "scores"] + (["traces"] if legacy else [])
        files = [{"key": f"{prefix}{PROJECT}/{name}/{_stem(end)}.{ext}", "table": name, "fileType": kind,
                  "format": "parquet" if fmt == "parquet" else ("jsonl-gzip" if fmt.endswith(".gz") else "jsonl-raw"),
                  "compressed": fmt.endswith(".gz"), "rowCount": None} for name in tables]
        body = {"version": 1, "projectId": PROJECT,
                "exportSource": "LEGACY_TRACES_OBSERVATIONS" if legacy else "OBSERVATIONS_V2",
                "window": {"minTimestamp": start.isoformat(), "maxTimestamp": end.isoformat()},
                "maxTimestamp": end.isoformat(), "createdAt": end.isoformat(), "tables": tables, "files": files}
        (base / "manifests").mkdir(parents=True, exist_ok=True)
        (base / f"manifests/{_stem(end)}.json").write_text(json.dumps(body), encoding="utf-8")
    return layout


def _export_run(run: dict[str, Any]) -> dict[str, Any]:
    """One run as a bulk export row: JSON fields as text, times as timestamps, ``is_root``."""
    out = {k: run.get(k) for k in ("id", "name", "run_type", "trace_id", "parent_run_id", "dotted_order",
                                   "session_id", "status", "reference_example_id")}
    out["error"] = run.get("error")
    out["is_root"] = run.get("parent_run_id") is None
    out["start_time"] = datetime.fromisoformat(run["start_time"])
    out["end_time"] = datetime.fromisoformat(run["end_time"])
    for key in ("inputs", "outputs", "extra", "events", "tags"):
        out[key] = json.dumps(run.get(key))
    return out


def write_langsmith_export(root: Path, samples: list[dict[str, Any]] | None = None, *,
                           prefix: str = "") -> ExportLayout:
    """A LangSmith bulk export of ``samples`` under ``root/prefix``: Parquet per day; one trace's children in a
    second part file. Trace ids in the layout are the samples' ids (the root run's ``source_trace`` metadata)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    samples = samples if samples is not None else load_samples()
    by_file: dict[str, list[dict[str, Any]]] = {}
    spanning = samples[0]["id"]
    layout = ExportLayout(root=root, trace_ids=[s["id"] for s in samples], spanning=spanning)
    for sample in samples:
        runs, _ = run_tree(sample, SESSION_ID)
        layout.platform_ids[sample["id"]] = runs[0]["id"]
        for run in runs:
            day = datetime.fromisoformat(run["start_time"]).astimezone(UTC)
            part = 1 if sample["id"] == spanning and run["parent_run_id"] else 0
            rel = (f"export_id={EXPORT_ID}/tenant_id={TENANT_ID}/session_id={SESSION_ID}/runs/"
                   f"year={day:%Y}/month={day:%m}/day={day:%d}/{part:05d}.parquet")
            by_file.setdefault(rel, []).append(_export_run(run))
    base = root / prefix if prefix else root
    for rel, rows in sorted(by_file.items()):
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), path, compression="zstd")
        layout.files.append(rel)
    return layout
