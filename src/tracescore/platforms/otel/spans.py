"""Read a span file: OTLP JSON (``resourceSpans[].scopeSpans[].spans[]``) or a JSON list of flat spans → traces.

Each span becomes a plain dict ``{trace_id, span_id, parent_id, name, start, end, status, attributes}`` with the
OTLP ``[{key, value: {stringValue|intValue|…}}]`` attributes decoded to a flat dict; spans are grouped by trace id
into one ``Record`` per trace (payload ``{"trace_id", "spans"}``). A span that cannot be read becomes a record with
an ``error`` so the adapter reports it and the rest of the file is still scored; a span nested too deeply to read
fails the trace that holds it (its record names the trace). A file of several JSON documents (JSON Lines, or
concatenated objects as the OTel SDK's console exporter writes them) is read document by document: each an OTLP
export, a list of spans or one span; one that is not JSON is reported by its line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tracescore.adapters.deep_json import TOO_DEEP, cap_depth, too_deep
from tracescore.errors import InputError, InputShapeError
from tracescore.platforms.base import EVERYTHING
from tracescore.sources.base import Record

# Lists/objects a span may nest (an OTLP kvlist attribute takes 4 levels per level); a file is decoded at most this
# deep plus the OTLP envelope, the rest of a deeper value is cut (``deep_json``): no recursion goes deeper.
_SPAN_DEPTH = 100
_FILE_DEPTH = _SPAN_DEPTH + 10


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
    trace_id, span_id = _raw_ids(raw)
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


def _children(value: Any, key: str, *more: str) -> list[Any]:
    """The list under ``key`` (else under the first of ``more``) of an OTLP envelope object; [] when there is none."""
    if not isinstance(value, Mapping):
        return []
    for name in (key, *more):
        found = value.get(name)
        if isinstance(found, list) and found:
            return found
    return []


def read_spans(document: Any, where: str = "") -> Iterator[dict[str, Any] | str]:
    """Every span of an OTLP export or a list of flat spans, each parsed; a span that cannot be read is its reason
    (``where`` before it, e.g. ``"line 3: "``). A span nested too deeply is ``{trace_id, span_id, "unreadable":
    reason}`` when its ids can be read, so ``group_spans`` fails its trace."""
    if isinstance(document, Mapping) and "resourceSpans" in document:
        raws = [
            span
            for resource in _children(document, "resourceSpans")
            for scope in _children(resource, "scopeSpans", "instrumentationLibrarySpans")
            for span in _children(scope, "spans")
        ]
    elif isinstance(document, list):
        raws = _flat(document)
    elif isinstance(document, Mapping) and isinstance(document.get("spans"), list):
        raws = _flat(document["spans"])
    else:
        if document == TOO_DEEP:
            raise InputShapeError(f"not a span file: nested too deeply to read (more than {_FILE_DEPTH} levels)")
        raise InputShapeError(f"not a span file: {_EXPECTED}")
    for number, raw in enumerate(raws, start=1):
        try:
            if too_deep(raw, _SPAN_DEPTH):
                raise _TooDeep(raw)
            yield _span(raw)
        except _TooDeep:
            reason = f"{where}span {number}: nested too deeply to read (more than {_SPAN_DEPTH} levels)"
            ids = _ids(raw)
            yield {"trace_id": ids[0], "span_id": ids[1], "unreadable": reason} if ids else reason
        except (ValueError, TypeError, AttributeError) as exc:
            yield f"{where}span {number}: {exc}"


_EXPECTED = ("expected OTLP JSON ('resourceSpans[].scopeSpans[].spans[]') or a JSON list of flat spans, each with "
             "its ids and an 'attributes' object")


def _flat(raws: list[Any]) -> list[Any]:
    """``raws`` when they are flat spans: a list none of whose records has ``attributes`` is spans of another shape
    (a vendor's nested ``child_spans`` with ``span_attributes``, a list of traces), refused naming what was expected
    instead of read as spans without attributes (one empty trace)."""
    records = [r for r in raws if isinstance(r, Mapping)]
    if not records or any("attributes" in r for r in records):
        return raws
    keys = ", ".join(repr(k) for k in list(records[0])[:8])
    nested = " (nested 'child_spans' are not read)" if any("child_spans" in r for r in records) else ""
    raise InputShapeError(f"not a span file: its records have no 'attributes' (the first has {keys}){nested}; "
                          f"{_EXPECTED}")  # fmt: skip


class _TooDeep(Exception):
    """A span that nests deeper than ``_SPAN_DEPTH`` (or held a value cut while decoding the file)."""


def _raw_ids(raw: Mapping[str, Any]) -> tuple[Any, Any]:
    """A raw span's trace id and span id as recorded (top level, ``spanContext`` or ``context``), None if absent."""
    context = raw.get("spanContext") or raw.get("context") or {}
    context = context if isinstance(context, Mapping) else {}
    trace_id = raw.get("traceId") or raw.get("trace_id") or context.get("traceId") or context.get("trace_id")
    span_id = raw.get("spanId") or raw.get("span_id") or context.get("spanId") or context.get("span_id")
    return trace_id, span_id


def _ids(raw: Any) -> tuple[str, str] | None:
    """``(trace id, span id)`` of a raw span when both are plain text or numbers, else None."""
    if not isinstance(raw, Mapping):
        return None
    trace_id, span_id = _raw_ids(raw)
    ok = isinstance(trace_id, str | int) and isinstance(span_id, str | int) and TOO_DEEP not in (trace_id, span_id)
    return (str(trace_id), str(span_id)) if ok and trace_id and span_id else None


def read_documents(data: bytes) -> tuple[list[tuple[int, Any]], list[str]]:
    """The JSON documents of a span file, each with the line it starts on, and a reason per part that is not JSON.

    One document is the usual file (read in one ``json.loads``); else the file is read as a sequence of documents
    (JSON Lines, or concatenated objects), each from where the last ended, a later part that is not JSON skipped to
    the next line. A value nested deeper than the decoder may go is cut out first (``deep_json``), so its span, not
    the file, is reported. InputError when the first document is not JSON (a file cut short is refused whole).
    """
    try:
        return [(1, json.loads(data))], []
    except (ValueError, RecursionError) as exc:
        first = exc
    try:
        text = cap_depth(data.decode(json.detect_encoding(data)), _FILE_DEPTH)
    except UnicodeDecodeError:
        raise InputError(f"is not valid JSON: {first}") from None
    decoder = json.JSONDecoder()
    documents: list[tuple[int, Any]] = []
    errors: list[str] = []
    at, line, counted = 0, 1, 0  # the line number of ``at``: newlines counted up to ``counted``
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at >= len(text):
            break
        line, counted = line + text.count("\n", counted, at), at
        try:
            document, at = decoder.raw_decode(text, at)
            documents.append((line, document))
        except json.JSONDecodeError as exc:  # not JSON: reported by its line, read on from the next line
            if not documents:  # not a sequence of documents: one broken document (a cut file), refused whole
                raise InputError(f"is not valid JSON: {first}") from None
            errors.append(f"line {line}: not JSON ({exc.msg})")
            end = text.find("\n", at)
            at = len(text) if end < 0 else end + 1
    if not documents:
        raise InputError(f"is not valid JSON: {first}")
    return documents, errors


def group_spans(spans: Iterator[dict[str, Any] | str]) -> Iterator[Record]:
    """One record per trace id, in order of first appearance; each unreadable span is a record of its own error, and
    a trace holding a span too deep to read is a record of that error, naming the trace."""
    traces: dict[str, list[dict[str, Any]]] = {}
    errors: list[str] = []
    for span in spans:
        if isinstance(span, str):
            errors.append(span)
        else:
            traces.setdefault(span["trace_id"], []).append(span)
    for trace_id, members in traces.items():
        unreadable = [m["unreadable"] for m in members if "unreadable" in m]
        if unreadable:
            yield Record(payload={"id": trace_id, "error": f"trace {trace_id}: {'; '.join(unreadable)}"})
        else:
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
            documents, errors = read_documents(text)
        except InputError as exc:
            raise InputError(f"span file {self.name!r} {exc}") from None
        for record in group_spans(_spans_of(documents, errors)):
            if (since <= EVERYTHING and until is None) or not isinstance(record.payload, Mapping):
                yield record
                continue
            starts = [s["start"] for s in record.payload.get("spans", []) if s["start"] is not None]
            moment = datetime.fromtimestamp(min(starts) / 1e9, tz=UTC) if starts else None
            if moment is None or (moment >= since and (until is None or moment < until)):
                yield record


def _spans_of(documents: list[tuple[int, Any]], errors: list[str]) -> Iterator[dict[str, Any] | str]:
    """The spans of a file's documents, then its parts that are not JSON; a lone document that is no span file is
    the file's error (InputError), a document of several that is an object of its own is one span."""
    if len(documents) == 1 and not errors:
        yield from read_spans(documents[0][1])
        return
    for line, document in documents:
        shaped = isinstance(document, list) or (
            isinstance(document, Mapping) and ("resourceSpans" in document or isinstance(document.get("spans"), list))
        )
        yield from read_spans(document if shaped else [document], f"line {line}: ")
    yield from errors
