"""The fetch step every platform adapter ends with: failed, not recorded (a blind spot) or read, noted and built, with
the fields the tool returned beside the page text kept as its ``metadata`` (as a JSONL fetch step carries them)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tracescore.adapters.fields import MISSING, first_path
from tracescore.adapters.hits import output_error
from tracescore.adapters.mapping import MappingConfig
from tracescore.adapters.notes import note
from tracescore.trace import BlindSpot, FetchStep


def fetch_step(
    label: str,
    name: str,
    inputs: Any,
    outputs: Any,
    mapping: MappingConfig,
    *,
    url: Any,
    text: str | None,
    fetched_at: datetime | None,
    failed: str | None,
    recorded: bool,
    blind: list[BlindSpot],
    kind: str = "tool",
    detail: str = "",
) -> FetchStep:
    """One fetch call as a ``FetchStep``, its doc id read from the call's ``inputs`` and its status from a mapping
    ``outputs`` by the ``[mapping]`` paths: ``failed`` (the note), or a non-empty ``error`` field in ``outputs``
    (``{"error": "404 Not Found"}``), marks it status error, never read; a call with no output ``recorded`` is a
    blind spot; ``MISSING`` url/doc id/status become None. A mapping ``outputs`` less its page text (every one of the
    ``[mapping] text_paths``) is the step's ``metadata``: Firecrawl's ``metadata``, a ``publishedTime``, ``headers``."""
    doc_id = first_path(inputs, mapping.doc_id_paths)
    status: Any = first_path(outputs, mapping.status_paths) if isinstance(outputs, Mapping) else MISSING
    if failed is None:
        failed = output_error(outputs)
    if failed is not None:  # the tool raised (404, timeout): never counts as read
        status = "error"
        note(label, "fetch", failed)
    elif not recorded:
        blind.append(BlindSpot(kind="fetch", tool=name, reason=f"fetch {name!r}: no output recorded"))
        note(label, "blind spot", f"fetch {kind}, but no output recorded")
    else:
        note(label, "fetch", f"url {None if url is MISSING else url!r}{detail}")
    return FetchStep(
        tool=name,
        url=None if url is MISSING else str(url),
        doc_id=None if doc_id is MISSING else str(doc_id),
        text=text or "",
        status=status if isinstance(status, int | str) else None,
        fetched_at=fetched_at,
        metadata=beside_text(outputs, mapping.text_paths),
    )


def beside_text(outputs: Any, text_paths: list[str]) -> dict[str, Any]:
    """What a fetch tool returned beside the page text: a mapping ``outputs`` without the value at any of
    ``text_paths`` (the text is the step's own, never kept twice); ``{}`` for any other output."""
    if not isinstance(outputs, Mapping):
        return {}
    kept = dict(outputs)
    for path in text_paths:
        kept = _without(kept, path.split("."))
    return kept


def _without(obj: Mapping[str, Any], parts: list[str]) -> dict[str, Any]:
    """A copy of ``obj`` without the value at the dotted path ``parts`` (mappings along it copied, others kept)."""
    out = dict(obj)
    head, rest = parts[0], parts[1:]
    if not rest:
        out.pop(head, None)
    elif isinstance(out.get(head), Mapping):
        out[head] = _without(out[head], rest)
    return out
