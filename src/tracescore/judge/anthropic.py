"""The default judge: the Messages API through the official SDK, with structured output, on Anthropic's API,
Amazon Bedrock or Google Vertex AI (``provider``: the SDK's ``Anthropic``, ``AnthropicBedrock`` or
``AnthropicVertex`` client, built in ``judge/providers.py``; the body, retries, cache and parsing are the same).

One retry layer only: the SDK's own retries are off (``max_retries=0``) and tenacity retries 429, 5xx, 529
(overloaded), connection errors and truncated bodies with exponential backoff that honours ``retry-after`` /
``retry-after-ms``, up to ``MAX_ATTEMPTS`` attempts. A call that still fails raises ``JudgeError`` (judged
scores absent with ``judge_error``, never ``unsupported``). The SDK is imported here, lazily, so deterministic
scoring never pays for it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

import pydantic

from tracescore.errors import ConfigError, JudgeError
from tracescore.judge.pricing import PRICES_PER_MTOK, estimate_cost, is_priced
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage
from tracescore.judge.providers import DEFAULT_MODELS, Provider, ProviderSettings, auth_errors, check_model, make_client
from tracescore.judge.request import MAX_TOKENS, message_params, reply_text
from tracescore.secrets import redact

__all__ = [
    "DEFAULT_MODEL",
    "MAX_ATTEMPTS",
    "PRICES_PER_MTOK",
    "AnthropicJudge",
    "JudgeModelWarning",
    "deprecated_models",
    "retry_after_header",
    "estimate_cost",
    "message_params",
]

# A current model: not in the SDK's deprecation table (2.14 listed claude-sonnet-4-5 until its EOL, 2026-11-30).
DEFAULT_MODEL = DEFAULT_MODELS["anthropic"]
MAX_ATTEMPTS = 4
WAIT_INITIAL = 0.5
WAIT_MAX = 30.0
TIMEOUT_SECONDS = 120.0
_RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class JudgeModelWarning(UserWarning):
    """The configured judge model is deprecated (the message names its end-of-life date)."""


def deprecated_models() -> Mapping[str, str]:
    """The SDK's own table of deprecated models and their end-of-life dates."""
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:  # pragma: no cover - an SDK without the table
        return {}
    return dict(DEPRECATED_MODELS)


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


def _retryable(exc: BaseException) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in _RETRY_STATUS
    # a connection error, or a 2xx body cut short in transit (JSON that does not even decode)
    return isinstance(exc, anthropic.APIConnectionError | json.JSONDecodeError)


class AnthropicJudge:
    """``Judge`` over ``client.messages.create`` with the one body of ``judge/request.py`` (structured output, prompt
    caching on the prefix); the reply is validated into the request's pydantic model after its usage is counted.

    ``model`` is the provider's own id (``DEFAULT_MODELS[provider]`` when None); ``self.model`` is the judge's
    identity (``providers.identity``: the cache key, the scores' ``judge_model``, the price). ``api_key``: the
    Anthropic key, a Bedrock API key, or a Vertex access token (each from its environment when None)."""

    def __init__(
        self,
        *,
        model: str | None = None,
        provider: Provider = "anthropic",
        region: str | None = None,
        project: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        wait_initial: float = WAIT_INITIAL,
        wait_max: float = WAIT_MAX,
        timeout: float = TIMEOUT_SECONDS,
        max_tokens: int = MAX_TOKENS,
        http_client: Any = None,
    ) -> None:
        if max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, got {max_attempts!r}")
        model = model or DEFAULT_MODELS[provider]
        check_model(provider, model)
        settings = ProviderSettings(provider, region, project)
        eol = deprecated_models().get(model)
        if eol:
            warnings.warn(
                JudgeModelWarning(
                    f"judge model {model!r} is deprecated and reaches end of life on {eol}; "
                    f"pick a current one with --judge-model (default {DEFAULT_MODELS[provider]!r})"
                ),
                stacklevel=2,
            )
        self.provider, self.model_id = provider, model
        self.model = settings.identity(model)
        self.usage = JudgeUsage(priced=is_priced(self.model))
        self.max_attempts = max_attempts
        self.wait_initial, self.wait_max = wait_initial, wait_max
        self.max_tokens = max_tokens
        self._client = make_client(  # ``http_client``: e.g. one whose hooks take a shared rate limiter
            settings, api_key=api_key, base_url=base_url, timeout=timeout, http_client=http_client
        )
        import anthropic

        self._failures: tuple[type[BaseException], ...] = (anthropic.AnthropicError, ValueError, *auth_errors(provider))

    def close(self) -> None:
        """Close the SDK's HTTP connections."""
        self._client.close()

    def __enter__(self) -> AnthropicJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait(self, retry_state: Any) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        after = _retry_after(exc) if exc is not None else None
        if after is not None:
            return min(after, self.wait_max)
        attempt = int(retry_state.attempt_number)
        return float(min(self.wait_initial * 2 ** (attempt - 1), self.wait_max))

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """One structured call, retried in this layer only; ``JudgeError`` when it cannot be answered."""
        from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt

        params = message_params(request, self.model_id, self.max_tokens)
        attempts = 0

        def call() -> Any:
            nonlocal attempts
            attempts += 1
            self.usage.attempts += 1
            with warnings.catch_warnings():  # the SDK repeats its deprecation warning on every call; we warned once
                warnings.simplefilter("ignore", DeprecationWarning)
                return self._client.messages.create(**params)

        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(_retryable),
            reraise=False,
        )
        try:
            message = retrying(call)
        except RetryError as exc:
            last = exc.last_attempt.exception()
            raise self._failed(request, attempts, last) from last
        except self._failures as exc:
            raise self._failed(request, attempts, exc) from exc
        finally:
            self.usage.retries += max(0, attempts - 1)
        usage = message.usage
        reply = JudgeReply(
            output=None,
            model=self.model,
            key=request.key(self.model),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
            attempts=attempts,
        )
        self.usage.bill(reply)  # billed, whether or not the reply parses
        try:
            reply.output = request.output.model_validate_json(reply_text(message))
        except pydantic.ValidationError as exc:
            stop = f" (stop_reason {message.stop_reason!r})" if message.stop_reason != "end_turn" else ""
            raise self._failed(request, attempts, ValueError(f"no structured output{stop}: {exc}")) from exc
        return reply

    def _failed(self, request: JudgeRequest, attempts: int, exc: BaseException | None) -> JudgeError:
        self.usage.failures += 1
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}" if status else type(exc).__name__
        detail = redact(str(exc).splitlines()[0][:200]) if exc is not None and str(exc) else ""
        message = f"{request.rubric.name} judge call failed after {attempts} attempt(s): {what}" + (
            f": {detail}" if detail else ""
        )
        self.usage.errors.append(message)
        return JudgeError(message)
