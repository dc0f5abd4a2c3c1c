"""``[langsmith]``: paging, timeouts and feedback options (credentials only from the environment)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
