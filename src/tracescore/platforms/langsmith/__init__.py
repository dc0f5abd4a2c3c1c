"""LangSmith: source (root runs with children), adapter, feedback sink, job wiring."""

from __future__ import annotations

from tracescore.platforms.base import Platform
from tracescore.platforms.langsmith.settings import LangSmithSettings

PLATFORM = Platform(
    name="langsmith",
    adapter="tracescore.platforms.langsmith.adapter:langsmith_adapter",
    factory="tracescore.platforms.langsmith.platform:build",
    sections={"langsmith": LangSmithSettings},
    sdk="langsmith",
    summary="a LangSmith project (--project; LANGSMITH_API_KEY, LANGSMITH_ENDPOINT)",
    server="tracescore.platforms.langsmith.platform:describe_server",
)

EXPORT = Platform(
    name="langsmith-export",
    adapter="tracescore.platforms.langsmith.adapter:langsmith_adapter",
    factory="tracescore.platforms.langsmith.export:build",
    file=True,
    sdk="pyarrow",
    extra="export",
    summary="a LangSmith bulk export (TRACES = its folder or s3://bucket/prefix of Parquet runs)",
)
MORE_PLATFORMS = (EXPORT,)
