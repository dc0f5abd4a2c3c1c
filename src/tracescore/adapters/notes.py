"""Mapping notes: the decisions an adapter took on each record, collected for ``tracescore adapters inspect``."""

from __future__ import annotations

from contextvars import ContextVar

from pydantic import BaseModel, ConfigDict


class MappingNote(BaseModel):
    """One decision an adapter took on one native record: what it took the record for, or why it skipped it."""

    model_config = ConfigDict(frozen=True)

    record: str
    decision: str
    reason: str = ""


_NOTES: ContextVar[list[MappingNote] | None] = ContextVar("tracescore_mapping_notes", default=None)


def note(record: str, decision: str, reason: str = "") -> None:
    """Record an adapter decision when a ``collect_notes()`` block is listening; free otherwise."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append(MappingNote(record=record, decision=decision, reason=reason))


class collect_notes:  # noqa: N801 - used as a context manager, named like one
    """``with collect_notes() as notes:`` gathers the ``MappingNote``s of the adapter calls inside the block."""

    def __enter__(self) -> list[MappingNote]:
        self._notes: list[MappingNote] = []
        self._token = _NOTES.set(self._notes)
        return self._notes

    def __exit__(self, *exc: object) -> None:
        _NOTES.reset(self._token)
