"""The core sections of ``tracescore.toml``, one pydantic model each: ``[source]``, ``[job]``, ``[scoring]``,
``[scorers]``, ``[judge]``, ``[mapping]``, ``[gate]``, ``[sinks]``, ``[sessions]``. ``tracescore.config`` reads the
file and hands them out; each platform declares its own section in its folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, Strict, field_validator, model_validator

from tracescore.adapters.mapping import MappingConfig
from tracescore.durations import parse_duration
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.judge.redact import BUILT_IN, custom_pattern
from tracescore.judge.registry import installed
from tracescore.platforms import registry
from tracescore.platforms.base import Platform


def _kinds(has: Callable[[Platform], bool]) -> list[str]:
    return [repr(n) for n, p in registry.platforms().items() if has(p)]


def option_of(platform: Platform, key: str) -> bool:
    """Whether ``platform`` declares the option ``key`` (e.g. ``project``)."""
    return any(o.key == key for o in platform.options)


class SourceSettings(BaseModel):
    """``[source]``: where the traces come from (scores are written back to the same platform)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(
        default=registry.DEFAULT_SOURCE, description="platform to read: " + ", ".join(repr(n) for n in registry.names())
    )
    path: str | None = Field(
        default=None, description="the traces file, for kind = " + " or ".join(_kinds(lambda p: p.file))
    )
    project: str | None = Field(
        default=None,
        description="the project name, for kind = " + " or ".join(_kinds(lambda p: option_of(p, "project"))),
    )

    @field_validator("kind")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in registry.platforms():
            raise ValueError("expected one of " + ", ".join(repr(n) for n in registry.names()))
        return value


