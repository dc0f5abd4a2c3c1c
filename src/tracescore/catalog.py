"""The score catalog: the registry's view of the installed scorers' declarations, tracescore's and plugins' alike.

Nothing is written here twice: a score's name, stage, kind, direction, range, version and the reasons it can be
absent for are declared beside its scorer (``@scorer(..., scores=[ScoreSpec(...)])``); this module reads them from
the loaded registry (``tracescore.registry.load``). Gate directions, sink data types and score configs, report
sections, the README table, ``tracescore scorers`` and the current view's removals read the catalog; a score name a
user types (``--min``, ``[gate]``) is checked against it.

An absence is either **does not apply** (a fact about the trace now, or the configuration no longer produces the
score: the platform sinks remove an earlier score of ours) or **not computed** (this run could not: the earlier score
stays, on the platform and as the current value in the store, marked stale). Each score's reasons are its scorer's
declared ones, plus those any score (``ANY_SCORE``) or any judged score (``JUDGED``) can be given by the run; a
reason not declared is treated as not computed, the safe side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any, Literal

from tracescore import registry
from tracescore.durations import format_duration
from tracescore.reasons import (
    DOES_NOT_APPLY as DOES_NOT_APPLY,
    NOT_COMPUTED as NOT_COMPUTED,
    REASONS as REASONS,
    Absence,
    Reason as Reason,
    Reasons as Reasons,
    absence_kind as _global_kind,
    declared_reason as declared_reason,
)

STAGES = registry.STAGES

_WHY = Reasons
ANY_SCORE: tuple[Reason, ...] = (_WHY.SETUP_DROPPED, _WHY.UNGIVEN, _WHY.JUDGE_ONLY, _WHY.UNCHANGED,
                                 _WHY.SCORER_ERROR)
"""The reasons the run can give any score: its scorer no longer runs (the mirror), it carries no reason, a
``backfill --judge-only`` or a ``run`` judging a trace again did not send it again (the mirror), its scorer raised
on the trace."""
JUDGED: tuple[Reason, ...] = (_WHY.NO_JUDGE, _WHY.JUDGE_OFF, _WHY.JUDGE_OFF_FLAG, _WHY.NO_SDK, _WHY.JUDGE_ERROR,
                              _WHY.BUDGET, _WHY.NOT_SAMPLED, _WHY.DAILY_BUDGET)  # fmt: skip
"""The reasons the run can give any score of a judged scorer (one taking ``judge`` or ``run``)."""

_KIND = {"numeric": "NUMERIC", "boolean": "BOOLEAN", "categorical": "CATEGORICAL"}
_DIRECTION = {"higher": 1, "lower": -1, None: 0}


@dataclass(frozen=True)
class Entry:
    """One score of the catalog, as its scorer declares it. ``direction``: +1 higher is better, -1 lower is better,
    0 neither (no regression). ``low``/``high``: the range its values (and so a run's mean) lie in; a gate limit
    outside it, or at the edge it can never cross, could never fail. ``reasons``: what it can be absent for (its
    scorer's, plus ``JUDGED`` for a judged one; ``ANY_SCORE`` besides). ``scorer``: the entry-point name;
    ``package``: the distribution and version that installed it."""

    name: str
    stage: str
    kind: Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]
    direction: int
    scorer: str
    version: str
    judged: bool
    definition: str
    reasons: tuple[Reason, ...]
    low: float
    high: float
    categories: tuple[str, ...]
    package: str
    spec: registry.ScoreSpec

    def matches(self, name: str) -> bool:
        """Whether ``name`` is this entry's score (``retrieval.recall_at_{k}`` matches any k)."""
        return self.spec.matches(name)


def _entry(inst: registry.Installed, spec: registry.ScoreSpec) -> Entry:
    decl = inst.scorer
    head = spec.name.split(".", 1)[0]
    matching = [s for s in decl.stages if head in (s, s.removesuffix("s"))]
    known = [s for s in matching if s in STAGES]
    first = decl.stages[0]
    stage = known[0] if known else first if first in STAGES or not matching else matching[0]
    boolean = spec.kind == "boolean"
    low = spec.min if spec.min is not None else 0.0 if boolean else -math.inf
    high = spec.max if spec.max is not None else 1.0 if boolean else math.inf
    own = spec.reasons + (JUDGED if decl.judged else ())
    kind = _KIND[spec.kind]
    return Entry(spec.name, stage, kind, _DIRECTION[spec.better], inst.name, decl.version, decl.judged,  # type: ignore[arg-type]
                 spec.definition, tuple(dict.fromkeys(own)), low, high, spec.categories, inst.package, spec)


@lru_cache(maxsize=4)
def _view(loaded: registry.Registry) -> tuple[Entry, ...]:
    return tuple(_entry(inst, spec) for inst, spec in loaded.specs())


def entries(loaded: registry.Registry | None = None) -> tuple[Entry, ...]:
    """Every score of every installed scorer (of ``loaded``, default the installed registry), in the registry's
    order."""
    return _view(registry.load() if loaded is None else loaded)


@lru_cache(maxsize=4096)
def _entry_of(loaded: registry.Registry, name: str) -> Entry | None:
    for e in _view(loaded):
        if e.matches(name):
            return e
    return None


def entry(name: str) -> Entry | None:
    """The catalog entry of a score name (``retrieval.recall_at_3`` → the recall entry), or None."""
    return _entry_of(registry.load(), name)


def names_of(scorer: str) -> tuple[str, ...]:
    """The names a scorer (entry-point name) declares, in its order (recall as its ``{k}`` template)."""
    return tuple(e.name for e in entries() if e.scorer == scorer)


def is_known(name: str) -> bool:
    """Whether ``name`` is a catalog score (a versioned name ``x@v`` counts as ``x``)."""
    return entry(name.split("@", 1)[0]) is not None


@lru_cache(maxsize=4096)
def _declared_kind(loaded: registry.Registry, name: str, reason: str) -> Absence | None:
    found = _entry_of(loaded, name)
    if found is None:
        return None
    for declared in found.spec.reasons:
        if declared.kind is not None and (declared.text == reason or declared.pattern.fullmatch(reason)):
            return declared.kind
    return None


@lru_cache(maxsize=4096)
def _any_kind(loaded: registry.Registry, reason: str) -> Absence | None:
    for e in _view(loaded):
        for declared in e.spec.reasons:
            if declared.kind is not None and (declared.text == reason or declared.pattern.fullmatch(reason)):
                return declared.kind
    return None


def absence_kind(reason: str | None, name: str | None = None) -> Absence:
    """The class of an absence ``reason``: as the scorer of ``name`` declares it, else as the run's reasons say,
    else as any installed scorer declares it (a plugin's own reason); undeclared → not computed (the safe side)."""
    if reason is None:
        return NOT_COMPUTED
    loaded = registry.load()
    if name is not None and (kind := _declared_kind(loaded, name, reason)) is not None:
        return kind
    if declared_reason(reason) is not None:
        return _global_kind(reason)
    return _any_kind(loaded, reason) or NOT_COMPUTED


def describe() -> list[dict[str, Any]]:
    """Every installed scorer as ``tracescore scorers`` shows it: entry point, package, stage, version, its scores
    (kind, direction, range, absence reasons with their class) and its options with their defaults."""
    out = []
    for inst in registry.load().installed.values():
        decl = inst.scorer
        fields = decl.options_model.model_fields
        out.append({
            "name": inst.name,
            "entry_point": f"{registry.GROUP}: {inst.name} = {inst.value}",
            "package": inst.dist,
            "package_version": inst.dist_version,
            "stage": list(decl.stages),
            "version": decl.version,
            "judged": decl.judged,
            "scores": [{
                "name": s.name, "kind": s.kind, "better": s.better, "min": s.min, "max": s.max,
                "categories": list(s.categories), "definition": s.definition,
                "absent": {r.text: r.kind for r in s.reasons},
            } for s in decl.specs],
            "options": [{"name": n, "type": registry.type_name(f.annotation), "default": _plain(f.default)}
                        for n, f in fields.items()],
        })  # fmt: skip
    return out


def _plain(value: object) -> object:
    """An option's default as JSON and as written in tracescore.toml (a span as ``"365d"``)."""
    return format_duration(value) if isinstance(value, timedelta) else value
