"""The one registry of scorers: tracescore's own and a plugin's, each an entry point of group ``tracescore.scorers``
(tracescore registers its built-ins in its own ``pyproject.toml``, as ``llm`` does: one path, no second class).

A scorer is a function declared with ``@scorer``: its stage(s), version, scores (``ScoreSpec``) and, as its
keyword-only parameters with defaults, its options (declared nowhere else; ``[scorers.<entry point>]`` sets them).
``f(trace, *, options...) -> list[Score]`` is called per trace (a plugin's usual form); ``f(*, options...)`` with no
positional parameter is a factory called once per run that returns the per-trace function (the built-ins: their
shared Scores are built once, the hot path). Parameters the run hands in, never options: ``judge`` (the run's judge:
pool, cache, budget, sampling, redaction), ``run`` (``RunContext``: the built-in judged scorers'), ``links`` (the
link checker: run only with ``--check-links``), ``scores`` (the scores so far: the diagnosis), ``earlier`` (the
evidence of the earlier turns of the trace's session, ``tracescore.session.Earlier``, or None: declared on the function
that scores a trace, the per-trace form's own or the one a factory returns; handed per trace), ``turns`` (a session
scorer's, stage ``session``, called once per conversation with its scored turns, oldest first).

``load`` reads the entry points once per command, before any work: one that cannot be imported, is no ``@scorer``,
declares a name outside its stage or one another scorer declares stops the command (ConfigError, exit 2) in one
line naming the entry point and the packages. The score catalog (``tracescore.catalog``) is its view.
"""

from __future__ import annotations

import functools
import inspect
import re
import string
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from tracescore.durations import format_duration
from tracescore.entry_points import Origin, load_group
from tracescore.errors import ConfigError
from tracescore.reasons import DOES_NOT_APPLY, NOT_COMPUTED, Absence, Reason

GROUP = "tracescore.scorers"
STAGES: tuple[str, ...] = ("retrieval", "trajectory", "grounding", "citations", "answer", "surface", "diagnosis",
                           "session")
"""The stages tracescore knows, in report and run order (a plugin's own stage comes after them)."""
INJECTED = frozenset({"judge", "run", "links", "scores", "earlier", "turns"})
"""Parameters the run hands a scorer (never options)."""
KINDS = ("numeric", "boolean", "categorical")
BETTER = ("higher", "lower", None)

@dataclass(frozen=True, eq=False)
class ScoreSpec:
    """One score a scorer writes. ``kind``: ``"numeric"`` (``min``/``max`` its range, when it has one),
    ``"boolean"`` or ``"categorical"`` (``categories``). ``better``: ``"higher"``, ``"lower"`` or None (a
    diagnostic: shown, never gated by default). ``absent``: each reason the scorer may give (a ``{field}`` stands for
    any text) → ``"does not apply"`` (an earlier score is removed) or ``"not computed"`` (it is kept); a built-in's
    ``None`` marks a reason wrapping another (``{reason}``) that takes the inner one's class. A ``{option}`` in the
    name is filled by the scorer's option of that name (``retrieval.recall_at_{k}``)."""

    name: str
    kind: Literal["numeric", "boolean", "categorical"]
    better: Literal["higher", "lower"] | None = None
    min: float | None = None
    max: float | None = None
    categories: tuple[str, ...] = ()
    absent: Mapping[str, Absence | None] = field(default_factory=dict)
    definition: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_{}]+)*", self.name):
            raise ValueError(f"score name {self.name!r}: lower-case words joined by '.' (e.g. 'answer.cites_id')")
        if self.kind not in KINDS:
            kinds = ", ".join(map(repr, KINDS))
            raise ValueError(f"score {self.name!r}: kind must be one of {kinds}, got {self.kind!r}")
        if self.better not in BETTER:
            raise ValueError(f"score {self.name!r}: better must be 'higher', 'lower' or None, got {self.better!r}")
        for reason, kind in self.absent.items():
            if kind is not None and kind not in (DOES_NOT_APPLY, NOT_COMPUTED):
                raise ValueError(f"score {self.name!r}: absent reason {reason!r} must map to 'does not apply' or"
                                 f" 'not computed', got {kind!r}")  # fmt: skip
        object.__setattr__(self, "categories", tuple(self.categories))
        object.__setattr__(self, "absent", dict(self.absent))

    @property
    def reasons(self) -> tuple[Reason, ...]:
        return tuple(Reason(text, kind) for text, kind in self.absent.items())

    @property
    def fields(self) -> tuple[str, ...]:
        """The options named in the score name (``("k",)`` for ``retrieval.recall_at_{k}``)."""
        return tuple(f for _, f, _, _ in string.Formatter().parse(self.name) if f)

    def matches(self, name: str) -> bool:
        """Whether ``name`` is this score (a ``{field}`` matches a positive whole number or a word)."""
        if "{" not in self.name:
            return name == self.name
        return re.fullmatch(re.sub(r"\\\{\w+\\\}", "[A-Za-z0-9_]+", re.escape(self.name)), name) is not None


