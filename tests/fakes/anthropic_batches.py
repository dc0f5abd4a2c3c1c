"""The fake Messages API plus the Message Batches API (``/v1/messages/batches``), as the ``anthropic`` SDK calls it.

Written from the API reference and the SDK's types (``anthropic/types/messages/message_batch*.py``):

- ``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id", "params"}]}`` and answers a ``message_batch``,
  ``processing_status`` ``in_progress``, ``request_counts.processing`` = every request (the other counts are zero until
  the whole batch has ended).
- ``GET /v1/messages/batches/{id}`` ends the batch after ``polls_to_end`` polls (never while ``hold`` is set): each
  request is processed once, then, with its result, answers every later results read the same. A request's result
  type is ``fate(index, custom_id)`` when set, else ``errored`` for the first ``errored_per_batch`` requests of each
  batch, else ``succeeded`` (the message the synchronous endpoint would give: same oracle, same usage);
  ``expire_next`` makes that many of the next batches end with every request ``expired``.
- ``POST …/{id}/cancel`` puts a batch not yet ended in ``canceling``; its next poll ends it with every request
  ``canceled`` (the fake had processed none). Cancelling an ended batch is a 400.
- ``GET …/{id}/results`` streams one JSON line per request (``application/binary``); only for an ended batch.
- ``DELETE …/{id}`` deletes an ended batch (an in-progress one must be canceled first: 400); ``forget`` deletes one
  server-side whatever its state (processed first, as a batch that ended and was deleted while nobody looked).
  Later polls and results of it answer 404.
- ``GET /v1/messages/batches`` lists batches newest first, ``limit`` (default 20, 1..1000) and ``after_id`` paging,
  with ``has_more``, ``first_id``, ``last_id``.

Counts for the tests, kept at the server: ``submitted`` (every custom_id submitted, per submission), ``sent`` (every
request body, batch or direct ``POST /v1/messages``, by its content: a request sent twice under two custom_ids still
counts twice), ``direct`` (the direct ones alone), ``billed`` (replies and tokens of the succeeded batch requests and
of the direct calls), ``counts()`` (what the API reports over every batch: the results of those it still has, and
how many requests were in the deleted ones), ``outcomes`` (each processed request's result type, by content).

``polled`` is set by each poll, ``created`` by each create; with ``create_gate`` set, a create is stored and counted
and its answer held until the gate opens; with ``results_gate`` set, a results read sets ``results_asked`` and waits
for the gate (a test kills the client in either window). ``hold``, the gates and these three events concern only the
batches from the ``gate_from``-th one created on (default: all).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Request, Response

RESULT_TYPES = ("succeeded", "errored", "expired", "canceled")
_USAGE = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def content_digest(params: dict[str, Any]) -> str:
    """What identifies one judge request at the server: its system prompt and messages."""
    return hashlib.sha256(
        json.dumps([params.get("system"), params.get("messages")], sort_keys=True).encode()
    ).hexdigest()


def _error(status: int, kind: str, message: str) -> Response:
    return Response(status, {"type": "error", "error": {"type": kind, "message": message}})


class FakeAnthropicBatches(FakeAnthropic):
    def __init__(self, *, polls_to_end: int = 2, latency: float = 0.0) -> None:
        super().__init__(latency=latency)
        self.polls_to_end = polls_to_end
        self.batches: dict[str, dict[str, Any]] = {}
        self.errored_per_batch = 0
        self.expire_next = 0
        self.fate: Callable[[int, str], str] | None = None
        self.hold = False
        self.gate_from = 1
        self.outcomes: dict[str, str] = {}
        self.submitted: Counter[str] = Counter()
        self.sent: Counter[str] = Counter()
        self.direct: Counter[str] = Counter()
        self.billed: dict[str, Counter[str]] = {"batch": Counter(), "direct": Counter()}
        self.polled = threading.Event()
        self.created = threading.Event()
        self.results_asked = threading.Event()
        self.create_gate: threading.Event | None = None
        self.results_gate: threading.Event | None = None
        self._all: list[dict[str, Any]] = []  # every batch ever created, deleted ones included
        self._created = 0
        self._batch_lock = threading.Lock()

    # -- what the server saw --------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Requests submitted and their results over every batch, as the API's ``request_counts`` reported them."""
        with self._batch_lock:
            out = Counter({"batches": len(self._all), "submitted": sum(len(b["requests"]) for b in self._all)})
            for batch in (b for b in self._all if b["id"] in self.batches):  # a deleted batch reports nothing
                out.update(batch["counts"] if batch["ended"] else {"processing": len(batch["requests"])})
            out["deleted"] = sum(len(b["requests"]) for b in self._all if b["id"] not in self.batches)
        return {k: out[k] for k in ("batches", "submitted", *RESULT_TYPES, "processing", "deleted")}

    def forget(self, batch_id: str) -> None:
        """Delete a batch server-side (after processing it, when it had not ended yet)."""
        with self._batch_lock:
            batch = self.batches.pop(batch_id, None)
            if batch is not None and not batch["ended"]:
                self._end(batch)

    # -- routes ---------------------------------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        path, method = request.path, request.method
        if path == "/v1/messages" and method == "POST":
            return self._direct(request)
        if path == "/v1/messages/batches":
            return self._create(request) if method == "POST" else self._list(request)
        if not path.startswith("/v1/messages/batches/"):
            return super().handle(request)
        parts = path.removeprefix("/v1/messages/batches/").split("/")
        if len(parts) == 2 and parts[1] == "results" and method == "GET":
            return self._results(parts[0])
        if len(parts) == 2 and parts[1] == "cancel" and method == "POST":
            return self._cancel(parts[0])
        if len(parts) == 1 and method == "GET":
            return self._retrieve(parts[0])
        if len(parts) == 1 and method == "DELETE":
            return self._delete(parts[0])
        return _error(404, "not_found_error", path)

    def _direct(self, request: Request) -> Response:
        body = request.json() or {}
        digest = content_digest(body)
        answer = FakeAnthropic.handle(self, request)
        with self._batch_lock:
            self.sent[digest] += 1
            self.direct[digest] += 1
            if answer.status == 200:
                self.billed["direct"].update(replies=1, **{k: answer.body["usage"][k] for k in _USAGE})
        return answer

    def _shape(self, batch: dict[str, Any]) -> dict[str, Any]:
        n = len(batch["requests"])
        ended = batch["ended"]
        status = "ended" if ended else ("canceling" if batch["cancel_initiated_at"] else "in_progress")
        counts = dict(batch["counts"]) if ended else {t: 0 for t in RESULT_TYPES}
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts | {"processing": 0 if ended else n},
            "created_at": batch["created_at"],
            "expires_at": batch["expires_at"],
            "ended_at": batch["ended_at"],
            "archived_at": None,
            "cancel_initiated_at": batch["cancel_initiated_at"],
            "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

    def _create(self, request: Request) -> Response:
        body = request.json()
        now = datetime.now(UTC)
        with self._batch_lock:
            self._created += 1
            batch_id = f"msgbatch_{self._created:04d}"
            gated = self._created >= self.gate_from
            self.submitted.update(item["custom_id"] for item in body["requests"])
            self.sent.update(content_digest(item["params"]) for item in body["requests"])
            expire, self.expire_next = self.expire_next > 0, max(0, self.expire_next - 1)
            batch = {
                "id": batch_id,
                "gated": gated,
                "requests": body["requests"],
                "headers": request.headers,
                "expire": expire,
                "polls": 0,
                "ended": False,
                "counts": {},
                "lines": [],
                "created_at": now.isoformat(),
                "expires_at": (now + timedelta(days=1)).isoformat(),
                "ended_at": None,
                "cancel_initiated_at": None,
            }
            self.batches[batch_id] = batch
            self._all.append(batch)
            answer = Response(200, self._shape(batch))
        if not gated:
            return answer
        self.created.set()
        if self.create_gate is not None:
            self.create_gate.wait(timeout=120)
        return answer

    def _list(self, request: Request) -> Response:
        limit = int((request.query.get("limit") or ["20"])[0])
        if not 1 <= limit <= 1000:
            return _error(400, "invalid_request_error", f"limit: {limit} is not in 1..1000")
        after = (request.query.get("after_id") or [None])[0]
        with self._batch_lock:
            ids = list(reversed(self.batches))
            start = ids.index(after) + 1 if after in ids else 0
            page = [self._shape(self.batches[i]) for i in ids[start : start + limit]]
            more = start + limit < len(ids)
        first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
        return Response(200, {"data": page, "has_more": more, "first_id": first, "last_id": last})

    def _retrieve(self, batch_id: str) -> Response:
        with self._batch_lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return _error(404, "not_found_error", batch_id)
            batch["polls"] += 1
            held = self.hold and batch["gated"]
            if not batch["ended"] and (
                batch["cancel_initiated_at"] or (batch["polls"] >= self.polls_to_end and not held)
            ):
                self._end(batch)
            if batch["gated"]:
                self.polled.set()
            return Response(200, self._shape(batch))

    def _cancel(self, batch_id: str) -> Response:
        with self._batch_lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return _error(404, "not_found_error", batch_id)
            if batch["ended"]:
                return _error(400, "invalid_request_error", f"batch {batch_id} has ended; it cannot be canceled")
            batch["cancel_initiated_at"] = batch["cancel_initiated_at"] or datetime.now(UTC).isoformat()
            return Response(200, self._shape(batch))

    def _delete(self, batch_id: str) -> Response:
        with self._batch_lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return _error(404, "not_found_error", batch_id)
            if not batch["ended"]:
                msg = f"batch {batch_id} is still processing; cancel it before deleting it"
                return _error(400, "invalid_request_error", msg)
            del self.batches[batch_id]
        return Response(200, {"id": batch_id, "type": "message_batch_deleted"})

    def _end(self, batch: dict[str, Any]) -> None:
        """Process every request of ``batch`` once (the lock is held): results, counts, what was billed."""
        counts: Counter[str] = Counter({t: 0 for t in RESULT_TYPES})
        for index, item in enumerate(batch["requests"]):
            kind = self._fate(batch, index, item["custom_id"])
            result: dict[str, Any] = {"type": kind}
            if kind == "errored":
                result["error"] = {"type": "error", "error": {"type": "api_error", "message": "internal error"}}
            elif kind == "succeeded":
                params = json.dumps(item["params"]).encode()
                answer = FakeAnthropic.handle(self, Request("POST", "/v1/messages", {}, batch["headers"], params))
                result["message"] = answer.body
                self.billed["batch"].update(replies=1, **{k: answer.body["usage"][k] for k in _USAGE})
            counts[kind] += 1
            self.outcomes[content_digest(item["params"])] = kind
            batch["lines"].append(json.dumps({"custom_id": item["custom_id"], "result": result}))
        batch["counts"], batch["ended"] = dict(counts), True
        batch["ended_at"] = datetime.now(UTC).isoformat()

    def _fate(self, batch: dict[str, Any], index: int, custom_id: str) -> str:
        if batch["cancel_initiated_at"]:
            return "canceled"
        if batch["expire"]:
            return "expired"
        if self.fate is not None:
            return self.fate(index, custom_id)
        return "errored" if index < self.errored_per_batch else "succeeded"

    def _results(self, batch_id: str) -> Response:
        with self._batch_lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return _error(404, "not_found_error", batch_id)
            if not batch["ended"]:
                return _error(400, "invalid_request_error", f"batch {batch_id} has not ended yet")
            raw, gated = ("\n".join(batch["lines"]) + "\n").encode(), batch["gated"]
        if gated:
            self.results_asked.set()
            if self.results_gate is not None:
                self.results_gate.wait(timeout=120)
        return Response(200, None, {"Content-Type": "application/binary"}, raw=raw)
