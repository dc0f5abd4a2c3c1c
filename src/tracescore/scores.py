"""One score value type with "could not score" explicit: a value, or absent with a reason, never a fake 0."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = ["Score", "ScoreValue", "absent", "score"]

ScoreValue = float | bool | str
DataType = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]


@dataclass(frozen=True, slots=True)
class Score:
    """A named score of one trace: ``value`` is set, or ``reason`` says why it is absent.

    ``comment`` is what a person can act on (e.g. the missing doc ids); ``metadata`` carries scorer version,
    judge model, rubric version and parameters such as k. A plain frozen dataclass, not a pydantic model: a run
    builds ~25 per trace, so construction is on the hot path (#14); an ``int`` value is kept as a float, as before.
    """

    name: str
    value: ScoreValue | None = None
    reason: str | None = None
    comment: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if type(self.value) is int:  # a count is NUMERIC: 3 is written 3.0, as the pydantic model did
            object.__setattr__(self, "value", float(self.value))

    def with_metadata(self, metadata: dict[str, Any]) -> Score:
        """This score with ``metadata`` in place of its own."""
        return replace(self, metadata=metadata)

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
