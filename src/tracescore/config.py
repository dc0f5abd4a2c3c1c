"""``tracescore.toml``, declared in one place: every section's schema, read the same way by every command.

The core sections are declared in ``sections.py`` (``[source]``, ``[job]``, ``[scoring]``, ``[scorers]``, ``[judge]``,
``[mapping]``, ``[gate]``, ``[sinks]``); each scorer's options are its signature's (``[scorers.<name>]``);
each platform declares its own (``[<platform>]``) in its folder and the registry hands them over.
Nothing registers itself on import. A wrong section, key or value fails with the file, the dotted key and what is
allowed. Credentials never live in the file: the platform clients read them from the environment.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from tracescore.adapters.mapping import MappingConfig
from tracescore.errors import ConfigError
from tracescore.judge.pricing import Price
from tracescore.judge.providers import ProviderSettings
from tracescore.judge.redact import Redactor, redactor
from tracescore.judge.registry import provider
from tracescore.judge.rubrics import load_rubric
from tracescore.judge.settings import JudgeSettings
from tracescore.platforms import registry
from tracescore.registry import Chosen, choose, load as registry_load
from tracescore.scorers.criteria import Criterion, configure as configure_criteria, read_criteria
from tracescore.scorers.rubrics import RUBRIC_KEYS, Rubrics, choose_rubrics
from tracescore.sections import (
    CORE_SECTIONS,
    JUDGE_SALT as JUDGE_SALT,
    SAMPLING_KEYS,
    JobSettings as JobSettings,
    ScoringSettings as ScoringSettings,
    SourceSettings as SourceSettings,
    option_of as option_of,
)

DEFAULT_CONFIG_FILE = "tracescore.toml"


def schema() -> dict[str, type[BaseModel]]:
    """Every known section: the core ones, then each registered platform's."""
    sections = dict(CORE_SECTIONS)
    for platform in registry.platforms().values():
        sections.update(platform.sections)
    return sections


class Config:
    """The loaded configuration: one validated model per known section (defaults for sections not in the file)."""

    def __init__(
        self, sections: dict[str, BaseModel], path: Path | None = None, criteria: tuple[Criterion, ...] = ()
    ) -> None:
        self.path = path
        self._sections = sections
        self._rubrics: Rubrics | None = None
        self.criteria = criteria  # [[criteria]]: judged scorers made from the file (scorers/criteria.py)

    def scorers(self, overrides: dict[str, dict[str, Any]] | None = None) -> Chosen:
        """The scorers ``[scoring] scorers``/``disable`` choose, each with its ``[scorers.<name>]`` options (and
        ``overrides``, the command line's, winning), checked against its signature: ConfigError names the key, the
        scorer and what it accepts."""
        scoring: ScoringSettings = self.section("scoring")
        given = {name: dict(values) for name, values in self.section("scorers").root.items()}
        for name, values in (overrides or {}).items():
            given.setdefault(name, {}).update(values)
        where = str(self.path) if self.path is not None else DEFAULT_CONFIG_FILE
        return choose(scoring.scorers, scoring.disable, given, where=where)

    def section(self, name: str) -> Any:
        """The validated model of ``[name]`` (its defaults when the file has no such section)."""
        if name not in self._sections:
            known = schema()
            if name not in known:
                raise ConfigError(f"unknown config section {name!r}; expected one of {_known()}")
            self._sections[name] = known[name]()
        return self._sections[name]

    @property
    def mapping(self) -> MappingConfig:
        return self.section("mapping")  # type: ignore[no-any-return]

    @property
    def judge_model(self) -> str:
        """The judge's model (the provider's own id): ``[judge] model`` when set, else ``[scoring] judge_model``
        when set, else the provider's default."""
        judge: JudgeSettings = self.section("judge")
        scoring = self.section("scoring")
        if judge.model:
            return judge.model
        if judge.provider != "anthropic" and "judge_model" not in scoring.model_fields_set:
            return provider(judge.provider).model_for(self.judge_provider) or ""  # "": make_judge names the key
        return scoring.judge_model  # type: ignore[no-any-return]

    @property
    def judge_provider(self) -> ProviderSettings:
        """``[judge] provider`` and the keys a provider reads (``[judge.options]``: a plugin's)."""
        judge: JudgeSettings = self.section("judge")
        return ProviderSettings(judge.provider, judge.region, judge.project, judge.base_url, judge.api_key_env,
                                judge.structured, judge.endpoint, judge.deployment, judge.api_version,
                                tuple(sorted(judge.options.items())))  # fmt: skip

    @property
    def judge_price(self) -> Price | None:
        """``[judge.price]`` as a price (cached input at the input price unless given); None when not set."""
        price = self.section("judge").price
        if price is None:
            return None
        cached = price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
        return Price(price.input_per_mtok, price.output_per_mtok, cached)

    @property
    def redactor(self) -> Redactor | None:
        """``[judge] redact`` as the redactor every judge request is built through (None: nothing redacted)."""
        return redactor(self.section("judge").redact)

    @property
    def rubrics(self) -> Rubrics:
        """The rubric of each judged stage (``[judge] rubric``, ``surface_rubric``, ``semantic_rubric``; a file path
        is relative to the config file), read and checked once; ConfigError names the file and the key."""
        if self._rubrics is None:
            judge: JudgeSettings = self.section("judge")
            self._rubrics = choose_rubrics(
                judge.model_dump(include=set(RUBRIC_KEYS)),
                base=self.path.parent if self.path is not None else None,
                source=str(self.path) if self.path is not None else DEFAULT_CONFIG_FILE,
            )
        return self._rubrics


