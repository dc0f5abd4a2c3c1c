"""Complementarity across search providers: same questions, whose surface supported which, alone or together (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tracescore.scorers.surface import SURFACE_SUPPORT_ANY
from tracescore.scores import Score


@dataclass(frozen=True)
class Complementarity:
    """Same questions, several providers: whose surface supported which question, alone or together."""

    providers: tuple[str, ...]
    questions: int  # questions that ran on at least two providers with a surface label
    supported: dict[str, int]  # provider → questions its surface supported
    only: dict[str, list[str]]  # provider → questions only its surface supported
    union: int  # questions at least one provider's surface supported
    none: list[str]  # questions no provider's surface supported


class _Scored(Protocol):
    @property
    def scores(self) -> Mapping[str, Score]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def _lookup(result: _Scored, key: str) -> str | None:
    if key == "trace_id":
        value = getattr(result, "trace_id", None)
    else:
        value = result.metadata.get(key.removeprefix("metadata."))
    return None if value is None else str(value)


def support_rows(
    results: Iterable[_Scored], *, case_key: str = "trace_id", provider_key: str = "metadata.provider"
) -> list[tuple[str, str, bool | None]]:
    """(case, provider, surface.support_any) per result (``TraceResult``); results missing a key are left out."""
    out: list[tuple[str, str, bool | None]] = []
    for result in results:
        case, provider = _lookup(result, case_key), _lookup(result, provider_key)
        if case is None or provider is None:
            continue
        found = result.scores.get(SURFACE_SUPPORT_ANY)
        value = found.value if found is not None else None
        out.append((case, provider, value if isinstance(value, bool) else None))
    return out


def complementarity(rows: Iterable[tuple[str, str, bool | None]]) -> Complementarity:
    """From (case key, provider, surface.support_any) rows: per-provider support, sole support and the union.

    Only questions that ran on at least two providers count; an absent support (None) is left out, never read as
    False. A provider that ran a question twice supports it when any run's surface did.
    """
    by_case: dict[str, dict[str, bool]] = {}
    for case, provider, ok in rows:
        if ok is None:
            continue
        seen = by_case.setdefault(case, {})
        seen[provider] = seen.get(provider, False) or ok
    shared = {c: p for c, p in by_case.items() if len(p) >= 2}
    providers = tuple(sorted({p for per in shared.values() for p in per}))
    supported = {p: sum(1 for per in shared.values() if per.get(p)) for p in providers}
    only: dict[str, list[str]] = {p: [] for p in providers}
    union = 0
    none: list[str] = []
    for case in sorted(shared):
        yes = [p for p, ok in shared[case].items() if ok]
        union += bool(yes)
        if len(yes) == 1:
            only[yes[0]].append(case)
        if not yes:
            none.append(case)
    return Complementarity(providers, len(shared), supported, only, union, none)
