"""Build the pieces of a job from ``tracescore.toml``: source (+ its stable key), adapter, platform sink, scorers.

Platform SDKs are imported here lazily, only for the platform the file names.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from tracescore.adapters import Adapter, get_adapter
from tracescore.config import Config
from tracescore.errors import ConfigError
from tracescore.job.engine import Limits, Sink, UsageMeter
from tracescore.job.settings import JobSettings, ScoringSettings, SourceSettings, fingerprint
from tracescore.limits import RateLimiter
from tracescore.scorers import Scorer, default_scorers
from tracescore.sources.base import Source
from tracescore.sources.jsonl import JsonlSource

__all__ = ["JobSetup", "PlatformFactory", "build_setup", "register_platform"]


@dataclass
class JobSetup:
    """Everything a run or backfill needs, built once from the config."""

    source: Source
    source_key: str
    adapter: Adapter
    scorers: list[Scorer]
    sink: Sink | None
    store_path: Path
    limits: Limits
    lookback_minutes: float
    chunks: int
    fingerprint: str
    limiter: RateLimiter
    usage: UsageMeter | None = None
    resources: ExitStack = field(default_factory=ExitStack)

    def close(self) -> None:
        """Close the platform clients."""
        self.resources.close()


PlatformFactory = Callable[[Config, RateLimiter, bool, ExitStack], tuple[Source, str, Adapter, "Sink | None"]]
"""(config, request limiter, write back?, where to register clients to close) → (source, key, adapter, sink)."""

_PLATFORMS: dict[str, PlatformFactory] = {}


def register_platform(kind: str, factory: PlatformFactory) -> None:
    """Make ``[source] kind = "<kind>"`` buildable (the built-ins register the same way)."""
    _PLATFORMS[kind] = factory


def build_setup(config: Config) -> JobSetup:
    """The job described by ``config``; ConfigError names the bad key and the fix."""
    source_cfg: SourceSettings = config.section("source")
    job: JobSettings = config.section("job")
    scoring: ScoringSettings = config.section("scoring")
    factory = _PLATFORMS.get(source_cfg.kind)
    if factory is None:
        known = ", ".join(repr(k) for k in sorted(_PLATFORMS))
        raise ConfigError(f"source kind {source_cfg.kind!r} is not available; expected one of {known}")
    limiter = RateLimiter(job.requests_per_minute)
    resources = ExitStack()
    source, key, adapter, sink = factory(config, limiter, job.write_back, resources)
    return JobSetup(
        source=source,
        source_key=key,
        adapter=adapter,
        scorers=default_scorers(k=scoring.k, final_answer_prefix=scoring.final_answer_prefix or None),
        sink=sink if job.write_back else None,
        store_path=Path(job.store),
        limits=Limits(workers=job.judge_concurrency, queue_size=job.queue_size, write_batch=job.write_batch),
        lookback_minutes=job.lookback_delta.total_seconds() / 60,
        chunks=job.backfill_chunks,
        fingerprint=fingerprint(config),
        limiter=limiter,
        resources=resources,
    )


def _jsonl(
    config: Config, limiter: RateLimiter, write_back: bool, resources: ExitStack
) -> tuple[Source, str, Adapter, Sink | None]:
    settings: SourceSettings = config.section("source")
    if not settings.path:
        where = f" in {config.path}" if config.path else ""
        raise ConfigError(f"[source] kind = 'jsonl' needs path = '<traces file>'{where}")
    path = Path(settings.path)
    if config.path is not None and not path.is_absolute():
        path = config.path.parent / path
    return JsonlSource(path), f"jsonl:{path.resolve()}", get_adapter("jsonl"), None


def _langfuse(
    config: Config, limiter: RateLimiter, write_back: bool, resources: ExitStack
) -> tuple[Source, str, Adapter, Sink | None]:
    from tracescore.job.langfuse import langfuse_platform

    return langfuse_platform(config, limiter, write_back, resources)


register_platform("jsonl", _jsonl)
register_platform("langfuse", _langfuse)
