"""The span file as a platform: the span-file source and the OpenInference/GenAI adapter; no write-back."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tracescore.errors import ConfigError, InputError
from tracescore.platforms.base import Parts, PlatformContext
from tracescore.platforms.otel.adapter import otel_adapter
from tracescore.platforms.otel.spans import SpanFileSource


def build(context: PlatformContext) -> Parts:
    """The span file named by ``[source] path`` (relative to the config file) or by the command line."""
    if not context.path:
        raise ConfigError(f"[source] kind = 'otel' needs path = '<span file>'{context.where()}")
    path = Path(context.path)
    if context.config_dir is not None and not path.is_absolute():
        path = context.config_dir / path
    adapter = otel_adapter(context.mapping)
    return Parts(SpanFileSource(path), f"otel:{path.resolve()}", adapter, None, describe=f"otel:{context.path}")


_DOWNLOAD = "an OpenTelemetry span file"
_IDS = frozenset({"traceId", "trace_id", "context", "spanContext"})  # where a span's ids are (``spans.read_spans``)


def downloaded(document: object) -> tuple[str, list[object]]:
    """Whether a document is spans (OTLP JSON with ``resourceSpans``, or a list of spans with ids and attributes), so
    ``score FILE`` reads such a file as ``--source otel`` (whose file source reads it: ``spans.SpanFileSource``)."""
    items = document if isinstance(document, list) else None
    if isinstance(document, Mapping) and isinstance(document.get("resourceSpans"), list):
        return _DOWNLOAD, [document]
    if items and all(isinstance(i, Mapping) and "attributes" in i and _IDS.intersection(i) for i in items):
        return _DOWNLOAD, [document]
    raise InputError(f"not {_DOWNLOAD}: expected OTLP JSON with 'resourceSpans' or a JSON list of spans")
