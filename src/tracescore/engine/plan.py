"""Which scorers a run runs, and with what: chosen from the registry (``[scoring] scorers`` / ``disable``), each with
its options (``[scorers.<name>]``, checked against its signature), built around the run's judge and link checker.

``ScorerPlan`` is plain values (entry-point names, option values, the run's judge settings): it is pickled to a
worker process or a Ray task, which rebuilds the same scorers from its own registry. A tracescore scorer and a
plugin's are built the same way; a plugin's plain ``list[Score]`` is checked against its declaration (an undeclared
name is a scorer error) and becomes a ``Scored``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracescore import registry
from tracescore.engine.pipeline import score_trace
from tracescore.engine.sampling import Sampled, Sampling
from tracescore.judge.budget import budget_reason
from tracescore.judge.protocol import Judge
from tracescore.judge.redact import Redactor
from tracescore.reasons import Reasons
from tracescore.registry import Chosen, Installed, RunContext, ScorerDef, choose, option_value
from tracescore.result import TraceResult
from tracescore.scorers.absent import absent_for
from tracescore.scorers.criteria import Criterion, configure as configure_criteria
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score
from tracescore.session import Earlier
from tracescore.trace import Trace

NO_JUDGE = Reasons.NO_JUDGE.text
@dataclass(frozen=True)
class ScorerPlan:
    """The scorers as plain values (picklable): which (``chosen``; None: every installed one with its defaults) and
    the run's judge settings; a worker process or a Ray task builds them around its own judge."""

    chosen: Chosen | None = None
    no_judge_reason: str = NO_JUDGE
    max_cost: float | None = None
    agreement: dict[str, dict[str, Any]] | None = None
    merge_partial: str | None = None
    rubrics: Rubrics = field(default_factory=Rubrics)
    sampling: Sampling = field(default_factory=Sampling)
    redact: Redactor | None = None
    criteria: tuple[str, tuple[Criterion, ...]] | None = None  # the config file and its [[criteria]] (None: as loaded)
    carry_evidence: bool = True  # [sessions] carry_evidence (engine/sessions.py): travels to a Ray task with the rest

    @functools.cached_property
    def _chosen(self) -> Chosen:
        self.registry()
        return self.chosen if self.chosen is not None else choose()

    def registry(self) -> registry.Registry:
        """The run's registry: the installed scorers and the config's criteria (a worker process or a Ray task,
        which loaded no config, makes them here from the plan's values)."""
        if self.criteria is None:
            return registry.load()
        return configure_criteria(self.criteria[1], self.criteria[0])

    def chosen_scorers(self) -> Chosen:
        """The scorers this plan runs, with their options (``[scoring] scorers`` / ``disable``)."""
        return self._chosen

    def option(self, scorer: str, name: str) -> Any:
        """The value of ``scorer``'s option ``name`` in this plan (its default when the scorer is not chosen)."""
        return option_value(self._chosen, scorer, name)

    def versions(self) -> dict[str, str]:
        """Each chosen scorer's version, by entry-point name (part of the run's fingerprint)."""
        loaded = self.registry()
        return {name: loaded[name].scorer.version for name, _ in self._chosen}

    def scorers(self, judge: Judge | None, links: Any = None) -> list[Scorer]:
        """The scorers that need no judge, then the judged ones (``judge=None``: absent with the reason), then those
        that need the link checker when one is given. With a judge and ``sampling`` below every trace, each judged
        scorer runs on the sampled (and flagged) traces only, the others get its scores without a judge."""
        plain, judged, checked = self._built(judge, links)
        if judge is not None and not self.sampling.everything:
            _, unjudged, _ = self._built(None, None, self.sampling.reason)
            judged = [Sampled(j, u, self.sampling) for j, u in zip(judged, unjudged, strict=True)]
        if judge is not None and self.redact is not None:
            judged = _named(self.redact.around(judged), judged)
        return plain + judged + checked

    def session_scorers(self) -> list[Callable[[Sequence[TraceResult]], list[Score]]]:
        """The chosen session scorers (stage ``session``), each a function of the session's turns (oldest first);
        one that raises gives its scores absent with the scorer error, as a per-trace scorer's would."""
        loaded = registry.load()
        out: list[Callable[[Sequence[TraceResult]], list[Score]]] = []
        for name, options in self._chosen:
            decl = loaded[name].scorer
            if decl.per_session:
                out.append(functools.partial(_per_session, decl, decl.names(options), dict(options)))
        return out

    def judges(self, trace: Trace) -> bool:
        """Whether the judged scorers run on ``trace`` (asked before scoring it: ``backfill --judge-batch`` batches
        only these traces' requests); the flagged check scores the ones that need no judge."""
        sampling = self.sampling
        chosen = sampling.chosen(sampling.key_of(trace))
        if chosen or not sampling.flagged:
            return chosen
        return sampling.judges(sampling.key_of(trace), score_trace(trace, self.deterministic()).scores)

    def deterministic(self) -> list[Scorer]:
        """The chosen scorers that need no judge and no network."""
        return self._built(None, None)[0]

    def _built(
        self, judge: Judge | None, links: Any, reason: str | None = None
    ) -> tuple[list[Scorer], list[Scorer], list[Scorer]]:
        run = RunContext(judge, reason or self.no_judge_reason, self.max_cost, self.agreement, self.merge_partial,
                         self.rubrics)  # fmt: skip
        loaded = self.registry()
        plain: list[Scorer] = []
        judged: list[Scorer] = []
        checked: list[Scorer] = []
        for name, options in self._chosen:
            inst = loaded[name]
            decl = inst.scorer
            if decl.per_session or "scores" in decl.injected or ("links" in decl.injected and links is None):
                continue  # per conversation (tracescore.sessions); derived from the others by the engine (the
                # diagnosis); the link checker's, without one
            built = _build(inst, {**options, **{o: self.option(s, o) for o, s in decl.uses.items()}}, run, links)
            (checked if "links" in decl.injected else judged if decl.judged else plain).append(built)
        return plain, judged, checked


