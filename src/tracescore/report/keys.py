"""Whether the fields named by ``--case-key`` and ``--group-by`` exist in the result lines they are read from.

A misspelt field (``metadata.caseid``, ``metadata.providr``) used to pass in silence: every line fell back to its
trace id or into one ``(none)`` group, and the gate then failed every case as "missing". Now a field that no readable
result line of an input holds is a config error naming the closest fields that exist; one that only some lines hold
is a warning with the count. Checked while the lines stream past (each line once), decided at the end.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tracescore.errors import ConfigError
from tracescore.report.runs import is_scored
from tracescore.report.verdicts import field_value, full_path

_L = TypeVar("_L", bound=Mapping[str, Any])
_SAMPLED = 200  # lines whose field paths are collected for the suggestions
_DEPTH = 4  # dotted path components collected under metadata
_SCALAR_KEYS = ("trace_id", "timestamp")  # top-level fields a key may name besides metadata.*


@dataclass
class FieldCheck:
    """The fields ``{flag: path}`` of one input (``label``): how many readable lines hold each, and which fields the
    first lines have (for "did you mean")."""

    label: str
    fields: dict[str, str]
    lines: int = 0
    held: dict[str, int] = field(default_factory=dict)
    paths: set[str] = field(default_factory=set)

    def tap(self, results: Iterable[_L]) -> Iterator[_L]:
        """Pass every line through unchanged, counting the readable ones that hold each field."""
        for result in results:
            if is_scored(result):
                self.lines += 1
                for flag, path in self.fields.items():
                    if field_value(result, path) is not None:
                        self.held[flag] = self.held.get(flag, 0) + 1
                if self.lines <= _SAMPLED:
                    self.paths.update(_paths(result))
            yield result

    def verify(self) -> list[str]:
        """Raise ``ConfigError`` for a field no readable line holds; the warnings for one only some lines hold."""
        warnings = []
        for flag, path in self.fields.items():
            held = self.held.get(flag, 0)
            if not self.lines or held == self.lines:
                continue
            if not held:
                raise ConfigError(
                    f"{flag} {path!r}: no result line of {self.label} holds it ({self.lines} read); {self._hint(path)}"
                )
            fallback = "are grouped as (none)" if flag == "--group-by" else "count as their own case by trace id"
            warnings.append(
                f"warning: {flag} {path!r} is missing from {self.lines - held} of {self.lines} result lines of"
                f" {self.label}; those {fallback}"
            )
        return warnings

    def _hint(self, path: str) -> str:
        tails = {p.removeprefix("metadata."): p for p in sorted(self.paths)}  # the shared prefix is no likeness
        close = difflib.get_close_matches(full_path(path).removeprefix("metadata."), list(tails), n=3, cutoff=0.6)
        if close:
            return "did you mean " + " or ".join(tails[c] for c in close) + "?"
        known = sorted(self.paths)
        shown = ", ".join(known[:8]) + (f", … ({len(known)} in all)" if len(known) > 8 else "")
        return f"the fields that exist: {shown or 'none'}"


def _paths(result: Mapping[str, Any]) -> Iterator[str]:
    """The dotted paths of a result line that a key can name: trace_id, timestamp and every field under metadata."""
    for key in _SCALAR_KEYS:
        if result.get(key) is not None:
            yield key
    stack: list[tuple[str, Any, int]] = [("metadata", result.get("metadata"), 1)]
    while stack:
        prefix, node, depth = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for name, value in node.items():
            path = f"{prefix}.{name}"
            if isinstance(value, Mapping) and depth < _DEPTH:
                stack.append((path, value, depth + 1))
            elif value is not None and not isinstance(value, Mapping):
                yield path
