"""The judge on the Chat Completions API through the ``openai`` SDK: OpenAI's API or any OpenAI-compatible server
(vLLM, Ollama, LiteLLM, llama.cpp, LM Studio) at ``base_url``.

The body is ``judge/request.py``'s ``chat_params`` (the Anthropic judge's texts); the reply's schema goes as a strict
``response_format`` json_schema. A server that refuses it (a 400 naming ``response_format``) gets the schema in the
system prompt from then on, and so does ``structured=False`` from the start; either way the reply's JSON is parsed by
the same pydantic model and nothing is repaired: a reply that does not parse is a ``JudgeError``. Retries, billing
and parsing are ``judge/calling.py``'s, as for the Anthropic judge. Needs ``pip install 'tracescore[openai]'``.

Usage: ``prompt_tokens`` includes the cached part; the reply counts ``input_tokens`` without it and
``cache_read_tokens`` = ``prompt_tokens_details.cached_tokens`` (priced at the model's cached-input rate).
"""

from __future__ import annotations

import json
import os
from typing import Any

from tracescore.errors import ConfigError
from tracescore.judge.calling import MAX_ATTEMPTS, RETRY_STATUS, TIMEOUT_SECONDS, WAIT_INITIAL, WAIT_MAX, Caller
from tracescore.judge.pricing import is_priced
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage
from tracescore.judge.providers import DEFAULT_MODELS, ProviderSettings, identity, openai_host
from tracescore.judge.registry import judge_provider
from tracescore.judge.request import MAX_TOKENS, chat_params


def sdk(provider: str) -> Any:
    """The ``openai`` module; ConfigError naming the extra when it is not installed."""
    try:
        import openai
    except ImportError as exc:
        raise ConfigError(
            f"[judge] provider = {provider!r} needs the openai SDK ({exc}): pip install 'tracescore[openai]'"
        ) from None
    return openai


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUS
    # a connection error or timeout, or a 2xx body cut short in transit (JSON that does not even decode)
    return isinstance(exc, openai.APIConnectionError | json.JSONDecodeError)


def _refuses_response_format(exc: BaseException) -> bool:
    """A 400 whose error names ``response_format`` (its ``param`` or its message): the server does not take it."""
    import openai

    if not isinstance(exc, openai.BadRequestError):
        return False
    body = exc.body if isinstance(exc.body, dict) else {}
    return body.get("param") == "response_format" or "response_format" in str(exc)