class JobSettings(BaseModel):
    """``[job]``: the scheduled run and the backfill: store, lookback, concurrency, write-back."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    store: str = Field(default="tracescore.db", description="local SQLite store: results, watermarks, lock beside it")
    lookback: str = Field(default="15m", description="re-read this far behind the watermark for late-arriving traces")
    settle: str = Field(default="1m", description="leave traces younger than this for the next run (still running)")
    judge_concurrency: int = Field(default=8, ge=1, le=256, description="traces scored at once (judge calls in flight)")
    requests_per_minute: float | None = Field(
        default=None, gt=0, description="platform request rate (reads + writes) per minute: your plan's limit"
    )
    write_batch: int = Field(default=50, ge=1, le=1000, description="traces per write to the platform")
    queue_size: int = Field(default=64, ge=1, le=10_000, description="bound of each queue between the stages")
    backfill_chunks: int = Field(
        default=48, ge=1, le=10_000, description="a backfill window is done (and resumed) in this many slices"
    )
    write_back: bool = Field(default=True, description="write scores to the source platform (false: local store only)")
    batch_poll_seconds: float = Field(
        default=30.0, gt=0, le=3600, description="backfill --judge-batch: seconds between polls of a message batch"
    )
    # the judge's daily budget (#32): over every run of a UTC day, kept in the store (engine/daily.py)
    max_cost_per_day: float | None = Field(
        default=None, ge=0, description="USD per UTC day: once the judge's spend that day reaches it, the day's later"
        " traces stay unjudged (backfill --judge-only judges them later)",
    )
    max_calls_per_day: int | None = Field(
        default=None, ge=0, description="judge API calls per UTC day, over every run (as max_cost_per_day)"
    )
    judge_retries: int = Field(
        default=3, ge=0, le=100, description="runs that judge again a trace whose judge failed (an outage, the run's"
        " max_cost; not judge_sample, not the daily budget) before it is given up (named by the summary, --check-gaps)",
    )

    @field_validator("lookback", "settle")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value

    @property
    def lookback_delta(self) -> timedelta:
        return parse_duration(self.lookback)

    @property
    def settle_delta(self) -> timedelta:
        return parse_duration(self.settle)


JUDGE_SALT = "tracescore-judge-sample"  # [scoring] judge_salt's default: the same traces everywhere unless changed
JUDGE_KEY = "trace_id"  # [scoring] judge_key's default: what of a trace judge_sample hashes
SAMPLING_KEYS = ("judge_sample", "judge_flagged", "judge_salt", "judge_key")  # which traces, not what a score means
_JUDGE_KEY = re.compile(r"trace_id|question|metadata(\.[^.\s]+)+")


def check_judge_key(key: str) -> str:
    """``key`` when it is a ``[scoring] judge_key`` (``trace_id``, ``question``, ``metadata.<path>``), else a
    ValueError naming the allowed forms."""
    if not _JUDGE_KEY.fullmatch(key):
        raise ValueError(
            f"judge_key must be 'trace_id', 'question' or 'metadata.<field>' (e.g. 'metadata.request_id'), got {key!r}"
        )
    return key


class ScoringSettings(BaseModel):
    """``[scoring]``: which scorers run and how the judged ones are judged (part of the backfill identity); each
    scorer's own options are ``[scorers.<name>]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scorers: list[str] | None = Field(
        default=None, description="the installed scorers to run, by entry-point name (default: every one; see"
        " 'tracescore scorers')"
    )
    disable: list[str] = Field(default_factory=list, description="installed scorers not to run, by entry-point name")
    judge: bool = Field(default=True, description="run the judged stages when ANTHROPIC_API_KEY is set")
    judge_model: str = Field(default=DEFAULT_MODEL, description="model of the judge (the [judge] provider's own id)")
    max_cost: float | None = Field(
        default=None, ge=0, description="USD: stop judging once the judge's estimated spend of a run reaches this"
    )
    judge_sample: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="share of traces the judged stages run on, chosen by a hash of the trace id (1: every trace)",
    )
    judge_flagged: bool = Field(
        default=True,
        description="also judge every trace a deterministic stage flags (recall < 1, a fabricated or"
        " unfetched citation, a wrong answer)",
    )
    judge_salt: str = Field(
        default=JUDGE_SALT, min_length=1, description="mixed into the hash of judge_sample: another salt, other traces"
    )
    judge_key: str = Field(
        default=JUDGE_KEY,
        description="what judge_sample hashes: 'trace_id', 'question' or 'metadata.<field>' (the same traces on two"
        " platforms need a key both carry)",
    )

    @field_validator("judge_key")
    @classmethod
    def _judge_key(cls, value: str) -> str:
        return check_judge_key(value)


class ScorersSettings(RootModel[dict[str, dict[str, Any]]]):
    """``[scorers.<name>]``: each installed scorer's options by entry-point name, e.g. ``[scorers.retrieval] k = 10``
    (checked against the scorer's signature when the run is built: ``engine/plan.choose``)."""

    root: dict[str, dict[str, Any]] = Field(default_factory=dict)


class RedactPattern(BaseModel):
    """A team's own ``[judge] redact`` entry: ``{pattern = "ACCT-\\d{8}", name = "account"}`` → ``<account-1>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str = Field(description="a Python regular expression; every match is redacted")
    name: str = Field(description="the placeholder's kind: lower-case letters, digits, _")

    @model_validator(mode="after")
    def _compiles(self) -> RedactPattern:
        custom_pattern(self.pattern, self.name)  # ValueError naming the fault
        return self


class JudgePrice(BaseModel):
    """``[judge.price]``: USD per million tokens of a judge model no price table lists."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0, description="USD per million input tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")
    cached_input_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million cached input tokens (default: the input price)"
    )


PROVIDER_KEYS = ("model", "region", "project", "base_url", "api_key_env", "structured", "endpoint", "deployment",
                 "api_version")
"""The ``[judge]`` keys of one provider or another (each provider declares those it reads)."""


