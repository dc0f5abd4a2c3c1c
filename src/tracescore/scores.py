"""One score value type with "could not score" explicit: a value, or absent with a reason, never a fake 0."""

from __future__ import annotations

from typing import Any, Literal

ScoreValue = float | bool | str
DataType = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]


class _Fields:
    """The slots of a ``Score``, settable: a score is filled in as one of these, then made a ``Score`` (see _make)."""

    __slots__ = ("name", "value", "reason", "comment", "metadata")
    name: str
    value: ScoreValue | None
    reason: str | None
    comment: str | None
    metadata: dict[str, Any]


class Score(_Fields):
    """A named score of one trace: ``value`` is set, or ``reason`` says why it is absent.

    ``comment`` is what a person can act on (e.g. the missing doc ids); ``metadata`` carries scorer version,
    judge model, rubric version and parameters such as k. Immutable. A small slotted class rather than a pydantic
    model or a frozen dataclass: a run builds ~30 per trace, so construction is on the hot path (#14, #33), and both
    of those cost 2-3x more per instance. An ``int`` value is kept as a float (a count is NUMERIC: 3 is written 3.0).
    """

    __slots__ = ()  # the fields are _Fields' slots: the same layout, so a filled _Fields can become a Score

    def __new__(
        cls,
        name: str,
        value: ScoreValue | None = None,
        reason: str | None = None,
        comment: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Score:
        return _make(name, value, reason, comment, {} if metadata is None else metadata)

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


def _make(
    name: str, value: ScoreValue | None, reason: str | None, comment: str | None, metadata: dict[str, Any]
) -> Score:
    """A ``Score`` built at a third of the cost of setting each slot through its descriptor (as ``__setattr__``
    refuses): filled in as a plain ``_Fields`` (slot stores, the interpreter's fastest), then given its class, which
    Python allows as the two have one layout (``Score`` adds no slot). Equal, in type and every field, to the slow way:
    tests/test_scores.py checks it."""
    fields = _Fields()
    fields.name = name
    fields.value = float(value) if type(value) is int else value
    fields.reason = reason
    fields.comment = comment
    fields.metadata = metadata
    fields.__class__ = Score
    return fields  # type: ignore[return-value]  # a Score now


def score(name: str, value: ScoreValue, *, comment: str | None = None, **metadata: Any) -> Score:
    """A computed score."""
    return _make(name, value, None, comment, metadata)


def absent(name: str, reason: str, **metadata: Any) -> Score:
    """A score that could not be computed, with the reason (reports and gates count these)."""
    return _make(name, None, reason, None, metadata)
