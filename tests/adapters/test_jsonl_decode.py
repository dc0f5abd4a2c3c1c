"""The hot-path decoder (#14) gives exactly what the regex-only check gave: the same Trace or the same error, on every
fixture line, every planted fault and every non-finite number wherever it can hide."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel

from tests.adapters.test_struct_decode import canon
from tests.conftest import SAMPLES
from tests.engine.test_golden import expertqa_lines, faults_lines
from tracescore.adapters.jsonl import (
    _BOM,
    _MAYBE_NON_FINITE,
    describe_validation_error,
    non_finite_path,
    trace_from_json as fast,
)
from tracescore.errors import AdapterError
from tracescore.trace import Trace

NON_FINITE = [
    b'{"id": "a", "steps": [{"kind": "search", "hits": [{"score": NaN}]}]}',
    b'{"id": "b", "steps": [{"kind": "search", "hits": [{"score": Infinity}]}]}',
    b'{"id": "c", "steps": [{"kind": "search", "hits": [{"score": -1e999}]}]}',
    b'{"id": "d", "metadata": {"a": [1, {"b": 1e400}]}}',
    b'{"id": "e", "steps": [{"kind": "search", "hits": [{"metadata": {"x": [NaN]}}]}]}',
    b'{"id": "f", "metadata": {"big": 1' + b"0" * 400 + b'.0}}',  # no exponent: the regex never saw it
    b'{"id": "g", "metadata": {"note": "Infinity and NaN in text, 1e400 too"}}',  # only in strings
    b'{"id": "h", "metadata": {"x": 1.5e300, "y": 2e-400}}',  # finite
    b'{"id": "i", "steps": [{"kind": "fetch", "status": 1e400}]}',
    b'{"id": "j", "timestamp": 1e400}',
    b'{"id": "k", "steps": [{"kind": "fetch", "metadata": {"published": [1e400]}}]}',  # a fetch step's metadata (#33)
]


def regex_only(payload: bytes) -> Trace:
    """``trace_from_json`` as it was before #14: the line searched with the regex, then the dump walked."""
    from pydantic import ValidationError

    try:
        raw = payload.removeprefix(_BOM).rstrip(b"\r\n")
        trace = Trace.model_validate_json(raw)
        data = trace.model_dump() if _MAYBE_NON_FINITE.search(raw) else None
    except ValidationError as exc:
        raise AdapterError(describe_validation_error(exc)) from None
    except RecursionError:
        raise AdapterError("not JSON (nested too deeply)") from None
    where = non_finite_path(data) if data is not None else None
    if where is not None:
        raise AdapterError(f"non-finite number at {where} (strict JSON has no Infinity/NaN; write it as a string)")
    return trace


def outcome(decode: object, line: bytes) -> tuple[str, object]:
    try:
        return "trace", canon(decode(line))  # type: ignore[operator]  # the struct or the model, field by field
    except AdapterError as exc:
        return "error", str(exc)


@pytest.mark.parametrize(
    "lines",
    [SAMPLES.read_bytes().splitlines(), faults_lines(), expertqa_lines(), NON_FINITE],
    ids=["cookbook", "faults", "expertqa", "non-finite"],
)
def test_the_fast_decoder_matches_the_regex_only_one_line_for_line(lines: list[bytes]) -> None:
    for n, line in enumerate(lines, start=1):
        assert outcome(fast, line) == outcome(regex_only, line), f"line {n}"


def test_the_non_finite_cases_are_rejected_with_their_path() -> None:
    """The comparison above can fail: these lines must be errors, with the path of the number."""
    errors = [outcome(fast, line)[1] for line in NON_FINITE[:5]]
    assert errors == [
        "non-finite number at steps.0.hits.0.score (strict JSON has no Infinity/NaN; write it as a string)",
        "non-finite number at steps.0.hits.0.score (strict JSON has no Infinity/NaN; write it as a string)",
        "non-finite number at steps.0.hits.0.score (strict JSON has no Infinity/NaN; write it as a string)",
        "non-finite number at metadata.a.1.b (strict JSON has no Infinity/NaN; write it as a string)",
        "non-finite number at steps.0.hits.0.metadata.x.0 (strict JSON has no Infinity/NaN; write it as a string)",
    ]
    assert outcome(fast, NON_FINITE[-1])[1] == (
        "non-finite number at steps.0.metadata.published.0 (strict JSON has no Infinity/NaN; write it as a string)")


def _float_fields(model: type, path: str, seen: set[type]) -> list[str]:
    """Every field of ``model`` (nested models followed) whose type admits a float: a number or a free-form value."""
    out: list[str] = []
    seen = seen | {model}
    for name, info in model.model_fields.items():  # type: ignore[attr-defined]
        where = f"{path}.{name}" if path else name
        stack = [info.annotation]
        while stack:
            tp = stack.pop()
            if tp is float or tp is typing.Any:
                out.append(where)
                break
            if isinstance(tp, type) and issubclass(tp, BaseModel) and tp not in seen:
                out += _float_fields(tp, where, seen)
            stack += list(typing.get_args(tp))
    return out


def test_the_non_finite_walk_covers_every_field_that_can_hold_a_float() -> None:
    """``_holds_non_finite`` walks only Hit.score and the metadata dicts; a new float or free-form field in the trace
    model must be added there, or this fails."""
    assert sorted(set(_float_fields(Trace, "", set()))) == [
        "metadata",
        "steps.hits.metadata",
        "steps.hits.score",
        "steps.metadata",  # a fetch step's (#33)
    ]
