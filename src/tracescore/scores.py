"""One score value type with "could not score" explicit: a value, or absent with a reason, never a fake 0."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Score", "ScoreValue", "absent", "score"]

ScoreValue = float | bool | str
DataType = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]


class Score(BaseModel):
    """A named score of one trace: ``value`` is set, or ``reason`` says why it is absent.

    ``comment`` is what a person can act on (e.g. the missing doc ids); ``metadata`` carries scorer version,
    judge model, rubric version and parameters such as k.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    value: ScoreValue | None = None
    reason: str | None = None
    comment: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def present(self) -> bool:
        return self.value is not None

    @property
    def data_type(self) -> DataType:
        if isinstance(self.value, bool):
            return "BOOLEAN"
        if isinstance(self.value, str):
            return "CATEGORICAL"
        return "NUMERIC"


def score(name: str, value: ScoreValue, *, comment: str | None = None, **metadata: Any) -> Score:
    """A computed score."""
    return Score(name=name, value=value, comment=comment, metadata=metadata)


def absent(name: str, reason: str, **metadata: Any) -> Score:
    """A score that could not be computed, with the reason (reports and gates count these)."""
    return Score(name=name, reason=reason, metadata=metadata)
