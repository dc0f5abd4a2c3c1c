"""The scoring an integration holds for a whole experiment: one recipe (scorers, the shared judge), one stage.

Built once per ``evaluators(...)`` call, so the judge, its usage and its budget are the experiment's, and every
trace goes through the same recipe and stage as ``tracescore score`` (``engine/recipe.py``, ``score_stage``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from tracescore.catalog import STAGES, entry
from tracescore.config import Config
from tracescore.engine.recipe import Options, Recipe, build_recipe, options, score_stage
from tracescore.engine.stage import Stage
from tracescore.errors import ConfigError
from tracescore.judge.protocol import Judge
from tracescore.result import TraceResult
from tracescore.scorers.grounding import NO_JUDGE
from tracescore.scores import Score
from tracescore.sources.base import Record
from tracescore.trace import Trace

__all__ = ["GOLD_SYNONYMS", "Scoring", "chosen_stages", "label_fields"]

GOLD_SYNONYMS = ("reference", "answer", "expected")  # a text under one of these is the gold answer


def chosen_stages(stages: Iterable[str] | None) -> frozenset[str]:
    """The stages to report (None: all); ConfigError naming an unknown stage and the known ones."""
    if stages is None:
        return frozenset(STAGES)
    chosen = frozenset([stages] if isinstance(stages, str) else stages)
    unknown = sorted(chosen - set(STAGES))
    if unknown:
        raise ConfigError(f"unknown stage(s) {', '.join(map(repr, unknown))}: use some of {', '.join(STAGES)}")
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
    """Scores one native record at a time with the recipe of ``config`` (None: the defaults) and ``k``.

    ``judge`` (e.g. ``AnthropicJudge()``) runs the judged stages, shared by every trace; without one they are absent
    with the reason ``score`` gives, unless ``config`` turns the judge on and a key is set (then it is built as
    ``score`` builds it)."""

    def __init__(
        self,
        adapter: Callable[[object], Trace],
        *,
        judge: Judge | None,
        k: int,
        stages: Iterable[str] | None,
        config: Config | None,
    ) -> None:
        self.stages = chosen_stages(stages)
        opts = options(config, k=k) if config is not None else Options(k=k)
        if judge is None and config is None:
            opts = replace(opts, judge_off=NO_JUDGE)  # no judge given: absent, never one built from the environment
        self.recipe: Recipe = build_recipe(opts, None, judge=judge)
        self._stage = Stage(adapter, self.recipe.scorers, "", oneshot=True)  # as score_traces: one record
        self._lock = threading.Lock()  # the runners call evaluators from their own threads

    def score(self, payload: object) -> TraceResult:
        """The result of one record (a record that is not a readable trace: a result carrying the error)."""
        with self._lock:
            return next(score_stage(self._stage, [Record(payload=payload)]))

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


def _stage_of(name: str) -> str | None:
    found = entry(name)
    return found.stage if found is not None else None