class JudgeSettings(BaseModel):
    """``[judge]``: the judge's provider, model and rubric; part of the scoring identity (a change starts a new
    backfill)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str = Field(
        default="anthropic",
        min_length=1,
        description="the judge: an installed judge's entry-point name ('tracescore judges' lists them): 'anthropic',"
        " 'bedrock', 'vertex' (Claude through the anthropic SDK's own clients), 'openai' (the Chat Completions API"
        " of OpenAI or any OpenAI-compatible server at base_url), 'azure-openai', or a plugin's",
    )
    model: str | None = Field(
        default=None,
        description="the judge's model in the provider's own id (overrides [scoring] judge_model), e.g."
        " 'claude-sonnet-4-6', Bedrock 'global.anthropic.claude-sonnet-4-6', Vertex 'claude-sonnet-4-5@20250929'",
    )
    region: str | None = Field(
        default=None,
        min_length=1,
        description="bedrock: the AWS region (else AWS_REGION); vertex: the location, e.g. 'global' (else"
        " CLOUD_ML_REGION)",
    )
    project: str | None = Field(
        default=None, min_length=1, description="vertex: the Google Cloud project (else ANTHROPIC_VERTEX_PROJECT_ID)"
    )
    base_url: str | None = Field(
        default=None,
        min_length=1,
        description="openai: an OpenAI-compatible server, e.g. 'http://localhost:8000/v1' (vLLM) or"
        " 'http://localhost:11434/v1' (Ollama); else OPENAI_BASE_URL, else OpenAI's API",
    )
    api_key_env: str | None = Field(
        default=None,
        min_length=1,
        description="openai: the environment variable holding the key (default OPENAI_API_KEY); a server that asks"
        " for none needs none",
    )
    structured: bool = Field(
        default=True,
        description="openai: send the reply's schema as response_format json_schema (strict); false: in the prompt"
        " (for a server without structured output; also chosen by itself when a server refuses response_format)",
    )
    endpoint: str | None = Field(
        default=None,
        min_length=1,
        description="azure-openai: the resource's endpoint, e.g. 'https://my-resource.openai.azure.com' (else"
        " AZURE_OPENAI_ENDPOINT)",
    )
    deployment: str | None = Field(
        default=None, min_length=1, description="azure-openai: the model deployment's name (the judge's model)"
    )
    api_version: str | None = Field(
        default=None,
        min_length=1,
        description="azure-openai: the API version (else OPENAI_API_VERSION, else '2024-10-21')",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="[judge.options]: a plugin judge's own keys, handed to its factory"
    )
    price: JudgePrice | None = Field(
        default=None,
        description="the judge model's price when it is not in the price table (a server of your own: 0); without"
        " one the cost is unknown and a budget is refused",
    )
    rubric: str = Field(
        default="grounding",
        min_length=1,
        description="grounding rubric: a bundled name (scorers/<name>.toml) or a TOML file in that format",
    )
    surface_rubric: str = Field(
        default="surface", min_length=1, description="surface oracle rubric: a bundled name or a TOML file"
    )
    semantic_rubric: str = Field(
        default="semantic", min_length=1, description="semantic match rubric: a bundled name or a TOML file"
    )
    merge_partial: Literal["contradicted", "unsupported"] | None = Field(
        default=None,
        description="count the judge's PARTIAL verdicts as this verdict in grounding and citation scores (when a"
        " calibration shows PARTIAL is not above chance); said in each judged score's metadata; off by default",
    )
    redact: list[str | RedactPattern] = Field(
        default_factory=list,
        description="personal data replaced with placeholders (<email-1>) before the judge sees a trace: "
        + ", ".join(repr(n) for n in BUILT_IN)
        + ' or {pattern = "…", name = "…"}',
    )

    @model_validator(mode="after")
    def _provider(self) -> JudgeSettings:
        """``provider`` is an installed judge, and each provider key set is one it reads (``region`` with
        ``openai``, a typo in ``[judge.options]``: said, never ignored)."""
        found = installed()
        if self.provider not in found:
            raise ValueError(
                f"provider {self.provider!r} is not an installed judge; installed: {', '.join(found) or 'none'}"
                " ('tracescore judges' lists them with what each needs)"
            )
        reads = found[self.provider].provider.keys
        default = {k: f.default for k, f in type(self).model_fields.items()}
        # a key at its default (a starter listing every key) changes nothing
        unread = [k for k in PROVIDER_KEYS if k not in reads and getattr(self, k) != default[k]]
        unread += [f"options.{k}" for k in self.options if k not in reads]
        if unread:
            raise ValueError(
                f"{', '.join(unread)}: not read by provider {self.provider!r}, which reads: {', '.join(reads)}"
            )
        return self

    @field_validator("redact", mode="before")
    @classmethod
    def _entries(cls, value: object) -> object:
        """Each entry checked here, so the message names the entry: an unknown kind, a pattern that does not compile
        (or matches empty text), a bad or repeated name."""
        if not isinstance(value, list):
            return value
        names: list[str] = []
        for n, entry in enumerate(value, start=1):
            if isinstance(entry, str):
                if entry not in BUILT_IN:
                    kinds = ", ".join(repr(k) for k in BUILT_IN)
                    raise ValueError(f"entry {n}: unknown kind {entry!r}; expected one of {kinds} or a table"
                                     ' {pattern = "…", name = "…"}')  # fmt: skip
                names.append(entry)
            elif isinstance(entry, dict):
                if set(entry) != {"pattern", "name"} or not all(isinstance(v, str) for v in entry.values()):
                    raise ValueError(f'entry {n}: a table needs exactly pattern = "…" and name = "…" (text)')
                custom_pattern(entry["pattern"], entry["name"])
                names.append(entry["name"])
            elif not isinstance(entry, RedactPattern):
                raise ValueError(f'entry {n}: expected a kind name or {{pattern = "…", name = "…"}}')
        if twice := sorted({name for name in names if names.count(name) > 1}):
            raise ValueError(f"{', '.join(repr(name) for name in twice)} listed more than once")
        return value


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
    min_judge_kappa: float = Field(
        default=0.6,
        ge=-1,
        le=1,
        description="a judged score may fail the gate only when its judge's calibration reaches this kappa",
    )


class SinksSettings(BaseModel):
    """``[sinks]``: how the platform sinks mirror the scoring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keep_versions: bool = Field(
        default=False,
        description="write versioned names (grounding.rate@grounding-1) and keep old versions beside new ones",
    )


