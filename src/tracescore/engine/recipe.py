"""The one recipe of a run: configuration + command options → the scorers with their judge, the dead-link checker,
the budget, the agreement, the engine's threads or processes.

Every entry point builds its scoring from here, so they cannot drift apart: ``score`` (``cli/score.py``), ``run`` and
``backfill`` (``engine/setup.py``), the Ray driver (``ScorerPlan``, ``engine/plan.py``, travels to each task) and
``tracescore.score_traces``. The judge is one ``JudgePool`` everywhere (one judge per scoring thread, the store's
cache, usage summed), refused or absent with the same line on every path.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracescore.adapters import Adapter
from tracescore.calibrate.carry import criteria_agreement, grounding_agreement
from tracescore.calibrate.required import HumanRequired, apply_required, human_required
from tracescore.config import DEFAULT_CONFIG_FILE, Config, JobSettings
from tracescore.engine.daily import DayLimits
from tracescore.engine.judging import JudgePool, StoreJudgeCache
from tracescore.engine.pipeline import RunCounts
from tracescore.engine.plan import NO_JUDGE, ScorerPlan as ScorerPlan
from tracescore.engine.sampling import Sampling
from tracescore.engine.sessions import group_turns
from tracescore.engine.stage import Plan, Scored, Stage, Turn, process_plan
from tracescore.errors import ConfigError
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.judge.make import make_judge
from tracescore.judge.pricing import is_priced, priced_models, set_price
from tracescore.judge.protocol import Judge
from tracescore.judge.providers import ProviderSettings, parse_identity
from tracescore.judge.redact import Redactor
from tracescore.judge.registry import provider
from tracescore.links import LinkChecker
from tracescore.reasons import Reasons
from tracescore.registry import Chosen
from tracescore.result import TraceResult
from tracescore.scorers.criteria import Criterion
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.scored import Scorer
from tracescore.sources.base import Record
from tracescore.store.db import Store
from tracescore.store.linkcache import StoreLinkCache
from tracescore.trace import Trace


@dataclass(frozen=True)
class Options:
    """What a run scores with: command line over ``[scoring]``/``[scorers]``/``[judge]``/``[job]`` over the
    defaults. ``scorers``: the chosen scorers with their options (None: every installed one, its defaults)."""

    scorers: Chosen | None = None
    judge_off: str | None = None  # why the judged stages are turned off (--no-judge, [scoring] judge = false)
    judge_required: str | None = None  # who asked for the judge (--judge, [scoring] judge = true): it must run
    judge_model: str = DEFAULT_MODEL  # the provider's own model id
    provider: ProviderSettings = field(default_factory=ProviderSettings)  # [judge] provider, region, project
    max_cost: float | None = None  # USD: the judge's budget for the run
    check_links: bool = False  # off by default: it makes network requests
    merge_partial: str | None = None  # [judge] merge_partial
    rubrics: Rubrics = field(default_factory=Rubrics)  # [judge] rubric, surface_rubric, semantic_rubric
    judge_concurrency: int = JobSettings.model_fields["judge_concurrency"].default  # [job]: threads with a judge
    sampling: Sampling = field(default_factory=Sampling)  # [scoring] judge_sample, judge_flagged, judge_salt
    day: DayLimits = field(default_factory=DayLimits)  # the job's [job] max_cost_per_day, max_calls_per_day (setup.py)
    redact: Redactor | None = None  # [judge] redact: what the judge never sees
    criteria: tuple[str, tuple[Criterion, ...]] | None = None  # the config file and its [[criteria]]
    carry_evidence: bool = True  # [sessions] carry_evidence: a turn scored with its session's earlier evidence


def options(
    config: Config,
    *,
    k: int | None = None,
    final_answer_prefix: str | None = None,
    no_judge: bool = False,
    judge_model: str | None = None,
    max_cost: float | None = None,
    check_links: bool = False,
    judge_sample: float | None = None,
    judge: bool = False,
) -> Options:
    """The options of ``config`` with the command line's values (None: not given) winning: ``k`` is the
    retrieval scorer's option, ``final_answer_prefix`` the answer scorer's. ``judge`` (``--judge``) or ``[scoring]
    judge = true`` written in the file make the judge required: a missing key or SDK stops the run."""
    scoring = config.section("scoring")
    off = Reasons.JUDGE_OFF_FLAG.text if no_judge else None if scoring.judge else Reasons.JUDGE_OFF.text
    required = "--judge" if judge else None
    if required is None and scoring.judge and "judge" in scoring.model_fields_set:
        required = "[scoring] judge = true"
    if config.judge_price is not None:  # [judge.price]: this judge's price wherever a reply is priced
        set_price(config.judge_provider.identity(judge_model or config.judge_model), config.judge_price)
    return Options(
        scorers=config.scorers(command_line(k, final_answer_prefix)),
        judge_off=off,
        judge_required=required,
        judge_model=judge_model or config.judge_model,
        provider=config.judge_provider,
        max_cost=max_cost if max_cost is not None else scoring.max_cost,
        check_links=check_links,
        merge_partial=config.section("judge").merge_partial,
        rubrics=config.rubrics,
        judge_concurrency=config.section("job").judge_concurrency,
        sampling=Sampling(judge_sample if judge_sample is not None else scoring.judge_sample, scoring.judge_flagged,
                          scoring.judge_salt, scoring.judge_key),
        redact=config.redactor,
        criteria=(str(config.path) if config.path is not None else DEFAULT_CONFIG_FILE, config.criteria),
        carry_evidence=config.section("sessions").carry_evidence,
    )


def command_line(k: int | None = None, final_answer_prefix: str | None = None) -> dict[str, dict[str, Any]]:
    """The scorer options the command line gives (``--k``, ``--final-answer-prefix``), by scorer."""
    given: dict[str, dict[str, Any]] = {}
    if k is not None:
        given["retrieval"] = {"k": k}
    if final_answer_prefix is not None:
        given["answer"] = {"final_answer_prefix": final_answer_prefix or None}
    return given


def _unjudged(adapter: Adapter, plan: ScorerPlan) -> tuple[Adapter, list[Scorer]]:
    """The adapter and scorers of a run without a judge, built again in each worker process."""
    return adapter, plan.scorers(None)


@dataclass
class Recipe:
    """The scoring of one run: its scorers, the judge they share, the link checker; closes what it opened."""

    options: Options
    plan: ScorerPlan
    scorers: list[Scorer]
    judge: JudgePool | None = None
    links: LinkChecker | None = None  # --check-links: its cache is the store's
    link_cache: StoreLinkCache | None = None
    link_store: Store | None = None
    notes: list[str] = field(default_factory=list)  # warnings for the user (missing SDK, deprecated model)
    _owned: bool = True  # the judge was built here (a caller's judge is closed by the caller)

    @property
    def no_judge_reason(self) -> str:
        return self.plan.no_judge_reason

    @property
    def threads(self) -> int:
        """Scoring threads: ``judge_concurrency`` with a judge built here (one per thread: calls in flight), else one
        (link checks, or a caller's judge: one object, one thread)."""
        return self.options.judge_concurrency if self.judge is not None and self.links is None and self._owned else 1

    def processes(
        self, adapter: Adapter, digest: Callable[[list[dict[str, Any]]], Any] | None = None
    ) -> Callable[[str, str | None], Plan] | None:
        """The worker processes' plan when scoring is CPU-bound (no judge, no link checks) and ``adapter`` can be
        sent to a process; None: score in threads of this one."""
        if self.judge is not None or self.links is not None:
            return None
        return process_plan(functools.partial(_unjudged, adapter, self.plan), digest)

    def close(self) -> None:
        if self.links is not None:
            self.links.close()
        if self.link_store is not None:
            self.link_store.close()
        if self.judge is not None:
            if self._owned:
                self.judge.close()
            elif self.judge.cache is not None:
                self.judge.cache.close()


def judge_off(options: Options, notes: list[str]) -> str | None:
    """Why the judged stages will be absent on this machine (turned off, no key, no SDK), or None when a judge can
    be built; ConfigError when a budget is set for a model without a price, or when the judge is required
    (``Options.judge_required``) and cannot run."""
    if options.judge_off:
        return options.judge_off
    asked = options.judge_required
    where = options.provider
    chosen = provider(where.provider)
    variable = chosen.key_env(where) if chosen.key_env is not None else None  # None: its own chain, or no key
    if variable and not os.environ.get(variable):
        if asked:  # a CI job that asked for its judge must not pass without it
            raise ConfigError(f"the judge is required ({asked}) but {variable} is not set: set it, or drop {asked}")
        return NO_JUDGE  # Bedrock, Vertex, Azure: asked for by name, so missing credentials are a ConfigError instead
    try:
        if chosen.sdk:
            __import__(chosen.sdk)  # only to say clearly that the SDK is missing
    except ImportError as exc:
        install = chosen.install or f"install the package of judge {where.provider!r}"
        if asked:
            raise ConfigError(f"the judge is required ({asked}) but the {chosen.sdk} SDK is not installed ({exc}):"
                              f" {install}") from exc  # fmt: skip
        notes.append(f"the judge needs the {chosen.sdk} SDK ({exc}): {install}")
        return Reasons.NO_SDK.text
    judge = options.provider.identity(options.judge_model)
    if (what := _priced_budget(options)) and not is_priced(judge):
        raise _unpriced(judge, what)
    return None


def _priced_budget(options: Options) -> str | None:
    """The budget in USD that is set (the run's ``max_cost``, the day's ``max_cost_per_day``), named, or None."""
    if options.max_cost is not None:
        return "--max-cost / [scoring] max_cost"
    return "[job] max_cost_per_day" if options.day.max_cost is not None else None


def _unpriced(judge: str, what: str) -> ConfigError:
    provider = parse_identity(judge)[0]
    listed = priced_models(provider)
    instead = f"use a priced model (one of {', '.join(listed)}), " if listed else ""
    return ConfigError(
        f"{what} needs a price for judge model {judge!r}, which is not in the {provider} price table;"
        f" {instead}set [judge.price] input_per_mtok and output_per_mtok, or drop max_cost"
    )


def _judge_pool(options: Options, store: Path | None, notes: list[str]) -> JudgePool:
    """One judge per scoring thread (on the configured provider); the first is built now, so a deprecated model or
    missing credentials are said once."""
    where = options.provider

    def judge() -> Judge:
        return make_judge(where, options.judge_model)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made: list[Judge] = [judge()]
    notes += [str(w.message) for w in caught]
    identity = made[0].model

    def factory() -> Judge:
        return made.pop() if made else judge()

    return JudgePool(factory, identity, StoreJudgeCache(store) if store is not None else None)


def scorer_plan(options: Options, reason: str | None, judge_model: str | None, store: Path | None) -> ScorerPlan:
    """The scorers' values; with a judge of ``judge_model``, the agreement of its latest calibration in ``store``."""
    agreement = None
    criteria = options.criteria[1] if options.criteria is not None else ()
    if judge_model is not None and store is not None:
        with Store(store) as opened:
            agreement = grounding_agreement(opened, judge_model, options.rubrics.grounding.version)
            if own := criteria_agreement(opened, judge_model, criteria):
                agreement = (agreement or {}) | own
    return ScorerPlan(options.scorers, reason or NO_JUDGE, options.max_cost, agreement, options.merge_partial,
                      options.rubrics, options.sampling, options.redact, options.criteria,
                      options.carry_evidence)  # fmt: skip


def build_recipe(
    options: Options, store: str | Path | None, *, judge: Judge | None = None, opened: Store | None = None
) -> Recipe:
    """The scoring of a run: the Anthropic judge when it can run (or ``judge``, a caller's, used as given), its
    replies cached in the store at ``store``, which also holds the agreement of the grounding scores and the link
    checker's cache (None: no cache, no agreement). The link cache shares ``opened``, the run's own connection to
    that store, when given (a second connection writing beside the run's writer would wait on its lock)."""
    path = Path(store) if store is not None else None
    notes: list[str] = []
    reason = None
    if judge is not None:
        if (what := _priced_budget(options)) and not judge.usage.priced:
            raise _unpriced(judge.model, what)
        cache = StoreJudgeCache(path) if path is not None else None
        pool: JudgePool | None = JudgePool(lambda: judge, judge.model, cache)
    else:
        reason = judge_off(options, notes)
        pool = _judge_pool(options, path, notes) if reason is None else None
    plan = scorer_plan(options, reason, pool.model if pool is not None else None, path)
    recipe = Recipe(options, plan, [], pool, notes=notes, _owned=judge is None)
    if options.check_links:
        try:
            if opened is None and path is not None:
                opened = recipe.link_store = Store(path)
            if opened is not None:
                recipe.link_cache = StoreLinkCache(opened)
            recipe.links = LinkChecker(cache=recipe.link_cache)
        except ImportError as exc:
            recipe.close()
            raise ConfigError(f"--check-links needs httpx ({exc}): pip install 'tracescore[links]'") from exc
    recipe.scorers = plan.scorers(pool, recipe.links)
    return recipe


def labelled(adapter: Adapter, store: str | Path | None) -> Adapter:
    """``adapter`` followed by the reviewer-entered required doc ids in ``store`` (read once, now), as the engine
    applies them; picklable (a worker process or a Ray task takes it by value); ``adapter`` itself when none."""
    if store is None or not Path(store).is_file():
        return adapter
    with Store(store) as opened:
        human = human_required(opened)
    return functools.partial(_with_required, adapter, human) if human else adapter


def _with_required(adapter: Adapter, human: dict[str, HumanRequired], payload: object) -> Trace:
    return apply_required(adapter(payload), human)


def score_stage(
    stage: Stage, records: Iterable[Record], counts: RunCounts | None = None, *, carry: bool = True
) -> Iterator[TraceResult]:
    """Each record through the engine's stage, as ``score`` scores it (every adapter error caught, lone surrogates
    refused), one result at a time; ``counts`` sums what was read, scored and unreadable.

    ``carry`` (``[sessions] carry_evidence``): the turns of a session are held until every record is read, then
    scored in conversation order, each with the evidence of the turns before it (``engine/sessions.py``), and come
    last; a trace without a session comes as soon as it is scored."""
    counts = counts if counts is not None else RunCounts()
    held: list[tuple[Trace, Turn]] = []
    for seq, record in enumerate(records):
        trace, key, error = stage.adapt(record)
        if carry and trace is not None and trace.session_id is not None:
            held.append((trace, (seq, 0, record, trace, key)))
            continue
        yield _counted(stage.score(seq, 0, record, trace, key, error), counts)
    if held:
        sessions, _ = group_turns(held)
        for session in sessions:
            for scored in stage.score_session([turn for _, turn in session.turns]):
                yield _counted(scored, counts)
            for _, (seq, chunk, record, trace, key) in session.alone:
                yield _counted(stage.score(seq, chunk, record, trace, key, None), counts)


def _counted(scored: Scored, counts: RunCounts) -> TraceResult:
    counts.seen += 1
    if scored.readable:
        counts.scored += 1
        counts.scorer_errors += scored.scorer_errors
    else:
        counts.failed += 1
        counts.failures.append(scored.failure or "unreadable")
    assert scored.result is not None  # a stage that keeps results
    return scored.result


def cores() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
