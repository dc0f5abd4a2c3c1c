"""LangSmith run trees built from canonical sample traces, in the shapes LangSmith stores them.

Each search step becomes, in turn, a LangChain retriever run (``outputs["documents"]`` of ``Document`` dicts), a
``@traceable(run_type="retriever")`` run (a plain list under ``outputs["output"]``) or a ``web_search`` tool run; each
fetch step becomes a ``fetch_url`` tool run. Labels go on the reference example when the project is an experiment,
else on the root run's metadata — the two places the adapter must read them from.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
DATASET_ID = "00000000-0000-4000-8000-0000000da7a5"


def load_samples(limit: int | None = None) -> list[dict[str, Any]]:
    """The cookbook's canonical sample traces, as dicts."""
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit is not None else rows


def _id(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(str(p) for p in parts)))


def _labels(trace: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in (trace.get("labels") or {}).items() if v is not None}


def run_tree(
    trace: dict[str, Any], project_id: str, *, experiment: bool = False, copy: int = 0
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(runs of one trace, root first; its reference example or None) for one canonical trace dict."""
    start = datetime.fromisoformat(trace["timestamp"]) + timedelta(seconds=copy)
    root_id = _id(project_id, trace["id"], copy)
    example = None
    metadata: dict[str, Any] = {"source_trace": trace["id"], "ls_run_depth": 0}
    if experiment:
        example = {
            "id": _id("example", trace["id"]),
            "dataset_id": DATASET_ID,
            "inputs": {"question": trace["question"]},
            "outputs": _labels(trace),
            "metadata": {},
            "created_at": "2026-01-01T00:00:00+00:00",
        }
    else:
        metadata["labels"] = _labels(trace)

    def run(rid: str, name: str, run_type: str, offset: int, inputs: Any, outputs: Any, parent: str | None,
            **extra: Any) -> dict[str, Any]:
        t0 = start + timedelta(milliseconds=offset)
        dotted = f"{start:%Y%m%dT%H%M%S%fZ}{root_id}"
        if parent is not None:
            dotted += f".{t0:%Y%m%dT%H%M%S%fZ}{rid}"
        return {
            "id": rid,
            "name": name,
            "run_type": run_type,
            "start_time": t0.isoformat(),
            "end_time": (t0 + timedelta(milliseconds=5)).isoformat(),
            "inputs": inputs,
            "outputs": outputs,
            "parent_run_id": parent,
            "trace_id": root_id,
            "session_id": project_id,
            "dotted_order": dotted,
            "extra": {"metadata": extra.pop("metadata", {})},
            "tags": [],
            "error": None,
            "status": "success",
            "reference_example_id": extra.pop("reference_example_id", None),
            "child_run_ids": None,
            "events": [],
        }

    runs = [
        run(root_id, "search_agent", "chain", 0, {"question": trace["question"]}, {"output": trace["answer"]}, None,
            metadata=metadata, reference_example_id=example["id"] if example else None)
    ]
    for i, step in enumerate(trace.get("steps") or [], start=1):
        rid = _id(root_id, "step", i)
        if step["kind"] == "search":
            hits = step.get("hits") or []
            shape = i % 3
            if shape == 0:
                docs = [{"page_content": h.get("snippet") or "", "type": "Document",
                         "metadata": {"doc_id": h.get("doc_id"), "source": h.get("url"), "title": h.get("title")}}
                        for h in hits]
                runs.append(run(rid, "VectorStoreRetriever", "retriever", i * 10, {"query": step["query"]},
                                {"documents": docs}, root_id))
            elif shape == 1:
                plain = [{"doc_id": h.get("doc_id"), "url": h.get("url"), "title": h.get("title"),
                          "snippet": h.get("snippet")} for h in hits]
                runs.append(run(rid, "retrieve_docs", "retriever", i * 10, {"query": step["query"]},
                                {"output": plain}, root_id))
            else:
                plain = [{"doc_id": h.get("doc_id"), "url": h.get("url"), "title": h.get("title"),
                          "snippet": h.get("snippet")} for h in hits]
                runs.append(run(rid, step.get("tool") or "web_search", "tool", i * 10, {"query": step["query"]},
                                {"output": plain}, root_id))
        else:
            # a tool returning a dict stores it as the outputs; one returning a string stores {"output": text}
            outputs = ({"text": step.get("text") or "", "status": step.get("status")}
                       if i % 2 or step.get("status") not in (None, 200) else {"output": step.get("text") or ""})
            runs.append(run(rid, "fetch_url", "tool", i * 10, {"url": step.get("url"), "doc_id": step.get("doc_id")},
                            outputs, root_id))
    return runs, example


def seed(server: Any, traces: list[dict[str, Any]], *, project: str = "search-agent", experiment: bool = False,
         copies: int = 1) -> str:
    """Load ``traces`` (``copies`` times each) into a FakeLangSmith as one project; returns the project id."""
    project_id = server.add_project(project, reference_dataset_id=DATASET_ID if experiment else None)
    for copy in range(copies):
        for trace in traces:
            runs, example = run_tree(trace, project_id, experiment=experiment, copy=copy)
            server.add_runs(runs)
            if example is not None:
                server.add_example(example)
    return project_id
