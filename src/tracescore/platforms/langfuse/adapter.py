"""Langfuse observations → ``Trace``.

Accepts the source's payload ``{"id": trace_id, "observations": [v2 rows]}`` and the UI export shape ``{"trace":
{...}, "observations": [...]}``. Searches are RETRIEVER observations and TOOL observations whose name is a configured
search tool; fetches are TOOL observations named as fetch tools; hits and page text are found with the field paths
of ``MappingConfig``. The question and answer come from the root observation (the trace object of an export), with
the first/last generation as fallback; labels from the root's (or trace's) metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from tracescore.adapters.fields import (
    MISSING,
    MappingConfig,
    answer_text,
    extract_hits,
    extract_labels,
    extract_text,
    first_path,
    parse_maybe_json,
    question_text,
    text_of,
)
from tracescore.errors import AdapterError
from tracescore.trace import FetchStep, Labels, SearchStep, Step, Trace

__all__ = ["langfuse_adapter", "trace_from_observations"]

_GENERATION = "GENERATION"


def _time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _is_root(row: Mapping[str, Any]) -> bool:
    flag = row.get("isRootObservation")
    return bool(flag) if flag is not None else not row.get("parentObservationId")


def _search_step(row: Mapping[str, Any], mapping: MappingConfig) -> SearchStep:
    raw_input = parse_maybe_json(row.get("input"))
    if isinstance(raw_input, str):
        query = raw_input
    else:
        found = first_path(raw_input, mapping.query_paths)
        query = "" if found is MISSING else (text_of(found) or "")
    hits = extract_hits(row.get("output"), mapping.hits_paths)
    if hits is None:  # OpenInference retrievers often keep documents in span attributes (metadata)
        hits = extract_hits(row.get("metadata"), mapping.hits_paths)
    return SearchStep(tool=str(row.get("name") or "search"), query=query, hits=hits or [])


def _fetch_step(row: Mapping[str, Any], mapping: MappingConfig) -> FetchStep:
    raw_input = parse_maybe_json(row.get("input"))
    output = parse_maybe_json(row.get("output"))
    url: Any = raw_input if isinstance(raw_input, str) and raw_input.strip().startswith("http") else MISSING
    if url is MISSING:
        url = first_path(raw_input, mapping.url_paths)
    if url is MISSING:
        url = first_path(output, mapping.url_paths)
    doc_id = first_path(raw_input, mapping.doc_id_paths)
    status = first_path(output, mapping.status_paths)
    return FetchStep(
        tool=str(row.get("name") or "fetch"),
        url=None if url is MISSING else str(url),
        doc_id=None if doc_id is MISSING else str(doc_id),
        text=extract_text(output, mapping.text_paths) or "",
        status=status if isinstance(status, int | str) and status is not MISSING else None,
        fetched_at=_time(row.get("endTime")) or _time(row.get("startTime")),
    )


def _experiment_labels(item: Mapping[str, Any], mapping: MappingConfig) -> Labels:
    """Labels of an experiment trace from its dataset item: the expected output (an object with label keys or a
    labels object; a plain string is the gold answer), then the item's metadata."""
    expected = parse_maybe_json(item.get("expectedOutput"))
    if isinstance(expected, str) and expected.strip():
        from_expected = Labels(gold_answer=expected)
    else:
        from_expected = extract_labels(expected, mapping.labels_paths)
    return _merge(from_expected, extract_labels(item.get("experimentItemMetadata"), mapping.labels_paths))


def _merge(first: Labels, second: Labels) -> Labels:
    """Field by field: ``first`` where set, else ``second``."""
    return Labels.model_validate(
        {k: getattr(first, k) if getattr(first, k) is not None else getattr(second, k) for k in Labels.model_fields}
    )


