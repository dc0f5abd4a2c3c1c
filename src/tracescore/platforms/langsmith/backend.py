"""Which backend a LangSmith deployment serves run queries from, and which failed reads a retry cannot fix.

LangSmith is moving run queries from ClickHouse to SmithDB. ``GET /info`` says where a deployment stands in its
``instance_flags``, read as the SDK reads them (``langsmith._internal._v2_migration_utils.get_query_backend``):
``ch_query_enabled`` is on when absent (older servers predate the flag), ``sdb_query_enabled`` off when absent.

- ``clickhouse_only``: only the v1 ``POST /runs/query`` (``Client.list_runs``, deprecated, removed after
  2027-01-31) answers; older self-hosted servers;
- ``dual``: both answer; tracescore reads through ``POST /api/v2/runs/query``;
- ``smithdb_only``: only ``/api/v2/runs/query`` answers (v1 queries are refused with a 400).

The info is read once per client (``Client.info`` caches it, and the SDK's own checks use the same copy).

A failed request is *permanent* when it ended in a 4xx other than 408, 409 and 429: sending it again gets the
same answer, so it is sent once and reported with the endpoint, the status and the server's whole detail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tracescore.secrets import redact

CLICKHOUSE_ONLY = "clickhouse_only"
DUAL = "dual"
SMITHDB_ONLY = "smithdb_only"
BACKENDS = (CLICKHOUSE_ONLY, DUAL, SMITHDB_ONLY)
RETRIABLE_4XX = frozenset({408, 409, 429})
"""The client errors a later attempt can get past (timeout, conflict, rate limit); every other 4xx is final."""


def query_backend(instance_flags: Any) -> str:
    """``clickhouse_only``, ``dual`` or ``smithdb_only`` from ``/info``'s ``instance_flags`` (absent: defaults)."""
    flags = instance_flags if isinstance(instance_flags, dict) else {}
    ch_enabled = bool(flags.get("ch_query_enabled", True))
    sdb_enabled = bool(flags.get("sdb_query_enabled", False))
    if sdb_enabled:
        return DUAL if ch_enabled else SMITHDB_ONLY
    return CLICKHOUSE_ONLY


def detect_backend(client: Any) -> tuple[str, str | None]:
    """(backend, note) of the client's deployment; the note says when ``/info`` could not be read.

    ``Client.info`` logs and swallows a failed ``/info`` (an empty info is all it keeps): then v1 is assumed, as the
    SDK assumes, and the note says so — a v1 refusal that follows is reported with the server's detail.
    """
    info = client.info
    if not getattr(info, "version", "") and getattr(info, "instance_flags", None) is None:
        return CLICKHOUSE_ONLY, (
            f"LangSmith /info of {redact(str(client.api_url))} could not be read; assuming the clickhouse_only query "
            "backend (v1 reads)"
        )
    return query_backend(info.instance_flags), None


@dataclass(frozen=True)
class HttpFailure:
    """A request the server answered with an error: where it went, the status, and what the server said."""

    method: str
    path: str
    status: int
    detail: str

    @property
    def permanent(self) -> bool:
        """A 4xx other than 408/409/429: the same request gets the same answer."""
        return 400 <= self.status < 500 and self.status not in RETRIABLE_4XX

    def __str__(self) -> str:
        return redact(f"{self.method} {self.path} answered HTTP {self.status}: {self.detail}")


def http_failure(exc: BaseException | None) -> HttpFailure | None:
    """The HTTP answer behind an SDK error (the v1 client's ``requests`` error or the generated client's
    ``APIStatusError``), found along the exception's cause/context chain; None when no server answered."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            request = getattr(response, "request", None)
            method = str(getattr(request, "method", "") or "?")
            url = str(getattr(request, "url", "") or "")
            return HttpFailure(method, _path(url), status, _detail(response))
        exc = exc.__cause__ or exc.__context__
    return None


def _path(url: str) -> str:
    return urlsplit(url).path or url


def _detail(response: Any) -> str:
    """The server's whole message: ``detail``/``message``/``error`` of a JSON body, else the body text."""
    try:
        text = str(response.text)
    except Exception:  # an unreadable body (already consumed, bad encoding): say so, never crash the report
        return "(no readable body)"
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip() or "(empty body)"
    if isinstance(body, dict):
        for key in ("detail", "message", "error"):
            if body.get(key):
                value = body[key]
                return value if isinstance(value, str) else json.dumps(value)
    return text.strip()


def read_errors() -> tuple[type[BaseException], ...]:
    """What a failed read raises: the v1 client's errors, the generated client's, the transport's, a cut body."""
    import httpx
    from langsmith import APIError
    from langsmith.utils import LangSmithError

    return (LangSmithError, APIError, httpx.HTTPError, OSError, ValueError)


@dataclass
class ReadStats:
    """What the source did: the deployment's query backend, the API it read through, notes for the run summary."""

    backend: str | None = None
    api: str | None = None
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def as_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "api": self.api, "notes": list(self.notes)}


V1_API = "v1 POST /runs/query (Client.list_runs)"
V2_API = "v2 POST /api/v2/runs/query (Langsmith.runs.query_v2)"


def deprecation_note(message: str) -> str:
    return (
        f"LangSmith query backend clickhouse_only: runs are read with the v1 Client.list_runs(), and the langsmith "
        f"SDK warns: {message} — on a deployment that serves SmithDB queries (LangSmith 0.16+, dual or smithdb_only) "
        "tracescore reads through /api/v2/runs/query instead"
    )
