"""msgspec mirrors of the canonical ``Trace`` models: the hot-path decoder of a JSON trace line (#14).

``decode`` gives a ``Trace`` struct with the fields, defaults, constraints and read API (``searches``, ``fetches``,
``SearchStep.ranked_hits()``, ``step.kind``) of the pydantic model in ``tracescore.trace``, or None when it is not
sure pydantic would give the same data; the caller then validates with pydantic, so every error stays pydantic's.
msgspec is strict where pydantic is lax (``"1"`` or ``1.0`` or ``true`` for an int, a string for a bool, ``NaN``,
``1e400``): such a line is rejected here and goes to pydantic. The two datetime fields are validated by pydantic's own
datetime validator on their raw JSON text, so they are equal objects. tests/adapters/test_struct_decode.py holds the
equivalence, line for line, and the field parity with the pydantic models.
"""

from __future__ import annotations

from datetime import datetime
from operator import attrgetter
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import msgspec
from msgspec import Meta, Raw
from msgspec.structs import force_setattr
from pydantic import BaseModel, TypeAdapter, ValidationError

_DATETIME: TypeAdapter[datetime | None] = TypeAdapter(datetime | None)  # pydantic's own, in JSON mode
# The fixed shape nests 6 deep; only the free-form ``metadata`` values nest without bound. One nested past this goes
# to pydantic, whose JSON parser refuses a nesting of 200 (msgspec's goes deeper).
_DEEP_METADATA = 64


