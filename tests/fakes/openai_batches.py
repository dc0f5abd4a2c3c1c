"""The fake Chat Completions API (``tests/fakes/openai_chat.py``) plus OpenAI's Files and Batches endpoints, as the
``openai`` SDK calls them.

Written from the SDK's own types (``openai.types.Batch``, ``BatchRequestCounts``, ``BatchError``, ``FileObject``,
``openai.pagination.SyncCursorPage``) and the API reference's batch input and output line objects (the SDK has no
type for those lines):

- ``POST /v1/files`` (multipart: ``file``, ``purpose``) stores a file and answers a ``FileObject``
  (``status`` ``processed``); ``GET /v1/files/{id}/content`` answers its bytes.
- ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``, ``metadata``) answers a ``Batch`` in
  ``validating``. Each input line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; a
  file that is not a ``batch`` file, a line of another url or method, or a repeated custom_id makes the batch
  ``failed`` at its first poll, with ``errors`` naming the line (no file, nothing processed); so does each of the
  next ``fail_next`` batches.
- ``GET /v1/batches/{id}`` moves the batch one state per poll: ``validating`` → ``in_progress`` → ``finalizing`` →
  ended, never past ``stop_at`` (the state a test holds it in). Every request is processed once, when it ends:
  ``fate(batch number, index, custom_id)`` says ``succeeded`` (the reply the synchronous endpoint gives: same oracle,
  same usage, in the output file as ``{"id", "custom_id", "response": {"status_code": 200, "request_id", "body"},
  "error": null}``), ``errored`` (a 500 response line in the error file) or ``expired``; a batch holding an expired
  request ends ``expired`` (the expired ones in the error file with ``error.code`` ``batch_expired``), else
  ``completed``. ``request_counts``: ``total`` from ``in_progress`` on (0 while validating), ``completed`` and
  ``failed`` once ended.
- ``POST /v1/batches/{id}/cancel``: ``cancelling``, then ``cancelled`` at the next poll, nothing processed (an
  ended batch: 400).
- ``GET /v1/batches`` lists newest first, ``limit`` (1..100) and ``after`` paging, ``has_more``, ``first_id``,
  ``last_id``.

Unknown, and chosen here: whether the API counts expired requests in ``request_counts.failed`` (here: not; our
reader counts what the files hold either way), whether a cancelled batch's unprocessed requests appear in its error
file (here: in neither file), the list's order (here: newest first, as observed), how long each state lasts.

Counted at the server, for the tests: ``sent`` (each chat request, batch line or direct ``POST
/v1/chat/completions``, by its content: system and user message), ``direct`` (the direct ones alone), ``billed``
(replies and tokens of the succeeded batch lines, and of the direct calls), ``outcomes`` (each processed request's
fate, by content), ``counts()`` (the ledger's terms over every batch). ``created`` is set by each create of a gated
batch (from the ``gate_from``-th), ``reached`` when a gated batch is polled in ``stop_at``; with ``create_gate``
set a create is stored and counted, its answer held until the gate opens; with ``content_gate`` set a read of a
gated batch's output file sets ``content_asked`` and waits for the gate. Faults are queued on ``faults`` per route
prefix as for every fake (``/v1/batches``, ``/v1/files``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from openai.types import Batch, FileObject

from tests.fakes.base import Request, Response
from tests.fakes.openai_chat import PATH, FakeOpenAI, error_body

ENDPOINT = "/v1/chat/completions"
STATES = ("validating", "in_progress", "finalizing")


def content_digest(body: dict[str, Any]) -> str:
    """What identifies one judge request at the server: its messages."""
    return hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()


def _multipart(request: Request) -> dict[str, bytes]:
    ctype = {k.lower(): v for k, v in request.headers.items()}.get("content-type", "")
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + request.body)
    return {
        str(part.get_param("name", header="content-disposition")): part.get_payload(decode=True) or b""
        for part in message.iter_parts()
    }


class FakeOpenAIBatches(FakeOpenAI):
    def __init__(self, *, key: str | None = "test-key") -> None:
        super().__init__(key=key)
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.fate: Callable[[int, int, str], str] | None = None
        self.stop_at: str | None = None
        self.fail_next = 0
        self.gate_from = 1
        self.sent: Counter[str] = Counter()
        self.direct: Counter[str] = Counter()
        self.billed: dict[str, Counter[str]] = {"batch": Counter(), "direct": Counter()}
        self.outcomes: dict[str, str] = {}
        self.created = threading.Event()
        self.reached = threading.Event()
        self.content_asked = threading.Event()
        self.create_gate: threading.Event | None = None
        self.content_gate: threading.Event | None = None
        self._numbers = itertools.count(1)
        self._lock_b = threading.Lock()

    def __enter__(self) -> FakeOpenAIBatches:
        self.start()
        return self

    # -- what the server saw --------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Over every batch: requests submitted, and the fate of those of ended batches (``processing``: the rest)."""
        out: Counter[str] = Counter()
        with self._lock_b:
            for batch in self.batches.values():
                out.update(batches=1, submitted=len(batch["lines"]))
                if batch["ended"]:
                    out.update(batch["fates"])
                else:
                    out["processing"] += len(batch["lines"])
        keys = ("batches", "submitted", "succeeded", "errored", "expired", "canceled", "processing")
        return {k: out[k] for k in keys}

    # -- routes ---------------------------------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        if not self._authorized(request):
            return Response(401, error_body("Incorrect API key provided.", "invalid_request_error", None,
                                            "invalid_api_key"))  # fmt: skip
        path, method = request.path, request.method
        if path == PATH and method == "POST":
            return self._direct(request)
        if path == "/v1/files" and method == "POST":
            return self._upload(request)
        if path.startswith("/v1/files/") and path.endswith("/content") and method == "GET":
            return self._content(path.split("/")[3])
        if path == "/v1/batches":
            return self._create(request) if method == "POST" else self._list(request)
        parts = path.removeprefix("/v1/batches/").split("/")
        if path.startswith("/v1/batches/") and len(parts) == 1 and method == "GET":
            return self._retrieve(parts[0])
        if path.startswith("/v1/batches/") and parts[1:] == ["cancel"] and method == "POST":
            return self._cancel(parts[0])
        return Response(404, error_body(f"Invalid URL ({method} {path})", "invalid_request_error"))

    def _authorized(self, request: Request) -> bool:
        auth = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
        return self.key is None or auth == f"Bearer {self.key}"

    def _direct(self, request: Request) -> Response:
        body = request.json() or {}
        answer = super().handle(request)
        with self._lock_b:
            self.sent[content_digest(body)] += 1
            self.direct[content_digest(body)] += 1
            if answer.status == 200:
                usage = answer.body["usage"]
                self.billed["direct"].update(replies=1, prompt_tokens=usage["prompt_tokens"],
                                             completion_tokens=usage["completion_tokens"])  # fmt: skip
        return answer

    def _upload(self, request: Request) -> Response:
        form = _multipart(request)
        with self._lock_b:
            file_id = f"file-fake{len(self.files) + 1:04d}"
            data, purpose = form.get("file", b""), form.get("purpose", b"").decode()
            shape = FileObject(id=file_id, bytes=len(data), created_at=int(time.time()), filename="input.jsonl",
                               object="file", purpose=purpose, status="processed")  # type: ignore[arg-type]  # fmt: skip
            self.files[file_id] = {"shape": shape, "data": data, "batch": None}
        return Response(200, shape.model_dump(mode="json", exclude_none=True))

    def _content(self, file_id: str) -> Response:
        with self._lock_b:
            found = self.files.get(file_id)
            if found is None:
                return Response(404, error_body(f"No such File object: {file_id}", "invalid_request_error", "id"))
            data, gated = found["data"], found["batch"] is not None and found["batch"]["gated"]
        if gated and found["shape"].purpose == "batch_output":
            self.content_asked.set()
            if self.content_gate is not None:
                self.content_gate.wait(timeout=120)
        return Response(200, None, {"Content-Type": "application/octet-stream"}, raw=data)

    def _create(self, request: Request) -> Response:
        body = request.json() or {}
        with self._lock_b:
            source = self.files.get(body.get("input_file_id", ""))
            if source is None:
                return Response(400, error_body("input_file_id: no such file", "invalid_request_error",
                                                "input_file_id"))  # fmt: skip
            if body.get("endpoint") != ENDPOINT or body.get("completion_window") != "24h":
                return Response(400, error_body("endpoint or completion_window not supported",
                                                "invalid_request_error", "endpoint"))  # fmt: skip
            number = next(self._numbers)
            lines = [json.loads(line) for line in source["data"].decode().splitlines() if line.strip()]
            batch = {
                "number": number, "id": f"batch_fake{number:04d}", "gated": number >= self.gate_from,
                "lines": lines, "input": source, "metadata": body.get("metadata"), "status": "validating",
                "ended": False, "fates": Counter(), "output": None, "error": None, "errors": None,
                "headers": request.headers, "created_at": int(time.time()),
            }  # fmt: skip
            self.batches[batch["id"]] = batch
            for line in lines:
                self.sent[content_digest(line.get("body") or {})] += 1
            answer = Response(200, self._shape(batch))
        if batch["gated"]:
            self.created.set()
            if self.create_gate is not None:
                self.create_gate.wait(timeout=120)
        return answer

    def _list(self, request: Request) -> Response:
        limit = int((request.query.get("limit") or ["20"])[0])
        if not 1 <= limit <= 100:
            return Response(400, error_body(f"limit: {limit} is not in 1..100", "invalid_request_error", "limit"))
        after = (request.query.get("after") or [None])[0]
        with self._lock_b:
            ids = list(reversed(self.batches))
            start = ids.index(after) + 1 if after in ids else 0
            page = [self._shape(self.batches[i]) for i in ids[start : start + limit]]
            more = start + limit < len(ids)
        first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
        return Response(200, {"object": "list", "data": page, "first_id": first, "last_id": last, "has_more": more})

    def _retrieve(self, batch_id: str) -> Response:
        with self._lock_b:
            batch = self.batches.get(batch_id)
            if batch is None:
                return Response(404, error_body(f"No batch found with id '{batch_id}'.", "invalid_request_error"))
            held = batch["gated"] and self.stop_at == batch["status"]
            if not held and not batch["ended"]:
                self._advance(batch)
            if batch["gated"] and self.stop_at == batch["status"]:
                self.reached.set()
            return Response(200, self._shape(batch))

    def _cancel(self, batch_id: str) -> Response:
        with self._lock_b:
            batch = self.batches.get(batch_id)
            if batch is None:
                return Response(404, error_body(f"No batch found with id '{batch_id}'.", "invalid_request_error"))
            if batch["ended"]:
                return Response(400, error_body(f"Cannot cancel a batch with status '{batch['status']}'.",
                                                "invalid_request_error"))  # fmt: skip
            batch["status"] = "cancelling"
            return Response(200, self._shape(batch))

    # -- the batch's life -----------------------------------------------------------------------------------
    def _advance(self, batch: dict[str, Any]) -> None:
        """One state further (the lock is held)."""
        status = batch["status"]
        if status == "cancelling":
            batch["status"], batch["ended"] = "cancelled", True
            batch["fates"]["canceled"] += len(batch["lines"])
        elif status == "validating":
            problem = self._invalid(batch)
            if problem:
                batch["status"], batch["ended"] = "failed", True
                batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": problem,
                                                                "line": 1, "param": None}]}  # fmt: skip
                batch["fates"]["errored"] += len(batch["lines"])
            else:
                batch["status"] = "in_progress"
        elif status == "in_progress":
            batch["status"] = "finalizing"
        else:
            self._end(batch)

    def _invalid(self, batch: dict[str, Any]) -> str | None:
        if self.fail_next > 0:
            self.fail_next -= 1
            return "the model gpt-5.4 is not available to batches of this project"
        if batch["input"]["shape"].purpose != "batch":
            return "the input file's purpose is not 'batch'"
        ids = [line.get("custom_id") for line in batch["lines"]]
        if len(set(ids)) != len(ids):
            return "custom_id values must be unique"
        if any(line.get("method") != "POST" or line.get("url") != ENDPOINT for line in batch["lines"]):
            return f"every line must be a POST to {ENDPOINT}"
        return None

    def _end(self, batch: dict[str, Any]) -> None:
        output, errors = [], []
        for index, line in enumerate(batch["lines"]):
            kind = self.fate(batch["number"], index, line["custom_id"]) if self.fate is not None else "succeeded"
            out: dict[str, Any] = {"id": f"batch_req_{batch['number']}_{index}", "custom_id": line["custom_id"]}
            if kind == "succeeded":
                body = json.dumps(line["body"]).encode()
                answer = FakeOpenAI.handle(self, Request("POST", PATH, {}, batch["headers"], body))
                usage = answer.body["usage"]
                self.billed["batch"].update(replies=1, prompt_tokens=usage["prompt_tokens"],
                                            completion_tokens=usage["completion_tokens"])  # fmt: skip
                output.append(out | {"response": {"status_code": 200, "request_id": f"req_{index}",
                                                  "body": answer.body}, "error": None})  # fmt: skip
            elif kind == "expired":
                errors.append(out | {"response": None, "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired."}})
            else:
                failure = error_body("The server had an error while processing your request.", "server_error")
                errors.append(out | {"response": {"status_code": 500, "request_id": f"req_{index}",
                                                  "body": failure}, "error": None})  # fmt: skip
            batch["fates"][kind] += 1
            self.outcomes[content_digest(line["body"])] = kind
        batch["output"] = self._file(batch, output)
        batch["error"] = self._file(batch, errors)
        batch["status"], batch["ended"] = ("expired" if batch["fates"]["expired"] else "completed"), True

    def _file(self, batch: dict[str, Any], lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        file_id = f"file-fake{len(self.files) + 1:04d}"
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        shape = FileObject(id=file_id, bytes=len(data), created_at=int(time.time()), object="file",
                           filename=f"{batch['id']}_output.jsonl", purpose="batch_output", status="processed")
        self.files[file_id] = {"shape": shape, "data": data, "batch": batch}
        return file_id

    def _shape(self, batch: dict[str, Any]) -> dict[str, Any]:
        n, fates, unknown = len(batch["lines"]), batch["fates"], ("validating", "failed")
        shape = Batch.model_validate(
            {
                "id": batch["id"], "object": "batch", "endpoint": ENDPOINT, "completion_window": "24h",
                "input_file_id": batch["input"]["shape"].id, "status": batch["status"],
                "created_at": batch["created_at"], "expires_at": batch["created_at"] + 86_400,
                "output_file_id": batch["output"], "error_file_id": batch["error"], "errors": batch["errors"],
                "metadata": batch["metadata"],
                "request_counts": {"total": 0, "completed": 0, "failed": 0} if batch["status"] in unknown else {
                    "total": n, "completed": fates["succeeded"], "failed": fates["errored"],
                },
            }  # fmt: skip
        )
        return shape.model_dump(mode="json", exclude_none=True)
