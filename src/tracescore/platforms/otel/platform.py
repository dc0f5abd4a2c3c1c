"""The span file as a platform: the span-file source and the OpenInference/GenAI adapter; no write-back."""

from __future__ import annotations

from pathlib import Path

from tracescore.errors import ConfigError
from tracescore.platforms.base import Parts, PlatformContext
from tracescore.platforms.otel.adapter import otel_adapter
from tracescore.platforms.otel.spans import SpanFileSource

__all__ = ["build"]


def build(context: PlatformContext) -> Parts:
    """The span file named by ``[source] path`` (relative to the config file) or by the command line."""
    if not context.path:
        raise ConfigError(f"[source] kind = 'otel' needs path = '<span file>'{context.where()}")
    path = Path(context.path)
    if context.config_dir is not None and not path.is_absolute():
        path = context.config_dir / path
    adapter = otel_adapter(context.mapping)
    return Parts(SpanFileSource(path), f"otel:{path.resolve()}", adapter, None, describe=f"otel:{context.path}")
