"""The judge of a configured provider (``[judge] provider``): ``OpenAIJudge`` for ``openai``, else ``AnthropicJudge``
on Anthropic's API, Bedrock or Vertex AI. Each SDK is imported only when its judge is built.
"""

from __future__ import annotations

from typing import Any

from tracescore.judge.anthropic import AnthropicJudge
from tracescore.judge.anthropic_batch import AnthropicBatches
from tracescore.judge.batches import BatchAPI
from tracescore.judge.openai import OpenAIJudge
from tracescore.judge.openai_batch import OpenAIBatches
from tracescore.judge.protocol import Judge
from tracescore.judge.providers import DEFAULT_MODELS, ProviderSettings, refuse_batch

__all__ = ["make_batches", "make_judge"]


def make_judge(settings: ProviderSettings, model: str | None = None, **options: Any) -> Judge:
    """The judge of ``settings`` (``options``: api_key, timeout, max_attempts, ... as each judge takes them)."""
    if settings.provider == "openai":
        return OpenAIJudge(model=model, base_url=settings.base_url, api_key_env=settings.api_key_env,
                           structured=settings.structured, **options)  # fmt: skip
    return AnthropicJudge(model=model, provider=settings.provider, region=settings.region, project=settings.project,
                          **options)  # fmt: skip


def make_batches(settings: ProviderSettings, model: str | None = None) -> BatchAPI:
    """The batch API of ``settings`` for ``--judge-batch``: OpenAI's (``judge/openai_batch.py``) or Anthropic's
    (``judge/anthropic_batch.py``); ``ConfigError`` where there is none (``refuse_batch``)."""
    refuse_batch(settings)
    if settings.provider == "openai":
        return OpenAIBatches(settings, model)
    return AnthropicBatches(model or DEFAULT_MODELS["anthropic"])
