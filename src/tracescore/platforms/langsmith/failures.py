"""What a failed LangSmith request was, said once and in full: the endpoint, the status, the server's whole detail.

The v1 ``Client`` raises ``LangSmithError`` subclasses whose message repeats ``repr`` of a ``requests.HTTPError``
(the reply's body cut into the tuple); the generated ``Langsmith`` client raises ``APIStatusError`` with the
``httpx`` response. Both keep the response on the exception or on the one it was raised from, so the status and the
detail come from the reply itself. A 4xx other than 408 (timeout), 409 (conflict) and 429 (rate limit) is a refusal
that no retry can change: ``permanent`` tells the callers to send it once and say so.
"""

from __future__ import annotations

import json
from typing import Any

from tracescore.secrets import HIDDEN, redact

RETRYABLE_4XX = frozenset({408, 409, 429})
"""The client errors a later attempt may get past (timeout, conflict, rate limit); every other 4xx is final."""
_DEPTH = 5


def _response(exc: BaseException) -> Any:
    """The HTTP response behind ``exc`` (on it or on the exception it was raised from), or None."""
    seen: BaseException | None = exc
    for _ in range(_DEPTH):
        if seen is None:
            return None
        response = getattr(seen, "response", None)
        if response is not None and isinstance(getattr(response, "status_code", None), int):
            return response
        seen = seen.__cause__ or seen.__context__
    return None


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of the reply that failed, or None (no reply: a timeout, a refused connection)."""
    response = _response(exc)
    if response is not None:
        return int(response.status_code)
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def permanent(exc: BaseException) -> bool:
    """Whether no retry can change the answer: a 4xx other than 408, 409 and 429."""
    status = status_of(exc)
    return status is not None and 400 <= status < 500 and status not in RETRYABLE_4XX


def _detail(response: Any) -> str:
    """The server's words, whole: the ``detail``/``message``/``error`` of a JSON body, else the body as sent."""
    try:
        text = str(response.text or "")
    except Exception:  # a body that cannot be decoded: the status says enough
        return ""
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip()
    if isinstance(body, dict):
        for key in ("detail", "message", "error"):
            if body.get(key):
                found = body[key]
                return found if isinstance(found, str) else json.dumps(found, sort_keys=True)
    return text.strip()


def _endpoint(response: Any) -> str:
    request = getattr(response, "request", None)
    method = str(getattr(request, "method", "") or "")
    url = str(getattr(request, "url", "") or getattr(response, "url", "") or "")
    path = url.split("://", 1)[-1]
    path = "/" + path.split("/", 1)[1] if "/" in path else ""
    return f"{method} {path.split('?', 1)[0]}".strip()


def describe(exc: BaseException, *, secret: str | None = None) -> str:
    """One line: ``POST /feedback -> 400 Bad Request: <the server's full detail>`` (redacted: no credential of the
    environment, nor ``secret``, the client's own key); without a reply, the exception's first line."""
    response = _response(exc)
    if response is not None:
        reason = str(getattr(response, "reason", "") or getattr(response, "reason_phrase", "") or "")
        head = f"{_endpoint(response)} -> {response.status_code} {reason}".strip()
        detail = " ".join(_detail(response).split())
        text = f"{head}: {detail}" if detail else head
    else:
        first = str(exc).strip().splitlines()
        text = f"{type(exc).__name__}: {first[0]}" if first else type(exc).__name__
    text = redact(text)
    return text.replace(secret, HIDDEN) if secret and len(secret) >= 6 else text


def reach_line(exc: BaseException, endpoint: str) -> str | None:
    """The fix for a request that could not get through, as the Langfuse client says it: the API key rejected
    (401/403, with the variable to check), or the host refusing or not answering (with the endpoint); None for any
    other failure (the caller then says the server's own answer)."""
    from langsmith.utils import LangSmithAuthError, LangSmithConnectionError

    status = status_of(exc)
    if status in (401, 403) or isinstance(exc, LangSmithAuthError):
        return redact(f"LangSmith at {endpoint} rejected the API key (HTTP {status or 401}); check that"
                      " LANGSMITH_API_KEY is a key of this workspace, for that endpoint (region)")
    if status is None and isinstance(exc, LangSmithConnectionError | ConnectionError):
        what = "refused the connection" if "refused" in str(exc).lower() else "could not be reached"
        return redact(f"LangSmith at {endpoint} {what}; check LANGSMITH_ENDPOINT and that the server is up")
    return None
