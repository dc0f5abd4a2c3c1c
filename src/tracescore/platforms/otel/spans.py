"""Read a span file: OTLP JSON (``resourceSpans[].scopeSpans[].spans[]``) or a JSON list of flat spans → traces.

Each span becomes a plain dict ``{trace_id, span_id, parent_id, name, start, end, status, attributes}`` with the
OTLP ``[{key, value: {stringValue|intValue|…}}]`` attributes decoded to a flat dict; spans are grouped by trace id
into one ``Record`` per trace (payload ``{"trace_id", "spans"}``). A span that cannot be read becomes a record with
an ``error`` so the adapter reports it and the rest of the file is still scored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracescore.errors import InputError
from tracescore.platforms.base import EVERYTHING
from tracescore.sources.base import Record

__all__ = ["SpanFileSource", "any_value", "group_spans", "read_spans"]


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": …}``, ``{"intValue": "3"}``, arrays, kvlists) as a plain value."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "bytesValue" in value:
        return value["bytesValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values") or [])
    return None


def _attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``[{key, value}]`` or an already flat dict → a flat dict of attribute values."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if not isinstance(raw, list):
        raise ValueError(f"attributes is {type(raw).__name__}, expected a list of {{key, value}} or an object")
    found: dict[str, Any] = {}
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise ValueError("an attribute is not a {key, value} object")
        found[item["key"]] = any_value(item.get("value"))
    return found


def _nanos(value: Any) -> int | None:
    """A time as Unix nanoseconds: OTLP ``startTimeUnixNano`` (string or int) or ISO 8601 text (Phoenix flat spans)."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    text = str(value)
    if text.isdigit():
        return int(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1_000_000_000)


def _span(raw: Any) -> dict[str, Any]:
    """One span (OTLP or flat, ``spanContext``/``context`` ids included) as the plain dict the adapter reads."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"span is {type(raw).__name__}, expected an object")
    context = raw.get("spanContext") or raw.get("context") or {}
    context = context if isinstance(context, Mapping) else {}
    trace_id = raw.get("traceId") or raw.get("trace_id") or context.get("traceId") or context.get("trace_id")
    span_id = raw.get("spanId") or raw.get("span_id") or context.get("spanId") or context.get("span_id")
    if not trace_id or not span_id:
        raise ValueError(f"span {raw.get('name')!r} has no traceId/spanId")
    parent = raw.get("parentSpanId") or raw.get("parent_span_id") or raw.get("parent_id") or raw.get("parentId")
    status = raw.get("status")  # OTLP {"code": 2}; the Python SDK's to_json() {"status_code": "ERROR"}
    code = status.get("code", status.get("status_code")) if isinstance(status, Mapping) else raw.get("status_code")
    return {
        "trace_id": str(trace_id),
        "span_id": str(span_id),
        "parent_id": str(parent) if parent else None,
        "name": str(raw.get("name") or ""),
        "start": _nanos(raw.get("startTimeUnixNano", raw.get("start_time"))),
        "end": _nanos(raw.get("endTimeUnixNano", raw.get("end_time"))),
        "error": code in (2, "2", "STATUS_CODE_ERROR", "ERROR"),
        "attributes": _attributes(raw.get("attributes") or {}),
    }


def read_spans(document: Any) -> Iterator[dict[str, Any] | str]:
    """Every span of an OTLP export or a list of flat spans, each parsed; a span that cannot be read is its reason."""
    if isinstance(document, Mapping) and "resourceSpans" in document:
        raws = [
            span
            for resource in document.get("resourceSpans") or []
            for scope in (resource or {}).get("scopeSpans") or (resource or {}).get("instrumentationLibrarySpans") or []
            for span in (scope or {}).get("spans") or []
        ]
    elif isinstance(document, list):
        raws = document
    elif isinstance(document, Mapping) and isinstance(document.get("spans"), list):
        raws = document["spans"]
    else:
        raise InputError("not a span file: expected OTLP JSON with 'resourceSpans' or a JSON list of spans")
    for number, raw in enumerate(raws, start=1):
        try:
            yield _span(raw)
        except (ValueError, TypeError, AttributeError) as exc:
            yield f"span {number}: {exc}"


def group_spans(spans: Iterator[dict[str, Any] | str]) -> Iterator[Record]:
    """One record per trace id, in order of first appearance; each unreadable span is a record of its own error."""
    traces: dict[str, list[dict[str, Any]]] = {}
    errors: list[str] = []
    for span in spans:
        if isinstance(span, str):
            errors.append(span)
        else:
            traces.setdefault(span["trace_id"], []).append(span)
    for trace_id, members in traces.items():
        yield Record(payload={"trace_id": trace_id, "spans": members}, size=len(members))
    for error in errors:
        yield Record(payload={"error": error})


class SpanFileSource:
    """A span file as a ``Source``: its traces whose earliest span starts in ``[since, until)`` (all when asked)."""

    def __init__(self, path: str | Path) -> None:
        self.name = str(path)

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        try:
            text = Path(self.name).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read span file {self.name!r}: {exc.strerror}") from exc
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"span file {self.name!r} is not valid JSON: {exc}") from None
        for record in group_spans(read_spans(document)):
            if (since <= EVERYTHING and until is None) or not isinstance(record.payload, Mapping):
                yield record
                continue
            starts = [s["start"] for s in record.payload.get("spans", []) if s["start"] is not None]
            moment = datetime.fromtimestamp(min(starts) / 1e9, tz=UTC) if starts else None
            if moment is None or (moment >= since and (until is None or moment < until)):
                yield record