def _known() -> str:
    return ", ".join(f"[{n}]" for n in sorted(schema())) + ", [[criteria]]"


def load_config(path: str | Path | None = None) -> Config:
    """Read ``path`` (or ``./tracescore.toml`` when it exists); no file means every default.

    Raises ConfigError naming the file, the key and what is allowed.
    """
    if path is None:
        candidate = Path(DEFAULT_CONFIG_FILE)
        if not candidate.is_file():
            configure_criteria((), DEFAULT_CONFIG_FILE)  # none: a file loaded earlier in this process made them
            return Config({})
        path = candidate
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    criteria = read_criteria(data.pop("criteria", []), base=path.parent, source=str(path))
    config = Config(parse_sections(data, source=str(path)), path, criteria)
    configure_criteria(criteria, str(path))  # the registry's view holds them: catalog, sinks, gate, report, store
    config.rubrics  # noqa: B018 - a bad rubric file stops every command at once, naming the file and the key
    config.scorers()  # so does an unknown scorer or a bad option of one
    return config


MOVED = {
    ("scoring", "k"): "[scorers.retrieval] k",
    ("scoring", "final_answer_prefix"): "[scorers.answer] final_answer_prefix",
    ("scoring", "stale_after"): "[scorers.stale] stale_after",
}
"""Keys that became a scorer's option (declared in its signature): where they live now."""


def parse_sections(data: dict[str, Any], *, source: str = DEFAULT_CONFIG_FILE) -> dict[str, BaseModel]:
    """Validate a decoded TOML document section by section."""
    known = schema()
    sections: dict[str, BaseModel] = {}
    for name, body in data.items():
        for key in body if isinstance(body, dict) else ():
            if (name, key) in MOVED:
                raise ConfigError(f"{source}: {name}.{key} is now the scorer option {MOVED[name, key]}: move it there")
        model = known.get(name)
        if model is None:
            raise ConfigError(f"{source}: unknown section [{name}]; expected one of {_known()}")
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: {name} must be a table ([{name}]), got {type(body).__name__}")
        try:
            sections[name] = model.model_validate(body)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, name, model, source)) from None
    return sections


def _describe(exc: ValidationError, section: str, model: type[BaseModel], source: str) -> str:
    err = exc.errors(include_url=False)[0]
    key = ".".join([section, *(str(p) for p in err["loc"])])
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(sorted(model.model_fields))
        return f"{source}: unknown key {key!r}; allowed keys in [{section}]: {allowed}"
    field = model.model_fields.get(str(err["loc"][0])) if err["loc"] else None
    what = f" ({field.description})" if field is not None and field.description else ""
    msg = str(err["msg"]).removeprefix("Value error, ")
    got = f", got {err.get('input')!r}" if repr(err.get("input")) not in msg else ""  # said once, not twice
    return f"{source}: bad value for {key!r}: {msg}{got}{what}"


def fingerprint(config: Config) -> str:
    """What makes two scorings the same: scoring parameters, the chosen scorers with their versions and options (a
    plugin's as a built-in's), the judge's model and rubric version (a change means a new backfill)."""
    judge: JudgeSettings = config.section("judge")
    scoring: ScoringSettings = config.section("scoring")
    rubrics = config.rubrics
    loaded = registry_load()
    chosen = config.scorers()
    parts: dict[str, Any] = {
        "scoring": scoring.model_dump(exclude={"max_cost", *SAMPLING_KEYS}),
        "scorers": {name: [loaded[name].scorer.version, dict(options)] for name, options in chosen},
        "judge": {"model": config.judge_model, "rubric": rubrics.grounding.name, "version": rubrics.grounding.version},
    }
    for key, stage in (("surface_rubric", rubrics.surface), ("semantic_rubric", rubrics.semantic)):
        if stage != load_rubric(RUBRIC_KEYS[key][0]):  # absent when bundled, so existing fingerprints stay the same
            parts["judge"][key] = [stage.name, stage.version]
    if judge.provider != "anthropic":  # another judge: absent for Anthropic's API so existing fingerprints stay
        parts["judge"]["provider"] = config.judge_provider.identity(config.judge_model)
    if judge.options:  # a plugin judge's own keys (its temperature, say): absent when none, as the others
        parts["judge"]["options"] = dict(judge.options)
    if not judge.structured:  # the schema in the prompt: absent when structured so existing fingerprints stay
        parts["judge"]["structured"] = False
    if judge.merge_partial:  # changes the judged scores; absent when off so existing fingerprints stay the same
        parts["judge"]["merge_partial"] = judge.merge_partial
    if (redacting := config.redactor) is not None:  # other request bodies; absent when off, as merge_partial
        parts["judge"]["redact"] = list(redacting.spec)
    if not config.section("sessions").carry_evidence:  # each turn alone: other scores; absent when on, as above
        parts["carry_evidence"] = False
    if config.section("sinks").keep_versions:  # other score names: a backfill of its own
        parts["keep_versions"] = True
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]
