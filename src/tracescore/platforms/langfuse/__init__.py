"""Langfuse: client (credentials, retries), source (whole traces of a window), adapter, score sink, job wiring."""

from __future__ import annotations

from tracescore.platforms.base import Platform
from tracescore.platforms.langfuse.settings import LangfuseSettings

PLATFORM = Platform(
    name="langfuse",
    adapter="tracescore.platforms.langfuse.adapter:langfuse_adapter",
    factory="tracescore.platforms.langfuse.platform:build",
    sections={"langfuse": LangfuseSettings},
    sdk="langfuse",
    push=True,
    credentials=("LANGFUSE_BASE_URL", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"),
    queue="tracescore.platforms.langfuse.platform:label_queue",
    dashboard="tracescore.platforms.langfuse.dashboards:build",
    summary="a Langfuse project (host from LANGFUSE_BASE_URL, keys from LANGFUSE_PUBLIC_KEY/_SECRET_KEY), or with"
    " TRACES a trace downloaded from it",
    download="tracescore.platforms.langfuse.adapter:downloaded",
)

EXPORT = Platform(
    name="langfuse-export",
    adapter="tracescore.platforms.langfuse.adapter:langfuse_adapter",
    factory="tracescore.platforms.langfuse.export:build",
    file=True,
    shards=True,
    sdk="pyarrow",
    extra="export",
    summary="a Langfuse blob-storage export (TRACES = its folder or s3://bucket/prefix; complete runs only)",
)
MORE_PLATFORMS = (EXPORT,)