def reasons(*declared: Reason) -> dict[str, Absence | None]:
    """The ``absent`` mapping of ``ScoreSpec`` from declared ``Reason`` values (the built-ins' form)."""
    return {r.text: r.kind for r in declared}


@dataclass(frozen=True)
class RunContext:
    """What the run hands its built-in judged scorers (parameter ``run``): the judge (None: absent with
    ``no_judge_reason``), the budget in USD, the agreement of the last calibration per score, ``[judge]
    merge_partial`` and the rubrics."""

    judge: Any = None
    no_judge_reason: str = "no judge configured"
    max_cost: float | None = None
    agreement: dict[str, dict[str, Any]] | None = None
    merge_partial: str | None = None
    rubrics: Any = None


class ScorerDef:
    """A declared scorer: the function, unchanged (calling it calls the function), and its declaration."""

    def __init__(self, func: Callable[..., Any], stage: str | Sequence[str], version: str,
                 scores: Sequence[ScoreSpec], uses: Mapping[str, str]) -> None:  # fmt: skip
        self.func = func
        self.stages = (stage,) if isinstance(stage, str) else tuple(stage)
        self.version = str(version)
        self.specs = tuple(scores)
        self.uses = dict(uses)
        self.__name__ = getattr(func, "__name__", "scorer")
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        params = inspect.signature(func).parameters.values()
        self.per_trace = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self.injected = frozenset(p.name for p in params if p.name in INJECTED and p.kind is p.KEYWORD_ONLY)
        self.judged = bool(self.injected & {"judge", "run"})
        self.per_session = "turns" in self.injected  # a session scorer: f(*, turns, options...) per conversation
        if self.per_session and (self.per_trace or self.stages != ("session",)):
            raise ValueError(f"scorer {self.__name__}: a session scorer (parameter 'turns') has stage 'session' only")
        if not self.specs:
            raise ValueError(f"scorer {self.__name__}: declares no score (scores=[ScoreSpec(...), ...])")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<scorer {self.__name__} stage={'/'.join(self.stages)} version={self.version}>"

    @functools.cached_property
    def options_model(self) -> type[BaseModel]:
        """The options as a pydantic model built from the signature: their annotations and defaults."""
        hints = typing.get_type_hints(self.func, include_extras=True)
        fields: dict[str, Any] = {}
        for p in inspect.signature(self.func).parameters.values():
            if p.kind is p.KEYWORD_ONLY and p.name not in INJECTED and p.default is not p.empty:
                fields[p.name] = (hints.get(p.name, Any), p.default)
        config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
        model: type[BaseModel] = create_model(f"{self.__name__}_options", __config__=config, **fields)
        return model

    @property
    def defaults(self) -> dict[str, Any]:
        return {n: f.default for n, f in self.options_model.model_fields.items()}

    def accepts(self) -> str:
        """What the options are, for a message: ``k (int, default 5), ...`` or ``no option``."""
        parts = [f"{n} ({type_name(f.annotation)}, default {_shown(f.default)!r})"
                 for n, f in self.options_model.model_fields.items()]  # fmt: skip
        return ", ".join(parts) or "no option"

    def names(self, options: Mapping[str, Any]) -> tuple[str, ...]:
        """The score names the scorer writes with ``options`` (``{k}`` filled)."""
        return tuple(s.name.format(**{f: options[f] for f in s.fields}) if s.fields else s.name for s in self.specs)


