"""The ``[source]``, ``[job]`` and ``[scoring]`` sections of ``tracescore.toml``, and the starter file ``init`` writes.

Credentials never live in the file: the platform clients read them from the environment.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tracescore.config import SECTIONS, Config, register_section
from tracescore.judge.anthropic import DEFAULT_MODEL

__all__ = ["JobSettings", "ScoringSettings", "SourceSettings", "fingerprint", "parse_duration", "starter_config"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """``"90s"``, ``"15m"``, ``"2h"``, ``"7d"`` → timedelta; anything else is a ValueError saying what is allowed."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"expected a duration such as '90s', '15m', '2h' or '7d', got {text!r}")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


class SourceSettings(BaseModel):
    """``[source]``: where the traces come from (scores are written back to the same platform)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["jsonl", "langfuse", "langsmith"] = Field(
        default="jsonl", description="platform to read: 'jsonl' (a file of canonical traces), 'langfuse', 'langsmith'"
    )
    path: str | None = Field(default=None, description="the traces file, for kind = 'jsonl'")
    project: str | None = Field(default=None, description="the LangSmith project name, for kind = 'langsmith'")


class JobSettings(BaseModel):
    """``[job]``: the scheduled run and the backfill: store, lookback, concurrency, write-back."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    store: str = Field(default="tracescore.db", description="local SQLite store: results, watermarks, lock beside it")
    lookback: str = Field(default="15m", description="re-read this far behind the watermark for late-arriving traces")
    settle: str = Field(default="1m", description="leave traces younger than this for the next run (still running)")
    judge_concurrency: int = Field(default=8, ge=1, le=256, description="traces scored at once (judge calls in flight)")
    requests_per_minute: float | None = Field(
        default=None, gt=0, description="platform request rate (reads + writes); Langfuse Hobby allows 30/min"
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


class ScoringSettings(BaseModel):
    """``[scoring]``: parameters of the deterministic scorers (part of score names and of the backfill identity)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(default=5, ge=1, description="cut-off of retrieval.recall_at_{k}; part of the score name")
    final_answer_prefix: str = Field(
        default="FINAL ANSWER:", description="score only the text after this marker when present ('' to disable)"
    )
    judge: bool = Field(default=True, description="run the judged stages when ANTHROPIC_API_KEY is set")
    judge_model: str = Field(default=DEFAULT_MODEL, description="Anthropic model of the judge")
    max_cost: float | None = Field(
        default=None, ge=0, description="USD: stop judging once the judge's estimated spend of a run reaches this"
    )


register_section("source", SourceSettings)
register_section("job", JobSettings)
register_section("scoring", ScoringSettings)


def fingerprint(config: Config) -> str:
    """What makes two scorings the same: scoring parameters and scorer versions (a change means a new backfill)."""
    from tracescore.scorers import answer, citations, diagnosis, retrieval

    parts: dict[str, Any] = {
        "scoring": config.section("scoring").model_dump(exclude={"max_cost"}),
        "versions": [retrieval.SCORER_VERSION, citations.SCORER_VERSION, answer.SCORER_VERSION,
                     diagnosis.SCORER_VERSION],
    }
    if "judge" in SECTIONS:  # the judge's model and rubric versions, once configured
        parts["judge"] = config.section("judge").model_dump()
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def starter_config(kind: str = "langfuse", path: str | None = None) -> str:
    """A commented ``tracescore.toml``: the chosen source set, every other key shown with its default."""
    lines = [
        "# tracescore.toml: read by `tracescore run`, `backfill` and `score` (or the file given with --config).",
        "# Credentials come only from the environment (LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY / LANGFUSE_HOST,",
        "# LANGSMITH_API_KEY / LANGSMITH_ENDPOINT, ANTHROPIC_API_KEY), never from this file.",
        "# Uncomment a key to change it; a wrong key or value stops the run with the key and what is allowed.",
        "",
        "[source]",
        f"kind = {json.dumps(kind)}",
    ]
    if kind == "jsonl":
        lines.append(f"path = {json.dumps(path or 'traces.jsonl')}")
    for name, model in (("source", SourceSettings), ("job", JobSettings), ("scoring", ScoringSettings)):
        if name != "source":
            lines += ["", f"[{name}]"]
        for key, info in model.model_fields.items():
            if name == "source" and (key == "kind" or (key == "path" and kind == "jsonl")):
                continue
            lines.append(f"# {info.description}")
            lines.append(f"# {key} = {_toml(info.default)}")
    for name in sorted(SECTIONS):
        if name in ("source", "job", "scoring", "mapping"):
            continue
        lines += ["", f"# [{name}]"]
        for key, info in SECTIONS[name].model_fields.items():
            default = info.get_default(call_default_factory=True)
            lines.append(f"# {key} = {_toml(default)}" + (f"  # {info.description}" if info.description else ""))
    lines += ["", "# [mapping]: how native records become traces; see the README for every key and its default."]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value)
