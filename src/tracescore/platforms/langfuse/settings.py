"""``[langfuse]``: what to read and how to write back (credentials only from the environment)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