def _shown(value: Any) -> Any:
    return format_duration(value) if isinstance(value, timedelta) else value


def type_name(annotation: Any) -> str:
    """An option's type as a person reads it (``int``, ``str | None``, ``duration such as '365d'``)."""
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if annotation is timedelta:
        return "duration such as '365d'"
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def scorer(
    *,
    stage: str | Sequence[str],
    version: str,
    scores: Sequence[ScoreSpec],
    uses: Mapping[str, str] | None = None,
) -> Callable[[Callable[..., Any]], ScorerDef]:
    """Declare a scorer: its ``stage`` (a built-in spanning two may give both), ``version`` (part of the run's
    fingerprint: bump it when what it computes changes meaning), ``scores`` and, rarely, ``uses`` (an option of
    another scorer it reads: ``{"final_answer_prefix": "answer"}``). Registered only through its entry point."""

    def declare(func: Callable[..., Any]) -> ScorerDef:
        return ScorerDef(func, stage, version, scores, uses or {})

    return declare


# -- the installed scorers -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Installed(Origin):
    """One entry point of group ``tracescore.scorers``: its name, where it points, its distribution, its scorer."""

    scorer: ScorerDef

    @property
    def builtin(self) -> bool:
        return self.dist == "tracescore"


class Registry:
    """The installed scorers by entry-point name (tracescore's own first, each distribution's in its order)."""

    def __init__(self, installed: Iterable[Installed]) -> None:
        self.installed: dict[str, Installed] = {i.name: i for i in installed}
        self._check()

    def __getitem__(self, name: str) -> Installed:
        return self.installed[name]

    def __contains__(self, name: object) -> bool:
        return name in self.installed

    def names(self) -> list[str]:
        return list(self.installed)

    def specs(self) -> Iterable[tuple[Installed, ScoreSpec]]:
        for inst in self.installed.values():
            for spec in inst.scorer.specs:
                yield inst, spec

    def owner(self, score_name: str) -> tuple[Installed, ScoreSpec] | None:
        """The scorer declaring ``score_name`` and its spec (``retrieval.recall_at_3`` → retrieval's recall)."""
        for inst, spec in self.specs():
            if spec.matches(score_name):
                return inst, spec
        return None

    def _check(self) -> None:
        seen: dict[str, Installed] = {}
        for inst in self.installed.values():
            stages = inst.scorer.stages
            for spec in inst.scorer.specs:
                if not _in_stage(spec.name, stages):
                    raise ConfigError(
                        f"scorer entry point {inst.name!r} ({inst.package}): score {spec.name!r} is outside its stage"
                        f" {'/'.join(stages)!r}: a name starts with its stage ('{stages[0]}.…')"
                    )
                example = spec.name.replace("{", "").replace("}", "")
                for other_name, other in seen.items():
                    if other_name == spec.name or (other is not inst and _same(other, other_name, spec, example)):
                        raise ConfigError(
                            f"score {spec.name!r} is declared twice: by scorer entry point {other.name!r}"
                            f" ({other.package}) and by {inst.name!r} ({inst.package})"
                        )
                seen[spec.name] = inst


def _same(other: Installed, other_name: str, spec: ScoreSpec, example: str) -> bool:
    theirs = next(s for s in other.scorer.specs if s.name == other_name)
    return theirs.matches(spec.name) or spec.matches(other_name) or theirs.matches(example)


def _in_stage(name: str, stages: Sequence[str]) -> bool:
    """Whether ``name`` starts with one of ``stages`` (``citation.…`` is of stage ``citations``; ``diagnosis`` is
    its stage's one score)."""
    head = name.split(".", 1)[0]
    return any(head in (s, s.removesuffix("s")) for s in stages)


