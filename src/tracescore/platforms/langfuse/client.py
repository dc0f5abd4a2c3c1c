"""The Langfuse connection shared by the Langfuse source and sink: credentials from the environment, the bare
``LangfuseAPI`` client (never the OpenTelemetry ``Langfuse()`` singleton), and which failures deserve a retry.

The SDK's own retry loop is switched off per request (``max_retries=0``) so that retries happen in one place,
bounded by ``RetryPolicy``, honouring ``Retry-After``, and covering what the SDK does not retry (timeouts, dropped
connections, a 2xx body cut short). The ``langfuse`` package is imported only when a client is made.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracescore.errors import ConfigError
from tracescore.retry import RetryPolicy, Verdict
from tracescore.secrets import redact
from tracescore.version import __version__

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI

DEFAULT_BASE_URL = "https://cloud.langfuse.com"
_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class LangfuseCredentials:
    """Keys and host, from ``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY``, ``LANGFUSE_BASE_URL``/``LANGFUSE_HOST``."""

    public_key: str
    secret_key: str
    base_url: str
    base_url_from: str = "LANGFUSE_BASE_URL"  # the variable the host came from (or "the default host")

    def __repr__(self) -> str:  # never show the secret
        return f"LangfuseCredentials(public_key={self.public_key!r}, base_url={self.base_url!r})"

    @property
    def where(self) -> str:
        """``Langfuse at <host> (<the variable it came from>)``, for messages (a password in the URL redacted)."""
        return redact(f"Langfuse at {self.base_url} ({self.base_url_from})")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> LangfuseCredentials:
        """Read the usual variables; a missing key names the variable to set."""
        env = os.environ if environ is None else environ
        missing = [n for n in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY") if not env.get(n)]
        if missing:
            raise ConfigError(
                f"{' and '.join(missing)} not set; export the project's API keys (Langfuse → Settings → API keys)"
                " and LANGFUSE_BASE_URL for a self-hosted or regional host"
            )
        origin = next((n for n in ("LANGFUSE_BASE_URL", "LANGFUSE_HOST") if env.get(n)), "the default host")
        base_url = env.get(origin) or DEFAULT_BASE_URL
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"{origin} {base_url!r} is not an http(s) URL, e.g. https://cloud.langfuse.com")
        return cls(env["LANGFUSE_PUBLIC_KEY"], env["LANGFUSE_SECRET_KEY"], base_url.rstrip("/"), origin)


def _rejected_keys(response: Any) -> None:
    """A 401/403 is the SDK's ``ApiError`` with its status whichever endpoint answered it: some SDK calls (the
    dashboards') cannot parse the body into their error model and raise a validation error instead, which would be
    retried as an unreadable answer. Rejected keys are never retried: one request, one line naming them."""
    from langfuse.api.core.api_error import ApiError

    if response.status_code in (401, 403):
        response.read()
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        raise ApiError(status_code=response.status_code, headers=dict(response.headers), body=body)


@contextmanager
def make_client(
    credentials: LangfuseCredentials, *, timeout: float = 30.0, on_request: Callable[[Any], None] | None = None
) -> Iterator[LangfuseAPI]:
    """The bare synchronous API client (no global tracer provider, no background exporter), closed on exit.

    ``on_request`` runs before every HTTP request (the job's request-rate limiter and request counter).
    """
    try:
        import httpx
        from langfuse.api import LangfuseAPI
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError("the langfuse source needs the langfuse SDK: pip install 'tracescore[langfuse]'") from exc
    hooks: dict[str, list[Callable[[Any], None]]] = {"response": [_rejected_keys]}
    if on_request is not None:
        hooks["request"] = [on_request]
    with httpx.Client(timeout=timeout, follow_redirects=True, event_hooks=hooks) as http:
        yield LangfuseAPI(
            base_url=credentials.base_url,
            username=credentials.public_key,
            password=credentials.secret_key,
            x_langfuse_public_key=credentials.public_key,
            x_langfuse_sdk_name="tracescore",
            x_langfuse_sdk_version=__version__,
            timeout=timeout,
            httpx_client=http,
        )


def request_options(timeout: float) -> dict[str, Any]:
    """Per-request options: the SDK's retries off (ours are the only layer), our timeout."""
    return {"max_retries": 0, "timeout_in_seconds": timeout}


def retry_policy(max_attempts: int, backoff: float = 0.5) -> RetryPolicy:
    """The Langfuse retry policy: bounded attempts, Retry-After honoured up to a minute, else doubling backoff."""
    return RetryPolicy(max_attempts=max_attempts, base_delay=backoff, max_delay=60.0)


def _retry_after(headers: Any) -> float | None:
    if not headers:
        return None
    lowered = {str(k).lower(): v for k, v in dict(headers).items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lowered.get(key)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except (TypeError, ValueError):
            return None
    return None


def classify_error(exc: BaseException) -> Verdict:
    """429/408/409/5xx, timeouts, dropped connections and a cut-short 2xx body are worth another attempt."""
    import httpx
    from langfuse.api.core.api_error import ApiError

    if isinstance(exc, ApiError):
        status = exc.status_code or 0
        if 200 <= status < 300:  # the SDK could not decode a 2xx body: truncated
            return Verdict(True, None, f"HTTP {status} with an unreadable (truncated) body")
        if status in _RETRY_STATUSES:
            return Verdict(True, _retry_after(exc.headers), f"HTTP {status}")
        return Verdict(False, None, describe_error(exc))
    if isinstance(exc, httpx.TimeoutException):
        return Verdict(True, None, f"timeout ({type(exc).__name__})")
    if isinstance(exc, httpx.TransportError):
        return Verdict(True, None, f"connection error ({type(exc).__name__}: {exc})")
    if isinstance(exc, ValueError):  # e.g. a body that is JSON but not the documented shape
        return Verdict(True, None, f"unreadable response ({exc})")
    return Verdict(False, None, f"{type(exc).__name__}: {exc}")


def describe_error(exc: BaseException) -> str:
    """One line for the user: the HTTP status and the server's message, never headers (they may echo auth)."""
    from langfuse.api.core.api_error import ApiError

    if isinstance(exc, ApiError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else body
        hint = ""
        if exc.status_code == 401:
            hint = "; check LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL (region/host)"
        return redact(f"HTTP {exc.status_code}: {str(message)[:300]}{hint}")
    return redact(f"{type(exc).__name__}: {str(exc)[:300]}")


def failure_line(doing: str, exc: BaseException, attempts: int, where: str = "Langfuse") -> str:
    """One line for a request that failed for good: what was being done, where (``LangfuseCredentials.where``), how
    many requests were sent, and the fix: rejected keys (401/403, never retried), a refused or unreachable host, or
    the server's own message."""
    import httpx
    from langfuse.api.core.api_error import ApiError

    sent = "the one request sent" if attempts == 1 else f"{attempts} attempts"
    status = exc.status_code if isinstance(exc, ApiError) else None
    if status in (401, 403):
        return redact(
            f"{where} rejected the API keys (HTTP {status}) after {sent}, to {doing}; check that LANGFUSE_PUBLIC_KEY"
            " and LANGFUSE_SECRET_KEY are this project's keys (Langfuse → Settings → API keys) for that host"
        )
    if isinstance(exc, httpx.ConnectError):
        what = "refused the connection" if "refused" in str(exc).lower() else f"could not be reached ({exc})"
        return redact(f"cannot {doing}: {where} {what} after {sent}; check the host and that the server is up")
    return redact(f"cannot {doing} from {where} after {sent}: {describe_error(exc)}")
