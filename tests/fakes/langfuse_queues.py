"""The annotation-queue side of the fake Langfuse, shaped after ``langfuse-openapi.yml``: queues, queue items,
comments, the project lookup, and ``GET /api/public/v3/scores`` with the ``source``/``queueId``/``authorUserId``
filters and the ``annotation`` field group.

As the real server, a queue needs ≥ 1 existing score config and a POST of the same object inserts another queue item
(no dedupe). ``annotate`` plays a human reviewer answering in the queue: a ``source=ANNOTATION`` score with an author
and the queue id, its item marked COMPLETED.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tests.fakes.base import Request, Response

if TYPE_CHECKING:
    from tests.fakes.langfuse import FakeLangfuse

ORG = {"id": "org-test", "name": "test org"}
_QUEUE = re.compile(r"^/api/public/annotation-queues/([^/]+)$")
_ITEMS = re.compile(r"^/api/public/annotation-queues/([^/]+)/items$")
_ANNOTATION_PARAMS = ("source", "queueId", "authorUserId", "fromTimestamp")


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class QueueState:
    """What the queue routes hold (one per fake server)."""

    def __init__(self) -> None:
        self.queues: list[dict[str, Any]] = []
        self.items: list[dict[str, Any]] = []
        self.comments: list[dict[str, Any]] = []


def state(fake: FakeLangfuse) -> QueueState:
    found = getattr(fake, "_queue_state", None)
    if found is None:
        found = QueueState()
        fake._queue_state = found  # type: ignore[attr-defined]
    return found


def _page(rows: list[dict[str, Any]], request: Request) -> Response:
    q = {k: v[-1] for k, v in request.query.items()}
    page, limit = int(q.get("page", 1)), int(q.get("limit", 50))
    total = len(rows)
    meta = {"page": page, "limit": limit, "totalItems": total, "totalPages": max(1, -(-total // limit))}
    return Response(200, {"data": rows[(page - 1) * limit : page * limit], "meta": meta})


def handle_queues(fake: FakeLangfuse, request: Request) -> Response | None:
    """The queue routes, or None when the request is not one of them (the main fake serves it)."""
    path, method, st = request.path, request.method, state(fake)
    if path == "/api/public/projects" and method == "GET":
        return Response(200, {"data": [{"id": "proj-test", "name": "test", "organization": ORG, "metadata": {}}]})
    if path == "/api/public/comments" and method == "POST":
        body = request.json() or {}
        if len(str(body.get("content", ""))) > 5000:
            return Response(400, {"message": "content is limited to 5000 characters"})
        if not fake_has_trace(fake, body.get("objectId")) and body.get("objectType") == "TRACE":
            return Response(404, {"message": f"trace {body.get('objectId')} not found"})
        st.comments.append(
            {**body, "id": str(uuid.uuid4()), "projectId": "proj-test", "createdAt": _now(), "updatedAt": _now()}
        )  # another comment on every POST, as the real server
        return Response(200, {"id": st.comments[-1]["id"]})
    if path == "/api/public/comments" and method == "GET":
        q = {k: v[-1] for k, v in request.query.items()}
        rows = [c for c in st.comments if all(c.get(k) == q[k] for k in ("objectType", "objectId") if k in q)]
        return _page(rows, request)
    if path == "/api/public/annotation-queues" and method == "GET":
        return _page(st.queues, request)
    if path == "/api/public/annotation-queues" and method == "POST":
        body = request.json() or {}
        ids = body.get("scoreConfigIds") or []
        known = {c["id"] for c in fake.score_configs}
        if not body.get("name") or not ids:
            return Response(400, {"message": "name and at least one scoreConfigIds entry are required"})
        if set(ids) - known:
            return Response(400, {"message": f"unknown score config ids {sorted(set(ids) - known)}"})
        queue = {
            "id": str(uuid.uuid4()),
            "name": body["name"],
            "description": body.get("description"),
            "scoreConfigIds": list(ids),
            "createdAt": _now(),
            "updatedAt": _now(),
        }
        st.queues.append(queue)
        return Response(200, queue)
    match = _QUEUE.match(path)
    if match and method == "GET":
        queue = next((q for q in st.queues if q["id"] == match.group(1)), None)
        return Response(200, queue) if queue else Response(404, {"message": "queue not found"})
    match = _ITEMS.match(path)
    if match:
        if not any(q["id"] == match.group(1) for q in st.queues):
            return Response(404, {"message": "queue not found"})
        if method == "GET":
            status = request.query.get("status", [None])[-1]
            rows = [i for i in st.items if i["queueId"] == match.group(1) and (status is None or i["status"] == status)]
            return _page(rows, request)
        if method == "POST":
            body = request.json() or {}
            if body.get("objectType") not in ("TRACE", "OBSERVATION", "SESSION") or not body.get("objectId"):
                return Response(400, {"message": "objectId and objectType (TRACE|OBSERVATION|SESSION) are required"})
            item = {
                "id": str(uuid.uuid4()),  # a new item on every POST, as the real server
                "queueId": match.group(1),
                "objectId": body["objectId"],
                "objectType": body["objectType"],
                "status": body.get("status") or "PENDING",
                "completedAt": None,
                "createdAt": _now(),
                "updatedAt": _now(),
            }
            st.items.append(item)
            return Response(200, item)
    if path == "/api/public/v3/scores" and method == "GET" and _annotation_query(request):
        return _annotation_scores(fake, request)
    return None


def fake_has_trace(fake: FakeLangfuse, trace_id: Any) -> bool:
    return any(r["traceId"] == trace_id for r in fake.observations)


def _annotation_query(request: Request) -> bool:
    fields = request.query.get("fields", [""])[-1]
    return "annotation" in fields.split(",") or any(p in request.query for p in _ANNOTATION_PARAMS)


def _annotation_scores(fake: FakeLangfuse, request: Request) -> Response:
    from tests.fakes.langfuse import _cursor, _offset, _parse_time

    q = {k: v[-1] for k, v in request.query.items()}
    limit = int(q.get("limit", 50))
    if not 1 <= limit <= 100:
        return Response(400, {"message": "limit must be between 1 and 100"})
    groups = set(filter(None, q.get("fields", "").split(",")))
    if groups - {"details", "subject", "annotation"}:
        return Response(400, {"message": f"unknown field groups: {sorted(groups)}"})
    wanted = {
        "source": {s.upper() for s in q["source"].split(",")} if "source" in q else None,
        "queueId": set(q["queueId"].split(",")) if "queueId" in q else None,
        "authorUserId": set(q["authorUserId"].split(",")) if "authorUserId" in q else None,
        "name": set(q["name"].split(",")) if "name" in q else None,
        "traceId": set(q["traceId"].split(",")) if "traceId" in q else None,
    }
    lo = _parse_time(q["fromTimestamp"]) if "fromTimestamp" in q else None
    rows = [
        s
        for s in fake.scores.values()
        if all(
            allowed is None or str(s.get(key)).upper() in {a.upper() for a in allowed}
            for key, allowed in wanted.items()
        )
        and (lo is None or _parse_time(s["timestamp"]) >= lo)
    ]
    rows.sort(key=lambda s: (s["timestamp"], s["id"]), reverse=True)
    offset = _offset(q.get("cursor"))
    data = []
    for s in rows[offset : offset + limit]:
        value: Any = bool(s["value"]) if s["dataType"] == "BOOLEAN" else s["value"]
        keys = ("id", "projectId", "name", "dataType", "source", "timestamp", "environment", "createdAt", "updatedAt")
        out = {k: s[k] for k in keys} | {"value": value}
        if "details" in groups:
            out |= {"comment": s.get("comment"), "configId": s.get("configId"), "metadata": s.get("metadata")}
        if "subject" in groups:
            out["subject"] = {"kind": "trace", "id": s["traceId"]}
        if "annotation" in groups:
            out |= {"authorUserId": s.get("authorUserId"), "queueId": s.get("queueId")}
        data.append(out)
    meta: dict[str, Any] = {"limit": limit}
    if offset + limit < len(rows):
        meta["cursor"] = _cursor(offset + limit)
    return Response(200, {"data": data, "meta": meta})


def annotate(
    fake: FakeLangfuse,
    trace_id: str,
    name: str,
    value: Any,
    *,
    author: str | None = "user-reviewer-1",
    queue_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    when: datetime | None = None,
) -> dict[str, Any]:
    """A reviewer answers in the queue UI: a ``source=ANNOTATION`` score on the trace, its queue item completed.

    ``author=None`` and ``metadata`` let a test play a script (or this package) writing ANNOTATION scores.
    """
    st = state(fake)
    queue = queue_id or (st.queues[0]["id"] if st.queues else None)
    config = next((c for c in fake.score_configs if c["name"] == name), None)
    data_type = config["dataType"] if config else "CATEGORICAL"
    if data_type == "BOOLEAN":
        value = 1 if value in (True, 1, "true") else 0
    stamp = (when or datetime.now(UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")
    score_id = str(uuid.uuid4())
    stored = {
        "id": score_id,
        "traceId": trace_id,
        "name": name,
        "value": value,
        "dataType": data_type,
        "configId": config["id"] if config else None,
        "timestamp": stamp,
        "projectId": "proj-test",
        "source": "ANNOTATION",
        "environment": "default",
        "authorUserId": author,
        "queueId": queue,
        "metadata": metadata or {},
        "createdAt": stamp,
        "updatedAt": stamp,
    }
    with fake._state:
        fake.scores[(score_id, name, stamp[:10])] = stored
    for item in st.items:
        if item["queueId"] == queue and item["objectId"] == trace_id:
            item["status"], item["completedAt"] = "COMPLETED", stamp
    return stored