def _ordered(installed: Iterable[Installed]) -> list[Installed]:
    """The scorers in stage order (``STAGES``, a stage tracescore does not know after them), tracescore's before a
    plugin's within a stage: the order they run in, and of the scores in a result line."""
    rank = {stage: i for i, stage in enumerate(STAGES)}
    return sorted(installed, key=lambda i: (rank.get(i.scorer.stages[0], len(rank)), not i.builtin))


_LOADED: Registry | None = None
_MADE: tuple[Installed, ...] = ()  # the scorers the loaded configuration makes (its [[criteria]])


def load(*, refresh: bool = False, made: Sequence[Installed] | None = None) -> Registry:
    """The registry of installed scorers, loaded from the entry points once per process (``refresh``: again, after
    an install), and of those the loaded configuration ``made`` (its ``[[criteria]]``: in place of earlier ones,
    checked as a plugin's); ConfigError (exit 2) names an entry point or a scorer that cannot be used."""
    global _LOADED, _MADE
    if _LOADED is None or refresh or (made is not None and _identity(made) != _identity(_MADE)):
        found = load_group(GROUP, kind="scorer", want=ScorerDef, what="a @tracescore.scorer function",
                           make=Installed)
        keep = _MADE if made is None else tuple(made)
        _LOADED, _MADE = Registry(_ordered([*found, *keep])), keep
    return _LOADED


def _identity(made: Sequence[Installed]) -> list[tuple[str, str, str]]:
    """What tells made scorers apart: the same criteria made again are the same scorers."""
    return [(i.name, i.dist, i.scorer.version) for i in made]


def validate_options(inst: Installed, given: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``given`` (``[scorers.<name>]``) checked against the scorer's signature: every option with its value (the
    default when not given); ConfigError names the key, the scorer and what it accepts."""
    model = inst.scorer.options_model
    try:
        return dict(model.model_validate(dict(given)))
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in err["loc"])
        accepts = inst.scorer.accepts()
        if err["type"] == "extra_forbidden":
            raise ConfigError(
                f"{where}: unknown key {key!r} in [scorers.{inst.name}]; scorer {inst.name!r} ({inst.package}) accepts:"
                f" {accepts}"
            ) from None
        msg = str(err["msg"]).removeprefix("Value error, ")
        got = "" if ", got " in msg else f", got {err.get('input')!r}"
        raise ConfigError(
            f"{where}: bad value for [scorers.{inst.name}] {key}: {msg}{got}; scorer"
            f" {inst.name!r} ({inst.package}) accepts: {accepts}"
        ) from None


Chosen = tuple[tuple[str, Mapping[str, Any]], ...]
"""The scorers a run uses, in the registry's order: (entry-point name, every option's value)."""


def choose(
    names: Iterable[str] | None = None,
    disable: Iterable[str] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    where: str = "tracescore.toml",
) -> Chosen:
    """The installed scorers ``names`` (None: every one) but ``disable``, each with its ``options`` (by entry-point
    name; every given table checked, a disabled scorer's too) validated against its signature; ConfigError names an
    unknown scorer or option and what is installed or accepted."""
    loaded = load()
    options = options or {}
    wanted = loaded.names() if names is None else list(names)
    disable = list(disable)
    for name in [*wanted, *disable, *options]:
        if name not in loaded:
            raise ConfigError(
                f"{where}: unknown scorer {name!r}; installed: {', '.join(loaded.names())} ('tracescore scorers'"
                " lists them)"
            )
    checked = {n: validate_options(loaded[n], given, where) for n, given in options.items()}
    picked = [n for n in loaded.names() if n in wanted and n not in disable]
    return tuple((n, checked[n] if n in checked else validate_options(loaded[n], {}, where)) for n in picked)


def option_value(chosen: Chosen, scorer: str, name: str) -> Any:
    """The value of ``scorer``'s option ``name`` in ``chosen`` (its default when the scorer is not chosen)."""
    for picked, options in chosen:
        if picked == scorer:
            return options[name]
    return load()[scorer].scorer.defaults[name]
