"""A loopback web site for the link checker: one path per case (alive, redirects, 404, 410, 401, 403, 429, a HEAD
the server refuses, a page slower than the client's timeout). Counts requests per (method, path) and the most
requests it ever had in flight at once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUTES: dict[str, tuple[int, dict[str, str]]] = {
    "/ok": (200, {}),
    "/moved": (301, {"Location": "/ok"}),
    "/chain": (302, {"Location": "/moved"}),
    "/moved-dead": (301, {"Location": "/missing"}),
    "/missing": (404, {}),
    "/gone": (410, {}),
    "/auth": (401, {}),
    "/forbidden": (403, {}),
    "/limited": (429, {"Retry-After": "60"}),
    "/broken": (500, {}),
}


class FakeSite:
    """``ThreadingHTTPServer`` on 127.0.0.1 answering HEAD and GET per ``ROUTES``; ``/no-head`` is 405 to HEAD and 200
    to GET; ``/slow`` answers after ``slow_seconds``; ``/hold`` after ``hold_seconds`` (to see requests overlap)."""

    def __init__(self, *, slow_seconds: float = 2.0, hold_seconds: float = 0.05) -> None:
        self.hits: Counter[tuple[str, str]] = Counter()
        self.inflight = self.max_inflight = 0
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                path = self.path.split("?")[0]
                with site._lock:
                    site.hits[(self.command, path)] += 1
                    site.inflight += 1
                    site.max_inflight = max(site.max_inflight, site.inflight)
                try:
                    if path == "/slow":
                        time.sleep(slow_seconds)
                    if path.startswith("/hold"):
                        time.sleep(hold_seconds)
                finally:
                    # counted out before the answer is sent: a client's next request can only follow its answer,
                    # so what overlaps here is what the client had in flight (counted after the write, a handler
                    # descheduled under load would still count while the client's next request arrived)
                    with site._lock:
                        site.inflight -= 1
                try:
                    status, headers = ROUTES.get(path, (200 if path.startswith("/hold") else 404, {}))
                    if path == "/no-head":
                        status = 405 if self.command == "HEAD" else 200
                    body = b"" if self.command == "HEAD" else b"page"
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", "4")
                    self.end_headers()
                    if body:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_HEAD = _serve

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (the timeout case) is expected, not worth a traceback

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class FrozenClock:
    """Time stands still; every sleep is recorded instead of slept."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def __call__(self) -> float:
        return 100.0

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
