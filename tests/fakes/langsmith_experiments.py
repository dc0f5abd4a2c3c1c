"""The fake LangSmith's datasets, examples by dataset, experiment sessions and run ingest, as ``evaluate`` calls them.

Read from the ``langsmith`` SDK 0.15 source (``client.py``, ``schemas.py``, ``evaluation/_runner.py``):

- ``GET /datasets?name=…&limit=1`` (a list) and ``GET /datasets/{id}`` (one): ``read_dataset``, the ``Dataset``
  schema (``id``, ``name``, ``created_at``, ``example_count``, …);
- ``GET /examples?dataset=…&offset=…&limit=…``: ``list_examples`` through ``_get_paginated_list`` (offset paging
  until a short page);
- ``POST /sessions``: ``create_project`` (``name``, ``description``, ``reference_dataset_id``, ``metadata`` in
  ``extra``), answered with a ``TracerSession``; a taken name is a 409 (``evaluate`` retries with a suffix on
  ``LangSmithConflictError``); ``PATCH /sessions/{id}``: ``update_project`` (``evaluate``'s end);
- ``POST /runs`` and ``PATCH /runs/{id}``: ``create_run`` / ``update_run`` of a ``Client(auto_batch_tracing=False)``
  (runs named by ``session_name`` land in that project, created on first use as LangSmith does).

Not known about the vendor, and chosen here: the exact body of the project answer beyond the ``TracerSession``
fields the SDK parses; whether ``PATCH /sessions/{id}`` merges or replaces ``extra.metadata`` (replaces, here);
the batched ingest (``/runs/batch``, ``/runs/multipart``) is not served: the test client traces synchronously.
"""

from __future__ import annotations

import uuid
from copy import deepcopy
from typing import TYPE_CHECKING, Any

from tests.fakes.base import Request, Response

if TYPE_CHECKING:  # pragma: no cover
    from tests.fakes.langsmith import FakeLangSmith

__all__ = ["add_dataset", "handle_experiments"]

_RUN_FIELDS = ("id", "name", "run_type", "start_time", "end_time", "inputs", "outputs", "extra", "error", "tags",
               "parent_run_id", "trace_id", "dotted_order", "reference_example_id", "events", "status")


def add_dataset(server: FakeLangSmith, name: str, examples: list[dict[str, Any]]) -> str:
    """A dataset named ``name`` holding ``examples`` (``inputs``, ``outputs``, ``metadata``); returns its id."""
    dataset_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"dataset:{name}"))
    server.datasets[dataset_id] = {"id": dataset_id, "name": name, "created_at": "2026-01-01T00:00:00+00:00",
                                   "modified_at": "2026-01-01T00:00:00+00:00", "example_count": len(examples),
                                   "data_type": "kv", "description": None}
    for n, example in enumerate(examples):
        server.add_example({"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{dataset_id}/{n}")), "dataset_id": dataset_id,
                            "created_at": "2026-01-01T00:00:00+00:00", "modified_at": "2026-01-01T00:00:00+00:00",
                            "metadata": None, **example})
    return dataset_id


def handle_experiments(server: FakeLangSmith, request: Request) -> Response | None:
    """The answer to a dataset, example-listing, session or run-ingest request; None for any other route."""
    path, method = request.path.rstrip("/"), request.method
    if path == "/datasets" and method == "GET":
        names = request.query.get("name")
        return Response(200, [deepcopy(d) for d in server.datasets.values() if not names or d["name"] in names])
    if path.startswith("/datasets/") and method == "GET":
        found = server.datasets.get(path.rsplit("/", 1)[1])
        return Response(200, deepcopy(found)) if found else Response(404, {"detail": "Dataset not found"})
    if path == "/examples" and method == "GET" and request.query.get("dataset"):
        dataset = request.query["dataset"][0]
        rows = [deepcopy(e) for e in server.examples.values() if e.get("dataset_id") == dataset]
        offset, limit = int(request.query.get("offset", ["0"])[0]), int(request.query.get("limit", ["100"])[0])
        return Response(200, rows[offset : offset + limit])
    if path == "/sessions" and method == "POST":
        return _create_session(server, request.json() or {})
    if path.startswith("/sessions/") and method == "PATCH":
        project = server.projects.get(path.rsplit("/", 1)[1])
        if project is None:
            return Response(404, {"detail": "Project not found"})
        body = request.json() or {}
        project["extra"] = {"metadata": body.get("metadata")} if body.get("metadata") is not None else project["extra"]
        project.update({k: body[k] for k in ("name", "description", "end_time") if body.get(k) is not None})
        return Response(200, deepcopy(project))
    if path == "/runs" and method == "POST":
        return _create_run(server, request.json() or {})
    if path.startswith("/runs/") and method == "PATCH":
        run = next((r for r in server.runs if r["id"] == path.rsplit("/", 1)[1]), None)
        if run is None:
            return Response(404, {"detail": "Run not found"})
        run.update({k: v for k, v in (request.json() or {}).items() if k in _RUN_FIELDS and v is not None})
        run["status"] = "error" if run.get("error") else "success"
        return Response(200, {})
    return None


def _create_session(server: FakeLangSmith, body: dict[str, Any]) -> Response:
    name = body.get("name")
    if not name:
        return Response(422, {"detail": "name is required"})
    if any(p["name"] == name for p in server.projects.values()):
        return Response(409, {"detail": f"project {name!r} already exists"})
    project_id = server.add_project(name, reference_dataset_id=body.get("reference_dataset_id"))
    project = server.projects[project_id]
    project.update(description=body.get("description"), extra=body.get("extra") or {"metadata": body.get("metadata")})
    return Response(200, deepcopy(project))


def _create_run(server: FakeLangSmith, body: dict[str, Any]) -> Response:
    if not body.get("id") or not body.get("trace_id"):
        return Response(422, {"detail": "id and trace_id are required"})
    name = body.get("session_name") or "default"
    project = next((p for p in server.projects.values() if p["name"] == name), None)
    project_id = project["id"] if project else server.add_project(name)
    run = {k: deepcopy(body.get(k)) for k in _RUN_FIELDS}
    run.update(session_id=body.get("session_id") or project_id, child_run_ids=None, status="pending")
    server.add_runs([run])
    return Response(200, {})
