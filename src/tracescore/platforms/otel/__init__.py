"""OpenTelemetry / OpenInference: a file of exported spans (OTLP JSON or flat spans), one trace per traceId."""

from __future__ import annotations

from tracescore.platforms.base import Platform

PLATFORM = Platform(
    name="otel",
    adapter="tracescore.platforms.otel.adapter:otel_adapter",
    factory="tracescore.platforms.otel.platform:build",
    file=True,
    summary="an OTLP JSON / OpenInference span file (collector or Phoenix export), one trace per traceId",
    download="tracescore.platforms.otel.platform:downloaded",
)