def _duration(value: str) -> str:
    parse_duration(value)  # a ValueError names the value and the forms
    return value


def _positive(value: str) -> str:
    if parse_duration(value) <= timedelta(0):
        raise ValueError(f"must be a positive duration such as '30m', got {value!r}")
    return value


class SessionsSettings(BaseModel):
    """``[sessions]``: conversations (traces with a session id: Langfuse sessions, LangSmith threads, OTel
    ``session.id``, JSONL ``session_id``) and what a turn carries from the turns before it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    carry_evidence: bool = Field(
        default=True,
        description="score a turn with the search hits and successful fetches of its session's earlier turns (by"
        " timestamp); false: each trace alone. Retrieval scores are always the turn's own",
    )
    lookback: Annotated[str, AfterValidator(_duration)] = Field(
        default="24h",
        description="backfill: a window's sessions are completed from their turns this far before it (read from the"
        " store, else from the platform)",
    )

    idle: Annotated[str, AfterValidator(_positive)] = Field(
        default="30m",
        description="the job writes a session's scores once no turn has started for this long (and again once idle"
        " after a later turn arrives)",
    )

    @property
    def lookback_delta(self) -> timedelta:
        return parse_duration(self.lookback)

    @property
    def idle_delta(self) -> timedelta:
        return parse_duration(self.idle)


CORE_SECTIONS: dict[str, type[BaseModel]] = {
    "source": SourceSettings,
    "job": JobSettings,
    "scoring": ScoringSettings,
    "scorers": ScorersSettings,
    "judge": JudgeSettings,
    "mapping": MappingConfig,
    "gate": GateSettings,
    "sinks": SinksSettings,
    "sessions": SessionsSettings,
}
