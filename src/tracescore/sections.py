"""The core sections of ``tracescore.toml``, one pydantic model each: ``[source]``, ``[job]``, ``[scoring]``,
``[scorers]``, ``[judge]``, ``[mapping]``, ``[gate]``, ``[sinks]``, ``[sessions]``. ``tracescore.config`` reads the
file and hands them out; each platform declares its own section in its folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, Strict, field_validator

from tracescore.adapters.mapping import MappingConfig
from tracescore.durations import parse_duration
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.judge.settings import JudgeSettings
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
