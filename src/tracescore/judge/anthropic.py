"""The default judge: the Messages API through the official SDK, with structured output, on Anthropic's API,
Amazon Bedrock or Google Vertex AI (``provider``: the SDK's ``Anthropic``, ``AnthropicBedrock`` or
``AnthropicVertex`` client, built in ``judge/providers.py``; the body, retries, cache and parsing are the same).

Retries, billing and parsing are ``judge/calling.py``'s (shared with the OpenAI judge): 429, 5xx, 529 (overloaded),
connection errors and truncated bodies are retried honouring ``retry-after``; a call that still fails raises
``JudgeError`` (judged scores absent with ``judge_error``, never ``unsupported``). The SDK is imported here, lazily,
so deterministic scoring never pays for it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

from tracescore.judge.calling import (
    MAX_ATTEMPTS,
    RETRY_STATUS,
    TIMEOUT_SECONDS,
    WAIT_INITIAL,
    WAIT_MAX,
    Caller,
)
from tracescore.judge.pricing import is_priced
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage
from tracescore.judge.providers import (
    DEFAULT_MODELS,
    Provider,
    ProviderSettings,
    auth_errors,
    check_model,
    identity,
    make_client,
)
from tracescore.judge.registry import judge_provider
from tracescore.judge.request import MAX_TOKENS, message_params, reply_text

# A current model: not in the SDK's deprecation table (2.14 listed claude-sonnet-4-5 until its EOL, 2026-11-30).
DEFAULT_MODEL = DEFAULT_MODELS["anthropic"]


class JudgeModelWarning(UserWarning):
    """The configured judge model is deprecated (the message names its end-of-life date)."""


def deprecated_models() -> Mapping[str, str]:
    """The SDK's own table of deprecated models and their end-of-life dates."""
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:  # pragma: no cover - an SDK without the table
        return {}
    return dict(DEPRECATED_MODELS)


def _retryable(exc: BaseException) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in RETRY_STATUS
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
        self.model = identity(provider, model, settings.resolved_region())
        self.usage = JudgeUsage(priced=is_priced(self.model))
        self.max_tokens = max_tokens
        import anthropic

        self._caller = Caller(
            self.usage,
            retryable=_retryable,
            failures=(anthropic.AnthropicError, *auth_errors(provider)),
            max_attempts=max_attempts,
            wait_initial=wait_initial,
            wait_max=wait_max,
        )
        self._client = make_client(  # ``http_client``: e.g. one whose hooks take a shared rate limiter
            settings, api_key=api_key, base_url=base_url, timeout=timeout, http_client=http_client
        )

    def close(self) -> None:
        """Close the SDK's HTTP connections."""
        self._client.close()

    def __enter__(self) -> AnthropicJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """One structured call, retried in this layer only; ``JudgeError`` when it cannot be answered."""
        params = message_params(request, self.model_id, self.max_tokens)

        def call() -> Any:
            with warnings.catch_warnings():  # the SDK repeats its deprecation warning on every call; we warned once
                warnings.simplefilter("ignore", DeprecationWarning)
                return self._client.messages.create(**params)

        message, attempts = self._caller.send(request, call)
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
        why = f"stop_reason {message.stop_reason!r}" if message.stop_reason != "end_turn" else ""
        return self._caller.parse(request, reply, reply_text(message), why)


_INSTALL = "pip install 'tracescore[judge]'"


@judge_provider(
    default_model=DEFAULT_MODELS["anthropic"],
    needs="ANTHROPIC_API_KEY",
    env=("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    key_env=lambda _: "ANTHROPIC_API_KEY",
    sdk="anthropic",
    install=_INSTALL,
    identity=lambda _, model: model,  # the model id alone: existing caches and calibrations keep their keys
)
def anthropic_judge(settings: ProviderSettings, model: str, **options: Any) -> AnthropicJudge:
    """Claude on Anthropic's API (the Messages API through the anthropic SDK)."""
    return AnthropicJudge(model=model, provider="anthropic", **options)


@judge_provider(
    default_model=DEFAULT_MODELS["bedrock"],
    needs="AWS credentials as boto3 finds them (keys, AWS_PROFILE, a role) or AWS_BEARER_TOKEN_BEDROCK; a region",
    env=("AWS_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"),
    sdk="anthropic",  # boto3 missing: a ConfigError naming the extra when the client is built
    install="pip install 'tracescore[bedrock]'",
    keys=("model", "region"),
    identity=lambda settings, model: identity("bedrock", model),
)
def bedrock_judge(settings: ProviderSettings, model: str, **options: Any) -> AnthropicJudge:
    """Claude on Amazon Bedrock (the anthropic SDK's AnthropicBedrock client, SigV4-signed)."""
    return AnthropicJudge(model=model, provider="bedrock", region=settings.region, **options)


@judge_provider(
    default_model=DEFAULT_MODELS["vertex"],
    needs="Google Application Default Credentials; a project and a region",
    env=("GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION"),
    sdk="anthropic",
    install="pip install 'tracescore[vertex]'",
    keys=("model", "region", "project"),
    identity=lambda settings, model: identity("vertex", model, settings.resolved_region()),
)
def vertex_judge(settings: ProviderSettings, model: str, **options: Any) -> AnthropicJudge:
    """Claude on Google Vertex AI (the anthropic SDK's AnthropicVertex client, a Bearer token from google-auth)."""
    return AnthropicJudge(model=model, provider="vertex", region=settings.region, project=settings.project,
                          **options)  # fmt: skip