def deterministic_scorers() -> list[Scorer]:
    """Every installed scorer that needs no judge and no network, with its defaults: what scoring without a config
    and without a key runs (tests, benchmarks, a quick look)."""
    return ScorerPlan().deterministic()


def answer_prefix(plan: ScorerPlan | None = None) -> str | None:
    """The answer scorer's ``final_answer_prefix`` in ``plan`` (None: its default), which the semantic match's
    judge request reads (``engine/requests.py``, ``engine/estimate.py``)."""
    value = plan.option("answer", "final_answer_prefix") if plan is not None else option_value((), "answer",
                                                                                             "final_answer_prefix")
    return str(value) if value else None


def _build(inst: Installed, options: Mapping[str, Any], run: RunContext, links: Any) -> Scorer:
    """``inst``'s scorer for one run: its options, and what it asks the run for (``judge``, ``run``, ``links``)."""
    decl = inst.scorer
    names = decl.names(options)
    given: dict[str, Any] = dict(options)
    if "run" in decl.injected:
        given["run"] = run
    if "links" in decl.injected:
        given["links"] = links
    if "judge" in decl.injected:
        if run.judge is None:
            return _Constant(inst.name, Scored(absent_for(names, run.no_judge_reason)), names)
        given["judge"] = run.judge
    if decl.per_trace:
        return _PerTrace(inst.name, functools.partial(decl.func, **given), names, decl, run)
    built = decl.func(**given)
    return _label(built, inst.name, names)


def _per_session(
    decl: ScorerDef, names: tuple[str, ...], options: dict[str, Any], turns: Sequence[TraceResult]
) -> list[Score]:
    try:
        scores = list(decl.func(turns=turns, **options))
        for s in scores:
            if type(s) is not Score or s.name not in names:
                raise ValueError(f"returned {s!r}, which it does not declare ({', '.join(names)})")
        return scores
    except Exception as exc:  # noqa: BLE001 - a session scorer that raises leaves its scores absent, named
        first = (str(exc).strip().splitlines() or [""])[0]
        return list(absent_for(names, Reasons.SCORER_ERROR.format(error=f"{type(exc).__name__}: {first}")))


def _label(func: Scorer, name: str, names: tuple[str, ...]) -> Scorer:
    """``func`` named ``name``, with the score names it declares (a scorer error leaves them absent) and whether it
    takes the earlier turns' evidence (``carries``: a keyword-only ``earlier``); no wrapper, so the built-ins' hot
    path stays one call."""
    setattr(func, "__name__", name)  # noqa: B010 - a Scorer type says nothing of these attributes
    setattr(func, "score_names", names)  # noqa: B010
    setattr(func, "carries", _carries(func))  # noqa: B010
    return func


def _carries(func: Callable[..., Any]) -> bool:
    """Whether ``func`` declares the keyword-only parameter ``earlier`` (the earlier turns' evidence)."""
    try:
        param = inspect.signature(func).parameters.get("earlier")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind is param.KEYWORD_ONLY


class _Constant:
    """A judged scorer without a judge: the same absent scores on every trace."""

    __slots__ = ("__name__", "scored", "score_names")

    def __init__(self, name: str, scored: Scored, names: tuple[str, ...]) -> None:
        self.__name__, self.scored, self.score_names = name, scored, names

    def __call__(self, trace: Trace) -> Scored:
        return self.scored


class _PerTrace:
    """A per-trace scorer (a plugin's form): its ``list[Score]`` checked against its declaration, and with a
    ``judge`` the run's budget checked before each trace."""

    __slots__ = ("__name__", "carries", "declared", "func", "judge", "max_cost", "score_names")

    def __init__(
        self, name: str, func: Callable[..., Any], names: tuple[str, ...], decl: ScorerDef, run: RunContext
    ) -> None:
        self.__name__, self.func, self.score_names = name, func, names
        self.declared = frozenset(names)
        self.judge = run.judge if "judge" in decl.injected else None
        self.max_cost = run.max_cost
        self.carries = "earlier" in decl.injected

    def __call__(self, trace: Trace, earlier: Earlier | None = None) -> Scored:
        if self.judge is not None and (over := budget_reason(self.judge, self.max_cost, trace.id)) is not None:
            return Scored(absent_for(self.score_names, over))
        out = self.func(trace, earlier=earlier) if self.carries else self.func(trace)
        scores = out.scores if isinstance(out, Scored) else tuple(out)
        for s in scores:
            if type(s) is not Score:
                raise TypeError(f"returned {type(s).__name__}, not a tracescore Score (ts.score / ts.absent)")
            if s.name not in self.declared:
                raise ValueError(f"returned score {s.name!r}, which it does not declare ({', '.join(self.declared)})")
        return out if isinstance(out, Scored) else Scored(scores)


def _named(wrapped: list[Scorer], scorers: list[Scorer]) -> list[Scorer]:
    """``wrapped`` (the redacted forms of ``scorers``) keeping the names each declares."""
    return [_label(w, getattr(s, "__name__", "scorer"), getattr(s, "score_names", ()))
            for w, s in zip(wrapped, scorers, strict=True)]  # fmt: skip