def trace_from_observations(payload: object, mapping: MappingConfig | None = None) -> Trace:
    """One Langfuse trace (its observation rows) → ``Trace``; AdapterError names the trace and what is wrong."""
    mapping = mapping or MappingConfig()
    data = parse_maybe_json(payload)
    if not isinstance(data, Mapping) or not isinstance(data.get("observations"), list):
        raise AdapterError("not a Langfuse trace: expected an object with an 'observations' list")
    trace_obj: Mapping[str, Any] = data["trace"] if isinstance(data.get("trace"), Mapping) else {}
    rows = [r for r in data["observations"] if isinstance(r, Mapping)]
    trace_id = str(data.get("id") or trace_obj.get("id") or next((r.get("traceId") for r in rows), "") or "")
    if not trace_id:
        raise AdapterError("Langfuse trace without an id")
    if not rows and not trace_obj:
        raise AdapterError(f"trace {trace_id}: no observations")
    for row in rows:
        if _time(row.get("startTime")) is None:
            raise AdapterError(f"trace {trace_id}: observation {row.get('id')!r} has no readable startTime")
    rows.sort(key=lambda r: (_time(r.get("startTime")), str(r.get("id"))))
    roots = [r for r in rows if _is_root(r)]
    root: Mapping[str, Any] = roots[0] if roots else (rows[0] if rows else {})
    generations = [r for r in rows if r.get("type") == _GENERATION]

    question = question_text(trace_obj.get("input"), mapping) if trace_obj else ""
    question = question or question_text(root.get("input"), mapping)
    if not question and generations:
        question = question_text(generations[0].get("input"), mapping)
    answer = answer_text(trace_obj.get("output"), mapping) if trace_obj else ""
    answer = answer or answer_text(root.get("output"), mapping)
    if not answer and generations:
        answer = answer_text(generations[-1].get("output"), mapping)

    steps: list[Step] = []
    for row in rows:
        name, kind = row.get("name"), row.get("type")
        try:
            if mapping.is_search(name, kind):
                steps.append(_search_step(row, mapping))
            elif mapping.is_fetch(name, kind):
                steps.append(_fetch_step(row, mapping))
        except ValidationError as exc:
            raise AdapterError(
                f"trace {trace_id}: observation {row.get('id')!r} ({name}): {exc.errors()[0]['msg']}"
            ) from None

    metadata_source = trace_obj.get("metadata") if trace_obj.get("metadata") else root.get("metadata")
    labels = extract_labels(metadata_source, mapping.labels_paths)
    experiment = data.get("experiment_item")
    if isinstance(experiment, Mapping):
        labels = _merge(_experiment_labels(experiment, mapping), labels)
    timestamp = _time(trace_obj.get("timestamp")) if trace_obj else None
    timestamp = timestamp or _time(root.get("startTime"))
    metadata = {
        "provider": "langfuse",
        "experiment": experiment.get("experimentName") if isinstance(experiment, Mapping) else None,
        "dataset_item_id": experiment.get("experimentItemId") if isinstance(experiment, Mapping) else None,
        "trace_name": trace_obj.get("name") or root.get("traceName") or root.get("name") or None,
        "environment": trace_obj.get("environment") or root.get("environment") or None,
        "tags": list(trace_obj.get("tags") or root.get("tags") or []),
        "observations": len(rows),
        "session_id": trace_obj.get("sessionId") or root.get("sessionId") or None,
    }
    try:
        return Trace(
            id=trace_id,
            timestamp=timestamp,
            question=question,
            steps=steps,
            answer=answer,
            labels=labels,
            metadata={k: v for k, v in metadata.items() if v not in (None, [], "")},
        )
    except ValidationError as exc:
        raise AdapterError(f"trace {trace_id}: {exc.errors()[0]['msg']}") from None


def langfuse_adapter(mapping: MappingConfig | None = None) -> Callable[[object], Trace]:
    """The adapter with a given mapping (``tracescore.toml [mapping]``); the registered default uses the defaults."""
    config = mapping or MappingConfig()

    def adapt(payload: object) -> Trace:
        return trace_from_observations(payload, config)

    return adapt
