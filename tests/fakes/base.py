"""A real HTTP server on loopback for contract tests, with request recording and fault injection.

Vendor fakes (Langfuse, LangSmith, Anthropic) subclass ``FakeServer`` and implement ``handle(request)``. Faults
are queued per route prefix and consumed one per matching request, before the handler runs:

    server.faults.add("/api/public/scores", Fault.rate_limited(retry_after=1))
    server.faults.add("/api/public/v2/observations", Fault.status(500), Fault.truncated(), Fault.timeout(3))
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Response:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # sent as is (e.g. a truncated body) when set


@dataclass
class Fault:
    """One injected failure: a status (with headers), a delay longer than the client's timeout, or a cut body."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False
    body: Any = None

    @classmethod
    def rate_limited(cls, retry_after: float = 1) -> Fault:
        return cls(status=429, headers={"Retry-After": str(retry_after)}, body={"message": "rate limited"})

    @classmethod
    def http(cls, status: int, body: Any = None, **headers: str) -> Fault:
        return cls(status=status, headers=headers, body=body if body is not None else {"message": f"error {status}"})

    @classmethod
    def timeout(cls, seconds: float) -> Fault:
        """Sleep ``seconds`` before answering normally (longer than the client's timeout: the client gives up)."""
        return cls(delay=seconds)

    @classmethod
    def truncated(cls) -> Fault:
        """Answer 200 with the real body cut in half."""
        return cls(truncate=True)


class FaultQueue:
    """Faults waiting per route prefix, consumed in order by matching requests; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Fault]] = defaultdict(deque)
        self.injected: list[tuple[str, Fault]] = []

    def add(self, prefix: str, *faults: Fault) -> None:
        with self._lock:
            self._queues[prefix].extend(faults)

    def take(self, path: str) -> Fault | None:
        with self._lock:
            for prefix, queue in self._queues.items():
                if path.startswith(prefix) and queue:
                    fault = queue.popleft()
                    self.injected.append((path, fault))
                    return fault
        return None

    def pending(self) -> int:
        with self._lock:
            return sum(len(q) for q in self._queues.values())

    def clear(self) -> None:
        """Drop the faults not yet taken (an outage ends)."""
        with self._lock:
            self._queues.clear()


class FakeServer:
    """Threaded loopback HTTP server; ``url`` is its base URL. Use as a context manager."""

    def __init__(self, latency: float = 0.0) -> None:
        self.requests: list[Request] = []
        self.faults = FaultQueue()
        self.latency = latency
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms a request
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                request = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), body)
                with server._lock:
                    server.requests.append(request)
                if server.latency:
                    time.sleep(server.latency)
                fault = server.faults.take(parts.path)
                if fault is not None and fault.delay:
                    time.sleep(fault.delay)
                    fault = None if not (fault.status or fault.truncate) else fault
                if fault is not None and fault.status:
                    self._send(Response(fault.status, fault.body, fault.headers))
                    return
                try:
                    response = server.handle(request)
                except Exception as exc:  # a bug in the fake shows as a 500 with the reason
                    response = Response(500, {"message": f"fake server error: {type(exc).__name__}: {exc}"})
                if fault is not None and fault.truncate:  # the real body (a raw one, e.g. a file, as it is) cut
                    payload = response.raw if response.raw is not None else json.dumps(response.body).encode()
                    response = Response(response.status, None, response.headers, raw=payload[: len(payload) // 2])
                self._send(response)

            def _send(self, response: Response) -> None:
                payload = response.raw if response.raw is not None else (
                    b"" if response.body is None else json.dumps(response.body).encode())
                self.send_response(response.status)
                headers = {"Content-Type": "application/json"} | response.headers
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # a short poll interval: shutdown() otherwise waits up to 0.5 s per server
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def handle(self, request: Request) -> Response:
        raise NotImplementedError

    def requests_to(self, path_prefix: str, method: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests
                    if r.path.startswith(path_prefix) and (method is None or r.method == method)]

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
