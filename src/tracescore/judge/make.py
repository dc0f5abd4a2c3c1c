"""The judge of ``[judge] provider``: the factory its entry point registers (``judge/registry.py``) builds it; each
SDK is imported only when its judge is built.
"""

from __future__ import annotations

from typing import Any

from tracescore.errors import ConfigError
from tracescore.judge.anthropic_batch import AnthropicBatches
from tracescore.judge.batches import BatchAPI
from tracescore.judge.openai_batch import OpenAIBatches
from tracescore.judge.protocol import Judge
from tracescore.judge.providers import DEFAULT_MODELS, ProviderSettings, refuse_batch
from tracescore.judge.registry import provider


def make_judge(settings: ProviderSettings, model: str | None = None, **options: Any) -> Judge:
    """The judge of ``settings`` (``model``: the provider's own id, its default when None; ``options``: api_key,
    timeout, http_client, ... as the provider's factory takes them)."""
    chosen = provider(settings.provider)
    model = model or chosen.model_for(settings)
    if not model:
        raise ConfigError(f"[judge] provider = {settings.provider!r} has no default model: set [judge] model")
    judge: Judge = chosen(settings, model, **options)
    return judge


def make_batches(settings: ProviderSettings, model: str | None = None) -> BatchAPI:
    """The batch API of ``settings`` for ``--judge-batch``: OpenAI's (``judge/openai_batch.py``) or Anthropic's
    (``judge/anthropic_batch.py``); ``ConfigError`` where there is none (``refuse_batch``)."""
    refuse_batch(settings)
    if settings.provider == "openai":
        return OpenAIBatches(settings, model)
    return AnthropicBatches(model or DEFAULT_MODELS["anthropic"])
