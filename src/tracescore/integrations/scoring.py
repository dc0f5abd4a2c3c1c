"""The scoring an integration holds for a whole experiment: one recipe (scorers, the shared judge), one stage.

Built once per ``evaluators(...)`` call, so the judge, its usage and its budget are the experiment's, and every
trace goes through the same recipe and stage as ``tracescore score`` (``engine/recipe.py``, ``score_stage``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import msgspec

from tracescore.catalog import STAGES, entries, entry
from tracescore.config import Config
from tracescore.engine.recipe import Options, Recipe, build_recipe, command_line, labelled, options, score_stage
from tracescore.engine.stage import Stage
from tracescore.errors import ConfigError
from tracescore.judge.protocol import Judge, JudgeUsage
from tracescore.registry import choose
from tracescore.result import TraceResult
from tracescore.scorers.grounding import NO_JUDGE
from tracescore.scores import Score
from tracescore.sources.base import Record
from tracescore.trace import Trace

GOLD_SYNONYMS = ("reference", "answer", "expected")  # a text under one of these is the gold answer


def chosen_stages(stages: Iterable[str] | None) -> frozenset[str]:
    """The stages to report (None: all, a plugin's own stage too); ConfigError naming an unknown stage and the known
    ones (tracescore's and the installed plugins')."""
    known = tuple(dict.fromkeys([*STAGES, *(e.stage for e in entries())]))
    if stages is None:
        return frozenset(known)
    chosen = frozenset([stages] if isinstance(stages, str) else stages)
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ConfigError(f"unknown stage(s) {', '.join(map(repr, unknown))}: use some of {', '.join(known)}")
    return chosen


def label_fields(*parts: object) -> dict[str, Any]:
    """The label fields of ``parts`` (mappings, later ones winning; others ignored), a text synonym as
    ``gold_answer`` when none is given (the adapters keep the fields they know)."""
    merged: dict[str, Any] = {}
    for part in parts:
        if isinstance(part, Mapping):
            merged.update(part)
    if merged.get("gold_answer") is None:
        gold = next((merged[k] for k in GOLD_SYNONYMS if isinstance(merged.get(k), str)), None)
        if gold is not None:
            merged["gold_answer"] = gold
    return merged


class Scoring:
    """Scores one native record at a time with the recipe of ``config`` (None: the defaults) and ``k`` (None: the
    config's).

    ``judge`` (e.g. ``AnthropicJudge()``) runs the judged stages, shared by every trace; without one they are absent
    with the reason ``score`` gives, unless ``config`` turns the judge on and a key is set (then it is built as
    ``score`` builds it). ``store`` (a local store's path) holds the judge's cache and brings what ``score --store``
    reads from it; ``max_cost`` (USD) replaces the config's judge budget."""

    def __init__(
        self,
        adapter: Callable[[object], Trace],
        *,
        judge: Judge | None,
        k: int | None,
        stages: Iterable[str] | None,
        config: Config | None,
        store: str | Path | None = None,
        max_cost: float | None = None,
    ) -> None:
        self.stages = chosen_stages(stages)
        opts = options(config, k=k) if config is not None else Options(scorers=choose(None, (), command_line(k)))
        if judge is None and config is None:
            opts = replace(opts, judge_off=NO_JUDGE)  # no judge given: absent, never one built from the environment
        if max_cost is not None:
            opts = replace(opts, max_cost=max_cost)
        self.recipe: Recipe = build_recipe(opts, store, judge=judge)
        self._stage = Stage(labelled(adapter, store), self.recipe.scorers, "", oneshot=True)  # as score_traces
        self._lock = threading.Lock()  # the runners call evaluators from their own threads

    @property
    def usage(self) -> JudgeUsage | None:
        """What the judge spent so far (None: no judge), with its model as ``model``."""
        return self.recipe.judge.usage if self.recipe.judge is not None else None

    @property
    def judge_model(self) -> str | None:
        return self.recipe.judge.model if self.recipe.judge is not None else None

    def spent(self) -> tuple[dict[str, Any] | None, str]:
        """What the judge spent so far (``spent``'s sum; None: no judge) and its line."""
        usage = self.usage
        if usage is None:
            return None, "no judge"
        total = spent([usage.as_dict() | {"model": self.judge_model}])
        return total, spent_line(total)

    def score(self, payload: object) -> TraceResult:
        """The result of one record (a record that is not a readable trace: a result carrying the error)."""
        with self._lock:
            return next(score_stage(self._stage, [Record(payload=payload)]))

    def score_session(self, payloads: Sequence[object], session_id: str | None = None) -> list[TraceResult]:
        """The results of the turns of one conversation (records, in the order given), each scored with the search
        hits and successful fetches of the turns before it (by timestamp: ``engine/sessions.py``); a turn that names
        no session is one of ``session_id`` (default: the session of a turn that names one, else ``"session"``)."""
        stage = replace(self._stage, adapter=functools.partial(_as_turn, self._stage.adapter, session_id))
        records = [Record(payload=p, line=n) for n, p in enumerate(payloads, start=1)]
        with self._lock:
            results = list(score_stage(stage, records, carry=True))
        return sorted(results, key=lambda r: r.line or 0)

    def reported(self, result: TraceResult) -> tuple[list[Score], list[str]]:
        """The present scores of ``result`` in the chosen stages, in the result's order, and one line per absent one
        (``name: reason``) for the platform's ``tracescore.absent`` result."""
        present: list[Score] = []
        absent: list[str] = []
        for s in result.scores.values():
            if _stage_of(s.name) not in self.stages:
                continue
            if s.value is None:
                absent.append(f"{s.name}: {s.reason or 'not computed'}")
            else:
                present.append(s)
        return present, absent

    def close(self) -> None:
        self.recipe.close()


def _as_turn(adapter: Callable[[object], Trace], session_id: str | None, payload: object) -> Trace:
    """``adapter``'s trace of ``payload``, a turn of ``session_id`` when it names no session of its own."""
    trace = adapter(payload)
    if trace.session_id is not None:
        return trace
    if isinstance(trace, msgspec.Struct):  # the hot path's decoder of a canonical line
        return cast(Trace, msgspec.structs.replace(trace, session_id=session_id or "session"))
    return trace.model_copy(update={"session_id": session_id or "session"})


def _stage_of(name: str) -> str | None:
    found = entry(name)
    return found.stage if found is not None else None


USAGE_FIELDS = ("calls", "input_tokens", "output_tokens", "cache_hits", "cost_usd")  # what an experiment reports


def spent(usages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The sum of judge usages (``JudgeUsage.as_dict()``, with ``model``): the ``USAGE_FIELDS``, ``priced`` and the
    models."""
    total: dict[str, Any] = dict.fromkeys(USAGE_FIELDS, 0)
    total["cost_usd"], total["priced"], models = 0.0, True, set()
    for usage in usages:
        for name in USAGE_FIELDS:
            total[name] += usage.get(name) or 0
        total["priced"] = total["priced"] and bool(usage.get("priced", True))
        models.add(str(usage.get("model")))
    total["cost_usd"] = round(total["cost_usd"], 6)
    total["models"] = sorted(models)
    return total


def spent_line(total: Mapping[str, Any]) -> str:
    """One line for the end of a session or experiment: the judge's calls, tokens and cost."""
    cost = f"~${total['cost_usd']:.4f}" if total.get("priced", True) else "cost unknown (model not in the price table)"
    models = ", ".join(total.get("models") or [])
    return (f"judge {models}: {total['calls']} API calls, {total['cache_hits']} answered from the cache;"
            f" {total['input_tokens']} input tokens, {total['output_tokens']} output tokens, {cost}")  # fmt: skip
