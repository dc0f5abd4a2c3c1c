"""Build the pieces of a run from the config: source (+ its stable key), adapter, platform sink, scorers, judge.

The platform comes from the registry (``platforms/``); its SDK is imported only when that platform is built.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracescore.adapters import Adapter
from tracescore.calibrate.carry import grounding_agreement
from tracescore.catalog import Reasons
from tracescore.config import Config, JobSettings, ScoringSettings, SourceSettings, fingerprint
from tracescore.engine.core import Limits, Sink, UsageMeter
from tracescore.engine.judging import JudgePool, StoreJudgeCache
from tracescore.engine.stage import Plan, process_plan
from tracescore.errors import ConfigError
from tracescore.judge.anthropic import PRICES_PER_MTOK, AnthropicJudge
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import Parts, PlatformContext
from tracescore.scorers import Scorer, default_scorers
from tracescore.scorers.grounding import NO_JUDGE, grounding_scorer
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.semantic import semantic_scorer
from tracescore.scorers.surface import surface_scorer
from tracescore.sources.base import Source
from tracescore.store import Store

__all__ = ["JobSetup", "build_platform", "build_setup"]


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
    describe: str = ""
    stats: Any = None
    plan: Callable[[str, str | None], Plan] | None = None  # no judge: score in ``limits.workers`` processes
    rubrics: Rubrics = field(default_factory=Rubrics)  # each judged stage's rubric ([judge] rubric, ...)


    def close(self) -> None:
        """Close the platform clients."""
        self.resources.close()


def build_setup(
    config: Config,
    *,
    kind: str | None = None,
    path: str | None = None,
    write_back: bool | None = None,
    overrides: dict[str, Any] | None = None,
) -> JobSetup:
    """The run described by ``config`` (``kind``/``path``/``write_back``/``overrides`` from the command line win);
    ConfigError names the bad key and the fix."""
    job: JobSettings = config.section("job")
    scoring: ScoringSettings = config.section("scoring")
    limiter = RateLimiter(job.requests_per_minute)
    resources = ExitStack()
    write_back = job.write_back if write_back is None else write_back
    parts = build_platform(
        config, limiter, resources, kind=kind, path=path, write_back=write_back, overrides=overrides
    )
    source, key, adapter, sink = parts.source, parts.key, parts.adapter, parts.sink
    pool, no_judge_reason = _judge(scoring, config.judge_model, Path(job.store), resources)
    rubrics = config.rubrics
    agreement = None
    if pool is not None:
        agreement = grounding_agreement(Store(job.store), config.judge_model, rubrics.grounding.version)
    merge_partial = config.section("judge").merge_partial
    scorers = job_scorers(scoring, pool, no_judge_reason, agreement, merge_partial, rubrics)
    plan = None
    if pool is None:  # CPU-bound: score in worker processes when the adapter can be sent to one
        plan = process_plan(
            functools.partial(_without_judge, adapter, scoring, no_judge_reason, merge_partial, rubrics)
        )
    return JobSetup(
        source=source,
        source_key=key,
        adapter=adapter,
        scorers=scorers,
        usage=pool.usage_dict if pool is not None else None,
        judge_model=config.judge_model,
        describe=parts.describe,
        stats=parts.stats,
        judge=pool,
        batch_poll_seconds=job.batch_poll_seconds,
        settle_minutes=job.settle_delta.total_seconds() / 60,
        judge_off=None if pool is not None else no_judge_reason,
        sink=sink if write_back else None,
        store_path=Path(job.store),
        limits=Limits(
            workers=job.judge_concurrency if plan is None else cores(),
            queue_size=job.queue_size,
            write_batch=job.write_batch,
        ),
        plan=plan,
        rubrics=rubrics,
        lookback_minutes=job.lookback_delta.total_seconds() / 60,
        chunks=job.backfill_chunks,
        fingerprint=fingerprint(config),
        limiter=limiter,
        resources=resources,
    )


def job_scorers(
    scoring: ScoringSettings,
    judge: JudgePool | None,
    no_judge_reason: str,
    agreement: Any,
    merge_partial: str | None,
    rubrics: Rubrics,
) -> list[Scorer]:
    """The scorers of a run or backfill: the deterministic stages, then grounding, surface and semantic."""
    scorers = default_scorers(k=scoring.k, final_answer_prefix=scoring.final_answer_prefix or None)
    scorers.append(
        grounding_scorer(judge=judge, no_judge_reason=no_judge_reason, max_cost=scoring.max_cost, agreement=agreement,
                         merge_partial=merge_partial, rubric=rubrics.grounding)
    )
    scorers.append(
        surface_scorer(
            judge=judge, no_judge_reason=no_judge_reason, max_cost=scoring.max_cost, rubric=rubrics.surface
        )
    )
    scorers.append(
        semantic_scorer(
            judge=judge,
            final_answer_prefix=scoring.final_answer_prefix or None,
            no_judge_reason=no_judge_reason,
            max_cost=scoring.max_cost,
            rubric=rubrics.semantic,
        )
    )
    return scorers


def _without_judge(
    adapter: Adapter, scoring: ScoringSettings, no_judge_reason: str, merge_partial: str | None, rubrics: Rubrics
) -> tuple[Adapter, list[Scorer]]:
    """The adapter and scorers of a run without a judge, built again in each worker process."""
    return adapter, job_scorers(scoring, None, no_judge_reason, None, merge_partial, rubrics)


def cores() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def build_platform(
    config: Config,
    limiter: RateLimiter,
    resources: ExitStack,
    *,
    kind: str | None = None,
    path: str | None = None,
    write_back: bool = True,
    overrides: dict[str, Any] | None = None,
) -> Parts:
    """Source, adapter and sink of the platform ``kind`` (default ``[source] kind``), from the registry; its clients
    close with ``resources``. ``path`` (a command-line file) is taken as given, ``[source] path`` relative to the
    config file."""
    source_cfg: SourceSettings = config.section("source")
    kind = kind or source_cfg.kind
    platform = registry.get(kind)
    context = PlatformContext(
        sections={name: config.section(name) for name in platform.sections},
        mapping=config.mapping,
        path=path if path is not None else source_cfg.path,
        project=source_cfg.project,
        config_dir=config.path.parent if config.path is not None and path is None else None,
        limiter=limiter,
        write_back=write_back,
        resources=resources,
        overrides=dict(overrides or {}),
        keep_versions=config.section("sinks").keep_versions,
    )
    try:
        return registry.build(kind, context)
    except BaseException:
        resources.close()
        raise


def _judge(
    scoring: ScoringSettings, model: str, store: Path, resources: ExitStack
) -> tuple[JudgePool | None, str]:
    """One Anthropic judge per scoring thread with the store's cache, or None and why the judged scores are absent."""
    if not scoring.judge:
        return None, Reasons.JUDGE_OFF.text
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return None, NO_JUDGE
    try:
        import anthropic  # noqa: F401 - only to say clearly that the SDK is missing
    except ImportError:
        return None, Reasons.NO_SDK.text
    if scoring.max_cost is not None and model not in PRICES_PER_MTOK:
        raise ConfigError(
            f"[scoring] max_cost needs a price for judge_model {model!r}, which is not in the price"
            f" table; use a priced model (one of {', '.join(sorted(PRICES_PER_MTOK))}) or drop max_cost"
        )
    pool = JudgePool(lambda: AnthropicJudge(model=model), model, StoreJudgeCache(store))
    resources.callback(pool.close)
    return pool, NO_JUDGE
