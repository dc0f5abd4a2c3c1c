"""Build the pieces of a job from ``tracescore.toml``: source (+ its stable key), adapter, platform sink, scorers.

Platform SDKs are imported here lazily, only for the platform the file names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from tracescore.adapters import Adapter, get_adapter
from tracescore.config import Config
from tracescore.engine.core import Limits, Sink, UsageMeter
from tracescore.engine.judging import JudgePool, StoreJudgeCache
from tracescore.engine.settings import JobSettings, ScoringSettings, SourceSettings, fingerprint
from tracescore.errors import ConfigError
from tracescore.limits import RateLimiter
from tracescore.scorers import Scorer, default_scorers
from tracescore.scorers.grounding import NO_JUDGE, grounding_scorer
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
    judge_model: str | None = None
    judge: JudgePool | None = None
    batch_poll_seconds: float = 30.0
    settle_minutes: float = 0.0
    judge_off: str | None = None  # why the judged stages will be absent, when they will be

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
    scorers = default_scorers(k=scoring.k, final_answer_prefix=scoring.final_answer_prefix or None)
    pool, no_judge_reason = _judge(scoring, Path(job.store), resources)
    scorers.append(grounding_scorer(judge=pool, no_judge_reason=no_judge_reason, max_cost=scoring.max_cost))
    return JobSetup(
        source=source,
        source_key=key,
        adapter=adapter,
        scorers=scorers,
        usage=pool.usage_dict if pool is not None else None,
        judge_model=scoring.judge_model,
        judge=pool,
        batch_poll_seconds=job.batch_poll_seconds,
        settle_minutes=job.settle_delta.total_seconds() / 60,
        judge_off=None if pool is not None else no_judge_reason,
        sink=sink if job.write_back else None,
        store_path=Path(job.store),
        limits=Limits(workers=job.judge_concurrency, queue_size=job.queue_size, write_batch=job.write_batch),
        lookback_minutes=job.lookback_delta.total_seconds() / 60,
        chunks=job.backfill_chunks,
        fingerprint=fingerprint(config),
        limiter=limiter,
        resources=resources,
    )


def _judge(scoring: ScoringSettings, store: Path, resources: ExitStack) -> tuple[JudgePool | None, str]:
    """One Anthropic judge per scoring thread with the store's cache, or None and why the judged scores are absent."""
    if not scoring.judge:
        return None, "judge turned off ([scoring] judge = false)"
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return None, NO_JUDGE
    try:
        import anthropic  # noqa: F401 - only to say clearly that the SDK is missing
    except ImportError:
        return None, "judge unavailable: anthropic SDK not installed (pip install 'tracescore[judge]')"
    from tracescore.judge.anthropic import PRICES_PER_MTOK, AnthropicJudge

    if scoring.max_cost is not None and scoring.judge_model not in PRICES_PER_MTOK:
        raise ConfigError(
            f"[scoring] max_cost needs a price for judge_model {scoring.judge_model!r}, which is not in the price"
            f" table; use a priced model (one of {', '.join(sorted(PRICES_PER_MTOK))}) or drop max_cost"
        )
    pool = JudgePool(lambda: AnthropicJudge(model=scoring.judge_model), scoring.judge_model, StoreJudgeCache(store))
    resources.callback(pool.close)
    return pool, NO_JUDGE


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
    from tracescore.platforms.langfuse.platform import langfuse_platform

    return langfuse_platform(config, limiter, write_back, resources)


def _langsmith(
    config: Config, limiter: RateLimiter, write_back: bool, resources: ExitStack
) -> tuple[Source, str, Adapter, Sink | None]:
    from tracescore.platforms.langsmith.platform import langsmith_platform

    return langsmith_platform(config, limiter, write_back, resources)


register_platform("jsonl", _jsonl)
register_platform("langfuse", _langfuse)
register_platform("langsmith", _langsmith)
