"""Build the pieces of a run from the config: source (+ its stable key), adapter, platform sink, scorers, judge.

The platform comes from the registry (``platforms/``); its SDK is imported only when that platform is built.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from tracescore.adapters import Adapter
from tracescore.config import Config, JobSettings, SourceSettings, fingerprint
from tracescore.engine.core import Limits, Sink, UsageMeter
from tracescore.engine.daily import Clock, DailyBudget, DayLimits, utc_now
from tracescore.engine.judging import JudgePool
from tracescore.engine.plan import ScorerPlan
from tracescore.engine.recipe import build_recipe, cores as cores, labelled, options
from tracescore.engine.stage import Plan
from tracescore.judge.providers import ProviderSettings
from tracescore.judge.redact import Redactor
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import Parts, PlatformContext, SourceStats
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.scored import Scorer
from tracescore.sources.base import Source
from tracescore.trace import Trace


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
    judge_retries: int  # [job] judge_retries: runs that judge again a trace whose judge failed (store/due.py)
    usage: UsageMeter | None = None
    resources: ExitStack = field(default_factory=ExitStack)
    judge_model: str | None = None  # the judge's identity (judge/providers.py): its price in the dry run
    judge_provider: ProviderSettings = field(default_factory=ProviderSettings)  # --judge-batch: where its batches go
    judge_model_id: str | None = None  # the provider's own model id (judge_model is the judge's identity)
    judge: JudgePool | None = None
    batch_poll_seconds: float = 30.0
    settle_minutes: float = 0.0
    judge_off: str | None = None  # why the judged stages will be absent, when they will be
    describe: str = ""
    stats: SourceStats | None = None
    plan: Callable[[str, str | None], Plan] | None = None  # no judge: score in ``limits.workers`` processes
    rubrics: Rubrics = field(default_factory=Rubrics)  # each judged stage's rubric ([judge] rubric, ...)
    redact: Redactor | None = None  # [judge] redact: the batch prefill and the dry run build requests through it
    notes: list[str] = field(default_factory=list)  # the recipe's warnings (missing SDK, deprecated judge model)
    judges: Callable[[Trace], bool] | None = None  # [scoring] judge_sample: the traces judged (None: every one)
    scorer_plan: ScorerPlan | None = None  # the scorers and their options (the batch prefill and the dry run read it)
    session_idle: timedelta = timedelta(minutes=30)  # [sessions] idle: a session's scores are written once idle
    carry: bool = True  # [sessions] carry_evidence: a session's turns scored together, with the store's earlier turns
    session_lookback: timedelta = timedelta(hours=24)  # [sessions] lookback: a backfill reads earlier turns this far

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
    judge_sample: float | None = None,
    clock: Clock = utc_now,
) -> JobSetup:
    """The run described by ``config`` (``kind``/``path``/``write_back``/``overrides`` from the command line win);
    ConfigError names the bad key and the fix. Its scoring is the recipe's (``engine/recipe.py``); ``judge_sample``
    (``--judge-sample``) wins over ``[scoring] judge_sample``. ``[job] max_cost_per_day`` / ``max_calls_per_day`` give
    the judge its daily allowance, the day read off ``clock``."""
    job: JobSettings = config.section("job")
    limiter = RateLimiter(job.requests_per_minute)
    resources = ExitStack()
    write_back = job.write_back if write_back is None else write_back
    parts = build_platform(
        config, limiter, resources, kind=kind, path=path, write_back=write_back, overrides=overrides
    )
    try:
        day = DayLimits(job.max_cost_per_day, job.max_calls_per_day)
        recipe = build_recipe(replace(options(config, judge_sample=judge_sample), day=day), job.store)
    except BaseException:
        resources.close()
        raise
    resources.callback(recipe.close)
    pool = recipe.judge
    if pool is not None and day.any:
        pool.allowance = DailyBudget(job.store, day, clock)
    adapter = labelled(parts.adapter, job.store)  # reviewer-entered labels (#12), read once, now
    plan = recipe.processes(adapter)
    return JobSetup(
        source=parts.source,
        source_key=parts.key,
        adapter=adapter,
        scorers=recipe.scorers,
        usage=pool.usage_dict if pool is not None else None,
        judge_model=config.judge_provider.identity(config.judge_model),
        judge_provider=config.judge_provider,
        judge_model_id=config.judge_model,
        describe=parts.describe,
        stats=parts.stats,
        judge=pool,
        batch_poll_seconds=job.batch_poll_seconds,
        settle_minutes=job.settle_delta.total_seconds() / 60,
        judge_retries=job.judge_retries,
        judge_off=None if pool is not None else recipe.no_judge_reason,
        sink=parts.sink if write_back else None,
        store_path=Path(job.store),
        limits=Limits(
            workers=recipe.threads if plan is None else cores(),
            queue_size=job.queue_size,
            write_batch=job.write_batch,
        ),
        plan=plan,
        carry=recipe.options.carry_evidence,
        session_lookback=config.section("sessions").lookback_delta,
        rubrics=recipe.options.rubrics,
        redact=recipe.options.redact,
        lookback_minutes=job.lookback_delta.total_seconds() / 60,
        chunks=job.backfill_chunks,
        fingerprint=fingerprint(config),
        limiter=limiter,
        resources=resources,
        notes=recipe.notes,
        judges=None if recipe.plan.sampling.everything else recipe.plan.judges,
        scorer_plan=recipe.plan,
        session_idle=config.section("sessions").idle_delta,
    )


def build_platform(
    config: Config,
    limiter: RateLimiter,
    resources: ExitStack,
    *,
    kind: str | None = None,
    path: str | None = None,
    write_back: bool = True,
    overrides: dict[str, Any] | None = None,
    push: bool = False,
    download: bool = False,
) -> Parts:
    """Source, adapter and sink of the platform ``kind`` (default ``[source] kind``), from the registry; its clients
    close with ``resources``. ``path`` (a command-line file) is taken as given, ``[source] path`` relative to the
    config file; ``push``: the write-only sink of ``tracescore push`` (nothing is read); ``download``: ``path`` is a
    file downloaded from the platform, read with its adapter (no client, no sink)."""
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
        push=push,
        keep_versions=config.section("sinks").keep_versions,
    )
    try:
        return registry.build_download(kind, context) if download else registry.build(kind, context)
    except BaseException:
        resources.close()
        raise
