"""The canonical ``Trace``: what a search-backed agent did, independent of the platform that recorded it.

Every source and adapter produces this shape; every scorer reads only this shape. The model is versioned
(``SCHEMA_VERSION``) and its JSON Schema is exported to ``schema/trace.schema.json`` (see ``json_schema()``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

SCHEMA_VERSION: Literal["1"] = "1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Hit(_Model):
    """One ranked result of a search call, as the agent saw it before deciding what to fetch."""

    rank: int | None = Field(
        default=None, ge=1, description="1-based rank within its own search call; list order if absent"
    )
    doc_id: str | None = None
    url: str | None = None
    title: str | None = None
    snippet: str | None = None
    score: float | None = Field(default=None, description="the search engine's relevance score, if it gave one")
    metadata: dict[str, Any] = Field(default_factory=dict)


class SearchStep(_Model):
    """A search tool call: the query the agent actually sent and the ranked hits that came back."""

    kind: Literal["search"] = "search"
    tool: str = "search"
    query: str = ""
    hits: list[Hit] = Field(default_factory=list)

    def ranked_hits(self) -> list[tuple[int, Hit]]:
        """Hits with their rank: the explicit ``rank`` when given, else the 1-based list position."""
        return [(hit.rank if hit.rank is not None else i, hit) for i, hit in enumerate(self.hits, start=1)]


class FetchStep(_Model):
    """A fetch/read tool call: the page text exactly as the agent saw it (truncation included)."""

    kind: Literal["fetch"] = "fetch"
    tool: str = "fetch"
    url: str | None = None
    doc_id: str | None = None
    text: str = ""
    status: int | str | None = None
    fetched_at: datetime | None = None
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="what the fetch tool returned beside the text (a published date, headers)"
    )


Step = Annotated[SearchStep | FetchStep, Field(discriminator="kind")]

_FAILED_STATUS = re.compile(r"error|fail|timeout", re.IGNORECASE)


def fetch_failed(status: int | str | None) -> bool:
    """Whether a fetch's ``status`` says it failed, so its page was never read: an HTTP status outside 100–399 (4xx,
    5xx, and 0 or below: no response, as a browser's fetch reports a network error), ``false``, or text naming an
    error, a failure or a timeout. No status means it did not fail."""
    if status is None or status is True:
        return False
    if status is False:
        return True
    if isinstance(status, str):
        text = status.strip()
        if not (text[:1] == "-" and text[1:].isdigit()) and not text.isdigit():
            return bool(_FAILED_STATUS.search(text))
        status = int(text)
    return not 100 <= status <= 399


class Citation(_Model):
    """An explicit citation recorded by the agent (when it does not rely on inline markers in the answer)."""

    url: str | None = None
    doc_id: str | None = None
    marker: str | None = None
    sentence: str | None = Field(default=None, description="the answer sentence this citation backs, if known")


class BlindSpot(_Model):
    """A step the adapter saw but could not read (a search whose results, or a fetch whose page, it cannot parse).

    A score built on what such a step returned would rest on a blind spot, so it is absent with this reason
    instead (``citation.fabricated_count`` for a search, ``citation.unfetched_rate`` for a fetch).
    """

    kind: Literal["search", "fetch"]
    tool: str = ""
    reason: str


DocGroup = Annotated[list[str], Field(min_length=1)]  # alternatives: any one of these documents will do


class Labels(_Model):
    """Optional ground truth. Scores that need a missing label are absent, with the reason."""

    required_doc_ids: list[str | DocGroup] | None = Field(
        default=None,
        description="documents the answer needs; an entry is an id/URL or a non-empty list of alternatives (any one)",
    )
    expected_answer_contains: list[str] | None = None
    gold_answer: str | None = None
    expect_refusal: bool | None = None
    gold_answers: list[str] | None = Field(
        default=None, description="more acceptable answers beside gold_answer: F1 and exact match take the best"
    )
    hops: list[str | DocGroup] | None = Field(
        default=None, min_length=1,
        description="a multi-hop case: the documents of each hop in order (an id/URL or a list of alternatives)",
    )

    @field_validator("required_doc_ids", "hops", mode="before")
    @classmethod
    def _groups_one_deep(cls, value: Any, info: ValidationInfo) -> Any:
        """One clear message for an entry that is neither an id nor a non-empty flat list of ids."""
        for i, entry in enumerate(value if isinstance(value, list) else ()):
            if (fault := _group_fault(entry)) is not None:
                shown = text if len(text := repr(entry)) <= 80 else text[:77] + "..."
                raise ValueError(
                    f"{info.field_name}[{i}] {fault} ({shown}); an entry is an id or a non-empty list of ids"
                    " (alternatives: any one will do)"
                )
        return value


def _group_fault(entry: Any) -> str | None:
    """What is wrong with one ``required_doc_ids`` or ``hops`` entry, or None when it is an id or a non-empty list
    of ids."""
    if isinstance(entry, str):
        return None
    if not isinstance(entry, list):
        return "is neither an id nor a list of ids"
    if not entry:
        return "is an empty group"
    if any(isinstance(e, list | dict) for e in entry):
        return "nests deeper than one list of alternatives"
    return None if all(isinstance(e, str) for e in entry) else "holds a member that is not an id"


class Trace(_Model):
    """One agent run: the question, the ordered search/fetch steps, the final answer, labels and metadata."""

    schema_version: Literal["1"] = SCHEMA_VERSION
    id: str = Field(min_length=1)
    session_id: str | None = Field(
        default=None,
        description="the conversation this trace is one turn of (Langfuse session, LangSmith thread, OTel session.id);"
        " absent or empty: a trace on its own",
    )
    timestamp: datetime | None = None
    question: str = ""
    steps: list[Step] = Field(default_factory=list)
    answer: str = ""
    citations: list[Citation] | None = None
    labels: Labels = Field(default_factory=Labels)
    blind_spots: list[BlindSpot] = Field(
        default_factory=list, description="steps seen but not readable; scores resting on them are absent"
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("session_id", mode="before")
    @classmethod
    def _session_as_text(cls, value: Any) -> Any:
        """A numeric session id is its text; an empty or blank one is no session (exports write "" for none)."""
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def searches(self) -> list[SearchStep]:
        return [s for s in self.steps if isinstance(s, SearchStep)]

    @property
    def fetches(self) -> list[FetchStep]:
        return [s for s in self.steps if isinstance(s, FetchStep)]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a trace line, as exported to ``schema/trace.schema.json``."""
    schema = Trace.model_json_schema()
    schema["$id"] = f"https://tracescore.dev/schema/trace-v{SCHEMA_VERSION}.json"
    return schema
