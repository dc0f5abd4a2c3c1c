"""Field paths in native records: decode maybe-JSON values, follow dotted/indexed paths, read a labels object.

Every platform adapter reads its records through these; nothing here does I/O.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tracescore.trace import Labels


class _Missing:
    """Sentinel: a path that leads nowhere (distinct from a value that is ``None``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

_MAX_JSON_DEPTH = 3
_PATH_TOKEN = re.compile(r"[^.\[\]]+|\[(-?\d+)\]")


# -- decoding ---------------------------------------------------------------------------------------------------
def parse_maybe_json(value: Any, *, max_depth: int = _MAX_JSON_DEPTH) -> Any:
    """Decode ``value`` when it is JSON text (also double-encoded, up to ``max_depth`` layers); else return it as is.

    Platforms hand back tool inputs/outputs as objects, as JSON strings, or as JSON strings of JSON strings; a plain
    string that merely looks like JSON but does not parse is kept as text.
    """
    for _ in range(max_depth):
        if isinstance(value, bytes | bytearray):
            value = value.decode("utf-8", errors="replace")
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text or text[0] not in '[{"' and text not in ("null", "true", "false"):
            return value
        try:
            value = json.loads(text)
        except ValueError:
            return _python_literal(text, value)
        except RecursionError:
            return value
    return value


def _python_literal(text: str, original: Any) -> Any:
    """A Python ``repr`` of a dict/list (``"{'query': 'x'}"``, as some SDKs record tool inputs), else ``original``."""
    if text[0] not in "[{" or len(text) > 1_000_000:
        return original
    try:
        found = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return original
    return found if isinstance(found, dict | list) else original


# -- paths ------------------------------------------------------------------------------------------------------
def split_path(path: str) -> list[str | int]:
    """``"a.b[0].c"`` or ``"a.b.0.c"`` → ``["a", "b", 0, "c"]``; numeric segments (also ``-1``) become indexes."""
    parts: list[str | int] = []
    for match in _PATH_TOKEN.finditer(path):
        token = match.group(1) if match.group(1) is not None else match.group(0)
        parts.append(int(token) if re.fullmatch(r"-?\d+", token) else token)
    return parts


def get_path(obj: Any, path: str | Sequence[str | int], default: Any = MISSING) -> Any:
    """The value at a dotted/indexed ``path`` inside ``obj``, decoding JSON strings met on the way.

    Mapping keys that themselves contain dots (OpenTelemetry attributes such as ``"retrieval.documents.0.document.id"``)
    are matched greedily, longest key first. An empty path returns ``obj``. A path that leads nowhere returns
    ``default`` (the ``MISSING`` sentinel unless given).
    """
    parts = split_path(path) if isinstance(path, str) else list(path)
    found = _walk(parse_maybe_json(obj), parts)
    return default if found is MISSING else found


def _walk(obj: Any, parts: list[str | int]) -> Any:
    if not parts:
        return obj
    if isinstance(obj, Mapping):
        # longest dotted key first, so flat OTel attribute maps resolve
        for n in range(len(parts), 0, -1):
            key = ".".join(str(p) for p in parts[:n])
            if key in obj:
                found = _walk(parse_maybe_json(obj[key]), parts[n:])
                if found is not MISSING:
                    return found
        return MISSING
    if isinstance(obj, list | tuple):
        head = parts[0]
        if isinstance(head, int) and -len(obj) <= head < len(obj):
            return _walk(parse_maybe_json(obj[head]), parts[1:])
        return MISSING
    return MISSING


def first_path(obj: Any, paths: Iterable[str], *, skip_empty: bool = True) -> Any:
    """The value at the first of ``paths`` that resolves (skipping ``None`` and ``""`` unless told); else MISSING."""
    for path in paths:
        found = get_path(obj, path)
        if found is MISSING:
            continue
        if skip_empty and (found is None or found == "" or found == [] or found == {}):
            continue
        return found
    return MISSING


def unflatten_indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flat ``{prefix}.{i}.{rest}`` keys → a list of nested dicts ordered by ``i`` (OpenInference attribute style).

    ``{"retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": 0.9}`` with prefix
    ``"retrieval.documents"`` gives ``[{"document": {"id": "a", "score": 0.9}}]``.
    """
    items: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    for key, value in attributes.items():
        if not isinstance(key, str) or not key.startswith(head):
            continue
        index, _, rest = key[len(head) :].partition(".")
        if not index.isdigit() or not rest:
            continue
        node = items.setdefault(int(index), {})
        *parents, leaf = rest.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return [items[i] for i in sorted(items)]


# -- labels -----------------------------------------------------------------------------------------------------
_LABEL_FIELDS = tuple(Labels.model_fields)


def session_key(record: Any, keys: Sequence[str]) -> str | None:
    """The conversation id of a native record: the first of ``keys`` (flat keys of a mapping, in order) holding text
    that is not blank, or an integer, as text; None otherwise. Any other value (an object, a list, a boolean) is no
    session rather than a failed trace: the turn is still scored, on its own."""
    if not isinstance(record, Mapping):
        return None
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def extract_labels(metadata: Any, paths: Sequence[str]) -> Labels:
    """``Labels`` from a metadata object: the first of ``paths`` holding a labels object, else top-level label keys.

    Unknown keys are ignored; a value of the wrong type is dropped rather than failing the trace.
    """
    metadata = parse_maybe_json(metadata)
    if not isinstance(metadata, Mapping):
        return Labels()
    found = first_path(metadata, paths)
    source = found if isinstance(found, Mapping) else metadata
    raw = {key: parse_maybe_json(source[key]) for key in _LABEL_FIELDS if key in source}
    clean: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            Labels.model_validate({key: value})
        except ValueError:
            continue
        clean[key] = value
    return Labels.model_validate(clean)


def call_arguments(inputs: Any, parameters: Any = None) -> Any:
    """A tool call's arguments by name. smolagents records a call as ``{"args": [...], "kwargs": {...}}`` (beside
    ``sanitize_inputs_outputs``): the positional ones take the names of ``parameters`` (the tool's declared inputs,
    in order: OpenInference's ``tool.parameters``), the keyword ones their own. Any other input is returned as is."""
    inputs = parse_maybe_json(inputs)
    if not (isinstance(inputs, Mapping) and isinstance(inputs.get("kwargs"), Mapping)
            and isinstance(inputs.get("args", []), list)):  # fmt: skip
        return inputs
    parameters = parse_maybe_json(parameters)
    names = list(parameters) if isinstance(parameters, Mapping) else []
    positional = inputs.get("args") or []
    named: dict[str, Any] = {names[i] if i < len(names) else f"args.{i}": v for i, v in enumerate(positional)}
    return named | dict(inputs["kwargs"])
