"""LangSmith: source (root runs with children), adapter, feedback sink, job wiring."""

from __future__ import annotations

from tracescore.platforms.base import Option, Platform
from tracescore.platforms.langsmith.settings import LangSmithSettings

PLATFORM = Platform(
    name="langsmith",
    adapter="tracescore.platforms.langsmith.adapter:langsmith_adapter",
    factory="tracescore.platforms.langsmith.platform:build",
    sections={"langsmith": LangSmithSettings},
    sdk="langsmith",
    push=True,
    credentials=("LANGSMITH_API_KEY", "LANGSMITH_ENDPOINT"),
    queue="tracescore.platforms.langsmith.platform:label_queue",
    dashboard="tracescore.platforms.langsmith.charts:build",
    options=(
        Option(
            "--project",
            "LangSmith: the project (session) name whose root runs are scored or queued [default: [source] project]",
            frozenset({"score", "init", "calibrate", "dashboard"}),
            required="the project name",
        ),
        Option(
            "--extend-trace-retention",
            "LangSmith: let feedback upgrade each trace to extended (400-day, billed) retention. Off by default.",
            frozenset({"score"}),
            is_flag=True,
        ),
    ),
    summary="a LangSmith project (--project; LANGSMITH_API_KEY, LANGSMITH_ENDPOINT), or with TRACES a run tree"
    " downloaded from it",
    server="tracescore.platforms.langsmith.platform:describe_server",
    download="tracescore.platforms.langsmith.adapter:downloaded",
)

EXPORT = Platform(
    name="langsmith-export",
    adapter="tracescore.platforms.langsmith.adapter:langsmith_adapter",
    factory="tracescore.platforms.langsmith.export:build",
    file=True,
    shards=True,
    sdk="pyarrow",
    extra="export",
    summary="a LangSmith bulk export (TRACES = its folder or s3://bucket/prefix of Parquet runs)",
)
MORE_PLATFORMS = (EXPORT,)
