"""The fake Messages API plus the Message Batches API (``/v1/messages/batches``), as the ``anthropic`` SDK calls it.

``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id", "params"}]}`` and answers a ``message_batch``
(``in_progress``); ``GET /v1/messages/batches/{id}`` ends it after ``polls_to_end`` polls; ``GET …/{id}/results``
streams one JSON line per request: ``succeeded`` with the same message the synchronous endpoint would give (same
oracle, same usage), or ``errored`` for the first ``errored_per_batch`` requests of each batch.
"""

from __future__ import annotations

import json
import threading
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
        self._batch_lock = threading.Lock()

    def handle(self, request: Request) -> Response:
        path = request.path
        if path == "/v1/messages/batches" and request.method == "POST":
            return self._create(request)
        if path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            return self._results(path.split("/")[-2])
        if path.startswith("/v1/messages/batches/") and request.method == "GET":
            return self._retrieve(path.split("/")[-1])
        return super().handle(request)

    def _shape(self, batch: dict[str, Any]) -> dict[str, Any]:
        ended = batch["polls"] >= self.polls_to_end
        n = len(batch["requests"])
        failed = min(n, self.errored_per_batch)
        now = datetime.now(UTC)
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n - failed if ended else 0,
                "errored": failed if ended else 0,
                "canceled": 0,
                "expired": 0,
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
            batch_id = f"msgbatch_{len(self.batches) + 1:04d}"
            self.batches[batch_id] = {
                "id": batch_id,
                "requests": body["requests"],
                "headers": request.headers,
                "polls": 0,
                "created_at": datetime.now(UTC).isoformat(),
            }
            return Response(200, self._shape(self.batches[batch_id]))

    def _retrieve(self, batch_id: str) -> Response:
        with self._batch_lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return Response(404, {"type": "error", "error": {"type": "not_found_error", "message": batch_id}})
            batch["polls"] += 1
            return Response(200, self._shape(batch))

    def _results(self, batch_id: str) -> Response:
        batch = self.batches[batch_id]
        lines = []
        for index, item in enumerate(batch["requests"]):
            if index < self.errored_per_batch:
                result: dict[str, Any] = {
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
