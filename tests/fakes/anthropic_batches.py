"""The fake Messages API plus the Message Batches API (``/v1/messages/batches``), as the ``anthropic`` SDK calls it.

``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id", "params"}]}`` and answers a ``message_batch``
(``in_progress``); ``GET /v1/messages/batches/{id}`` ends it after ``polls_to_end`` polls; ``GET …/{id}/results``
streams one JSON line per request: ``succeeded`` with the same message the synchronous endpoint would give (same
oracle, same usage), or ``errored`` for the first ``errored_per_batch`` requests of each batch.

Faults and counts for resumption tests: ``hold`` keeps every batch ``in_progress`` however often it is polled;
``expire_next`` makes that many of the next batches end with every request ``expired``; ``DELETE …/{id}`` (or
``forget``) deletes a batch, so later polls and results answer 404; ``submitted`` counts every custom_id ever
submitted; ``polled`` is set by each poll (a test waits on it instead of sleeping). With ``create_gate`` set to an
``Event``, a create is stored and counted, ``created`` is set, and the answer is held until the gate opens (a test
kills the client in between). ``GET /v1/messages/batches`` lists batches, newest first.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Request, Response


class FakeAnthropicBatches(FakeAnthropic):
    def __init__(self, *, polls_to_end: int = 2, latency: float = 0.0) -> None:
        super().__init__(latency=latency)
        self.polls_to_end = polls_to_end
        self.batches: dict[str, dict[str, Any]] = {}
        self.errored_per_batch = 0
        self.hold = False
        self._created = 0
        self.expire_next = 0
        self.submitted: Counter[str] = Counter()
        self.polled = threading.Event()
        self.created = threading.Event()
        self.create_gate: threading.Event | None = None
        self._batch_lock = threading.Lock()

    def forget(self, batch_id: str) -> None:
        """Delete a batch server-side."""
        with self._batch_lock:
            self.batches.pop(batch_id, None)

    def handle(self, request: Request) -> Response:
        path = request.path
        if path == "/v1/messages/batches" and request.method == "POST":
            return self._create(request)
        if path == "/v1/messages/batches" and request.method == "GET":
            with self._batch_lock:
                shapes = [self._shape(b) for b in reversed(self.batches.values())]
            first, last = (shapes[0]["id"], shapes[-1]["id"]) if shapes else (None, None)
            return Response(200, {"data": shapes, "has_more": False, "first_id": first, "last_id": last})
        if path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            return self._results(path.split("/")[-2])
        if path.startswith("/v1/messages/batches/") and request.method == "GET":
            return self._retrieve(path.split("/")[-1])
        if path.startswith("/v1/messages/batches/") and request.method == "DELETE":
            batch_id = path.split("/")[-1]
            if batch_id not in self.batches:
                return Response(404, {"type": "error", "error": {"type": "not_found_error", "message": batch_id}})
            self.forget(batch_id)
            return Response(200, {"id": batch_id, "type": "message_batch_deleted"})
        return super().handle(request)

    def _shape(self, batch: dict[str, Any]) -> dict[str, Any]:
        ended = batch["polls"] >= self.polls_to_end and not self.hold
        n = len(batch["requests"])
        failed = min(n, self.errored_per_batch)
        expired = n if batch["expire"] else 0
        failed = 0 if expired else failed
        now = datetime.now(UTC)
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n - failed - expired if ended else 0,
                "errored": failed if ended else 0,
                "canceled": 0,
                "expired": expired if ended else 0,
            },
            "created_at": batch["created_at"],
            "expires_at": (now + timedelta(days=1)).isoformat(),
            "ended_at": now.isoformat() if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

    def _create(self, request: Request) -> Response:
        body = request.json()
        with self._batch_lock:
            self._created += 1
            batch_id = f"msgbatch_{self._created:04d}"
            self.submitted.update(item["custom_id"] for item in body["requests"])
            expire, self.expire_next = self.expire_next > 0, max(0, self.expire_next - 1)
            self.batches[batch_id] = {
                "expire": expire,
                "id": batch_id,
                "requests": body["requests"],
                "headers": request.headers,
                "polls": 0,
                "created_at": datetime.now(UTC).isoformat(),
            }
            answer = Response(200, self._shape(self.batches[batch_id]))
        self.created.set()
        if self.create_gate is not None:
            self.create_gate.wait(timeout=120)
        return answer

    def _retrieve(self, batch_id: str) -> Response:
        with self._batch_lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return Response(404, {"type": "error", "error": {"type": "not_found_error", "message": batch_id}})
            batch["polls"] += 1
            self.polled.set()
            return Response(200, self._shape(batch))

    def _results(self, batch_id: str) -> Response:
        batch = self.batches.get(batch_id)
        if batch is None:
            return Response(404, {"type": "error", "error": {"type": "not_found_error", "message": batch_id}})
        lines = []
        for index, item in enumerate(batch["requests"]):
            if batch["expire"]:
                result: dict[str, Any] = {"type": "expired"}
            elif index < self.errored_per_batch:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": "internal error"}},
                }
            else:
                single = Request("POST", "/v1/messages", {}, batch["headers"], json.dumps(item["params"]).encode())
                answer = FakeAnthropic.handle(self, single)
                result = {"type": "succeeded", "message": answer.body}
            lines.append(json.dumps({"custom_id": item["custom_id"], "result": result}))
        raw = ("\n".join(lines) + "\n").encode()
        return Response(200, None, {"Content-Type": "application/binary"}, raw=raw)