class OpenAIJudge:
    """``Judge`` over ``client.chat.completions.create``. ``self.model`` is the judge's identity (``openai:<model>``,
    ``openai:<host>:<model>`` on another server: the cache key, the scores' ``judge_model``, the price).

    The key: ``api_key``, else the variable ``api_key_env`` names, else ``OPENAI_API_KEY``; without one, OpenAI's API
    is a ``ConfigError`` and another server is sent no ``Authorization`` header (a local vLLM or Ollama asks none).
    ``judge/azure.py``'s judge is this one on the SDK's ``AzureOpenAI`` client (``_start``)."""

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        structured: bool = True,
        max_attempts: int = MAX_ATTEMPTS,
        wait_initial: float = WAIT_INITIAL,
        wait_max: float = WAIT_MAX,
        timeout: float = TIMEOUT_SECONDS,
        max_tokens: int = MAX_TOKENS,
        http_client: Any = None,
    ) -> None:
        openai = sdk("openai")
        url = _base_url(base_url)
        host = openai_host(url)
        model_id = model or DEFAULT_MODELS["openai"]
        variable = api_key_env or "OPENAI_API_KEY"
        key = api_key or os.environ.get(variable) or None
        if key is None and host is None:
            raise ConfigError(f"no OpenAI API key: set {variable} (or run with --no-judge)")
        client = openai.OpenAI(
            api_key=key if key is not None else (lambda: ""),
            base_url=url,
            timeout=timeout,
            max_retries=0,  # one retry layer: ours
            http_client=http_client,
        )
        # without a key: no Authorization header at all (the SDK's explicit omission, per request)
        headers: dict[str, Any] = {} if key is not None else {"Authorization": openai.omit}
        self._start(client, model_id, identity("openai", model_id, host), own_api=host is None, headers=headers,
                    structured=structured, max_tokens=max_tokens, failures=(openai.OpenAIError,),
                    max_attempts=max_attempts, wait_initial=wait_initial, wait_max=wait_max)  # fmt: skip

    def _start(
        self,
        client: Any,
        model_id: str,
        judge_model: str,
        *,
        own_api: bool,
        structured: bool,
        max_tokens: int,
        failures: tuple[type[BaseException], ...],
        headers: dict[str, Any] | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        wait_initial: float = WAIT_INITIAL,
        wait_max: float = WAIT_MAX,
    ) -> None:
        """The judge over ``client`` (an ``openai.OpenAI`` or ``openai.AzureOpenAI``): ``model_id`` is sent,
        ``judge_model`` is its identity; ``own_api``: OpenAI's API (``max_completion_tokens``)."""
        self._client, self.model_id, self.model = client, model_id, judge_model
        self.usage = JudgeUsage(priced=is_priced(self.model))
        self.max_tokens, self.structured, self._own_api = max_tokens, structured, own_api
        self._headers = headers or {}
        self._caller = Caller(self.usage, retryable=_retryable, failures=failures, max_attempts=max_attempts,
                              wait_initial=wait_initial, wait_max=wait_max)  # fmt: skip

    def close(self) -> None:
        """Close the SDK's HTTP connections."""
        self._client.close()

    def __enter__(self) -> OpenAIJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _params(self, request: JudgeRequest) -> dict[str, Any]:
        params = chat_params(request, self.model_id, self.max_tokens, structured=self.structured, openai=self._own_api)
        return params | {"extra_headers": self._headers} if self._headers else params

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """One call, retried in this layer only; ``JudgeError`` when it cannot be answered or does not parse."""
        params = self._params(request)
        sent = 0

        def call() -> Any:
            nonlocal params, sent
            try:
                return self._client.chat.completions.create(**params)
            except Exception as exc:
                if not (self.structured and _refuses_response_format(exc)):
                    raise
            self.structured = False  # said once, then every call of this judge puts the schema in the prompt
            params = self._params(request)
            sent += 1
            self.usage.attempts += 1
            return self._client.chat.completions.create(**params)

        completion, attempts = self._caller.send(request, call)
        usage = completion.usage
        cached = (usage.prompt_tokens_details.cached_tokens or 0) if usage and usage.prompt_tokens_details else 0
        reply = JudgeReply(
            output=None,
            model=self.model,
            key=request.key(self.model),
            input_tokens=(usage.prompt_tokens - cached) if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            cache_read_tokens=cached,
            attempts=attempts + sent,
        )
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice is not None else None
        if message is not None and message.refusal:
            return self._caller.parse(request, reply, "", f"refused: {message.refusal[:120]}")
        why = f"finish_reason {choice.finish_reason!r}" if choice is not None and choice.finish_reason != "stop" else ""
        return self._caller.parse(request, reply, (message.content if message is not None else None) or "", why)


def _base_url(configured: str | None) -> str | None:
    """``[judge] base_url``, else ``OPENAI_BASE_URL`` (None: OpenAI's API)."""
    return configured or os.environ.get("OPENAI_BASE_URL") or None


def _key_env(settings: ProviderSettings) -> str | None:
    """The variable that must hold the key: none for another server (a local vLLM or Ollama asks none)."""
    return None if openai_host(_base_url(settings.base_url)) is not None else (settings.api_key_env or "OPENAI_API_KEY")


def _identity(settings: ProviderSettings, model: str) -> str:
    return identity("openai", model, openai_host(_base_url(settings.base_url)))


@judge_provider(
    default_model=DEFAULT_MODELS["openai"],
    needs="OPENAI_API_KEY (or the variable [judge] api_key_env names); none for a server that asks none",
    env=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    key_env=_key_env,
    sdk="openai",
    install="pip install 'tracescore[openai]'",
    keys=("model", "base_url", "api_key_env", "structured"),
    identity=_identity,
)
def openai_judge(settings: ProviderSettings, model: str, **options: Any) -> OpenAIJudge:
    """The Chat Completions API of OpenAI or any OpenAI-compatible server (vLLM, Ollama, LiteLLM, llama.cpp, LM
    Studio) at [judge] base_url, through the openai SDK."""
    return OpenAIJudge(model=model, base_url=settings.base_url, api_key_env=settings.api_key_env,
                       structured=settings.structured, **options)  # fmt: skip
