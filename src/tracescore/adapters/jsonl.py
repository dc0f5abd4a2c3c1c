"""Canonical JSON (one trace per line) → Trace, with errors that name the field and what was wrong."""

from __future__ import annotations

from pydantic import ValidationError

from tracescore.errors import AdapterError
from tracescore.trace import Trace

__all__ = ["describe_validation_error", "trace_from_json"]


def trace_from_json(payload: object) -> Trace:
    """Parse and validate one canonical trace from JSON text/bytes or an already-decoded dict."""
    try:
        if isinstance(payload, str | bytes | bytearray):
            return Trace.model_validate_json(payload)
        return Trace.model_validate(payload)
    except ValidationError as exc:
        raise AdapterError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line: 'not JSON (…)', 'not a trace (…)' or 'wrong type at steps.0.hits.2.rank: …'."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    if first["type"] == "json_invalid":
        return f"not JSON ({first.get('ctx', {}).get('error', first['msg'])})"
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
        parts.append(f"{kind} at {loc}: {err['msg']}")
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    prefix = "not a trace: " if any(e["type"] == "missing" and len(e["loc"]) == 1 for e in errors) else ""
    return prefix + "; ".join(parts) + more
