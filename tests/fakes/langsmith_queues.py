"""The annotation-queue side of the fake LangSmith: queues with rubric items (v1 ``/annotation-queues``, as the sync
``Client`` sends them) and queue items (``/api/v1/platform/annotation-queues/{id}/items``, as the generated
``Langsmith`` client's ``annotation_queues.items`` sends them: ``types/annotation_queues/item_create_params.py``,
``run_id``, ``project_id``/``session_id``, ``start_time``). Like the real server, adding a run twice makes two items;
rubric keys must be existing feedback configs; on a ``smithdb_only`` backend (``fake.backend``) a run item without
``start_time`` is refused, as the SDK says its runs are located by project and start time there. An item keeps the
``start_time`` it was sent (None when none was).

``review`` plays a reviewer answering in the queue UI: feedback on the run with ``feedback_source.type == "app"``
and the reviewer's user id.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tests.fakes.base import Request, Response

if TYPE_CHECKING:
    from tests.fakes.langsmith import FakeLangSmith

_QUEUE = re.compile(r"^/annotation-queues/([0-9a-f-]+)$")
_ITEMS = re.compile(r"^/api/v1/platform/annotation-queues/([0-9a-f-]+)/items$")


class QueueState:
    def __init__(self) -> None:
        self.queues: dict[str, dict[str, Any]] = {}
        self.items: list[dict[str, Any]] = []


def state(fake: FakeLangSmith) -> QueueState:
    found = getattr(fake, "_queue_state", None)
    if found is None:
        found = QueueState()
        fake._queue_state = found  # type: ignore[attr-defined]
    return found


def _now() -> str:
    return datetime.now(UTC).isoformat()


def handle_queues(fake: FakeLangSmith, request: Request) -> Response | None:
    """The queue routes, or None when the request is not one of them."""
    from tests.fakes.langsmith import TENANT_ID

    path, method, st = request.path.rstrip("/"), request.method, state(fake)
    if path == "/annotation-queues" and method == "GET":
        names = request.query.get("name")
        rows = [q for q in st.queues.values() if not names or q["name"] in names]
        offset = int(request.query.get("offset", ["0"])[0])
        limit = int(request.query.get("limit", ["100"])[0])
        return Response(200, rows[offset : offset + limit])
    if path == "/annotation-queues" and method == "POST":
        body = request.json() or {}
        unknown = [
            r["feedback_key"] for r in body.get("rubric_items") or [] if r["feedback_key"] not in fake.feedback_configs
        ]
        if not body.get("name") or unknown:
            return Response(400, {"detail": f"name required; rubric keys without a feedback config: {unknown}"})
        queue = {
            "id": body.get("id") or str(uuid.uuid4()),
            "name": body["name"],
            "description": body.get("description"),
            "rubric_instructions": body.get("rubric_instructions"),
            "rubric_items": body.get("rubric_items") or [],
            "tenant_id": TENANT_ID,
            "created_at": _now(),
            "updated_at": _now(),
        }
        st.queues[queue["id"]] = queue
        return Response(200, {k: v for k, v in queue.items() if k != "rubric_items"})
    match = _QUEUE.match(path)
    if match and method == "GET":
        queue = st.queues.get(match.group(1))
        return Response(200, queue) if queue else Response(404, {"detail": "queue not found"})
    match = _ITEMS.match(path)
    if match:
        if match.group(1) not in st.queues:
            return Response(404, {"detail": "queue not found"})
        if method == "POST":
            out = []
            for item in (request.json() or {}).get("items") or []:
                run = next((r for r in fake.runs if r["id"] == item.get("run_id")), None)
                if item.get("item_type") != "RUN" or run is None:
                    return Response(400, {"detail": f"RUN items need an existing run_id, got {item!r}"})
                if getattr(fake, "backend", "clickhouse_only") == "smithdb_only" and not item.get("start_time"):
                    return Response(400, {"detail": f"RUN items need start_time on this deployment, got {item!r}"})
                row = {
                    "id": str(uuid.uuid4()),
                    "queue_id": match.group(1),
                    "item_type": "RUN",
                    "run_id": run["id"],
                    "project_id": item.get("project_id") or item.get("session_id") or run.get("session_id"),
                    "start_time": item.get("start_time"),
                    "added_at": _now(),
                    "last_reviewed_time": None,
                    "completed_by": [],
                }
                st.items.append(row)
                out.append(row)
            return Response(200, {"items": out})
        if method == "GET":
            status = request.query.get("status", [""])[0]
            done = status == "archived"
            rows = [i for i in st.items if i["queue_id"] == match.group(1) and bool(i["completed_by"]) == done]
            return Response(200, {"items": rows, "next_cursor": None})
    return None


def review(
    fake: FakeLangSmith,
    run_id: str,
    key: str,
    *,
    value: str | None = None,
    score: float | None = None,
    user: str | None = "reviewer-1",
    source_type: str = "app",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A reviewer's answer on a queued run (or, with ``source_type='api'``, a script's or this package's)."""
    run = next(r for r in fake.runs if r["id"] == run_id)
    config = fake.feedback_configs.get(key, {}).get("feedback_config", {})
    if config.get("type") == "categorical" and value is not None and score is None:
        score = next(float(c["value"]) for c in config["categories"] if c["label"] == value)
    feedback = {
        "id": str(uuid.uuid4()),
        "run_id": run_id,
        "trace_id": run.get("trace_id"),
        "session_id": run.get("session_id"),
        "key": key,
        "score": score,
        "value": value,
        "comment": None,
        "feedback_source": {"type": source_type, "metadata": {}, "user_id": user},
        "extra": extra,
        "created_at": _now(),
        "modified_at": _now(),
    }
    fake.feedback[feedback["id"]] = feedback
    for item in state(fake).items:
        if item["run_id"] == run_id and user:
            item["completed_by"] = [*item["completed_by"], user]
    return feedback
