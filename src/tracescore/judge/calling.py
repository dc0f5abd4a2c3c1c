"""One judge call, as every provider makes it: retried in this layer only, billed whether or not it parses, parsed
into the request's pydantic model (nothing repaired or guessed), or a ``JudgeError`` of one line.

The SDKs' own retries are off (``max_retries=0``); tenacity retries what the provider calls transient (429, 5xx,
connection errors, a body cut short in transit) with exponential backoff that honours ``retry-after`` /
``retry-after-ms``, up to ``max_attempts`` attempts. A provider's judge (``judge/anthropic.py``,
``judge/openai.py``) says how to send, what is transient and how to read a reply; this module does the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pydantic

from tracescore.errors import ConfigError, JudgeError
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage
from tracescore.secrets import redact

MAX_ATTEMPTS = 4
WAIT_INITIAL = 0.5
WAIT_MAX = 30.0
TIMEOUT_SECONDS = 120.0
RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


def retry_after_header(headers: Any) -> float | None:
    """Seconds a 429/529 asks to wait (``retry-after-ms`` or ``retry-after``); None when it names none."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return None if headers is None else retry_after_header(headers)


class Caller:
    """The retry, billing and parsing of a judge's calls; ``usage`` is the judge's own.

    ``retryable(exc)``: whether a failed attempt is worth another; ``failures``: the exceptions that end a call as a
    ``JudgeError`` (the SDK's error tree, credential errors)."""

    def __init__(
        self,
        usage: JudgeUsage,
        *,
        retryable: Callable[[BaseException], bool],
        failures: tuple[type[BaseException], ...],
        max_attempts: int = MAX_ATTEMPTS,
        wait_initial: float = WAIT_INITIAL,
        wait_max: float = WAIT_MAX,
    ) -> None:
        if max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, got {max_attempts!r}")
        self.usage, self.retryable = usage, retryable
        self.failures: tuple[type[BaseException], ...] = (*failures, ValueError, json.JSONDecodeError)
        self.max_attempts, self.wait_initial, self.wait_max = max_attempts, wait_initial, wait_max

    def _wait(self, retry_state: Any) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        after = _retry_after(exc) if exc is not None else None
        if after is not None:
            return min(after, self.wait_max)
        attempt = int(retry_state.attempt_number)
        return float(min(self.wait_initial * 2 ** (attempt - 1), self.wait_max))

    def send(self, request: JudgeRequest, call: Callable[[], Any]) -> tuple[Any, int]:
        """``call()`` retried; (its result, the attempts made). ``JudgeError`` when it still fails."""
        from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt

        attempts = 0

        def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            self.usage.attempts += 1
            return call()

        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(self.retryable),
            reraise=False,
        )
        try:
            return retrying(attempt), attempts
        except RetryError as exc:
            last = exc.last_attempt.exception()
            raise self.failed(request, attempts, last) from last
        except self.failures as exc:
            raise self.failed(request, attempts, exc) from exc
        finally:
            self.usage.retries += max(0, attempts - 1)

    def parse(self, request: JudgeRequest, reply: JudgeReply, text: str, why: str = "") -> JudgeReply:
        """Bill ``reply`` (whether or not it parses), then validate ``text`` into the request's model; a reply that
        does not parse is a ``JudgeError`` (``why``: e.g. the stop reason, said when it did not end normally)."""
        self.usage.bill(reply)
        try:
            reply.output = request.output.model_validate_json(text)
        except pydantic.ValidationError as exc:
            stop = f" ({why})" if why else ""
            raise self.failed(request, reply.attempts, ValueError(f"no structured output{stop}: {exc}")) from exc
        return reply

    def failed(self, request: JudgeRequest, attempts: int, exc: BaseException | None) -> JudgeError:
        """The one line of a call that failed, counted and kept in ``usage.errors`` (secrets redacted)."""
        self.usage.failures += 1
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}" if status else type(exc).__name__
        detail = redact(str(exc).splitlines()[0][:200]) if exc is not None and str(exc) else ""
        message = f"{request.rubric.name} judge call failed after {attempts} attempt(s): {what}" + (
            f": {detail}" if detail else ""
        )
        self.usage.errors.append(message)
        return JudgeError(message)