class _Struct(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """Frozen like the models. ``gc=False`` (half the decode time) is safe as a decoded trace holds no reference cycle
    and no code puts a trace inside its own metadata; ``Trace`` itself is tracked and weak-referenceable (the
    citations memo keeps a weak reference to it)."""


def _stamp(value: Raw) -> datetime | None:
    """A datetime field's raw JSON text validated exactly as the pydantic model does (a ValueError rejects it)."""
    try:
        return _DATETIME.validate_json(bytes(value))
    except ValidationError:
        raise ValueError("datetime pydantic does not accept") from None


class Hit(_Struct, frozen=True):
    """Mirror of ``tracescore.trace.Hit``."""

    rank: Annotated[int, Meta(ge=1)] | None = None
    doc_id: str | None = None
    url: str | None = None
    title: str | None = None
    snippet: str | None = None
    score: float | None = None
    metadata: dict[str, Any] = {}


class SearchStep(_Struct, frozen=True, tag_field="kind", tag="search"):
    """Mirror of ``tracescore.trace.SearchStep`` (``kind`` is the union's tag, readable as a class attribute)."""

    kind: ClassVar[Literal["search"]] = "search"
    tool: str = "search"
    query: str = ""
    hits: list[Hit] = []

    def ranked_hits(self) -> list[tuple[int, Hit]]:
        """Hits with their rank: the explicit ``rank`` when given, else the 1-based list position."""
        return [(hit.rank if hit.rank is not None else i, hit) for i, hit in enumerate(self.hits, start=1)]


class FetchStep(_Struct, frozen=True, tag_field="kind", tag="fetch"):
    """Mirror of ``tracescore.trace.FetchStep``; ``fetched_at`` is decoded as raw JSON, then pydantic's datetime."""

    kind: ClassVar[Literal["fetch"]] = "fetch"
    tool: str = "fetch"
    url: str | None = None
    doc_id: str | None = None
    text: str = ""
    status: int | str | None = None
    # Decoded as its raw JSON (msgspec allows Raw only alone), then set to pydantic's datetime or None.
    fetched_at: Raw = None  # type: ignore[assignment]
    metadata: dict[str, Any] = {}

    def __post_init__(self) -> None:
        if isinstance(self.fetched_at, Raw):
            force_setattr(self, "fetched_at", _stamp(self.fetched_at))


class Citation(_Struct, frozen=True):
    """Mirror of ``tracescore.trace.Citation``."""

    url: str | None = None
    doc_id: str | None = None
    marker: str | None = None
    sentence: str | None = None


class BlindSpot(_Struct, frozen=True, kw_only=True):
    """Mirror of ``tracescore.trace.BlindSpot``."""

    kind: Literal["search", "fetch"]
    tool: str = ""
    reason: str


class Labels(_Struct, frozen=True):
    """Mirror of ``tracescore.trace.Labels``."""

    required_doc_ids: list[str | Annotated[list[str], Meta(min_length=1)]] | None = None
    expected_answer_contains: list[str] | None = None
    gold_answer: str | None = None
    expect_refusal: bool | None = None
    gold_answers: list[str] | None = None
    hops: Annotated[list[str | Annotated[list[str], Meta(min_length=1)]], Meta(min_length=1)] | None = None


class Trace(_Struct, frozen=True, kw_only=True, gc=True, weakref=True):
    """Mirror of ``tracescore.trace.Trace``: an int ``id`` or ``session_id`` becomes its text, a blank ``session_id``
    None, ``timestamp`` is pydantic's datetime."""

    schema_version: Literal["1"] = "1"
    id: Annotated[str, Meta(min_length=1)] | int
    session_id: str | int | None = None
    timestamp: Raw = None  # type: ignore[assignment]  # as FetchStep.fetched_at
    question: str = ""
    steps: list[SearchStep | FetchStep] = []
    answer: str = ""
    citations: list[Citation] | None = None
    labels: Labels = msgspec.field(default_factory=Labels)
    blind_spots: list[BlindSpot] = []
    metadata: dict[str, Any] = {}

    def __post_init__(self) -> None:
        if isinstance(self.id, int):
            force_setattr(self, "id", str(self.id))
        if isinstance(self.session_id, int):
            force_setattr(self, "session_id", str(self.session_id))
        elif isinstance(self.session_id, str) and not self.session_id.strip():
            force_setattr(self, "session_id", None)
        if isinstance(self.timestamp, Raw):
            force_setattr(self, "timestamp", _stamp(self.timestamp))

    @property
    def searches(self) -> list[SearchStep]:
        return [s for s in self.steps if isinstance(s, SearchStep)]

    @property
    def fetches(self) -> list[FetchStep]:
        return [s for s in self.steps if isinstance(s, FetchStep)]


_DECODER = msgspec.json.Decoder(Trace)


def decode(raw: bytes) -> Trace | None:
    """The struct of one JSON trace line, or None when msgspec rejects it or pydantic might not give the same data
    (a nesting pydantic's parser may refuse): the caller then validates with pydantic."""
    try:
        trace = _DECODER.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return None
    return None if _too_deep(trace) else trace


def _too_deep(trace: Trace) -> bool:
    """Whether a free-form ``metadata`` (the only fields that nest without bound) nests past ``_DEEP_METADATA``."""
    if trace.metadata and _nests(trace.metadata.values(), _DEEP_METADATA):
        return True
    for step in trace.steps:
        # most hits carry no metadata: looked for in C first (a loop over a heavy trace's 100 hits cost ~5 us)
        if isinstance(step, SearchStep) and any(map(_METADATA, step.hits)):
            for hit in step.hits:
                if hit.metadata and _nests(hit.metadata.values(), _DEEP_METADATA):
                    return True
    return False


_METADATA = attrgetter("metadata")


def _nests(values: Any, budget: int) -> bool:
    """Whether any of ``values`` holds containers nested ``budget`` deep."""
    for value in values:
        if isinstance(value, dict | list) and value:
            if budget <= 1 or _nests(value.values() if isinstance(value, dict) else value, budget - 1):
                return True
    return False


_T = TypeVar("_T")


def replace(value: _T, **changes: Any) -> _T:
    """``value`` (a pydantic trace model or its struct) with ``changes`` applied, unvalidated, of the same kind."""
    if isinstance(value, msgspec.Struct):
        return msgspec.structs.replace(value, **changes)
    if isinstance(value, BaseModel):
        return value.model_copy(update=changes)
    raise TypeError(f"not a trace model: {type(value).__name__}")
