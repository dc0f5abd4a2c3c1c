"""Canonical JSON (one trace per line) → Trace, with errors that name the field and what was wrong.

Input is strict JSON: a number that is not finite (``Infinity``, ``NaN``, ``1e400``) is rejected with its path, so
every result line and store row stays strict JSON. A UTF-8 BOM before the first line is accepted.

JSON text is decoded by msgspec first (``adapters/structs.py``, ~4x faster than pydantic); a line msgspec rejects
(malformed, or one only pydantic's lax mode accepts, or a non-finite number: msgspec refuses those) is validated by
the pydantic model, so the errors are the model's. The struct has the fields and read API of ``Trace``; it is
returned typed as ``Trace`` (one cast, below), which tests/adapters/test_struct_decode.py backs with field parity and
line-for-line equality. Code that copies or dumps a trace uses ``structs.replace`` or ``Model.model_validate(x,
from_attributes=True)``, which take both.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from tracescore.adapters import structs
from tracescore.errors import AdapterError
from tracescore.trace import SearchStep, Trace

_BOM = b"\xef\xbb\xbf"
# Cheap pre-filter: text that may hold a non-finite number (an exponent of 3+ digits, Infinity, NaN); only then walk.
_MAYBE_NON_FINITE = re.compile(rb"Infinity|NaN|\d[eE][+]?\d{3}")


def trace_from_json(payload: object) -> Trace:
    """Parse and validate one canonical trace from JSON text/bytes or an already-decoded dict."""
    if isinstance(payload, str | bytes | bytearray):
        raw = payload.encode() if isinstance(payload, str) else bytes(payload)
        raw = raw.removeprefix(_BOM)
        fast = structs.decode(raw)  # the line end is JSON whitespace to msgspec: not stripped (a copy of the line)
        if fast is not None:
            return cast(Trace, fast)  # the struct mirror of Trace: same fields and read API (see the docstring)
        return model_trace(raw.rstrip(b"\r\n"))
    return model_trace(payload)


def model_trace(payload: object) -> Trace:
    """The pydantic ``Trace`` of JSON bytes (BOM and line end already removed) or of a decoded dict, or the
    AdapterError naming what is wrong: the reference the struct decoder is tested against."""
    try:
        if isinstance(payload, bytes):
            trace = Trace.model_validate_json(payload)
            suspect = _holds_non_finite(trace) and _MAYBE_NON_FINITE.search(payload)
            data: object = trace.model_dump() if suspect else None
        else:
            trace, data = Trace.model_validate(payload), payload
    except ValidationError as exc:
        raise AdapterError(describe_validation_error(exc)) from None
    except RecursionError:
        raise AdapterError("not JSON (nested too deeply)") from None
    where = non_finite_path(data) if data is not None else None
    if where is not None:
        raise AdapterError(f"non-finite number at {where} (strict JSON has no Infinity/NaN; write it as a string)")
    return trace


def _holds_non_finite(trace: Trace) -> bool:
    """Whether a validated trace holds an infinite/NaN float anywhere (only then is the line checked as before, so
    the result is exactly the regex-only one). Floats can sit only in ``Hit.score`` and the free-form ``metadata``
    dicts (the trace's, a hit's, a fetch step's; every other field is text, int, bool or datetime), so only those are
    walked: linear in hits, not in text."""
    try:
        if _walk(trace.metadata):
            return True
        for step in trace.steps:
            if isinstance(step, SearchStep):
                for hit in step.hits:
                    score = hit.score
                    if (score is not None and not math.isfinite(score)) or (hit.metadata and _walk(hit.metadata)):
                        return True
            elif step.metadata and _walk(step.metadata):  # a fetch step's free-form metadata
                return True
        return False
    except RecursionError:
        return True


def _walk(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_walk(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_walk(v) for v in value)
    return False


def non_finite_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first float that is infinite or NaN in a decoded JSON value, or None."""
    if isinstance(value, float):
        return (path or "trace") if not math.isfinite(value) else None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite_path(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


def describe_validation_error(exc: ValidationError) -> str:
    """One line: 'not JSON (…)', 'truncated line (…)', 'not a trace (…)' or 'wrong type at steps.0.hits.2.rank: …'."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    if first["type"] == "json_invalid":
        detail = str(first.get("ctx", {}).get("error", first["msg"]))
        if detail.startswith("EOF while parsing"):
            return f"truncated line: it ends before the JSON is complete ({detail})"
        if detail.startswith("recursion limit exceeded"):
            return f"not JSON: nested too deeply ({detail})"
        return f"not JSON ({detail})"
    if first["type"] == "model_type" or (first["type"] in ("model_attributes_type", "dict_type") and not first["loc"]):
        return f"not a trace: expected a JSON object, got {type(first['input']).__name__}"
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "trace"
        kind = (
            "missing field"
            if err["type"] == "missing"
            else ("unknown field" if err["type"] == "extra_forbidden" else "wrong value")
        )
        hint = _closest_field(str(err["loc"][-1])) if err["type"] == "extra_forbidden" and err["loc"] else ""
        parts.append(f"{kind} at {loc}: {err['msg']}{hint}")
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    prefix = "not a trace: " if any(e["type"] == "missing" and len(e["loc"]) == 1 for e in errors) else ""
    return prefix + "; ".join(parts) + more


@functools.cache
def _field_names() -> tuple[str, ...]:
    """Every field name of the trace format: the fields of ``Trace`` and of every model inside it."""
    names: set[str] = set()
    todo: list[Any] = [Trace]
    seen: set[Any] = set()
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():
            names.add(info.alias or name)
            stack = [info.annotation]
            while stack:
                kind = stack.pop()
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    todo.append(kind)
                stack.extend(typing.get_args(kind))
    return tuple(sorted(names))


def _closest_field(name: str) -> str:
    """``; did you mean answer?`` for a misspelt field of the trace format (``anwser``), else nothing."""
    close = difflib.get_close_matches(name, _field_names(), n=1, cutoff=0.7)
    return f"; did you mean {close[0]}?" if close else ""


@contextmanager
def invalid_trace(where: str) -> Iterator[None]:
    """Around an adapter's ``Trace(...)``: a field that does not validate becomes an AdapterError naming ``where``."""
    try:
        yield
    except (ValidationError, ValueError) as exc:
        detail = describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise AdapterError(f"{where}: {detail}") from None
