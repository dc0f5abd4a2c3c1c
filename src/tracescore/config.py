"""``tracescore.toml``: the mapping of native records to traces and per-platform settings, validated up front.

Sections are pydantic models registered in ``SECTIONS`` (``[mapping]``, ``[langfuse]``, …); a platform adds its own
section with ``register_section``. A wrong key or value fails with the file, the dotted key and what is allowed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from tracescore.adapters.fields import MappingConfig
from tracescore.errors import ConfigError

__all__ = [
    "DEFAULT_CONFIG_FILE",
    "SECTIONS",
    "Config",
    "GateSettings",
    "LangSmithSettings",
    "LangfuseSettings",
    "load_config",
    "register_section",
]

DEFAULT_CONFIG_FILE = "tracescore.toml"


class LangfuseSettings(BaseModel):
    """``[langfuse]``: what to read and how to write back. Credentials never live here: only in the environment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    environment: list[str] = Field(default_factory=list, description="only traces from these environments")
    trace_name: str | None = Field(default=None, description="only traces with this name")
    tags: list[str] = Field(default_factory=list, description="only traces carrying all of these tags")
    trace_overhang: float = Field(
        default=600.0, ge=0, le=86_400, description="seconds a trace may run past --to and still be read whole"
    )
    page_size: int = Field(default=1000, ge=1, le=1000, description="observations per page (Langfuse max 1000)")
    batch_bytes: int = Field(
        default=900_000, ge=10_000, le=1_000_000, description="max body size of one POST /api/public/scores"
    )
    timeout: float = Field(default=30.0, gt=0, description="seconds per HTTP request")
    max_attempts: int = Field(default=5, ge=1, le=20, description="attempts per request (429/5xx/timeouts)")
    backoff: float = Field(
        default=0.5, ge=0, le=60, description="first wait in seconds between attempts when no Retry-After (doubles)"
    )
    experiment_labels: bool = Field(
        default=True, description="take labels of experiment traces from their dataset item's expected output"
    )
    score_environment: str | None = Field(default=None, description="environment stamped on written scores")


class GateSettings(BaseModel):
    """``[gate]``: what ``tracescore gate`` enforces (limits given on the command line win per score)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: dict[str, Annotated[float, Strict()]] = Field(
        default_factory=dict, description='score name = lowest allowed mean, e.g. "grounding.rate" = 0.85'
    )
    max: dict[str, Annotated[float, Strict()]] = Field(
        default_factory=dict, description='score name = highest allowed mean, e.g. "citation.unfetched_rate" = 0.1'
    )
    allow_unread: bool = Field(default=False, description="cited-but-unread URLs warn instead of failing")
    tolerance: float = Field(default=0.0, ge=0, description="absolute slack below the baseline noise band")
    case_key: str = Field(
        default="trace_id", min_length=1, description='field that names a case, e.g. "metadata.case_id"'
    )


class LangSmithSettings(BaseModel):
    """``[langsmith]``: paging, timeouts and feedback options. Credentials only from LANGSMITH_API_KEY/_ENDPOINT."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page_size: int = Field(
        default=100, ge=1, le=100, description="root runs per batch: one reference-example read per batch (max 100)"
    )
    timeout: float = Field(default=30.0, gt=0, description="seconds per HTTP request")
    retries: int = Field(default=4, ge=0, le=10, description="retries per request (429 + Retry-After, 5xx, timeouts)")
    extend_trace_retention: bool = Field(
        default=False, description="upgrade scored traces to extended (400-day, billed) retention when writing feedback"
    )
    feedback_source_type: str = Field(default="api", pattern="^(api|model)$", description="feedback source: api|model")


SECTIONS: dict[str, type[BaseModel]] = {
    "mapping": MappingConfig,
    "langfuse": LangfuseSettings,
    "langsmith": LangSmithSettings,
    "gate": GateSettings,
}


def register_section(name: str, model: type[BaseModel]) -> None:
    """Make ``[name]`` a known section of ``tracescore.toml``, validated by ``model``."""
    SECTIONS[name] = model


class Config:
    """The loaded configuration: one validated model per known section (defaults for sections not in the file)."""

    def __init__(self, sections: dict[str, BaseModel], path: Path | None = None) -> None:
        self.path = path
        self._sections = sections

    def section(self, name: str) -> Any:
        """The validated model of ``[name]`` (its defaults when the file has no such section)."""
        if name not in self._sections:
            if name not in SECTIONS:
                raise ConfigError(f"unknown config section {name!r}; expected one of {_known()}")
            self._sections[name] = SECTIONS[name]()
        return self._sections[name]

    @property
    def mapping(self) -> MappingConfig:
        return self.section("mapping")  # type: ignore[no-any-return]

    @property
    def langfuse(self) -> LangfuseSettings:
        return self.section("langfuse")  # type: ignore[no-any-return]

    @property
    def langsmith(self) -> LangSmithSettings:
        return self.section("langsmith")  # type: ignore[no-any-return]


def _known() -> str:
    return ", ".join(f"[{n}]" for n in sorted(SECTIONS))


def load_config(path: str | Path | None = None) -> Config:
    """Read ``path`` (or ``./tracescore.toml`` when it exists); no file means every default.

    Raises ConfigError naming the file, the key and what is allowed.
    """
    if path is None:
        candidate = Path(DEFAULT_CONFIG_FILE)
        if not candidate.is_file():
            return Config({})
        path = candidate
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    return Config(parse_sections(data, source=str(path)), path)


def parse_sections(data: dict[str, Any], *, source: str = DEFAULT_CONFIG_FILE) -> dict[str, BaseModel]:
    """Validate a decoded TOML document section by section."""
    sections: dict[str, BaseModel] = {}
    for name, body in data.items():
        model = SECTIONS.get(name)
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
    return f"{source}: bad value for {key!r}: {err['msg']}, got {err.get('input')!r}{what}"
