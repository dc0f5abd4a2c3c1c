"""One score value type with "could not score" explicit: a value, or absent with a reason, never a fake 0."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["Score", "ScoreValue", "absent", "score"]

ScoreValue = float | bool | str
DataType = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]


class Score:
    """A named score of one trace: ``value`` is set, or ``reason`` says why it is absent.

    ``comment`` is what a person can act on (e.g. the missing doc ids); ``metadata`` carries scorer version,
    judge model, rubric version and parameters such as k. Immutable. A small slotted class rather than a pydantic
    model or a frozen dataclass: a run builds ~25 per trace, so construction is on the hot path (#14), and both of
    those cost 2-3x more per instance. An ``int`` value is kept as a float (a count is NUMERIC: 3 is written 3.0).
    """

    __slots__ = ("name", "value", "reason", "comment", "metadata")
    name: str
    value: ScoreValue | None
    reason: str | None
    comment: str | None
    metadata: dict[str, Any]

    def __init__(
        self,
        name: str,
        value: ScoreValue | None = None,
        reason: str | None = None,
        comment: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        _set_name(self, name)  # the slots' own setters: __setattr__ refuses, and object.__setattr__ looks them up
        _set_value(self, float(value) if type(value) is int else value)
        _set_reason(self, reason)
        _set_comment(self, comment)
        _set_metadata(self, {} if metadata is None else metadata)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"a Score is immutable: cannot set {key!r} (use with_metadata, or build a new one)")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"a Score is immutable: cannot delete {key!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Score:
            return NotImplemented
        return (self.name, self.value, self.reason, self.comment, self.metadata) == (
            other.name,
            other.value,
            other.reason,
            other.comment,
            other.metadata,
        )

    __hash__ = None  # type: ignore[assignment]  # metadata is a dict

    def __repr__(self) -> str:
        return (
            f"Score(name={self.name!r}, value={self.value!r}, reason={self.reason!r}, comment={self.comment!r},"
            f" metadata={self.metadata!r})"
        )

    def __reduce__(self) -> tuple[type[Score], tuple[Any, ...]]:  # pickled to and from worker processes
        return Score, (self.name, self.value, self.reason, self.comment, self.metadata)

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

    def with_metadata(self, metadata: dict[str, Any]) -> Score:
        """This score with ``metadata`` in place of its own."""
        return Score(self.name, self.value, self.reason, self.comment, metadata)


_set_name, _set_value, _set_reason, _set_comment, _set_metadata = (
    getattr(Score, slot).__set__ for slot in Score.__slots__
)


def score(name: str, value: ScoreValue, *, comment: str | None = None, **metadata: Any) -> Score:
    """A computed score."""
    return Score(name, value, None, comment, metadata)


def absent(name: str, reason: str, **metadata: Any) -> Score:
    """A score that could not be computed, with the reason (reports and gates count these)."""
    return Score(name, None, reason, None, metadata)
